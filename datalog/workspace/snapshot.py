"""The snapshot: the program's blocks and every relation's rows (EDB and IDB) as of one commit,
written whole (temporary file, fsync, rename: the rename is the commit point of a compaction or
a program change) and read back checked whole but decoded lazily, a relation when first used."""

from __future__ import annotations

from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt
from datalog.workspace import blocks as wsblocks
from datalog.workspace import format as wsfile
from datalog.workspace import rows as wsrows
from datalog.workspace import validate as wsvalidate

SNAPSHOT = "snapshot"
CHUNK = 50_000                      # rows per snapshot record


def write(path: Path, seq: int, when: float, blocks: list[dict], sources: dict[str, str], engine) -> int:
    """The snapshot of commit ``seq`` (made at ``when``) of ``engine``'s relations, whose program is
    ``blocks``; returns its size."""
    return wsfile.write_file(path / SNAPSHOT, "snapshot",
                             {"seq": seq, "time": when, "compression": wsfile.COMPRESSION},
                             _records(engine, blocks, sources))


def _records(engine, blocks: list[dict], sources: dict[str, str]):
    """The blocks record with the directory of the relations' frames, each relation's rows
    (CHUNK a frame), the end record."""
    directory, stored, frame = {}, [], 1
    for name in engine.relations():
        relation = engine.db[name]
        rows, by_first = relation.stored_rows(), relation.stores_by_first()
        frames = max(1, -(-len(rows) // CHUNK))
        directory[name] = {"first": frame, "frames": frames, "count": len(rows), "arity": relation.arity,
                           "sample": list(rows[0]) if rows else None, "by_first": by_first}
        stored.append((name, rows, relation.arity))
        frame += frames
    yield {"blocks": blocks, **({"sources": sources} if sources else {}), "relations": directory}
    for name, rows, arity in stored:
        for start in range(0, max(len(rows), 1), CHUNK):
            yield {"relation": name, **wsrows.pack(rows[start:start + CHUNK], arity)}
    yield {"end": frame}


def read(path: Path) -> wsfile.Frames:
    """The snapshot at ``path``, every frame checked, its records decoded when asked for."""
    return wsfile.read_frames(path / SNAPSHOT, "snapshot")


def program_record(snap: wsfile.Frames, where: Path) -> tuple[dict, list[dict]]:
    """The first record (blocks, Spark sources, the directory of the relations) and its blocks,
    their shape checked."""
    if len(snap) < 2:
        raise WorkspaceCorrupt(f"workspace file {where} is incomplete (no end record)")
    first, end = snap.record(0), snap.record(len(snap) - 1)
    if "blocks" not in first or end.get("end") != len(snap) - 1 or type(end.get("end")) is not int:
        raise WorkspaceCorrupt(f"workspace file {where} is incomplete (no end record)")
    blocks = first["blocks"]
    if not isinstance(blocks, list) or not blocks or not all(wsblocks.is_block(b) for b in blocks):
        raise WorkspaceCorrupt(f"workspace file {where}: the block list is malformed")
    wsvalidate.converted_rows(blocks, where)
    return first, blocks


def tables(snap: wsfile.Frames, where: Path, first: dict, columns) -> tuple[dict, dict[str, list]]:
    """Every relation's rows, and the same rows as lists in their stored order
    (``Relation.stored_rows``: the hint of ``Relation.presorted``), checked against ``columns``
    (:class:`datalog.workspace.validate.Columns`). A version 3 snapshot names each relation's
    frames in its first record: its rows are then a :class:`SnapshotRows`, decoded (and checked)
    when first used; older ones are decoded here."""
    if "relations" in first:
        directory = first["relations"]
        if not isinstance(directory, dict):
            raise WorkspaceCorrupt(f"workspace file {where}: the relation directory is malformed")
        return {name: SnapshotRows(snap, where, name, entry, columns) for name, entry in directory.items()}, {}
    ordered: dict[str, list] = {}
    for i in range(1, len(snap) - 1):
        record = snap.record(i)
        name = record.get("relation")
        if not isinstance(name, str):
            raise WorkspaceCorrupt(f"workspace file {where}: the record at frame {i} is malformed")
        rows, table = wsrows.unpack_list(record, where, columns, name, f"the record at frame {i}"), ordered.get(name)
        if table is None:
            ordered[name] = rows
        else:
            table += rows
    return {name: set(rows) for name, rows in ordered.items()}, ordered


class SnapshotRows:
    """One relation's rows in a version 3 snapshot, from its directory entry: its arity, count, a
    sample row (for columns whose type the data settles) and whether they are by first column
    are known at once; ``rows()`` decodes its frames when first called (checking that they hold
    that relation, arity and count) and gives the same list every call.

    Invariants: the directory entry was checked when this was made (its frames lie between the
    blocks record and the end record; a sample exactly when there are rows); ``rows()`` either
    raises ``workspace_corrupt`` or returns ``count`` rows of ``name`` of arity ``arity``."""

    def __init__(self, snap: wsfile.Frames, where: Path, name: str, entry, columns):
        ok = isinstance(entry, dict) and all(type(entry.get(k)) is int for k in ("first", "frames", "count", "arity"))
        if not ok or not (1 <= entry["first"] and entry["first"] + entry["frames"] < len(snap) and entry["frames"] >= 1
                          and entry["count"] >= 0 and entry["arity"] >= 0):
            raise WorkspaceCorrupt(f"workspace file {where}: the directory entry of {name} is malformed")
        sample = entry.get("sample")
        if (sample is None) != (entry["count"] == 0) or not (sample is None or isinstance(sample, list)):
            raise WorkspaceCorrupt(f"workspace file {where}: the directory entry of {name} is malformed")
        if entry["arity"] != columns.arity(name, where, "the relation directory"):
            raise WorkspaceCorrupt(f"workspace file {where}: the rows of {name} do not have arity "
                                   f"{columns.arity(name, where, 'the relation directory')}")
        if sample is not None:                        # it settles an auto column's type: checked first
            sample = columns.check_rows(name, [sample], where, f"the directory entry of {name}")[0]
        self.snap, self.where, self.name = snap, where, name
        self.first, self.frames, self.count, self.arity = entry["first"], entry["frames"], entry["count"], entry["arity"]
        self.sample = tuple(sample) if sample is not None else None
        self.by_first = entry.get("by_first") is True
        self.columns = columns
        self._rows: list | None = None

    def __bool__(self) -> bool:
        return self.count > 0

    def rows(self) -> list[tuple]:
        if self._rows is None:
            rows: list[tuple] = []
            for i in range(self.first, self.first + self.frames):
                record = self.snap.record(i)
                if record.get("relation") != self.name or record.get("arity") != self.arity:
                    raise WorkspaceCorrupt(f"workspace file {self.where}: the record at frame {i} is not "
                                           f"of {self.name} as its directory says")
                rows += wsrows.unpack_list(record, self.where, self.columns, self.name, f"the record at frame {i}")
            if len(rows) != self.count:
                raise WorkspaceCorrupt(f"workspace file {self.where}: {self.name} has {len(rows)} rows, its "
                                       f"directory says {self.count}")
            self._rows = rows
        return self._rows
