"""The writer lock: one writer per workspace directory, by an exclusive ``flock`` on its
``lock`` file, which holds the writer's pid while it has the workspace open (empty otherwise).

The kernel releases the lock when the process dies (also by SIGKILL); the stale pid left in the
file is ignored (:func:`lock_holder` checks that the process is alive). The file holds no data:
deleted or damaged, it is created again. It is opened without following a link and never
truncated on open (:func:`datalog.workspace.format.open_entry`): a link, a hard link or anything
but a regular file planted at ``lock`` is ``workspace_corrupt``, so the writer never empties a
file elsewhere."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt, WorkspaceIO, WorkspaceLocked
from datalog.workspace import format as wsfile

LOCK = "lock"


def acquire(path: Path) -> int:
    """Lock the workspace at ``path`` for writing without waiting, and write this process's pid
    in the lock file; returns its descriptor, which holds the lock until :func:`release`. Error
    ``workspace_locked`` naming the holder."""
    fd = wsfile.open_entry(path / LOCK, os.O_RDWR, create=True, sole=True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        holder = lock_holder(path)
        raise WorkspaceLocked(f"workspace {path} is locked by process "
                              f"{holder if holder else '(pid not yet written)'} "
                              f"({path / LOCK}); one writer at a time") from None
    try:
        os.ftruncate(fd, 0)                      # this regular file of the workspace, locked
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass                                     # a full disk: the pid only names the holder in messages
    return fd


def release(fd: int) -> None:
    """Empty the lock file and close it, which releases the lock."""
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def lock_holder(path: Path) -> int | None:
    """The pid written in the lock file, if that process is alive."""
    try:
        fd = wsfile.open_entry(Path(path) / LOCK, os.O_RDONLY)
    except (WorkspaceCorrupt, WorkspaceIO):
        return None
    try:
        pid = int(os.read(fd, 32).decode("ascii").strip())
        if pid <= 0:                             # 0 and -n would name process groups
            return None
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return pid
