"""The manifest of a Spark-resident workspace (``datalog init ws/ prog.dl --engine spark``):
``ws/resident.json``, the one file that says which Parquet versions make up the workspace.

Its content is a sealed JSON record (:mod:`datalog.sources.sealed`: the body and its SHA-256); the body
holds the program text, the commit number ``seq``, per relation the version directory holding
its base rows (``relations/<name>/<version>/rows``), its **layers** (the ``delta`` directories
of later commits, laid over the base in order, with their row counts: a commit that changes a
few tuples writes them, not the whole relation), its tuple count and ``typed`` (its base and
layers were written with the column types the engine reads them with, so no schema is inferred;
``typed`` at the top: the same of the static relations), per Spark source the chain of its
snapshot versions (``spark/<name>/v0+v3...``, :mod:`datalog.spark.diff`), and ``outputs``, the
commit the Spark sinks are known to hold. A refresh writes every new version into a directory no
manifest names, then replaces the manifest atomically (write beside, fsync, ``os.replace``): the
workspace is the old one or the new one, whatever the moment it is killed. Read with JSON only,
never executed. No pyspark here: the CLI reads it to know which kind a workspace is.
"""

from __future__ import annotations

import re
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt, WorkspaceVersion
from datalog.sources import sealed

NAME = "resident.json"
FORMAT = "datalog-spark-resident/2"
READS = (FORMAT, "datalog-spark-resident/1")     # /1: no layers (the next commit writes /2)


def is_resident(path: str | Path) -> bool:
    """Whether ``path`` is a Spark-resident workspace (it has a manifest). An unreadable
    directory is not one here: opening it as a workspace reports why (``workspace_io``)."""
    try:
        return (Path(path) / NAME).is_file()
    except OSError:
        return False


def write(path: str | Path, body: dict) -> None:
    """Replace the manifest of the workspace at ``path`` by ``body``, atomically."""
    sealed.write(Path(path) / NAME, body, indent=1)


def read(path: str | Path) -> dict:
    """The manifest's body; ``workspace_corrupt`` when it is not JSON or fails its checksum,
    ``workspace_version`` for another format."""
    where = Path(path) / NAME
    try:
        body = sealed.read(where)
    except sealed.Mismatch:
        raise WorkspaceCorrupt(f"{where} fails its checksum (damaged or edited)") from None
    except (OSError, ValueError) as exc:
        raise WorkspaceCorrupt(f"{where} cannot be read as a Spark-resident workspace's manifest: {exc}") from None
    if not isinstance(body, dict):
        raise WorkspaceCorrupt(f"{where} is not a Spark-resident workspace's manifest")
    if body.get("format") not in READS:
        raise WorkspaceVersion(f"{where} has format {body.get('format')!r}; this engine reads {FORMAT}")
    problem = _malformed(body)
    if problem:
        raise WorkspaceCorrupt(f"{where}: {problem}")
    return body


_VERSION = re.compile(r"v[0-9]+")
_NAME = re.compile(r"[A-Za-z_?][A-Za-z0-9_?]*(\.[A-Za-z_?][A-Za-z0-9_?]*)*")


def _malformed(body: dict) -> str | None:
    """What is wrong with the parts of ``body`` that name directories or shape the relations
    (a relation or version name that could lead elsewhere, a layer or bound of the wrong
    shape), or None."""
    relations, sources = body.get("relations", {}), body.get("sources", {})
    if not isinstance(relations, dict) or not isinstance(sources, dict) or not isinstance(body.get("typed", False), bool):
        return "the relation or source list is malformed"
    for name, entry in relations.items():
        if not _NAME.fullmatch(name) or not isinstance(entry, dict) or \
                not _VERSION.fullmatch(str(entry.get("version"))) or not isinstance(entry.get("rows"), int):
            return f"the entry of relation {name!r} is malformed"
        layers, bounds = entry.get("layers", []), entry.get("bounds", [])
        if not isinstance(layers, list) or not all(
                isinstance(x, list) and len(x) == 2 and _VERSION.fullmatch(str(x[0])) and isinstance(x[1], int)
                for x in layers):
            return f"the layers of relation {name!r} are malformed"
        if not isinstance(bounds, list) or not all(isinstance(b, list) and len(b) == 2 for b in bounds):
            return f"the bounds of relation {name!r} are malformed"
        if not isinstance(entry.get("typed", False), bool):
            return f"the entry of relation {name!r} is malformed"
    for name, chain in sources.items():
        if not _NAME.fullmatch(name) or not isinstance(chain, str) or \
                not all(_VERSION.fullmatch(v) for v in chain.split("+")):
            return f"the snapshot chain of source {name!r} is malformed"
    return None


__all__ = ["NAME", "FORMAT", "is_resident", "read", "write"]
