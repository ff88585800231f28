"""Every file the engine creates (workspace files, ``.output`` files) is written here: never
through a link, never into a file it did not create, whole or not at all.

A file is first written under a new temporary name beside its destination
(``.NAME.<random>.tmp``), created exclusively: ``O_CREAT | O_EXCL | O_NOFOLLOW``, so a link or
file planted at that name is an error, never written through. Its mode is ``0o666`` less the
umask, as ``open`` gives (``tempfile.mkstemp`` would give 0600). It is written, fsynced, renamed
over the destination (``os.replace`` replaces a link there, it does not follow it; a reader sees
the old file or the new one) and the directory is fsynced. A failure at any step (a full disk, a
write error, an exception while producing the data) removes the temporary file and leaves the
destination as it was; the ``OSError`` goes to the caller, which names it in its own coded error
(``workspace_io``, ``output_error``).

:func:`stage` writes the temporary file and returns it unrenamed, so that several files are
written first and renamed together (:func:`commit_all`: ``.output`` files, all or none).

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> write(os.path.join(d, "f"), [b"hello"])
5
>>> sorted(os.listdir(d)), open(os.path.join(d, "f"), "rb").read()
(['f'], b'hello')
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Iterable

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ATTEMPTS = 16                       # fresh names tried when one exists (chance 2^-48 each)


def temporary_name(path: Path) -> Path:
    """A new hidden name beside ``path`` for its temporary file."""
    return path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")


def is_temporary(name: str, of: str | None = None) -> bool:
    """Whether ``name`` is a temporary file's name (of the file named ``of``, if given)."""
    return name.startswith(f".{of}." if of else ".") and name.endswith(".tmp")


class Staged:
    """A temporary file ``tmp`` written and fsynced beside ``path``, ``size`` bytes, not yet
    renamed over it: :meth:`commit` renames it, :meth:`discard` removes it."""

    def __init__(self, path: Path, tmp: Path, size: int):
        self.path, self.tmp, self.size = path, tmp, size

    def commit(self) -> None:
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        _remove(self.tmp)


def stage(path: str | Path, chunks: Iterable[bytes]) -> Staged:
    """Write ``chunks`` to a new temporary file beside ``path`` and fsync it; on any failure it
    is removed and the error raised."""
    path = Path(path)
    fd, tmp = _create(path)
    try:
        with open(fd, "wb", closefd=False) as out:     # buffered: records come in small frames
            size = 0
            for chunk in chunks:
                out.write(chunk)
                size += len(chunk)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _remove(tmp)
        raise
    try:
        os.close(fd)                                   # a delayed write error may come here
    except BaseException:
        _remove(tmp)
        raise
    return Staged(path, tmp, size)


def commit_all(staged: list[Staged]) -> None:
    """Rename every staged file over its destination, then fsync their directories. A rename
    that fails (rare: same directory, destinations checked by the caller) removes the
    temporaries not renamed yet."""
    for i, item in enumerate(staged):
        try:
            item.commit()
        except BaseException:
            discard_all(staged[i:])
            raise
    for directory in {item.path.parent for item in staged}:
        fsync_dir(directory)


def discard_all(staged: list[Staged]) -> None:
    for item in staged:
        item.discard()


def write(path: str | Path, chunks: Iterable[bytes]) -> int:
    """Write ``path`` atomically (see the module); returns its size in bytes."""
    staged = stage(path, chunks)
    commit_all([staged])
    return staged.size


def fsync_dir(directory: str | Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(path: Path) -> tuple[int, Path]:
    """A new empty temporary file beside ``path``, open for writing, and its name."""
    for _ in range(_ATTEMPTS):
        tmp = temporary_name(path)
        try:
            return os.open(tmp, _CREATE, 0o666), tmp
        except FileExistsError:
            continue                                   # planted or (never in practice) taken
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", str(path))


def _remove(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass                                           # gone, or cannot be: the caller's error counts
