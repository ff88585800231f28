"""Checksummed record files: the on-disk unit of a workspace (see ``datalog/workspace.md``).

A file is a sequence of framed records. A frame is a 4-byte big-endian payload length, the
CRC-32 of those 4 bytes, the CRC-32 of the payload (each 4 bytes, big-endian), then the
payload: one JSON object, ASCII (non-ASCII characters escaped). The first record is the
header ``{"format": "datalog-workspace", "kind": ..., "version": V, ...}``; it is read and
its version checked before anything else (later versions keep this first frame as it is).
A header with ``"compression": "zlib"`` says that every payload after it is that JSON
compressed by zlib (RFC 1950; level 1 when written: snapshots and maintainer files, whose
JSON compresses about 3.5x), preceded (from snapshot and maintainer version 4) by the JSON's
length as 8 bytes big-endian: a payload is inflated to at most that many bytes, so a forged one
that inflates far more (a "zip bomb") is refused without being inflated; the checksum covers the
payload as stored.
Each kind of file has its own version (:data:`VERSIONS`); an engine reads its versions and
older ones.
Nothing read is executed: payloads are JSON data.

Files are written whole by :mod:`datalog.sources.atomic` (a new temporary file created
exclusively, never through a link, fsynced, renamed). A workspace file is opened without
following a link and must be a regular file (:func:`open_entry`): a link or anything else planted
in the workspace is ``workspace_corrupt`` naming it, never read or written through. An error of
the file system (a full disk, no permission, a read-only file system) is ``workspace_io`` naming
the file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> write_file(os.path.join(d, "f"), "log", {"base": 0}, [{"seq": 1}])
97
>>> read_file(os.path.join(d, "f"), "log", torn_tail=True).records
[{'seq': 1}]
"""

from __future__ import annotations

import errno
import json
import os
import stat
import struct
import zlib
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from datalog.language.errors import WorkspaceCorrupt, WorkspaceIO, WorkspaceVersion
from datalog.sources import atomic

FORMAT = "datalog-workspace"
VERSION = 1                         # of every kind of file not in VERSIONS
VERSIONS = {"maintainer": 4,        # 2: aggregate views, theta-join and whole-rule records; 3: pages
            "snapshot": 4,            # 2: Spark sources name chains; 3: a directory of the relations
            "log": 2}                 # 2: Spark sources name chains of snapshot versions
                                      # (maintainer, snapshot 4: compressed payloads declare their size)
_FRAME = struct.Struct(">III")
COMPRESSION = "zlib"                # the one compression a header may name
SIZED = 4                           # from this version a compressed payload starts with its JSON's size
ZLIB, ZLIB_SIZED = "zlib", "zlib-sized"     # how a file's payloads are compressed (_check_header)
_SIZE = 8                           # bytes of that size
INFLATION = 512                     # the most a payload may expand: the writer's level 1 expands at most
                                    # 229x (zlib 1.2.13, on the most compressible input), deflate at most
                                    # 1032x (level 9): a payload claiming more was not written by a writer
                                    # of this format (a bound for older payloads, and for a declared size)
SLACK = 1 << 16                     # ... plus this (short payloads)
STEP = 1 << 15                      # compressed bytes inflated at a time (so at most ~16 MB before a refusal)


def encode(record: dict, compressed: bool = False) -> bytes:
    """One frame: length, CRC-32, JSON payload (compressed by zlib if ``compressed``)."""
    payload = json.dumps(record, separators=(",", ":")).encode("ascii")
    if compressed:
        payload = len(payload).to_bytes(_SIZE, "big") + zlib.compress(payload, 1)
    length = len(payload)
    return _FRAME.pack(length, zlib.crc32(length.to_bytes(4, "big")), zlib.crc32(payload)) + payload


def header(kind: str, extra: dict) -> dict:
    return {"format": FORMAT, "kind": kind, "version": version_of(kind), **extra}


def version_of(kind: str) -> int:
    """The format version this engine writes (and the newest it reads) for ``kind``."""
    return VERSIONS.get(kind, VERSION)


@dataclass
class Contents:
    """A file read back: its header, its records after the header, and the byte length of
    its valid prefix (``torn`` bytes after it were an unfinished append)."""

    header: dict
    records: list = field(default_factory=list)
    valid_length: int = 0
    torn: int = 0


def read_file(path: str | Path, kind: str, torn_tail: bool = False) -> Contents:
    """Every record of ``path``. An incomplete last frame is a torn append: allowed (and reported
    in ``torn``) when ``torn_tail``, else the file is corrupt. A complete frame with a wrong
    checksum is corrupt anywhere."""
    return parse(_read_bytes(path), str(path), kind, torn_tail)


def _read_bytes(path: str | Path) -> bytes:
    fd = open_entry(path, os.O_RDONLY)
    try:
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise io_error(path, "read", exc) from None
    finally:
        os.close(fd)


def open_entry(path: str | Path, flags: int, create: bool = False, sole: bool = False) -> int:
    """A descriptor of the workspace file ``path``, opened with ``flags`` without following a link
    (and without blocking on a FIFO), created if ``create``. Not a regular file (a link, a
    directory, a device), or with other hard links when ``sole`` (a file changed in place, whose
    other names would change too): ``workspace_corrupt`` naming it; missing (and not ``create``):
    ``workspace_corrupt``; an error of the file system: ``workspace_io``."""
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileNotFoundError:
        raise WorkspaceCorrupt(f"workspace file {path} is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise WorkspaceCorrupt(f"workspace file {path} is a symbolic link; a workspace holds only "
                                   f"regular files (it is never followed)") from None
        if os.path.isdir(path):
            raise WorkspaceCorrupt(f"workspace file {path} is a directory, not a regular file") from None
        raise io_error(path, "open", exc) from None
    info = os.fstat(fd)
    problem = ("is not a regular file" if not stat.S_ISREG(info.st_mode) else
               f"has {info.st_nlink} hard links (a writer changes it in place: replace it by a copy)"
               if sole and info.st_nlink > 1 else None)
    if problem:
        os.close(fd)
        raise WorkspaceCorrupt(f"workspace file {path} {problem}")
    return fd


def io_error(path, action: str, exc: OSError) -> WorkspaceIO:
    """``workspace_io``: ``action`` (read, write, open, ...) on ``path`` failed with ``exc``."""
    return WorkspaceIO(f"cannot {action} workspace file {path}: {exc.strerror or exc}")


def _header(data: bytes, path: str, kind: str) -> tuple[dict, int, str | None]:
    """The header record, where the next frame starts, and whether the payloads after it are
    compressed; a header of another kind or a newer version is refused."""
    first, offset = _frame(data, 0, path)
    if first is None:
        raise WorkspaceCorrupt(f"workspace file {path} is truncated in its header ({len(data)} bytes)")
    return first, offset, _check_header(first, path, kind)


def parse(data: bytes, path: str, kind: str, torn_tail: bool) -> Contents:
    first, offset, compressed = _header(data, path, kind)
    records = [first]
    while offset < len(data):
        record, end = _frame(data, offset, path, compressed)
        if record is None:
            if not torn_tail:
                raise WorkspaceCorrupt(f"workspace file {path} is truncated at byte {offset} "
                                       f"(of {len(data)})")
            break
        records.append(record)
        offset = end
    return Contents(records[0], records[1:], offset, len(data) - offset)


class Frames:
    """A record file whose frames were all checked (lengths and checksums) but of which only the
    header was decoded: :meth:`record` decodes frame ``i`` (0: the first after the header) when it
    is asked for. A workspace reads its stored maintainer so, one page at a time."""

    def __init__(self, data: bytes, path: str, kind: str):
        self.data, self.path = data, path
        self.header, offset, self.compressed = _header(data, path, kind)
        self.spans = []
        while offset < len(data):
            span = _checked(data, offset, path)
            if span is None:
                raise WorkspaceCorrupt(f"workspace file {path} is truncated at byte {offset} (of {len(data)})")
            self.spans.append(span)
            offset = span[1]

    def __len__(self) -> int:
        return len(self.spans)

    @property
    def valid_length(self) -> int:
        return len(self.data)

    def record(self, i: int) -> dict:
        start, end = self.spans[i]
        return _decoded(self.data[start:end], start - _FRAME.size, self.path, self.compressed)


def read_frames(path: str | Path, kind: str) -> Frames:
    """``path`` checked whole, decoded lazily (see :class:`Frames`)."""
    return Frames(_read_bytes(path), str(path), kind)


def _checked(data: bytes, offset: int, path: str):
    """The payload span ``(start, end)`` of the frame at ``offset``, its checksums verified; None
    for an incomplete frame."""
    if offset + _FRAME.size > len(data):
        return None
    length, length_crc, crc = _FRAME.unpack_from(data, offset)
    if zlib.crc32(length.to_bytes(4, "big")) != length_crc:
        raise WorkspaceCorrupt(f"workspace file {path}: checksum mismatch in the frame at byte {offset}")
    start, end = offset + _FRAME.size, offset + _FRAME.size + length
    if end > len(data):
        return None
    if zlib.crc32(memoryview(data)[start:end]) != crc:
        raise WorkspaceCorrupt(f"workspace file {path}: checksum mismatch in the record at byte {offset}")
    return start, end


def _decoded(payload: bytes, offset: int, path: str, compressed=None) -> dict:
    """The record of ``payload``; ``compressed``: None, :data:`ZLIB` or :data:`ZLIB_SIZED` (zlib
    after the declared size of the JSON)."""
    try:
        if compressed:
            payload = _inflated(payload, offset, path, compressed == ZLIB_SIZED)
        record = json.loads(payload.decode("ascii"))
    except (zlib.error, UnicodeDecodeError, ValueError, RecursionError):
        raise WorkspaceCorrupt(f"workspace file {path}: the record at byte {offset} is not valid data") from None
    if not isinstance(record, dict):
        raise WorkspaceCorrupt(f"workspace file {path}: the record at byte {offset} is not an object")
    return record


def _inflated(payload: bytes, offset: int, path: str, sized: bool) -> bytes:
    """``payload`` inflated, never to more than it declares (``sized``) nor, at any point, to more
    than :data:`INFLATION` times the bytes consumed so far (plus :data:`SLACK`): a payload that
    would inflate further is refused before it does, having inflated a few MB at most."""
    limit = INFLATION * len(payload) + SLACK
    if sized:
        declared = int.from_bytes(payload[:_SIZE], "big")
        if len(payload) < _SIZE or declared > limit:
            raise WorkspaceCorrupt(f"workspace file {path}: the record at byte {offset} declares "
                                   f"{declared} bytes, more than it can hold")
        payload, limit = payload[_SIZE:], declared
    inflater, parts, produced, view = zlib.decompressobj(), [], 0, memoryview(payload)
    for start in range(0, len(payload), STEP):
        allowed = min(limit, INFLATION * (start + STEP) + SLACK) - produced
        part = inflater.decompress(view[start:start + STEP], allowed + 1)
        produced += len(part)
        if len(part) > allowed or inflater.unconsumed_tail:
            break
        parts.append(part)
    else:
        if inflater.eof and not inflater.unused_data and (produced == limit or not sized):
            return b"".join(parts)
    raise WorkspaceCorrupt(f"workspace file {path}: the record at byte {offset} does not inflate to "
                           f"the {'size it declares' if sized else 'size a writer of this format writes'}")


def _frame(data: bytes, offset: int, path: str, compressed=None):
    """The record at ``offset`` and where the next starts; ``(None, None)`` for an incomplete frame
    (a torn append). A frame whose length field fails its checksum is corrupt, not torn, so a
    flipped length byte is never mistaken for the end of the file."""
    span = _checked(data, offset, path)
    if span is None:
        return None, None
    start, end = span
    return _decoded(data[start:end], offset, path, compressed), end


def _check_header(first: dict, path: str, kind: str):
    """Refuse a header of another kind or a newer version; whether its payloads are compressed
    (None, :data:`ZLIB`, or :data:`ZLIB_SIZED`: compressed after their declared size)."""
    if first.get("format") != FORMAT or first.get("kind") != kind:
        raise WorkspaceCorrupt(f"workspace file {path} does not start with a {kind} header")
    version = first.get("version")
    if type(version) is not int:
        raise WorkspaceCorrupt(f"workspace file {path} has no format version")
    if version > version_of(kind):
        raise WorkspaceVersion(f"workspace file {path} has format version {version}; this engine reads "
                               f"version {version_of(kind)} and older: use a newer datalog")
    compression = first.get("compression")
    if compression not in (None, COMPRESSION):
        raise WorkspaceVersion(f"workspace file {path} is compressed by {compression!r}; this engine reads "
                               f"{COMPRESSION!r} only: use a newer datalog")
    if compression != COMPRESSION:
        return None
    return ZLIB_SIZED if version >= SIZED else ZLIB


def write_file(path: str | Path, kind: str, extra: dict, records) -> int:
    """Write header and records to ``path`` atomically (:func:`datalog.sources.atomic.write`: a
    new temporary file, fsync, rename, fsync of the directory; on failure ``workspace_io`` and
    ``path`` as it was). Returns the size in bytes. ``extra`` with ``"compression": "zlib"``:
    the records after the header are compressed."""
    compressed = extra.get("compression") == COMPRESSION
    if extra.get("compression") not in (None, COMPRESSION):
        raise ValueError(f"unknown compression {extra['compression']!r}")
    frames = chain([encode(header(kind, extra))], (encode(record, compressed) for record in records))
    try:
        return atomic.write(path, frames)
    except OSError as exc:
        raise io_error(path, "write", exc) from None


def append(fd: int, record: dict, where) -> int:
    """Append one frame to the open file ``where`` and fsync it (durable when this returns). On any
    error the file is cut back to its old length, so that a failed append leaves no partial
    frame; an error of the file system is ``workspace_io``."""
    frame = encode(record)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, start)
            raise
    except OSError as exc:
        raise io_error(where, "append to", exc) from None
    return len(frame)
