"""The commit log: the commits after the snapshot, one record each with the change of every
relation it changed (EDB and IDB), appended and fsynced before the commit returns; read back
with the snapshot it follows and replayed at open.

Sequence numbers are consecutive; records up to the snapshot's commit are skipped (they remain
after a compaction cut short between its two renames). A torn last record (an append in flight
at a crash) is ignored by readers and cut off by the next writer before it appends."""

from __future__ import annotations

import os
import time
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt
from datalog.workspace import format as wsfile
from datalog.workspace import rows as wsrows
from datalog.workspace import snapshot as wssnapshot
from datalog.workspace import sources as wssources
from datalog.workspace import validate as wsvalidate
from datalog.workspace.snapshot import SNAPSHOT, SnapshotRows
from maintenance.delta import Delta

LOG = "log"


# ------------------------------------------------------------ writing
def start(path: Path, base: int) -> int:
    """A new empty log after commit ``base`` (temporary file, fsync, rename); returns its size."""
    return wsfile.write_file(path / LOG, "log", {"base": base}, [])


def open_for_append(path: Path, valid_length: int, torn: int) -> int:
    """The writer's descriptor of the log. The writer cuts off a torn last record (the commit in
    flight at a crash: ``torn`` bytes after ``valid_length``) before appending."""
    fd = wsfile.open_entry(path / LOG, os.O_RDWR, sole=True)
    if torn:
        try:
            os.ftruncate(fd, valid_length)
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise wsfile.io_error(path / LOG, "cut the torn record off", exc) from None
        except BaseException:
            os.close(fd)
            raise
    return fd


def record_of(seq: int, changes: Delta, sources: dict[str, str] | None) -> dict:
    """The record of commit ``seq``: its changes (EDB and IDB) and, made by ``refresh``, the
    Spark source chains it moves to (``sources``, durable in the same record)."""
    record = {"seq": seq, "time": time.time(),
              "insert": {n: wsrows.pack(c.inserted) for n, c in changes.items() if c.inserted},
              "retract": {n: wsrows.pack(c.retracted) for n, c in changes.items() if c.retracted}}
    if sources:
        record["sources"] = sources
    return record


# ------------------------------------------------------------ reading
def read(path: Path) -> wsfile.Contents:
    """The log at ``path``: its records, its valid length and the bytes of a torn last record."""
    return wsfile.read_file(path / LOG, "log", torn_tail=True)


def read_committed(path: Path) -> tuple[wsfile.Contents, wsfile.Frames]:
    """The log and the snapshot it follows. Log first, then snapshot: a compaction between the
    two reads leaves a snapshot at least as new as the log's base, so the pair is always a
    committed state. The snapshot is read whole and checked, its records decoded when needed
    (``snapshot.contents``)."""
    for _ in range(10):
        log = read(path)
        snap = wssnapshot.read(path)
        seq = wsvalidate.sequence(snap.header.get("seq"), path / SNAPSHOT, "the header's seq")
        wsvalidate.moment(snap.header.get("time", 0.0), path / SNAPSHOT, "the header's time")
        if seq >= wsvalidate.sequence(log.header.get("base"), path / LOG, "the header's base"):
            break
    else:
        raise WorkspaceCorrupt(f"workspace file {path / LOG} starts after its snapshot "
                               f"{path / SNAPSHOT}: commits are missing")
    return log, snap


def records_after(log: wsfile.Contents, seq: int, path: Path, sources: dict[str, str]):
    """The log's records after commit ``seq`` (the snapshot's), checked to be consecutive; the
    Spark source chains a record names join ``sources`` when it is reached."""
    where = path / LOG
    for i, record in enumerate(log.records):
        number = wsvalidate.sequence(record.get("seq"), where, f"the seq of record {i + 1}")
        if number <= seq:
            continue
        if number != seq + 1:
            raise WorkspaceCorrupt(f"workspace file {where}: commit {seq + 1} is missing (found {number})")
        wsvalidate.moment(record.get("time"), where, f"the time of commit {number}")
        seq = number
        sources.update(wssources.chains(record.get("sources", {}), where))
        yield record


# ------------------------------------------------------------ replaying
def replay(records, tables: dict[str, set], path: Path, columns) -> set[str]:
    """The changes of ``records`` (:func:`records_after`) applied to the relations' rows as set
    arithmetic, every row checked against ``columns`` (:class:`datalog.workspace.validate.Columns`);
    returns the relations changed."""
    where, changed = path / LOG, set()
    for record in records:
        for name, rows in _rows_of(record, "retract", where, columns):
            _as_set(tables, name).difference_update(rows)
            changed.add(name)
        for name, rows in _rows_of(record, "insert", where, columns):
            _as_set(tables, name)
            wsrows.add(tables, name, rows, where)
            changed.add(name)
    return changed


def replay_through(engine, records, path: Path, columns, maintainer: Path) -> None:
    """Maintain each commit of ``records`` (:func:`records_after`) through the maintainer of
    ``engine`` restored from the file ``maintainer``; its derived changes must be the logged
    ones. Rows are checked against ``columns`` as for :func:`replay`."""
    where, idb = path / LOG, engine.idb
    for record in records:
        changes = {**{n: (rows, set()) for n, rows in _rows_of(record, "insert", where, columns)}}
        for name, rows in _rows_of(record, "retract", where, columns):
            changes[name] = (changes.get(name, (set(), set()))[0], rows)
        pending = {n: {**{r: -1 for r in erased}, **{r: +1 for r in inserted}}
                   for n, (inserted, erased) in changes.items() if n not in idb}
        delta = engine.apply(pending)
        got = {n: (c.inserted, c.retracted) for n, c in delta.items() if n in idb and c}
        logged = {n: c for n, c in changes.items() if n in idb and (c[0] or c[1])}
        if got != logged:
            raise WorkspaceCorrupt(f"workspace file {where}: commit {record['seq']} maintained "
                                   f"from {maintainer} differs from the logged one")


def _rows_of(record: dict, key: str, where: Path, columns):
    changes = record.get(key, {})
    commit = f"commit {record.get('seq')}"
    if not isinstance(changes, dict):
        raise WorkspaceCorrupt(f"workspace file {where}: {commit} is malformed")
    for name, packed in changes.items():
        if not isinstance(packed, dict):
            raise WorkspaceCorrupt(f"workspace file {where}: {commit} is malformed")
        yield name, wsrows.unpack(packed, where, columns, name, commit)


def _as_set(tables: dict, name: str) -> set:
    """``tables[name]`` as a set of rows (a snapshot's rows read now), created empty if absent."""
    rows = tables.get(name)
    if rows is None or isinstance(rows, SnapshotRows):
        rows = tables[name] = set(rows.rows()) if rows is not None else set()
    return rows
