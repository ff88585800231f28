"""Spark: the session, tables as sources and sinks, snapshot diffs, and evaluation on Spark.
The only modules that import pyspark."""
