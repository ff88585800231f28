"""The stored maintainer: ``maintainer.S``, the incremental maintainer's state at commit ``S``,
the snapshot's, written (``maintenance.persistence.capture``) just before that snapshot so that a
writer opening the workspace restores the maintainer instead of rebuilding it.

It is derived data: missing (deleted, or a maintainer that cannot be stored) the maintainer is
built at the first commit; a file of another commit than the snapshot's is stale (left by a
compaction cut short), never read, and deleted by the next snapshot."""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt
from datalog.workspace import format as wsfile
from datalog.workspace import validate as wsvalidate
from maintenance import persistence as wsstate

MAINTAINER = "maintainer"           # maintainer.<seq>

# What a restored maintainer raises when its file lied in a way that reading it could not see
# (a trace key of another type than its column's, a support count missing for a stored row):
# it fails while maintaining, not while reading.
LIED = (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError, AssertionError,
        RecursionError)


def file_of(path: Path, seq: int) -> Path:
    """The maintainer file of commit ``seq`` in the workspace at ``path``."""
    return path / f"{MAINTAINER}.{seq}"


def read(path: Path, seq: int) -> tuple | None:
    """The stored maintainer if it belongs to the snapshot's commit ``seq`` (a missing one, or
    one left by a compaction cut short, is not used: the maintainer is then built at the first
    commit): its state, its path and its frames (checked whole; version 3 pages are decoded when
    the maintainer first needs them)."""
    path = file_of(path, seq)
    if not os.path.lexists(path):              # a link there is read, and refused, as such
        return None
    frames = wsfile.read_frames(path, "maintainer")
    if type(frames.header.get("seq")) is not int or frames.header["seq"] != seq:
        raise WorkspaceCorrupt(f"workspace file {path} belongs to commit {frames.header.get('seq')!r}")
    state = frames.record(0).get("state") if len(frames) else None
    pages = state.get("frames", 0) if isinstance(state, dict) else None
    if type(pages) is not int or len(frames) != 1 + pages:
        raise WorkspaceCorrupt(f"workspace file {path} is incomplete")    # pages of version 3 missing
    return state, path, frames


def guarded(engine, restored: tuple | None):
    """A context in which what the maintainer restored from a file (``restored``: the maintainer
    and its file) raises because of that file (:data:`LIED`) is ``workspace_corrupt`` naming the
    file; nothing for a maintainer built in this process."""
    if restored is None or engine.maintainer is not restored[0]:
        return nullcontext()
    return _lied(restored[1])


@contextmanager
def _lied(path: Path):
    try:
        yield
    except LIED as exc:
        raise WorkspaceCorrupt(f"workspace file {path}: the maintainer restored from it fails "
                               f"({type(exc).__name__}: {exc}): it is damaged or forged (it is derived "
                               f"data: deleted, the next writer rebuilds it)") from None


def save(path: Path, seq: int, engine) -> int:
    """The maintainer of commit ``seq``, if it can be captured, before the snapshot that it
    belongs to; else no maintainer file. Returns its size."""
    if wsvalidate.rebuilds_values(engine.schema):     # records, ADTs, mixed: no maintainer file (validate)
        return 0
    records = wsstate.capture(engine.maintainer)
    if records is None:
        return 0
    return wsfile.write_file(file_of(path, seq), "maintainer",
                             {"seq": seq, "compression": wsfile.COMPRESSION}, records)


def drop_others(path: Path, seq: int) -> None:
    """After the rename of the snapshot of commit ``seq``, the maintainer files of other commits
    are stale."""
    keep = file_of(path, seq).name
    for stale in path.glob(f"{MAINTAINER}.*"):
        if stale.name != keep:
            try:
                stale.unlink(missing_ok=True)
            except OSError:
                pass                                  # stale, never read; next time
