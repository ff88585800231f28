"""The process's Spark session: started on first use, stopped once; Spark's failures as errors.

Without configuration Spark runs in local mode inside this process, quiet and small
(:func:`session`; the JVM's own output goes to ``spark.log`` in the session's scratch directory); ``master=`` / ``conf=`` and the ``SPARK_*`` environment variables reach a real
cluster. Java 17 (or 21) is the only system requirement: without it, or without pyspark and
pyarrow, starting the session is a ``spark_unavailable`` error saying what to install.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from datalog.language.errors import SparkError, SparkUnavailable
from datalog.spark import class_archive

try:                                            # the optional extra: pip install 'datalog-lftj[spark]'
    import pyarrow as pa
    from pyspark.errors import PySparkException
    from pyspark.sql import Observation, SparkSession
except ImportError as exc:                      # pragma: no cover - depends on the installation
    _MISSING = exc
else:
    _MISSING = None

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


def session(master: str | None = None, conf: dict[str, str] | None = None) -> "SparkSession":
    """The process's Spark session, started on first use: ``local[2]`` unless ``master`` (or
    ``SPARK_MASTER``) says otherwise; ``conf`` entries override the quiet local defaults."""
    global _session
    if _session is not None:
        return _session
    _require_spark()
    settings = _defaults()
    settings.update(conf or {})
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)        # workers run this interpreter
    log = Path(settings["spark.sql.warehouse.dir"]).parent / "spark.log"
    sharing = class_archive.java_options(settings, jvm_pid)
    try:
        _session = _start(master, settings, sharing, log)
    except Exception as exc:                    # the JVM did not start
        if sharing:                             # not with the class archive: once more without it
            class_archive.discard(settings)
            with contextlib.suppress(Exception):
                _session = _start(master, settings, "", log)
        if _session is None:
            raise SparkUnavailable(f"Spark did not start: {first_line(exc)} (its log: {log}). Spark needs "
                                   f"Java 17 or 21 (e.g. apt-get install openjdk-17-jre-headless)") from None
    _session.sparkContext.setLogLevel("ERROR")
    return _session


def _start(master: str | None, settings: dict[str, str], sharing: str, log: Path) -> "SparkSession":
    """Start the session; ``sharing``: the class archive's options (:mod:`class_archive`),
    for the driver's JVM only (executors are not started from here), before the user's own
    (which win where they set the same, e.g. a log of their own)."""
    settings = dict(settings)
    if sharing:
        settings["spark.driver.extraJavaOptions"] = f"{sharing} {settings.get('spark.driver.extraJavaOptions', '')}"
    builder = SparkSession.builder.appName("datalog").master(master or os.environ.get("SPARK_MASTER") or "local[2]")
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _stderr_to(log):                       # the JVM's start-up chatter and later log lines
        return builder.getOrCreate()


def prepare_class_archive(conf: dict[str, str] | None = None) -> bool:
    """Make the driver JVM's class archive now if it is missing (:func:`class_archive.prepare`)."""
    _require_spark()
    return class_archive.prepare(dict(conf or {}))


def end_jvm(timeout: float) -> bool:
    """After :func:`stop`: let the driver's JVM exit as it does when this process ends (its
    standard input, from this process, closes) and wait up to ``timeout`` seconds for it;
    whether it has exited."""
    proc = _jvm_process()
    if proc is None:
        return True
    try:
        proc.stdin.close()
        proc.wait(timeout)
    except Exception:                           # not in time: it ends with this process
        return False
    return True


def jvm_pid() -> int | None:
    """The process id of the driver's JVM this process started, or None."""
    proc = _jvm_process()
    return None if proc is None else proc.pid


def _jvm_process():
    """The ``subprocess.Popen`` of the driver's JVM that pyspark started here, or None."""
    from pyspark import SparkContext
    return getattr(SparkContext._gateway, "proc", None)


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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def stop() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None


def guard(action, what: str):
    """Run a Spark action; a failure inside Spark becomes a ``spark_error``."""
    try:
        return action()
    except (PySparkException, pa.ArrowException) as exc:
        raise SparkError(f"Spark failed {what}: {first_line(exc)}") from None
    except Exception as exc:                       # py4j errors of a dying JVM
        if type(exc).__module__.startswith("py4j"):
            raise SparkError(f"Spark failed {what}: {first_line(exc)}") from None
        raise


@contextlib.contextmanager
def conf_set(spark, key: str, value: str):
    """The Spark SQL setting ``key`` is ``value`` inside the block, as it was after it."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


class Observed:
    """Aggregates of a frame computed while an action runs it (Spark's ``observe``), without a
    job of their own: run an action on :attr:`frame`, then read :meth:`values`. Spark fills
    them when the action ends; should it not have (an action that skipped the frame), they
    are computed by a job, never waited for without end."""

    WAIT = 1.0                      # seconds to wait for Spark to fill them after the action

    def __init__(self, frame, *exprs):
        self.source, self.exprs = frame, exprs
        self.observation = Observation()
        self.frame = frame.observe(self.observation, *exprs)

    def values(self, what: str = "measuring") -> dict:
        deadline = time.monotonic() + self.WAIT
        try:
            future = self.observation._jo.future()
            while not future.isCompleted() and time.monotonic() < deadline:
                time.sleep(0.005)
            if future.isCompleted():
                return guard(lambda: self.observation.get, what)
        except Exception as exc:                # not this Spark's Observation: compute them
            if isinstance(exc, SparkError):
                raise
        return guard(lambda: self.source.agg(*self.exprs).first().asDict(), what)


def build_class_archive() -> None:
    """A session that runs one small job of each kind a refresh runs (Parquet written and read,
    hashing, aggregation, joins, Arrow both ways), then ends its JVM, which writes the class
    archive (:func:`class_archive.prepare` runs this in a child)."""
    import tempfile
    from pyspark.sql import functions as F
    spark = session()
    with tempfile.TemporaryDirectory() as scratch:
        frame = spark.createDataFrame([(i, i % 7, f"s{i}") for i in range(100)], "a long, b int, c string")
        frame.write.mode("overwrite").parquet(f"{scratch}/rows")
        rows = spark.read.parquet(f"{scratch}/rows").withColumn("h", F.xxhash64("a", "b", "c"))
        grouped = rows.groupBy("b").agg(F.count("*").alias("n"), F.bit_xor("h").alias("x"), F.max_by("a", "h"))
        rows.join(grouped, "b", "full_outer").join(F.broadcast(grouped.select("b")), "b", "left_semi").toArrow()
        spark.createDataFrame(rows.toArrow()).union(rows).distinct().count()
    pid = jvm_pid()
    stop()
    if pid is not None:
        class_archive.install_now(pid, lambda: end_jvm(timeout=300.0))


if __name__ == "__main__" and sys.argv[1:] == ["--class-archive"]:
    from datalog.spark import session as this                   # the module, not this copy run as __main__
    this.build_class_archive()


__all__ = ["session", "build_class_archive", "stop", "end_jvm", "jvm_pid", "prepare_class_archive", "guard", "first_line", "JAVA_OPTIONS", "Observed", "conf_set"]
