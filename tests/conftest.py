"""Fixtures shared across test files: one Spark session for the whole run (start-up costs 5-15 s)."""

import os
import signal
from pathlib import Path

import pytest

# Ctrl-C as in a terminal. A shell without job control (a script's `cmd &`) starts a background
# job with SIGINT ignored, Python keeps it so, and every child inherits it: the Ctrl-C tests'
# `datalog` children then ran to the end (exit 0) where they were to stop with status 130.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# C1 only: the JVMs of the tests' short Spark runs (this process's session and the `datalog`
# children the kill tests start, which inherit the environment) start faster than with C2.
os.environ.setdefault("DATALOG_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")
# The Spark driver's class archive (datalog.spark.class_archive) of the tests' JVMs, in the
# checkout's .venv (ignored by git, removed by make clean) rather than the user's cache; made
# before the first session (pytest_sessionstart), so that every JVM the tests start maps it.
os.environ.setdefault("DATALOG_CACHE_DIR", str(Path(__file__).resolve().parent.parent / ".venv" / "cache"))


def pytest_sessionstart(session):
    """Make the class archive once (about 45 s on a 2-core machine, then 5-6 s less per JVM start;
    the pytest-xdist workers take turns on its lock, so one makes it)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return
    from datalog.spark import session as spark_session
    try:
        spark_session.prepare_class_archive()
    except Exception:                 # no Java: the Spark tests say so themselves
        pass


@pytest.fixture(scope="session")
def spark():
    """The process's Spark session in local mode (datalog.spark.session.session). Skipped only
    when the spark extra is not installed; a Spark that fails to start fails the tests."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install 'datalog-lftj[spark]'")
    from datalog.spark import session as spark_session
    session = spark_session.session()
    yield session
    spark_session.stop()
