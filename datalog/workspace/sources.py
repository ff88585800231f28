"""The workspace's Spark directory ``spark/``: each Spark source's snapshot, a chain of versions
``spark/R/vN`` (``datalog.refresh``), and the marker ``spark/outputs`` of the commit the Spark
outputs were last written from.

A chain such as ``v0+v4+v7`` is a full version followed by the delta versions of later
refreshes; the snapshot and the log name each source's chain (``"sources"``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt
from datalog.workspace import format as wsfile
from datalog.workspace import validate as wsvalidate

_VERSION = re.compile(r"v[0-9]+")


def check_directory(path: Path) -> None:
    """``spark/``, if there, must be a directory of the workspace, not a link to one elsewhere
    (its snapshots would be read and written there): else ``workspace_corrupt``."""
    where = Path(path) / "spark"
    if os.path.lexists(where) and (where.is_symlink() or not where.is_dir()):
        raise WorkspaceCorrupt(f"workspace entry {where} is a symbolic link or not a directory; "
                               f"a workspace's spark/ is a directory it holds")


def source_snapshot(path: Path, relation: str, version: str) -> Path:
    """The directory of ``version`` (``vN``) of the snapshot of Spark source ``relation``."""
    return Path(path) / "spark" / relation / version


def stager(path: Path, sources: dict[str, str], engine):
    """``init``'s hook for Spark sources: each one's rows go to ``spark/<relation>/v0`` first and
    are loaded from there, so the snapshot and the engine hold the same version (a source that
    carries its changes keeps its watermark there too: ``datalog.spark.feeds``)."""
    def stage(directive, frame):
        from datalog.spark import diff as spark_diff, feeds
        name = directive.relation
        sources[name] = "v0"
        where = source_snapshot(path, name, "v0")
        if feeds.kind(directive):
            source = feeds.Source(frame.sparkSession, directive, engine.column_names(name),
                                  list(engine.schema[name].types), engine.facts_dir, engine.allow_paths)
            return feeds.stage(source, where)[0]
        files = spark_diff.files_of(frame.sparkSession, directive, engine.facts_dir, engine.allow_paths)  # before
        staged = spark_diff.stage(frame, where)[0]                       # reading: see files_of
        spark_diff.record_files(where, files)           # so the first refresh skips a source that did not change
        return staged
    return stage


def chains(value, where: Path) -> dict[str, str]:
    """Each Spark source's snapshot chain, e.g. ``{"edge": "v0+v4+v7"}`` (datalog.refresh)."""
    if not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) and
                                            all(_VERSION.fullmatch(p) for p in v.split("+"))
                                            for k, v in value.items())):
        raise WorkspaceCorrupt(f"workspace file {where}: the Spark source list is malformed")
    return value


def outputs_synced(path: Path) -> int | None:
    """The commit whose relations the Spark output tables last received in full or in part
    (``spark/outputs``), or None."""
    where = path / "spark" / "outputs"
    if not where.exists():
        return None
    try:
        return wsvalidate.sequence(wsfile.read_file(where, "outputs").header.get("seq"), where, "the header's seq")
    except WorkspaceCorrupt:
        return None                           # derived: the next refresh rewrites every output


def mark_outputs_synced(path: Path, seq: int) -> None:
    (path / "spark").mkdir(exist_ok=True)
    wsfile.write_file(path / "spark" / "outputs", "outputs", {"seq": seq}, [])
