"""Spark tables as sources and sinks of relations, checked against the ``.decl`` types.

Sources (``.input r(IO=spark, ...)``) name exactly one of ``table="db.t"``, ``path="dir"`` (with
``format=parquet|orc|json|csv``, default parquet) or ``query="SELECT ..."``; columns are matched by
position, or by name with ``columns="a,b"``. Sinks (``.output r(IO=spark, table=... | path=...,
mode=overwrite|merge)``). Rows move through Arrow (``toArrow``), never through ``collect()``.

A ``path=`` on this machine's filesystem (no scheme while Spark's default filesystem is the
local one, or ``file:``) follows the path policy of ``.input``/``.output`` files
(:mod:`datalog.sources.paths`): it is relative to the fact directory (``-F``) for a source and
to the output directory (``-D``) for a sink, and one whose real path leaves that directory is
``input_path``/``output_path`` unless the user passes ``--allow-paths``; a stored program can
never allow it, so a workspace received from elsewhere cannot make ``datalog refresh`` replace a
local directory. A path on a cluster's filesystem (``hdfs://``, ``s3a://``, ..., or no scheme
while the default filesystem is one) is the warehouse's and is taken as named, like ``table=``.

A Spark schema is checked against the ``.decl`` types before any row is read: Spark's integer
types give ``number``, floating and decimal types ``float``, strings ``symbol``; anything else,
or a different type, is a ``type_mismatch`` naming the table, the column and both types.

Spark has no unsigned 64-bit type: an ``unsigned`` column is ``DecimalType(20, 0)`` (every value
0 .. 2^64-1 exactly) in a sink, and a source's unsigned column is an integer type or a decimal
of scale 0 (at most 20 digits) whose values must lie in 0 .. 2^64-1 (else ``bad_fact_file``).
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import unquote, urlsplit

from datalog.language import ast
from datalog.language.checks import SPARK_FORMATS, check_spark_directive
from datalog.language.errors import (BadCommand, BadFactFile, DriverTooLarge, MissingInput,
                                     SparkError, TypeMismatch, Unsupported)
from datalog.language.types import AUTO
from datalog.spark import places
from datalog.spark.session import conf_set, first_line, guard

try:                                            # without them session() is spark_unavailable first
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.errors import AnalysisException
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError:                             # pragma: no cover - depends on the installation
    pass

Progress = Callable[[str], None]


# ---------------------------------------------------------------- sources

def source_frame(spark, directive: ast.Directive, types: list[str], names: list[str],
                 facts_dir: str | Path = ".", allow_paths: bool = False) -> "DataFrame":
    """The directive's rows as a DataFrame whose columns are named after the relation's and cast
    to its types (``auto`` columns take the Spark column's); nothing is read yet. Errors:
    ``missing_input`` (no such table, path or a failing query), ``type_mismatch`` (a column's
    type, or the number of columns), ``input_path`` (a local ``path=`` leading out of
    ``facts_dir`` without ``allow_paths``)."""
    where, frame = _open_source(spark, directive, facts_dir, allow_paths)
    return typed(directive, where, frame, types, names)


def typed(directive: ast.Directive, where: str, frame: "DataFrame", types: list[str], names: list[str],
          keep: tuple[str, ...] = ()) -> "DataFrame":
    """``frame`` (read from ``where``) with the relation's column names and types, checked as
    :func:`source_frame` says; its columns ``keep`` are passed through after them."""
    fields = [f for f in frame.schema.fields if f.name not in keep]
    wanted = directive.param("columns")
    if wanted:
        columns = [c.strip() for c in wanted.split(",")]
        known = {f.name: f for f in fields}
        missing = [c for c in columns if c not in known]
        if missing:
            raise TypeMismatch(f"{where} has no column {missing[0]} (it has {', '.join(known)}) for "
                               f"{directive.relation}", directive.span)
        fields = [known[c] for c in columns]
    if len(fields) != len(types):
        raise TypeMismatch(f"{where} has {len(fields)} column{'s' * (len(fields) != 1)} "
                           f"({', '.join(f.name for f in fields)}) but {directive.relation} has "
                           f"{len(types)}", directive.span)
    for field, type_, name in zip(fields, types, names):
        got = spark_type(field.dataType)
        if type_ == "unsigned" and _unsigned_source(field.dataType):
            continue
        if got is None or (type_ != AUTO and got != type_):
            raise TypeMismatch(f"{where} column {field.name} is {field.dataType.simpleString()}, but "
                               f"{directive.relation}.{name} is a {type_}", directive.span)
    resolved = [spark_type(f.dataType) if t == AUTO else t for f, t in zip(fields, types)]
    return frame.select(*[F.col(quote(f.name)).cast(_spark_type(t)).alias(n)
                          for f, n, t in zip(fields, names, resolved)], *[F.col(quote(k)) for k in keep])


def _open_source(spark, directive: ast.Directive, facts_dir, allow_paths: bool):
    check_spark_directive(directive)
    table, path, query = (directive.param(k) for k in ("table", "path", "query"))
    if directive.io == "delta":
        return delta_source(spark, directive, facts_dir, allow_paths)[:2]
    try:
        if table is not None:
            return f"table {table}", spark.table(table)
        if path is not None:
            path, _ = located(spark, directive, facts_dir, allow_paths)
            fmt = (directive.param("format") or "parquet").lower()
            if not _exists(spark, path):
                raise MissingInput(f"Spark source {path} for {directive.relation} does not exist",
                                   directive.span)
            reader = spark.read.format(fmt)
            if fmt == "csv":
                reader = reader.option("header", "true").option("inferSchema", "true")
            return f"{fmt} {path}", reader.load(path)
        return "query", spark.sql(query)
    except AnalysisException as exc:
        what = f"table {table}" if table is not None else f"query {query!r}" if query else f"path {path}"
        raise MissingInput(f"Spark cannot read {what} for {directive.relation}: "
                           f"{first_line(exc)}", directive.span) from None
    except Exception as exc:                # py4j: a damaged file (a Parquet footer read at load)
        if type(exc).__module__.startswith("py4j"):
            raise SparkError(f"Spark failed reading the source of {directive.relation}: {first_line(exc)}",
                             directive.span) from None
        raise


def delta_source(spark, directive: ast.Directive, facts_dir, allow_paths: bool) -> tuple[str, "DataFrame", int]:
    """``IO=delta``: (what it is, its rows at its latest version as a DataFrame, that version),
    the table's data files read by Spark (:mod:`datalog.spark.delta_table`)."""
    from datalog.spark import delta_table
    name, local = located(spark, directive, facts_dir, allow_paths)
    found = delta_table.snapshot(str(local) if local is not None else name, directive.relation)
    if not found.files:
        frame = spark.createDataFrame(found.schema.empty_table())
    else:
        frame = guard(lambda: spark.read.parquet(*found.files), f"reading Delta table {name}")
    return f"Delta table {directive.param('path')} version {found.version}", frame, found.version


def read_files(spark, directive: ast.Directive, root: str, files: list[str], fmt: str) -> "DataFrame":
    """Exactly ``files`` (relative paths) of the dataset at ``root`` (their partition directories' columns
    included): what an append-only or partitioned source's refresh reads (:mod:`datalog.spark.feeds`)."""
    reader = spark.read.format(fmt).option("basePath", root)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    paths = [root.rstrip("/") + "/" + f for f in files]
    try:
        if len(paths) > 1:          # the first file's schema for all: no schema discovery job over the others
            reader = reader.schema(reader.load(paths[0]).schema)
        with _listed_here(spark, root, len(paths)):
            return reader.load(paths)
    except AnalysisException as exc:
        raise MissingInput(f"Spark cannot read the files of {root} for {directive.relation}: {first_line(exc)}",
                           directive.span) from None



_DISCOVERY = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_LISTED_HERE = 10_000           # paths of a local dataset Spark need not list in a job


@contextlib.contextmanager
def _listed_here(spark, root: str, paths: int):
    """While Spark takes in ``paths`` files of a local dataset: their statuses are read by the
    driver, not by a listing job (Spark starts one past 32 paths: 0.25 s for 100 files here;
    the files were just listed, :func:`listing`). A remote store keeps Spark's parallel listing."""
    before = spark.conf.get(_DISCOVERY, None)
    if not root.lower().startswith("file:") or paths <= 32 or paths > _LISTED_HERE or (
            before is not None and before.isdigit() and int(before) >= paths):
        yield
        return
    with conf_set(spark, _DISCOVERY, str(paths)):
        yield


def files_root(spark, directive: ast.Directive, facts_dir, allow_paths: bool) -> tuple[str, str]:
    """(the directory of a ``table=`` or ``path=`` source's files as Spark names it, their
    format): a table's from the catalog (``DESCRIBE TABLE EXTENDED``)."""
    table = directive.param("table")
    if table is None:
        path, _ = located(spark, directive, facts_dir, allow_paths)
        if not _exists(spark, path):
            raise MissingInput(f"Spark source {path} for {directive.relation} does not exist", directive.span)
        return path, (directive.param("format") or "parquet").lower()
    try:
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    except AnalysisException as exc:
        raise MissingInput(f"Spark cannot read table {table} for {directive.relation}: {first_line(exc)}",
                           directive.span) from None
    info = {r[0].strip(): (r[1] or "").strip() for r in rows if r[0]}
    if not info.get("Location") or info.get("Provider", "").lower() not in SPARK_FORMATS:
        raise Unsupported(f"table {table} of {directive.relation} is not a directory of "
                          f"{'/'.join(SPARK_FORMATS)} files (provider {info.get('Provider') or 'unknown'}), which "
                          f"append_only=true and partitioned=true compare by their files", directive.span)
    return info["Location"], info["Provider"].lower()


def listing(spark, root: str) -> dict[str, tuple[int, int]]:
    """Every data file under ``root`` (recursively; names Spark skips, ``_*`` and ``.*``, left
    out): its path relative to ``root`` -> (size, modification time in ms), from the
    filesystem's metadata only. A local directory is listed by this process (through Hadoop
    each file's three facts cost a round trip to the JVM: 1.6 s for 200 files)."""
    if root.lower().startswith("file:"):
        return places.local_listing(Path(unquote(urlsplit(root).path)))
    jvm = spark._jvm
    base = jvm.org.apache.hadoop.fs.Path(root)
    fs = base.getFileSystem(spark._jsc.hadoopConfiguration())
    prefix = fs.makeQualified(base).toString().rstrip("/") + "/"
    found = {}
    files = fs.listFiles(base, True)
    while files.hasNext():
        status = files.next()
        name = status.getPath().toString()
        if not name.startswith(prefix):
            raise MissingInput(f"Spark listed {name} under {root}, outside it")
        relative = name[len(prefix):]
        if any(p.startswith(("_", ".")) for p in relative.split("/")):
            continue
        found[relative] = (int(status.getLen()), int(status.getModificationTime()))
    return found


# ---------------------------------------------------------------- where a path= is

def located(spark, directive: ast.Directive, base: str | Path, allow_paths: bool,
            default_fs: str | None = None) -> tuple[str, Path | None]:
    """:func:`datalog.spark.places.located`, with Spark's default filesystem the session's
    unless ``default_fs`` is given (then ``spark`` may be None)."""
    return places.located(directive, base, allow_paths, default_fs or default_filesystem(spark))


def check_sink_paths(spark, directives: list[ast.Directive], out_dir: str | Path, allow_paths: bool,
                     default_fs: str | None = None) -> None:
    """Every sink's local ``path=`` checked (:func:`located`) before any sink or file is written."""
    for directive in directives:
        if directive.param("path") is not None:
            located(spark, directive, out_dir, allow_paths, default_fs)


def default_filesystem(spark) -> str:
    """Spark's default filesystem (``fs.defaultFS``): ``file:///`` in local mode."""
    return spark._jsc.hadoopConfiguration().get("fs.defaultFS") or "file:///"


def _exists(spark, path: str) -> bool:
    jvm = spark._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark._jsc.hadoopConfiguration()).exists(hadoop_path)


def quote(name: str) -> str:
    """A column name as Spark SQL reads it."""
    return "`" + name.replace("`", "``") + "`"


def spark_type(data_type) -> str | None:
    """The engine type a Spark column type holds, or None."""
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "number"
    if isinstance(data_type, (T.FloatType, T.DoubleType, T.DecimalType)):
        return "float"
    if isinstance(data_type, (T.StringType, T.VarcharType, T.CharType)):
        return "symbol"
    return None


def _unsigned_source(data_type) -> bool:
    """A Spark column type an ``unsigned`` column reads: an integer type, or a decimal of scale 0
    with at most 20 digits (its values are checked as they are read)."""
    return isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)) or (
        isinstance(data_type, T.DecimalType) and data_type.scale == 0 and data_type.precision <= 20)


def _spark_type(type_: str):
    return {"number": T.LongType(), "float": T.DoubleType(), "unsigned": T.DecimalType(20, 0)}.get(
        type_, T.StringType())


def rows_of(frame: "DataFrame", progress: Progress | None = None, label: str = "",
            relation: str | None = None) -> list[tuple]:
    """Every row of ``frame`` as Python tuples, through Arrow record batches. At most
    :func:`driver_max_rows` rows come to the driver: past them (one more is fetched to know),
    ``driver_too_large`` names ``relation`` (else ``label``) and the setting to raise."""
    limit = driver_max_rows(frame.sparkSession)
    table = frame.limit(limit + 1).toArrow()
    if table.num_rows > limit:
        what = relation or label or "a relation"
        raise DriverTooLarge(f"{what} has more than {limit:,} rows, and this step brings them to Spark's driver "
                             f"(the in-process engine holds them): raise --driver-max-rows (now {limit:,}; the "
                             f"Spark setting {DRIVER_MAX_ROWS}) and --driver-memory, or keep the relations in Spark: "
                             f"`datalog run --engine spark`, `datalog init --engine spark`")
    rows: list[tuple] = []
    done, total = 0, table.num_rows
    for batch in table.to_batches(max_chunksize=200_000):
        columns = [_python_values(c, relation or label) for c in batch.columns]
        rows.extend(zip(*columns) if columns else [()] * batch.num_rows)
        done += batch.num_rows
        if progress and total:
            filled = 30 * done // total
            progress(f"{label} [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,} rows")
    return rows


DRIVER_MAX_ROWS = "spark.datalog.driverMaxRows"
DEFAULT_DRIVER_MAX_ROWS = 20_000_000     # ~1.5 GB of Python tuples of two ints; Spark's driver has 2g by default


def driver_max_rows(spark) -> int:
    """The most rows one relation may bring to the driver (``--driver-max-rows``, the Spark
    setting ``spark.datalog.driverMaxRows``)."""
    value = spark.conf.get(DRIVER_MAX_ROWS, None)
    try:
        return int(value) if value is not None else DEFAULT_DRIVER_MAX_ROWS
    except ValueError:
        raise BadCommand(f"{DRIVER_MAX_ROWS}={value!r} is not a number of rows") from None


def _python_values(column, what: str = "") -> list:
    """An Arrow column as Python values (decimals as floats: the engine's float type; a decimal
    of scale 0, 20 digits, is an unsigned column as :func:`source_frame` casts it: ints);
    ``what``: the relation (or the step) its errors name."""
    where = f" ({what})" if what else ""
    if pa.types.is_decimal(column.type) and column.type.scale == 0 and column.type.precision == 20:
        if column.null_count:
            raise TypeMismatch(f"a Spark source has NULL values{where}, which Datalog relations cannot hold")
        values = [int(v) for v in column.to_pylist()]
        bad = next((v for v in values if not 0 <= v < 2 ** 64), None)
        if bad is not None:
            raise BadFactFile(f"a Spark source has {bad} in an unsigned column{where} (0 .. 2^64-1)")
        return values
    if pa.types.is_decimal(column.type):
        column = column.cast(pa.float64())
    values = column.to_pylist()
    if column.null_count:
        raise TypeMismatch(f"a Spark source has NULL values{where}, which Datalog relations cannot hold")
    if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
        raise BadFactFile(f"a Spark source has NaN in a float column{where}, which Datalog relations cannot hold "
                          "(NaN has no place in the order of a relation's values)")
    return values


def schema_of(names: list[str], types: list[str], nullable: bool = True):
    """The Spark schema of a relation's rows: ``names`` with the Spark types of ``types``."""
    return T.StructType([T.StructField(n, _spark_type(t), nullable) for n, t in zip(names, types)])


def frame_of(spark, rows: Iterable[tuple], names: list[str], types: list[str]) -> "DataFrame":
    """A DataFrame of ``rows`` built through Arrow (3-6 s per million rows otherwise)."""
    rows = list(rows)
    arrow_types = [{"number": pa.int64(), "float": pa.float64(), "unsigned": pa.decimal128(20, 0)}.get(t, pa.string())
                   for t in types]
    columns = [pa.array([r[i] for r in rows], type=arrow_types[i]) for i in range(len(names))]
    schema = schema_of(names, types, nullable=False)
    table = pa.Table.from_arrays(columns, names=names) if names else pa.table({})
    return spark.createDataFrame(table, schema=schema)


# ---------------------------------------------------------------- sinks

def write_sink(spark, directive: ast.Directive, rows, names: list[str], types: list[str],
               out_dir: str | Path = ".", allow_paths: bool = False) -> None:
    """Replace the sink's contents with ``rows``: written beside it, then swapped in, so a
    failure while writing leaves the old contents. A local ``path=`` leading out of ``out_dir``
    is ``output_path`` unless ``allow_paths``, checked before anything is written."""
    write_frame(spark, directive, frame_of(spark, rows, names, types), out_dir, allow_paths)


def write_frame(spark, directive: ast.Directive, frame: "DataFrame", out_dir: str | Path = ".",
                allow_paths: bool = False) -> None:
    """Replace the sink's contents with ``frame`` (its columns named as the sink's), as
    :func:`write_sink` does: the resident evaluator writes its relations straight from Spark."""
    check_spark_directive(directive)
    table = directive.param("table")
    where = None if table is not None else located(spark, directive, out_dir, allow_paths)
    if where is None:
        _replace_table(spark, table, frame)
    else:
        _replace_path(*where, frame, (directive.param("format") or "parquet").lower())


def append_sink(spark, directive: ast.Directive, rows, names: list[str], types: list[str],
                out_dir: str | Path = ".", allow_paths: bool = False) -> None:
    """Add ``rows`` to the sink (``mode=merge`` with only insertions): writes only them."""
    check_spark_directive(directive)
    table = directive.param("table")
    path = None if table is not None else located(spark, directive, out_dir, allow_paths)[0]
    frame = frame_of(spark, rows, names, types)
    fmt = (directive.param("format") or "parquet").lower()
    if table is not None:
        guard(lambda: frame.write.mode("append").saveAsTable(table), f"appending to table {table}")
    else:
        guard(lambda: frame.write.mode("append").format(fmt).save(path), f"appending to {path}")


def append_frame(spark, directive: ast.Directive, frame: "DataFrame", out_dir: str | Path = ".",
                 allow_paths: bool = False) -> None:
    """Add ``frame``'s rows to the sink (``mode=merge`` with only insertions), from Spark."""
    check_spark_directive(directive)
    table = directive.param("table")
    path = None if table is not None else located(spark, directive, out_dir, allow_paths)[0]
    fmt = (directive.param("format") or "parquet").lower()
    if table is not None:
        guard(lambda: frame.write.mode("append").saveAsTable(table), f"appending to table {table}")
    else:
        guard(lambda: frame.write.mode("append").format(fmt).save(path), f"appending to {path}")


def _replace_table(spark, table: str, frame: "DataFrame") -> None:
    staged = f"{table}__datalog_new"
    guard(lambda: spark.sql(f"DROP TABLE IF EXISTS {staged}"), f"dropping {staged}")
    guard(lambda: frame.write.mode("overwrite").saveAsTable(staged), f"writing table {staged}")
    guard(lambda: spark.sql(f"DROP TABLE IF EXISTS {table}"), f"dropping {table}")
    guard(lambda: spark.sql(f"ALTER TABLE {staged} RENAME TO {table}"), f"renaming {staged} to {table}")


def _replace_path(path: str, local: Path | None, frame: "DataFrame", fmt: str) -> None:
    if local is None:                                       # a cluster's filesystem: no local rename
        guard(lambda: frame.write.mode("overwrite").format(fmt).save(path), f"writing {path}")
        return
    target = local
    staged = target.with_name(f".{target.name}.datalog-new-{uuid.uuid4().hex[:8]}")
    writer = frame.write.mode("overwrite").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    guard(lambda: writer.save(uri(staged)), f"writing {staged}")
    places.swap_in(staged, target)


uri, local_name = places.uri, places.local_name


__all__ = ["driver_max_rows", "DRIVER_MAX_ROWS", "source_frame", "schema_of", "typed", "delta_source", "read_files", "files_root", "listing", "rows_of", "frame_of", "spark_type", "write_sink", "write_frame", "append_sink", "append_frame", "quote", "uri",
           "located", "local_name", "check_sink_paths"]
