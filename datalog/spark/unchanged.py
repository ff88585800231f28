"""A refresh that starts no Spark: every source is a local file or directory whose files did not
change, and every sink holds the last commit.

Starting the Spark session costs most of a refresh that finds nothing (9.3 s of 9.3 s on a
16-edge Parquet source here). Spark is not needed to see that nothing changed when every
``.input r(IO=spark, path=...)`` is a file or directory on this machine, read in local mode: its
files are listed here exactly as :func:`datalog.spark.diff.files_of` lists them (names, sizes,
modification times; a single file's Parquet footer digest) and compared with the record its
last snapshot keeps (:func:`datalog.spark.diff.same_files`). When all are the same and no sink
needs its repair, the refresh is over without a session. Anything else -- a file changed, a
``table=`` or ``query=`` source, a source that carries its changes (``append_only``,
``partitioned``, ``cdf``), a cluster's filesystem, a snapshot without its record -- answers None,
and the refresh takes the Spark way, which finds the same answer for an unchanged source.

Local mode is recognised conservatively (:func:`datalog.spark.places.local_filesystem`). No
pyspark here.
"""

from __future__ import annotations

import os
from pathlib import Path

from datalog.spark import places
from datalog.spark.places import local_filesystem
from datalog.spark.report import SourceReport


def unchanged_sources(ws, last: dict[str, Path], facts_dir, out_dir) -> list[SourceReport] | None:
    """A report line per source (0 rows read, nothing changed) when the workspace ``ws`` (open
    for writing; ``last``: each source's last snapshot version) needs no Spark to be refreshed;
    else None. A sink path that leaves ``out_dir`` is ``output_path`` here as on the Spark way."""
    return unchanged_local(ws.engine, last, ws.outputs_synced() == ws.seq, facts_dir, out_dir)


def unchanged_local(engine, last: dict[str, Path], sinks_synced: bool, facts_dir,
                    out_dir) -> list[SourceReport] | None:
    """:func:`unchanged_sources` of any workspace kind (a Spark-resident one's too): ``engine``
    its program's, ``last`` each source's last snapshot version, ``sinks_synced`` whether its
    sinks hold its last commit."""
    default_fs = local_filesystem(engine.spark_options, os.environ)
    if default_fs is None:
        return None
    sinks = engine.spark_directives("output")
    if sinks and not sinks_synced:
        return None                                   # a sink to repair: Spark writes it
    check_sink_paths(sinks, out_dir, engine.allow_paths, default_fs)
    reports = []
    for directive in engine.spark_directives("input"):
        files = _local_files(directive, facts_dir, engine.allow_paths, default_fs)
        where = last.get(directive.relation)
        if where is None:
            return None
        recorded = places.recorded_meta(where)
        if files is None or recorded is None or not places.same_files(where, files):
            return None
        reports.append(SourceReport(directive.relation, recorded[0], 0, 0, read=0))
    return reports


def _local_files(directive, facts_dir, allow_paths: bool, default_fs: str) -> dict | None:
    """:func:`datalog.spark.diff.files_of` of a local ``path=`` source, listed by this process;
    None for any other source (or a missing path, which the Spark way reports)."""
    if directive.io != "spark" or places.feed_kind(directive) or directive.param("table") is not None \
            or directive.param("path") is None:
        return None
    _, local = places.located(directive, facts_dir, allow_paths, default_fs)
    if local is None or not Path(local).exists():
        return None
    fmt = (directive.param("format") or "parquet").lower()
    return places.local_files(places.uri(local), fmt)


def check_sink_paths(sinks, out_dir, allow_paths: bool, default_fs: str) -> None:
    """Every sink's local ``path=`` held to ``out_dir`` (``output_path``), before anything is written."""
    for directive in sinks:
        if directive.param("path") is not None:
            places.located(directive, out_dir or ".", allow_paths, default_fs)
