"""Spark sources and sinks: managed tables, Parquet paths and queries in; tables and paths out;
schema checks before anything is loaded (real Spark, local mode)."""

import pytest

from datalog.engine.engine import Engine
from datalog.language.errors import MissingInput, TypeMismatch, UnknownDirective

pytest.importorskip("pyspark")

TC = """
.decl edge(src: number, dst: number)
.decl path(a: number, b: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
EDGES = [(1, 2), (2, 3), (3, 4), (7, 7)]


def _closure(edges):
    closure = set(edges)
    while True:
        more = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not more:
            return sorted(closure)
        closure |= more


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """db.edges (bigint), db.roads (with a kind column), db.names (strings), a Parquet path."""
    where = tmp_path_factory.mktemp("sparkio")
    spark.sql("CREATE DATABASE IF NOT EXISTS db")
    spark.createDataFrame(EDGES, "src long, dst long").write.mode("overwrite").saveAsTable("db.edges")
    spark.createDataFrame([(1, 2, "road"), (2, 3, "rail"), (2, 5, "road")], "a int, b int, kind string") \
        .write.mode("overwrite").saveAsTable("db.roads")
    spark.createDataFrame([("x", 1.5), ("y", 2.0)], "name string, weight double") \
        .write.mode("overwrite").saveAsTable("db.names")
    spark.createDataFrame(EDGES, "s int, d int").write.mode("overwrite").parquet(str(where / "edges.parquet"))
    return where


def _engine(text):
    engine = Engine.from_source(text)
    engine.run()
    return engine


def test_load_from_a_managed_table(tables):
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")')
    assert engine.rows("edge") == sorted(EDGES)
    assert engine.rows("path") == _closure(EDGES)


def test_load_from_a_parquet_path(tables):
    engine = _engine(TC + f'.input edge(IO=spark, path="{tables}/edges.parquet", format=parquet)')
    assert engine.rows("path") == _closure(EDGES)


def test_load_from_a_query_and_columns_by_name(tables):
    engine = _engine(TC + '.input edge(IO=spark, query="SELECT a, b FROM db.roads WHERE kind = \'road\'")')
    assert engine.rows("edge") == [(1, 2), (2, 5)]
    engine = _engine(TC + '.input edge(IO=spark, table="db.roads", columns="b,a")')
    assert engine.rows("edge") == [(2, 1), (3, 2), (5, 2)]


def test_symbols_and_floats_keep_their_types(tables):
    engine = _engine('.decl w(n: symbol, x: float)\n.input w(IO=spark, table="db.names")\n'
                     '.decl heavy(n: symbol)\nheavy(n) :- w(n, x), x > 1.9.')
    assert engine.rows("w") == [("x", 1.5), ("y", 2.0)]
    assert engine.rows("heavy") == [("y",)]


def test_type_mismatch_names_table_column_and_both_types_and_loads_nothing(tables):
    text = ('.decl edge(src: number, dst: number)\n.input edge(IO=spark, table="db.edges")\n'
            '.decl w(n: number, x: float)\n.input w(IO=spark, table="db.names")\n')
    engine = Engine.from_source(text)
    with pytest.raises(TypeMismatch) as err:
        engine.run()
    message = err.value.message
    assert "db.names" in message and "column name" in message and "string" in message and "w.n is a number" in message
    assert engine.rows("edge") == [] and not engine._inputs_loaded        # the good source was not loaded
    assert err.value.span.line == 4


def test_wrong_column_count_and_unknown_column(tables):
    with pytest.raises(TypeMismatch, match="3 columns"):
        _engine('.decl edge(a: number, b: number)\n.input edge(IO=spark, table="db.roads")')
    with pytest.raises(TypeMismatch, match="no column c"):
        _engine('.decl edge(a: number, b: number)\n.input edge(IO=spark, table="db.roads", columns="a,c")')


def test_missing_table_and_path_are_clear_errors(tables):
    with pytest.raises(MissingInput, match="db.nothing"):
        _engine(TC + '.input edge(IO=spark, table="db.nothing")')
    with pytest.raises(MissingInput, match="nowhere.parquet"):
        _engine(TC + f'.input edge(IO=spark, path="{tables}/nowhere.parquet")')


def test_directive_parameters_are_checked_without_spark():
    with pytest.raises(UnknownDirective, match="exactly one of"):
        Engine.from_source(TC + '.input edge(IO=spark, table="a", path="b")')
    with pytest.raises(UnknownDirective, match="mode=append"):
        Engine.from_source(TC + '.output path(IO=spark, table="t", mode=append)')


def test_outputs_to_a_table_and_a_path(spark, tables):
    out = tables / "paths_out"
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")\n'
                     '.output path(IO=spark, table="db.paths")\n'
                     f'.output edge(IO=spark, path="{out}", format=parquet)')
    engine.write_outputs()
    assert sorted(tuple(r) for r in spark.table("db.paths").collect()) == _closure(EDGES)
    assert spark.table("db.paths").columns == ["a", "b"]
    assert sorted(tuple(r) for r in spark.read.parquet(str(out)).collect()) == sorted(EDGES)
    engine.commit(retracts={"edge": [(1, 2)]})
    engine.write_outputs()                                      # overwrite replaces, never appends
    assert sorted(tuple(r) for r in spark.table("db.paths").collect()) == engine.rows("path")


def test_cli_run_reads_and_writes_spark(tmp_path, tables, spark):
    from datalog.cli.commands import main
    prog = tmp_path / "prog.dl"
    prog.write_text(TC + f'.input edge(IO=spark, path="{tables}/edges.parquet")\n.output path(IO=stdout)\n')
    assert main(["run", str(prog), "--spark", "-D", "-"]) == 0
