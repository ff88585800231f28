"""A refresh that starts no Spark: every source and sink is a local Parquet file or directory,
and every source is small enough to be read whole by this process.

Starting Spark costs 10-20 s here, and a refresh of a small source that changed needs none of
it: an in-process workspace holds the relations on the driver anyway. So when

- Spark would run in local mode (:func:`datalog.spark.places.local_filesystem`),
- every ``.input r(IO=spark, path=...)`` is a Parquet file or a directory of Parquet files (no
  partition directories) on this machine, a snapshot source (not ``append_only``,
  ``partitioned`` or ``cdf``), whose last snapshot holds at most :func:`row_limit` rows
  (``DATALOG_LOCAL_REFRESH_ROWS``, default 1,000,000; 0 turns this way off), and
- every ``.output r(IO=spark, ...)`` is a local Parquet ``path=``,

the refresh reads the sources and the snapshot chains with pyarrow, diffs them here, writes the
new snapshot as a *full* version (``rows`` and ``meta.json``, and the files' record), and writes
the sinks with pyarrow: Spark's layout (``part-*.parquet`` files in the sink's directory) and
Spark's column types (``number`` int64, ``float`` double, ``unsigned`` decimal(20, 0),
``symbol`` string), so that Spark and every other reader of the sink see what Spark would have
written. The version has no ``digest``: the Spark way computes it from the rows when it next
diffs against it (:func:`datalog.spark.diff._read_digest`).

Values are read as Spark reads them, or not at all: a source with a column type other than
signed integers (``number``, ``unsigned`` when no value is negative), ``float``/``double``
(``float``, no NaN) and strings (``symbol``), with NULLs, with files of different schemas, or
a relation with a column of ``auto``, record or ADT type, is *declined* (:func:`plan` or :func:`read` answer None) and the
refresh takes the Spark way, whose errors name what is wrong. No pyspark here.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from datalog.language import ast
from datalog.spark import places

ROWS = "DATALOG_LOCAL_REFRESH_ROWS"
TYPES = ("number", "unsigned", "float", "symbol")       # a record or ADT column: the Spark way
DEFAULT_ROWS = 1_000_000


def row_limit(environ=os.environ) -> int:
    """The most rows a source's snapshot may hold for its refresh to run here (0: never)."""
    try:
        return max(int(environ.get(ROWS, DEFAULT_ROWS)), 0)
    except ValueError:
        return DEFAULT_ROWS


@dataclass
class Source:
    """One source read here: its directive, where its files are, their listing (taken before
    they are read), and its relation's column names and types."""

    directive: ast.Directive
    local: Path
    files: dict
    names: list[str]
    types: list[str]


@dataclass
class Plan:
    """A refresh this process can do alone: its sources and Spark's default filesystem."""

    sources: list[Source]
    default_fs: str
    limit: int


def plan(engine, last: dict[str, Path], facts_dir, out_dir) -> Plan | None:
    """A :class:`Plan` when every source and sink of ``engine``'s program qualifies (see the
    module docstring; ``last``: each source's last snapshot version), else None. A sink's local
    path leaving ``out_dir`` is ``output_path`` here as on the Spark way."""
    default_fs, limit = places.local_filesystem(engine.spark_options, os.environ), row_limit()
    if default_fs is None or limit == 0:
        return None
    for directive in engine.spark_directives("output"):
        if not _local_parquet(directive) or not set(engine.schema[directive.relation].types) <= set(TYPES):
            return None
        places.located(directive, out_dir or ".", engine.allow_paths, default_fs)
    sources = []
    for directive in engine.spark_directives("input"):
        name = directive.relation
        if not _local_parquet(directive) or places.feed_kind(directive) or name not in last:
            return None
        _, local = places.located(directive, facts_dir, engine.allow_paths, default_fs)
        recorded = places.recorded_meta(last[name])
        if local is None or not local.exists() or recorded is None or recorded[0] > limit:
            return None
        files = places.local_files(places.uri(local), "parquet")
        types = list(engine.schema[name].types)
        if files is None or any("/" in f for f in files) or not set(types) <= set(TYPES):
            return None                               # partition directories: Spark's discovery
        sources.append(Source(directive, local, files, engine.column_names(name), types))
    return Plan(sources, default_fs, limit)


def _local_parquet(directive: ast.Directive) -> bool:
    return (directive.io == "spark" and directive.param("path") is not None and directive.param("table") is None
            and directive.param("query") is None and (directive.param("format") or "parquet").lower() == "parquet")


# ---------------------------------------------------------------- reading as Spark reads

def read(source: Source, limit: int) -> "pa.Table | None":
    """The source's rows as a table of Spark's column types, named after the relation's columns
    (duplicates kept, as Spark's snapshot keeps them); None to decline."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    paths = [source.local] if source.local.is_file() else [source.local / f for f in sorted(source.files)]
    try:
        parts = [pq.ParquetFile(p).read() for p in paths]
    except (OSError, pa.ArrowException):
        return None                                   # a damaged file: Spark's error
    if any(not p.schema.equals(parts[0].schema) for p in parts) or sum(p.num_rows for p in parts) > limit:
        return None
    table = pa.concat_tables(parts)
    wanted = source.directive.param("columns")
    columns = [c.strip() for c in wanted.split(",")] if wanted else table.column_names
    if len(columns) != len(source.types) or len(set(columns)) != len(columns) or \
            any(c not in table.column_names for c in columns) or len(set(table.column_names)) != table.num_columns:
        return None
    cast = [_as_spark(table.column(c), t) for c, t in zip(columns, source.types)]
    if any(c is None for c in cast):
        return None
    return pa.Table.from_arrays(cast, names=source.names) if cast else pa.table({})


def _as_spark(column, type_: str):
    """``column`` in the Spark type of ``type_`` as Spark's reader gives it, or None to decline."""
    import pyarrow as pa
    import pyarrow.compute as pc
    kind = column.type
    if column.null_count:
        return None
    signed = pa.types.is_signed_integer(kind)
    if type_ == "number" and signed:
        return column.cast(pa.int64())
    if type_ == "unsigned" and signed:
        if len(column) and pc.min(column).as_py() < 0:
            return None
        return column.cast(pa.decimal128(20, 0))
    if type_ == "float" and (pa.types.is_float32(kind) or pa.types.is_float64(kind)):
        column = column.cast(pa.float64())
        return None if len(column) and pc.any(pc.is_nan(column)).as_py() else column
    if type_ == "symbol" and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return column.cast(pa.string())
    return None


def rows_of(table) -> list[tuple]:
    """A table of Spark's column types as the engine's tuples (an unsigned decimal as an int)."""
    import pyarrow as pa
    columns = []
    for column in table.columns:
        values = column.to_pylist()
        columns.append([int(v) for v in values] if pa.types.is_decimal(column.type) else values)
    return list(zip(*columns)) if columns else [()] * table.num_rows


def snapshot_rows(chain: list[Path], names: list[str]) -> set[tuple] | None:
    """The rows present in the snapshot ``chain`` (a full version, then delta versions: a row's
    last event says whether it is there; :mod:`datalog.spark.diff`); None to decline."""
    present = _version_rows(chain[0] / "rows", names)
    if present is None:
        return None
    present = set(present)
    for where in chain[1:]:
        events = _version_rows(where / "events", names + ["__present"])
        if events is None:
            return None
        for event in events:
            (present.add if event[-1] else present.discard)(event[:-1])
    return present


def _version_rows(where: Path, names: list[str]) -> list[tuple] | None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        parts = [pq.ParquetFile(where / f).read(columns=names) for f in sorted(places.local_listing(where))]
    except (OSError, KeyError, pa.ArrowException):
        return None
    if any(not p.schema.equals(parts[0].schema) for p in parts):
        return None
    return [row for part in parts for row in rows_of(part)]


def write_version(where: Path, table, files: dict) -> None:
    """``table`` as a full snapshot version at ``where`` (replacing what a cut-short attempt
    left there): ``rows``, ``meta.json`` and the record of the ``files`` it was read from."""
    import pyarrow.parquet as pq
    shutil.rmtree(where, ignore_errors=True)
    (where / "rows").mkdir(parents=True)
    pq.write_table(table, where / "rows" / "part-00000-local.parquet")
    places.write_meta(where, table.num_rows, 0)
    places.record_files(where, files)


# ---------------------------------------------------------------- sinks

def arrow_table(rows, names: list[str], types: list[str]):
    """``rows`` as a table of Spark's column types for ``types`` (not null, as Spark writes a
    relation), named ``names``."""
    import pyarrow as pa
    rows = list(rows)
    arrays = [_array([r[i] for r in rows], t) for i, t in enumerate(types)]
    fields = [pa.field(n, a.type, nullable=False) for n, a in zip(names, arrays)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)) if fields else pa.table({})


def _array(values: list, type_: str):
    """One column of Spark's type for ``type_``, from its buffers: ``pyarrow.array`` of a Python
    list imports pandas, 0.5 s of a refresh that writes a few rows."""
    import numpy as np
    import pyarrow as pa
    if type_ == "number":
        return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(np.array(values, np.int64))])
    if type_ == "float":
        return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(np.array(values, np.float64))])
    if type_ == "unsigned":                     # 16 bytes a value, little-endian: the high half 0
        words = np.zeros(2 * len(values), np.uint64)
        words[0::2] = np.array(values, np.uint64)
        return pa.Array.from_buffers(pa.decimal128(20, 0), len(values), [None, pa.py_buffer(words)])
    data = [str(v).encode() for v in values]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    strings = pa.Array.from_buffers(pa.large_string(), len(data), [None, pa.py_buffer(offsets),
                                                                   pa.py_buffer(b"".join(data))])
    return strings.cast(pa.string()) if offsets[-1] < 1 << 31 else strings


def write_output(engine, directive: ast.Directive, default_fs: str, delta=None, out_dir=".") -> None:
    """Write a relation to its local Parquet sink: all of it (a new directory swapped in for
    the old one), or with ``mode=merge`` and a ``delta`` holding only insertions, just those
    (one new file, which appears whole: written under a name readers skip, then renamed)."""
    import pyarrow.parquet as pq
    name = directive.relation
    names, types = engine.column_names(name), list(engine.schema[name].types)
    _, target = places.located(directive, out_dir or ".", engine.allow_paths, default_fs)
    part = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    merge = (directive.param("mode") or "overwrite").lower() == "merge"
    if merge and delta is not None and not delta.retracted:
        if delta.inserted:
            target.mkdir(parents=True, exist_ok=True)
            staged = target / f".{part}.datalog-new"
            pq.write_table(arrow_table(delta.inserted, names, types), staged, compression="snappy")
            os.replace(staged, target / part)
        return
    staged = target.with_name(f".{target.name}.datalog-new-{uuid.uuid4().hex[:8]}")
    staged.mkdir(parents=True)
    pq.write_table(arrow_table(engine.rows(name), names, types), staged / part, compression="snappy")
    (staged / "_SUCCESS").touch()
    places.swap_in(staged, target)


__all__ = ["ROWS", "DEFAULT_ROWS", "row_limit", "Source", "Plan", "plan", "read", "rows_of", "snapshot_rows",
           "write_version", "arrow_table", "write_output"]
