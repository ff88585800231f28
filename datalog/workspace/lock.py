"""The writer lock: one writer per workspace directory, by an exclusive ``flock`` on its
``lock`` file, which holds the writer's pid while it has the workspace open (empty otherwise).

The kernel releases the lock when the process dies (also by SIGKILL); the stale pid left in the
file is ignored (:func:`lock_holder` checks that the process is alive). The file holds no data:
deleted or damaged, it is created again."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from datalog.language.errors import WorkspaceLocked

LOCK = "lock"


def acquire(path: Path) -> int:
    """Lock the workspace at ``path`` for writing without waiting, and write this process's pid
    in the lock file; returns its descriptor, which holds the lock until :func:`release`. Error
    ``workspace_locked`` naming the holder."""
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        holder = lock_holder(path)
        raise WorkspaceLocked(f"workspace {path} is locked by process "
                              f"{holder if holder else '(pid not yet written)'} "
                              f"({path / LOCK}); one writer at a time") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def release(fd: int) -> None:
    """Empty the lock file and close it, which releases the lock."""
    os.ftruncate(fd, 0)
    os.close(fd)


def lock_holder(path: Path) -> int | None:
    """The pid written in the lock file, if that process is alive."""
    try:
        text = (Path(path) / LOCK).read_text().strip()
        pid = int(text)
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid
