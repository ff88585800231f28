"""Fixtures shared across test files: one Spark session for the whole run (start-up costs 5-15 s)."""

import os

import pytest

# C1 only: the JVMs of the tests' short Spark runs (this process's session and the `datalog`
# children the kill tests start, which inherit the environment) start faster than with C2.
os.environ.setdefault("DATALOG_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")


@pytest.fixture(scope="session")
def spark():
    """The process's Spark session in local mode (datalog.spark.session.session). Skipped only
    when the spark extra is not installed; a Spark that fails to start fails the tests."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install 'datalog-lftj[spark]'")
    from datalog.spark import session as spark_session
    session = spark_session.session()
    yield session
    spark_session.stop()
