"""Where a Spark directive's rows are on this machine, and what a snapshot recorded of them:
what a refresh needs to know before it decides whether to start Spark at all. No pyspark here
(importing it costs about 0.3 s, starting its JVM 10-20 s).

A ``path=`` on this machine's filesystem (no scheme while Spark's default filesystem is the
local one, or ``file:``) follows the path policy of ``.input``/``.output`` files
(:mod:`datalog.sources.paths`; :func:`located`). A snapshot version records the listing of the
source's files it was read from (``files.json``, sealed with a SHA-256) and its row and event
counts (``meta.json``): a refresh that lists the same files skips the source.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

from datalog.language import ast
from datalog.language.checks import flag
from datalog.language.errors import InputPath, OutputPath
from datalog.sources import atomic, paths, sealed

LOCAL = "file:///"
FILES = "files.json"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def local_name(path: str, default_fs: str) -> str | None:
    """``path`` as a name on this machine's filesystem, or None when it names a cluster's.

    >>> local_name("edges", "file:///"), local_name("file:///d/e", "file:///"), local_name("edges", "hdfs://nn")
    ('edges', '/d/e', None)
    >>> local_name("s3a://bucket/e", "file:///"), local_name("file:rel/e", "hdfs://nn")
    (None, 'rel/e')
    """
    scheme = _SCHEME.match(path)
    if scheme is None:
        return path if default_fs.lower().startswith("file:") else None
    if scheme.group(1).lower() != "file":
        return None
    return unquote(urlsplit(path).path)


def located(directive: ast.Directive, base: str | Path, allow_paths: bool, default_fs: str) -> tuple[str, Path | None]:
    """Where a directive's ``path=`` is, as Spark names it, and as a local path (None on a
    cluster's filesystem: taken as named). A local one is relative to ``base`` (``-F`` for a
    source, ``-D`` for a sink) and must not lead out of it unless ``allow_paths``; ``default_fs``
    is Spark's default filesystem."""
    given = directive.param("path")
    name = local_name(given, default_fs)
    if name is None:
        return given, None
    base = "." if str(base) == "-" else base                 # -D - prints files; sinks stay in .
    kind, error = ("input", InputPath) if directive.kind == "input" else ("output", OutputPath)
    where = "fact directory (-F)" if kind == "input" else "output directory (-D)"
    if not allow_paths and not paths.inside(base, name):
        raise error(f"Spark {kind} path {given!r} of relation {directive.relation} leads out of the {where} "
                    f"{base}; pass --allow-paths to use it", directive.span)
    local = paths.joined(base, name)
    if kind == "output" and paths.real(base, name) == paths.real(base, "."):
        raise error(f"Spark output path {given!r} of relation {directive.relation} is the {where} {base} "
                    f"itself, which writing the sink would replace; name a directory inside it", directive.span)
    return uri(local), local


def uri(where: Path) -> str:
    """A local path as the ``file:`` URI Spark reads and writes."""
    return Path(where).resolve().as_uri()


def swap_in(staged: Path, target: Path) -> None:
    """Put the directory ``staged`` (written beside ``target``) in ``target``'s place: the old
    contents are moved aside first and removed after, so a failure while writing ``staged``
    left them whole."""
    old = target.with_name(f".{target.name}.datalog-old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staged, target)
    shutil.rmtree(old, ignore_errors=True)


def local_filesystem(options: dict, environ) -> str | None:
    """Spark's default filesystem as a local-mode session would have it (``file:///``), or None
    when the session might have another: a ``master=`` (or ``SPARK_MASTER``) other than
    ``local[...]``, a ``conf=`` entry naming the default filesystem, or ``HADOOP_CONF_DIR`` or
    ``SPARK_CONF_DIR`` in the environment (a ``core-site.xml`` there may name another).

    >>> local_filesystem({}, {}), local_filesystem({"master": "yarn"}, {}), local_filesystem({}, {"HADOOP_CONF_DIR": "/etc/h"})
    ('file:///', None, None)
    """
    master = options.get("master") or environ.get("SPARK_MASTER")
    if master is not None and not str(master).lower().startswith("local"):
        return None
    if any("defaultfs" in str(key).lower() or "fs.default.name" in str(key).lower()
           for key in (options.get("conf") or {})):
        return None
    if environ.get("HADOOP_CONF_DIR") or environ.get("SPARK_CONF_DIR"):
        return None
    return LOCAL


def feed_kind(directive: ast.Directive) -> str | None:
    """How a source carries its own changes (:mod:`datalog.spark.feeds`): ``append``,
    ``partitioned``, ``cdf``, or None for a snapshot source, which a refresh diffs."""
    if directive.io == "delta":
        return "cdf" if flag(directive, "cdf") else None
    if flag(directive, "append_only"):
        return "append"
    return "partitioned" if flag(directive, "partitioned") else None


# ---------------------------------------------------------------- a source's files

def local_listing(base: Path) -> dict[str, tuple[int, int]]:
    """Every data file under ``base`` (recursively; names Spark skips, ``_*`` and ``.*``, left
    out): its path relative to ``base`` -> (size, modification time in ms)."""
    found = {}
    for directory, folders, names in os.walk(base):
        folders[:] = [f for f in folders if not f.startswith(("_", "."))]
        for name in names:
            if not name.startswith(("_", ".")):
                where = Path(directory) / name
                info = where.stat()
                found[where.relative_to(base).as_posix()] = (info.st_size, info.st_mtime_ns // 1_000_000)
    return found


def local_file(root: str) -> Path | None:
    """``root`` as a local path when it names one file (``path="data/edges.parquet"``), else None."""
    if not root.lower().startswith("file:"):
        return None
    where = Path(unquote(urlsplit(root).path))
    return where if where.is_file() else None


def local_files(root: str, fmt: str) -> dict | None:
    """The listing a snapshot records of the files at the local ``file:`` URI ``root``: a
    directory's files by :func:`local_listing`, a single file by :func:`file_identity`; None if
    it lists none."""
    single = local_file(root)
    if single is not None:
        return {single.name: file_identity(single, fmt)}
    found = local_listing(Path(unquote(urlsplit(root).path)))
    return {name: list(meta) for name, meta in found.items()} or None


def file_identity(where: Path, fmt: str) -> list:
    """A single-file source's identity: [size, modification time in ns, SHA-256 of its Parquet
    footer (its schema, row groups, their statistics and offsets: read from the file's last
    bytes) or, for another format, of its whole content]. A file rewritten with other rows but
    the same size and time differs in its footer or content."""
    info = where.stat()
    digest = hashlib.sha256()
    with open(where, "rb") as f:
        if fmt == "parquet" and info.st_size >= 12:
            f.seek(info.st_size - 8)
            length = int.from_bytes(f.read(4), "little")
            f.seek(max(info.st_size - 8 - length, 0))
            digest.update(f.read())
        else:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return [info.st_size, info.st_mtime_ns, digest.hexdigest()]


# ---------------------------------------------------------------- what a snapshot version recorded

def same_files(where: Path, files: dict | None) -> bool:
    """Whether the snapshot whose last version is ``where`` was taken of exactly ``files`` (the
    same names, sizes and modification times): then the source has not changed since and need
    not be read. A missing, damaged (checksum) or foreign record is no."""
    if files is None:
        return False
    try:
        return sealed.read(Path(where) / FILES) == files
    except (OSError, ValueError):
        return False


def record_files(where: Path, files: dict | None) -> None:
    """Say that the snapshot whose last version is ``where`` holds the rows of ``files``
    (listed before they were read), with a SHA-256 of the record."""
    if files is not None:
        sealed.write(Path(where) / FILES, files)


def write_meta(where: Path, rows: int, events: int) -> None:
    atomic.write(Path(where) / "meta.json", [json.dumps({"rows": rows, "events": events}).encode()])


def recorded_meta(where: Path) -> tuple[int, int] | None:
    """(rows, events) as the snapshot version ``where`` records them in ``meta.json``; None if
    it records none readable."""
    try:
        meta = json.loads((Path(where) / "meta.json").read_text())
        if isinstance(meta.get("rows"), int) and isinstance(meta.get("events"), int):
            return meta["rows"], meta["events"]
    except (OSError, ValueError, AttributeError):
        pass
    return None


__all__ = ["LOCAL", "FILES", "feed_kind", "local_name", "located", "uri", "swap_in", "local_filesystem", "local_listing", "local_file",
           "local_files", "file_identity", "same_files", "record_files", "write_meta", "recorded_meta"]
