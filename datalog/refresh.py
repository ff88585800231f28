"""``datalog refresh ws/``: bring a workspace up to date with its Spark sources, then write its
Spark outputs -- maintaining only what changed.

For each ``.input r(IO=spark, ...)`` the workspace keeps the version it last loaded as Parquet,
a chain of version directories ``ws/spark/r/vN`` (named by the workspace's log, e.g.
``v0+v4+v7``): a full copy of the rows, then the changes each refresh found (see
``datalog.spark.diff``). A refresh:

1. **diff**: computes the source's digest per bucket of rows inside Spark, compares it with the
   snapshot's, reads the source rows of the buckets that differ, and compares them with the
   snapshot's rows of those buckets; the changes are written as a new delta version
   ``spark/r/v<next>`` and only they come to the driver, through Arrow (**transfer**). The
   source is not copied. Every ``CHAIN`` versions, or when the chain's changes pass
   ``CHAIN_SHARE`` of the rows, the refresh **stages** instead: it writes the source's rows as a
   new full version and diffs against that;
2. **load** the changed relations from the workspace (an open reads a relation, and builds the
   levels of its trie indexes, only when first used: ``maintenance.surgery.prepare``), then
   **maintain**: apply every source's difference as one transaction, whose log record also
   names the new snapshots: both become durable together, or neither does;
3. **write back**: each ``.output r(IO=spark, ...)``: ``mode=overwrite`` rewrites the sink,
   ``mode=merge`` appends only the inserted rows (a deletion rewrites it: Parquet tables
   cannot delete in place); then ``spark/outputs`` records the commit the sinks hold;
4. removes the versions the new chains do not name.

A source that carries its own changes (``append_only=true``, ``partitioned=true``, ``IO=delta,
cdf=true``: :mod:`datalog.spark.feeds`) is not diffed in step 1: the refresh reads only what it
says changed (**read changes**), writes it as the chain's next version with the new watermark,
and keeps the changes of presence in the relation.

No difference: no transaction, no engine work, nothing written (a staged copy is dropped).

**Without Spark.** When every source and sink is a local Parquet file or directory and every
source is small (:mod:`datalog.spark.local_refresh`), steps 1 and 3 run in this process with
pyarrow and no Spark session is started: the sources and their snapshots are read whole and
diffed here, and the new snapshot is a full version. The rest -- one transaction, the
write-back's rules, the kill points -- is the same.

**Killed or failed at any point** the next refresh converges: before step 2 commits, the
workspace and its snapshots are as before and the new version, which no chain names yet, is
rewritten next time; after it,
the workspace holds the new state and the sinks, if ``spark/outputs`` does not name the last
commit, are rewritten in full from the workspace's relations.
"""

from __future__ import annotations

import shutil
import time
from typing import Callable

from datalog.spark.report import (CHAIN, CHAIN_SHARE, RefreshReport, SourceReport, checkpoint,  # noqa: F401
                                  describe)                                                      # (no pyspark)
from datalog.spark import places
from datalog.workspace.workspace import Workspace, source_snapshot
from maintenance.surgery import prepare

Progress = Callable[[str], None]

def refresh(ws: Workspace, progress: Progress | None = None, facts_dir: str = ".", out_dir: str = ".") -> RefreshReport:
    """Refresh ``ws`` (open for writing) from its Spark sources; see the module docstring. A
    local ``path=`` of a source is held to ``facts_dir`` (``-F``), of a sink to ``out_dir``
    (``-D``), unless the workspace was opened with ``allow_paths`` (the user's command line,
    never the stored program: :mod:`datalog.spark.tables`)."""
    from datalog.spark import local_refresh
    from datalog.spark.unchanged import unchanged_sources
    report, engine = RefreshReport(commit_before=ws.seq), ws.engine
    if not engine.spark_directives("input") and not engine.spark_directives("output"):
        return report                         # nothing to refresh: Spark is not even started
    started = time.perf_counter()
    last = {d.relation: source_snapshot(ws.path, d.relation, ws.sources.get(d.relation, "v0").split("+")[-1])
            for d in engine.spark_directives("input")}
    quiet = unchanged_sources(ws, last, facts_dir, out_dir)
    if quiet is not None:                     # local files, none changed, sinks in sync: no Spark
        report.sources.extend(quiet)
        report.phase("unchanged files", started)
        _drop_old_snapshots(ws)
        return report
    version = f"v{ws.seq + 1}"
    here = local_refresh.plan(engine, last, facts_dir, out_dir)
    found = _local_changes(ws, here, version, report, out_dir) if here is not None else None
    if found is None:
        found = _spark_changes(ws, version, report, facts_dir, out_dir, progress)
    changes, chains, write = found
    if not any(ins or dels for ins, dels in changes.values()):
        _drop_old_snapshots(ws)        # the staged copies, and any a killed refresh left
        return report
    started = time.perf_counter()
    for name in changes:
        prepare(engine.db[name])       # read from the workspace now, so that maintain follows the delta
    _presence_only(engine, changes, report)
    started = report.phase("load", started)
    if not any(ins or dels for ins, dels in changes.values()):
        _drop_old_snapshots(ws)        # what a change-carrying source said changed was there already
        return report
    delta = ws.commit_sources({n: c[0] for n, c in changes.items()}, {n: c[1] for n, c in changes.items()},
                              chains, before_log=lambda: checkpoint("transaction"))
    report.commit = ws.seq
    started = report.phase("maintain", started)
    _write_back(ws, delta, report, write)
    report.phase("write back", started)
    _drop_old_snapshots(ws)
    return report


def _local_changes(ws: Workspace, here, version: str, report: RefreshReport, out_dir: str):
    """The sources read and diffed by this process (:mod:`datalog.spark.local_refresh`): (each
    source's (inserted, retracted), its new chain, the sinks' writer); None when a source is
    declined before anything is written, and the Spark way takes over."""
    from datalog.spark import local_refresh
    started, engine = time.perf_counter(), ws.engine
    read, before = {}, {}
    for source in here.sources:
        name = source.directive.relation
        chain = [source_snapshot(ws.path, name, v) for v in ws.sources.get(name, "v0").split("+")]
        if places.same_files(chain[-1], source.files):
            continue                          # not a file changed: not read
        read[name] = local_refresh.read(source, here.limit)
        before[name] = local_refresh.snapshot_rows(chain, source.names)
        if read[name] is None or before[name] is None:
            return None

    def write(directive, change=None):
        local_refresh.write_output(engine, directive, here.default_fs, change, out_dir)
    _repair_outputs(ws, report, write)
    started = report.phase("repair", started)
    changes, chains = {}, {}
    for source in here.sources:
        name = source.directive.relation
        chain = ws.sources.get(name, "v0").split("+")
        if name not in read:
            changes[name], chains[name] = ([], []), "+".join(chain)
            report.sources.append(SourceReport(name, places.recorded_meta(source_snapshot(ws.path, name, chain[-1]))[0],
                                               0, 0, read=0))
            continue
        now = set(local_refresh.rows_of(read[name]))
        inserted, retracted = list(now - before[name]), list(before[name] - now)
        if inserted or retracted:
            local_refresh.write_version(source_snapshot(ws.path, name, version), read[name], source.files)
            chains[name] = version
        else:
            places.record_files(source_snapshot(ws.path, name, chain[-1]), source.files)
            chains[name] = "+".join(chain)
        changes[name] = inserted, retracted
        report.sources.append(SourceReport(name, read[name].num_rows, len(inserted), len(retracted)))
        started = report.phase("diff without Spark", started)
        checkpoint("diff")                    # the new version written, nothing committed
    return changes, chains, write


def _spark_changes(ws: Workspace, version: str, report: RefreshReport, facts_dir: str, out_dir: str, progress):
    """The sources diffed inside Spark (:mod:`datalog.spark.diff`) or read by what they say
    changed (:mod:`datalog.spark.feeds`): (each source's (inserted, retracted), its new chain,
    the sinks' writer)."""
    from datalog.spark import diff as spark_diff, feeds, tables as spark_io
    engine = ws.engine
    spark = engine.spark_session()
    started = time.perf_counter()
    if engine.spark_directives("output"):
        engine.check_spark_sinks(out_dir)     # a sink refused (output_path) before anything is read or committed

    def write(directive, change=None):
        engine.write_spark_output(directive, change, out_dir)
    _repair_outputs(ws, report, write)
    started = report.phase("repair", started)
    changes, chains = {}, {}
    for directive in engine.spark_directives("input"):
        name = directive.relation
        if feeds.kind(directive):
            changes[name], chains[name] = _read_changes(ws, spark, directive, version, report, facts_dir, progress)
            started = report.phase("read changes", started)
            checkpoint("diff")
            continue
        chain = ws.sources.get(name, "v0").split("+")
        before = [source_snapshot(ws.path, name, v) for v in chain]
        target = source_snapshot(ws.path, name, version)
        rows, events = spark_diff.snapshot_meta(before[-1], spark)
        files = spark_diff.files_of(spark, directive, facts_dir, engine.allow_paths)   # before reading
        if spark_diff.same_files(before[-1], files):     # not a file changed: not read
            changes[name], chains[name] = ([], []), "+".join(chain)
            report.sources.append(SourceReport(name, rows, 0, 0, read=0))
            started = report.phase("diff+transfer", started)
            continue
        frame = spark_io.source_frame(spark, directive, engine.schema[name].types, engine.column_names(name),
                                      facts_dir, engine.allow_paths)
        if len(chain) >= CHAIN or events > CHAIN_SHARE * max(rows, 1):
            _, rows = spark_diff.stage(frame, target)
            started = report.phase("stage", started)
            inserted, retracted = spark_diff.difference(spark, target, before, progress, f"diff {name}")
            chains[name] = version
        else:
            inserted, retracted, rows, written = spark_diff.delta_version(spark, frame, before, target, progress,
                                                                        f"diff {name}")
            chains[name] = "+".join(chain + [version] if written else chain)
        spark_diff.record_files(source_snapshot(ws.path, name, chains[name].split("+")[-1]), files)
        changes[name] = inserted, retracted
        report.sources.append(SourceReport(name, rows, len(inserted), len(retracted)))
        started = report.phase("diff+transfer", started)
        checkpoint("diff")                    # the new version written, nothing committed
    return changes, chains, write


def _read_changes(ws: Workspace, spark, directive, version: str, report: RefreshReport, facts_dir,
                  progress) -> tuple[tuple[list, list], str]:
    """A source that carries its changes (:mod:`datalog.spark.feeds`): ((inserted, retracted)
    -- only changes of presence in the relation --, the source's new chain)."""
    from datalog.spark import feeds, tables as spark_io
    engine, name = ws.engine, directive.relation
    chain = ws.sources.get(name, "v0").split("+")
    source = feeds.Source(spark, directive, engine.column_names(name), list(engine.schema[name].types), facts_dir,
                          engine.allow_paths)
    found = feeds.refresh(source, [source_snapshot(ws.path, name, v) for v in chain],
                          source_snapshot(ws.path, name, version))
    events = spark_io.rows_of(found.events, progress, f"reading {name}", f"the changes of {name}") if found.events is not None else []
    inserted, retracted = [r[:-1] for r in events if r[-1]], [r[:-1] for r in events if not r[-1]]
    report.sources.append(SourceReport(name, found.rows, len(inserted), len(retracted), read=found.read))
    return (inserted, retracted), found.chain


def _presence_only(engine, changes: dict, report: RefreshReport) -> None:
    """What a change-carrying source said changed, kept only where the relation's presence
    changes (an appended row may be there already); the sources' counts follow."""
    for source in report.sources:
        if source.read is None or source.relation not in changes:
            continue
        relation = engine.db[source.relation]
        inserted, retracted = changes[source.relation]
        changes[source.relation] = ([r for r in inserted if r not in relation],
                                    [r for r in retracted if r in relation])
        source.inserted, source.retracted = (len(c) for c in changes[source.relation])


def _repair_outputs(ws: Workspace, report: RefreshReport, write) -> None:
    """Sinks that may not hold the last commit (a write-back cut short, ``datalog update`` since)
    are rewritten in full by ``write``, then marked as holding it."""
    outputs = ws.engine.spark_directives("output")
    if outputs and ws.outputs_synced() != ws.seq:
        report.repaired = [d.relation for d in outputs]
        for directive in outputs:
            write(directive)
        ws.mark_outputs_synced()


def _write_back(ws: Workspace, delta, report: RefreshReport, write) -> None:
    from maintenance.delta import Change
    for directive in ws.engine.spark_directives("output"):
        change = delta.get(directive.relation) or Change(set(), set())
        merge = (directive.param("mode") or "overwrite").lower() == "merge"
        if merge and not change:
            report.outputs[directive.relation] = (0, 0, "unchanged")
            continue
        write(directive, change if merge else None)
        how = "appended" if merge and not change.retracted else "rewritten"
        report.outputs[directive.relation] = (len(change.inserted), len(change.retracted), how)
        checkpoint("write back")
    ws.mark_outputs_synced()


def _drop_old_snapshots(ws: Workspace) -> None:
    """Every snapshot directory but the chains the last commit names."""
    root = ws.path / "spark"
    for relation_dir in (p for p in root.iterdir() if p.is_dir()) if root.exists() else ():
        keep = set(ws.sources.get(relation_dir.name, "").split("+"))
        for version in relation_dir.iterdir():
            if version.name not in keep:
                shutil.rmtree(version, ignore_errors=True)


__all__ = ["refresh", "describe", "RefreshReport"]
