"""Spark tables in and out: the only module that imports pyspark.

Sources (``.input r(IO=spark, ...)``) name exactly one of ``table="db.t"``, ``path="dir"`` (with
``format=parquet|orc|json|csv``, default parquet) or ``query="SELECT ..."``; columns are matched by
position, or by name with ``columns="a,b"``. Sinks (``.output r(IO=spark, table=... | path=...,
mode=overwrite|merge)``). Rows move through Arrow (``toArrow``), never through ``collect()``.

A Spark schema is checked against the ``.decl`` types before any row is read: Spark's integer
types give ``number``, floating and decimal types ``float``, strings ``symbol``; anything else,
or a different type, is a ``type_mismatch`` naming the table, the column and both types.

Without configuration Spark runs in local mode inside this process, quiet and small
(:func:`session`; the JVM's own output goes to ``spark.log`` in the session's scratch directory); ``master=`` / ``conf=`` and the ``SPARK_*`` environment variables reach a real
cluster. Java 17 (or 21) is the only system requirement.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Iterable

from datalog.language import ast
from datalog.language.checks import check_spark_directive
from datalog.language.errors import MissingInput, SparkError, SparkUnavailable, TypeMismatch
from datalog.language.types import AUTO

try:                                            # the optional extra: pip install 'datalog-lftj[spark]'
    import pyarrow as pa
    from pyspark.errors import AnalysisException, PySparkException
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:                      # pragma: no cover - depends on the installation
    _MISSING = exc
else:
    _MISSING = None

Progress = Callable[[str], None]
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.ctx1.name = org.apache.spark.sql.catalyst.trees.SQLQueryContextLogger
logger.ctx1.level = off
logger.ctx2.name = org.apache.spark.sql.catalyst.trees.DataFrameQueryContextLogger
logger.ctx2.level = off
"""
_session = None
# Extra JVM options for the driver and executors, from the environment. The tests set
# -XX:TieredStopAtLevel=1 there (C1 only: a short run starts faster); the product leaves the JIT
# alone, since C2 makes the long scans and aggregations of a refresh much faster (measured
# at 10M rows: a bucket digest 6.0-7.6 s with C1 only against 3.7-3.9 s).
JAVA_OPTIONS = "DATALOG_SPARK_JAVA_OPTIONS"


# ---------------------------------------------------------------- the session

def session(master: str | None = None, conf: dict[str, str] | None = None) -> "SparkSession":
    """The process's Spark session, started on first use: ``local[2]`` unless ``master`` (or
    ``SPARK_MASTER``) says otherwise; ``conf`` entries override the quiet local defaults."""
    global _session
    if _session is not None:
        return _session
    _require_spark()
    settings = _defaults()
    settings.update(conf or {})
    builder = SparkSession.builder.appName("datalog").master(master or os.environ.get("SPARK_MASTER") or "local[2]")
    for key, value in settings.items():
        builder = builder.config(key, value)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)        # workers run this interpreter
    log = Path(settings["spark.sql.warehouse.dir"]).parent / "spark.log"
    try:
        with _stderr_to(log):                   # the JVM's start-up chatter and later log lines
            _session = builder.getOrCreate()
    except Exception as exc:                    # the JVM did not start
        raise SparkUnavailable(f"Spark did not start: {_first_line(exc)} (its log: {log}). Spark needs "
                               f"Java 17 or 21 (e.g. apt-get install openjdk-17-jre-headless)") from None
    _session.sparkContext.setLogLevel("ERROR")
    return _session


@contextlib.contextmanager
def _stderr_to(path: Path):
    """File descriptor 2 goes to ``path`` while the JVM is started: the JVM, a child process,
    keeps writing there; this process's stderr is restored afterwards."""
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _require_spark() -> None:
    if _MISSING is not None:
        raise SparkUnavailable(f"Spark sources need pyspark and pyarrow ({_MISSING}): "
                               f"pip install 'datalog-lftj[spark]'")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise SparkUnavailable("Spark needs Java 17 or 21 and none was found (no java on PATH, no "
                               "JAVA_HOME): install it, e.g. apt-get install openjdk-17-jre-headless")


def _defaults() -> dict[str, str]:
    """Quiet, small local settings (../shared/design/SPARK_NOTES.md): no UI, two shuffle
    partitions, a private warehouse, errors only in the log, ``$DATALOG_SPARK_JAVA_OPTIONS``."""
    scratch = Path(tempfile.mkdtemp(prefix="datalog-spark-"))
    (scratch / "log4j2.properties").write_text(_LOG4J)
    java = f"-Dlog4j.configurationFile=file:{scratch / 'log4j2.properties'} " + os.environ.get(JAVA_OPTIONS, "")
    return {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
            "spark.driver.memory": os.environ.get("DATALOG_SPARK_MEMORY", "2g"),
            "spark.sql.warehouse.dir": str(scratch / "warehouse"),
            "spark.driver.extraJavaOptions": java, "spark.executor.extraJavaOptions": java,
            "spark.sql.autoBroadcastJoinThreshold": "-1",     # SPARK_NOTES: two-int keys hash badly
            "spark.sql.execution.arrow.pyspark.enabled": "true"}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def stop() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None


# ---------------------------------------------------------------- sources

def source_frame(spark, directive: ast.Directive, types: list[str], names: list[str]) -> "DataFrame":
    """The directive's rows as a DataFrame whose columns are named after the relation's and cast
    to its types (``auto`` columns take the Spark column's); nothing is read yet. Errors:
    ``missing_input`` (no such table, path or a failing query), ``type_mismatch`` (a column's
    type, or the number of columns)."""
    where, frame = _open_source(spark, directive)
    fields = frame.schema.fields
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
        if got is None or (type_ != AUTO and got != type_):
            raise TypeMismatch(f"{where} column {field.name} is {field.dataType.simpleString()}, but "
                               f"{directive.relation}.{name} is a {type_}", directive.span)
    resolved = [spark_type(f.dataType) if t == AUTO else t for f, t in zip(fields, types)]
    return frame.select(*[F.col(_quote(f.name)).cast(_spark_type(t)).alias(n)
                          for f, n, t in zip(fields, names, resolved)])


def _open_source(spark, directive: ast.Directive):
    check_spark_directive(directive)
    table, path, query = (directive.param(k) for k in ("table", "path", "query"))
    try:
        if table is not None:
            return f"table {table}", spark.table(table)
        if path is not None:
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
                           f"{_first_line(exc)}", directive.span) from None


def _exists(spark, path: str) -> bool:
    jvm = spark._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark._jsc.hadoopConfiguration()).exists(hadoop_path)


def _quote(name: str) -> str:
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


def rows_of(frame: "DataFrame", progress: Progress | None = None, label: str = "") -> list[tuple]:
    """Every row of ``frame`` as Python tuples, through Arrow record batches."""
    table = frame.toArrow()
    rows: list[tuple] = []
    done, total = 0, table.num_rows
    for batch in table.to_batches(max_chunksize=200_000):
        columns = [_python_values(c) for c in batch.columns]
        rows.extend(zip(*columns) if columns else [()] * batch.num_rows)
        done += batch.num_rows
        if progress and total:
            filled = 30 * done // total
            progress(f"{label} [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,} rows")
    return rows


def _python_values(column) -> list:
    """An Arrow column as Python values (decimals as floats: the engine's float type)."""
    if pa.types.is_decimal(column.type):
        column = column.cast(pa.float64())
    values = column.to_pylist()
    if column.null_count:
        raise TypeMismatch("a Spark source has NULL values, which Datalog relations cannot hold")
    return values


def frame_of(spark, rows: Iterable[tuple], names: list[str], types: list[str]) -> "DataFrame":
    """A DataFrame of ``rows`` built through Arrow (3-6 s per million rows otherwise)."""
    rows = list(rows)
    arrow_types = [{"number": pa.int64(), "float": pa.float64()}.get(t, pa.string()) for t in types]
    columns = [pa.array([r[i] for r in rows], type=arrow_types[i]) for i in range(len(names))]
    schema = T.StructType([T.StructField(n, {"number": T.LongType(), "float": T.DoubleType()}
                                         .get(t, T.StringType()), False) for n, t in zip(names, types)])
    table = pa.Table.from_arrays(columns, names=names) if names else pa.table({})
    return spark.createDataFrame(table, schema=schema)


# ---------------------------------------------------------------- snapshots and their difference
#
# A source's snapshot is a chain of version directories, oldest first: a *full* version (``rows``,
# every row the source had, duplicates kept) and then *delta* versions (``events``: the rows the
# refresh found inserted, ``__present`` 1, or deleted, 0). A row is in the snapshot if its last
# event in the chain says so (the full version counts as one event "present" per row). Every
# version also holds ``digest``, the digest of the whole snapshot, and ``meta.json`` with its
# row count and its chain's event count (for reports and for when to start a new full version).

BUCKETS = 1 << 18          # digest buckets: a 10M-row snapshot has ~40 rows a bucket


def stage(frame: "DataFrame", where: Path) -> tuple["DataFrame", int]:
    """Write ``frame``'s rows as a full snapshot version at ``where`` (replacing what a cut-short
    attempt left there): ``where/rows`` (Parquet, duplicates kept -- removing them would cost a
    shuffle of every row) and ``where/digest`` (:func:`_digest`), so that two snapshots are
    compared bucket by bucket. Returns the rows read back -- one consistent version of the source, which both
    the diff and the next refresh read -- and how many there are."""
    rows = _uri(where / "rows")
    _guard(lambda: frame.write.mode("overwrite").parquet(rows), f"writing {where}")
    staged = frame.sparkSession.read.parquet(rows)
    digest = _digest(staged)
    with _wide_aggregation(frame.sparkSession):
        _guard(lambda: digest.write.mode("overwrite").parquet(_uri(where / "digest")), f"writing {where}")
    count = _guard(staged.count, "counting")         # from the Parquet footers
    _write_meta(where, count, 0)
    return staged, count


def _digest(rows: "DataFrame") -> "DataFrame":
    """Per bucket (the low bits of a row's 64-bit hash): the row count, the xor of the hashes
    and the sum of their high 31 bits. Two different multisets of rows in a bucket agree on all
    three only through a hash collision; one hash per row (three cost 3 s of 10M rows)."""
    return _digest_of_hashes(rows.select(_hash(rows).alias("h")), "h")


def _digest_of_hashes(hashed: "DataFrame", h: str) -> "DataFrame":
    return (hashed.select(F.pmod(h, F.lit(BUCKETS)).alias("b"), F.col(h).alias("h"),
                          F.shiftrightunsigned(h, 33).alias("s"))
            .groupBy("b").agg(F.count("*").alias("n"), F.bit_xor("h").alias("x"), F.sum("s").alias("s")))


@contextlib.contextmanager
def _wide_aggregation(spark):
    """Room for every digest bucket in the first-level hash map of Spark's aggregation (2^16
    entries unless set; past them rows go to the slower general map): the digest of 10M rows
    took 2.6-2.8 s instead of 3.7 s at 2^19 (C2, local[2]). Set for the digest's jobs only."""
    key = "spark.sql.codegen.aggregate.fastHashMap.capacityBit"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str((BUCKETS - 1).bit_length() + 1))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _hash(rows: "DataFrame"):
    return F.xxhash64(*[F.col(_quote(c)) for c in rows.columns if not c.startswith("__")])


def _read_digest(spark, where: Path) -> "DataFrame":
    return spark.read.parquet(_uri(where / "digest"))


def snapshot(spark, where: Path) -> "DataFrame":
    return spark.read.parquet(_uri(where / "rows"))


def difference(spark, current: Path, chain: list[Path], progress: Progress | None = None,
               label: str = "") -> tuple[list[tuple], list[tuple]]:
    """(inserted rows, deleted rows) from the snapshot ``chain`` to the full version at
    ``current``, computed inside Spark: first the buckets whose digests differ (a join of two
    small tables), then, for the rows of those buckets only, one ``groupBy`` of presence
    (:func:`_presence`; faster here than ``exceptAll`` both ways, and no ``left_anti`` join on
    two ints, per SPARK_NOTES). Only the difference comes to the driver, through Arrow.
    With 0.1% of 10M rows changed this took 6.5 s where diffing every row took 17 s."""
    buckets = _changed_buckets(_read_digest(spark, chain[-1]), _read_digest(spark, current))
    if buckets.num_rows == 0:
        return [], []
    wanted = F.broadcast(spark.createDataFrame(buckets.select(["b"])))
    presence = _presence(_in_buckets(snapshot(spark, current), wanted), _previous(spark, chain, wanted))
    return _split(_guard(lambda: rows_of(presence, progress, label), "diffing"))


def delta_version(spark, frame: "DataFrame", chain: list[Path], where: Path,
                  progress: Progress | None = None, label: str = "") -> tuple[list[tuple], list[tuple], int, bool]:
    """The difference from the snapshot ``chain`` to the source ``frame``, written as a delta
    version at ``where`` (``events``, ``digest``, ``meta.json``) without copying the source:
    (inserted rows, deleted rows, the source's row count, whether the version was written).
    Nothing is written when no digest changed. Two passes over the source: its digest (compared with the chain's), then its rows
    in the buckets that differ (cached: they give both the events and those buckets' new
    digests, so each bucket's digest and rows come from one read even if the source changes
    meanwhile). The driver gets the events as read back from ``where``: what the next refresh
    will compare with is exactly what the engine was given."""
    old_digest = _read_digest(spark, chain[-1])
    with _wide_aggregation(spark):
        buckets = _changed_buckets(old_digest, _digest(frame))
    rows, events = snapshot_meta(chain[-1], spark)
    rows += sum(n or 0 for n in buckets.column("n_new").to_pylist()) - \
        sum(n or 0 for n in buckets.column("n_old").to_pylist())
    if buckets.num_rows == 0:
        return [], [], rows, False
    wanted = F.broadcast(spark.createDataFrame(buckets.select(["b"])))
    current = _in_buckets(frame, wanted).persist()
    try:
        presence = _presence(current, _previous(spark, chain, wanted))
        _guard(lambda: presence.write.mode("overwrite").parquet(_uri(where / "events")), f"writing {where}")
        digest = old_digest.join(wanted, "b", "left_anti").unionByName(_digest_of_hashes(current, "__h"))
        _guard(lambda: digest.write.mode("overwrite").parquet(_uri(where / "digest")), f"writing {where}")
    finally:
        current.unpersist()
    changes = _guard(lambda: rows_of(spark.read.parquet(_uri(where / "events")), progress, label), "diffing")
    _write_meta(where, rows, events + len(changes))
    inserted, deleted = _split(changes)
    return inserted, deleted, rows, True


def _changed_buckets(old: "DataFrame", new: "DataFrame") -> "pa.Table":
    """The buckets whose digests differ: ``b`` with the row counts ``n_old``, ``n_new``."""
    same = old.n.eqNullSafe(new.n) & old.x.eqNullSafe(new.x) & old.s.eqNullSafe(new.s)
    changed = old.join(new, "b", "full_outer").where(~same).select(
        F.coalesce(old.b, new.b).alias("b"), old.n.alias("n_old"), new.n.alias("n_new"))
    return _guard(changed.toArrow, "diffing")


def _in_buckets(rows: "DataFrame", wanted: "DataFrame") -> "DataFrame":
    """The rows whose bucket is one of ``wanted``'s, with their hash as ``__h``."""
    hashed = rows.withColumn("__h", _hash(rows))
    return (hashed.join(wanted, F.pmod("__h", F.lit(BUCKETS)) == wanted.b, "left_semi"))


def _previous(spark, chain: list[Path], wanted: "DataFrame") -> "DataFrame":
    """The chain's events in the ``wanted`` buckets: row columns, ``__seq`` (the version's
    place in the chain) and ``__present``."""
    base = _in_buckets(snapshot(spark, chain[0]), wanted).drop("__h")
    out = base.withColumn("__seq", F.lit(0)).withColumn("__present", F.lit(1))
    for seq, where in enumerate(chain[1:], 1):
        events = _in_buckets(spark.read.parquet(_uri(where / "events")), wanted).drop("__h")
        out = out.unionByName(events.withColumn("__seq", F.lit(seq))
                              .withColumn("__present", F.col("__present").cast("int")))
    return out


def _presence(current: "DataFrame", previous: "DataFrame") -> "DataFrame":
    """The rows whose presence differs: in ``current`` (any copy) against their last event in
    ``previous``; the row columns and ``__present`` (1: inserted, 0: deleted). One ``groupBy``
    of both sides: the current rows count as events before every other (``__seq`` -1,
    "absent") that only mark the row as present now."""
    columns = [_quote(c) for c in current.columns if not c.startswith("__")]
    now = (current.select(*columns).withColumn("__seq", F.lit(-1)).withColumn("__present", F.lit(0))
           .withColumn("__now", F.lit(1)))
    before = previous.withColumn("__now", F.lit(0))
    return (now.unionByName(before).groupBy(*columns)
            .agg(F.max("__now").alias("__now"), F.max_by("__present", "__seq").alias("__before"))
            .where(F.col("__now") != F.col("__before"))
            .select(*columns, F.col("__now").alias("__present")))


def _split(changes: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    return [r[:-1] for r in changes if r[-1]], [r[:-1] for r in changes if not r[-1]]


def _write_meta(where: Path, rows: int, events: int) -> None:
    (Path(where) / "meta.json").write_text(json.dumps({"rows": rows, "events": events}))


def snapshot_meta(where: Path, spark) -> tuple[int, int]:
    """(rows, events) of the snapshot whose last version is ``where``. A version without a
    readable ``meta.json`` (older workspaces) is counted from its digest and taken to have
    many events, so that the next refresh writes a full version."""
    try:
        meta = json.loads((Path(where) / "meta.json").read_text())
        if isinstance(meta.get("rows"), int) and isinstance(meta.get("events"), int):
            return meta["rows"], meta["events"]
    except (OSError, ValueError, AttributeError):
        pass
    rows = _guard(lambda: _read_digest(spark, where).agg(F.sum("n")).first()[0], "counting") or 0
    return rows, 1 << 62


def remove(where: Path) -> None:
    """Delete a snapshot directory (Spark writes it through Hadoop; a local path here)."""
    shutil.rmtree(where, ignore_errors=True)


def _uri(where: Path) -> str:
    return Path(where).resolve().as_uri()


def _spark_type(type_: str):
    return {"number": T.LongType(), "float": T.DoubleType()}.get(type_, T.StringType())


def _guard(action, what: str):
    """Run a Spark action; a failure inside Spark becomes a ``spark_error``."""
    try:
        return action()
    except (PySparkException, pa.ArrowException) as exc:
        raise SparkError(f"Spark failed {what}: {_first_line(exc)}") from None
    except Exception as exc:                       # py4j errors of a dying JVM
        if type(exc).__module__.startswith("py4j"):
            raise SparkError(f"Spark failed {what}: {_first_line(exc)}") from None
        raise


# ---------------------------------------------------------------- sinks

def write_sink(spark, directive: ast.Directive, rows, names: list[str], types: list[str]) -> None:
    """Replace the sink's contents with ``rows``: written beside it, then swapped in, so a
    failure while writing leaves the old contents."""
    check_spark_directive(directive)
    frame = frame_of(spark, rows, names, types)
    table, path = directive.param("table"), directive.param("path")
    if table is not None:
        _replace_table(spark, table, frame)
    else:
        _replace_path(path, frame, (directive.param("format") or "parquet").lower())


def append_sink(spark, directive: ast.Directive, rows, names: list[str], types: list[str]) -> None:
    """Add ``rows`` to the sink (``mode=merge`` with only insertions): writes only them."""
    frame = frame_of(spark, rows, names, types)
    table, path = directive.param("table"), directive.param("path")
    fmt = (directive.param("format") or "parquet").lower()
    if table is not None:
        _guard(lambda: frame.write.mode("append").saveAsTable(table), f"appending to table {table}")
    else:
        _guard(lambda: frame.write.mode("append").format(fmt).save(path), f"appending to {path}")


def _replace_table(spark, table: str, frame: "DataFrame") -> None:
    staged = f"{table}__datalog_new"
    _guard(lambda: spark.sql(f"DROP TABLE IF EXISTS {staged}"), f"dropping {staged}")
    _guard(lambda: frame.write.mode("overwrite").saveAsTable(staged), f"writing table {staged}")
    _guard(lambda: spark.sql(f"DROP TABLE IF EXISTS {table}"), f"dropping {table}")
    _guard(lambda: spark.sql(f"ALTER TABLE {staged} RENAME TO {table}"), f"renaming {staged} to {table}")


def _replace_path(path: str, frame: "DataFrame", fmt: str) -> None:
    if "://" in path and not path.startswith("file:"):     # a cluster's filesystem: no local rename
        _guard(lambda: frame.write.mode("overwrite").format(fmt).save(path), f"writing {path}")
        return
    target = Path(path.removeprefix("file:"))
    staged = target.with_name(f".{target.name}.datalog-new-{uuid.uuid4().hex[:8]}")
    writer = frame.write.mode("overwrite").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    _guard(lambda: writer.save(_uri(staged)), f"writing {staged}")
    old = target.with_name(f".{target.name}.datalog-old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staged, target)
    shutil.rmtree(old, ignore_errors=True)


__all__ = ["session", "stop", "source_frame", "rows_of", "frame_of", "spark_type", "stage", "snapshot",
           "difference", "remove", "write_sink", "append_sink"]
