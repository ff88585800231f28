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


def _engine(text, facts_dir=None, **options):
    engine = Engine.from_source(text, facts_dir, **options)
    engine.run()
    return engine


def test_load_from_a_managed_table(tables):
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")')
    assert engine.rows("edge") == sorted(EDGES)
    assert engine.rows("path") == _closure(EDGES)


def test_load_from_a_parquet_path(tables):
    engine = _engine(TC + f'.input edge(IO=spark, path="{tables}/edges.parquet", format=parquet)', tables)
    assert engine.rows("path") == _closure(EDGES)
    engine = _engine(TC + '.input edge(IO=spark, path="edges.parquet")', tables)        # relative to -F
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
    assert engine.stored_relation("edge").sorted_rows() == [] and not engine._inputs_loaded   # the good source was not loaded
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
        _engine(TC + f'.input edge(IO=spark, path="{tables}/nowhere.parquet")', tables)


def test_directive_parameters_are_checked_without_spark():
    with pytest.raises(UnknownDirective, match="exactly one of"):
        Engine.from_source(TC + '.input edge(IO=spark, table="a", path="b")')
    with pytest.raises(UnknownDirective, match="mode=append"):
        Engine.from_source(TC + '.output path(IO=spark, table="t", mode=append)')


def test_outputs_to_a_table_and_a_path(spark, tables):
    out = tables / "paths_out"
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")\n'
                     '.output path(IO=spark, table="db.paths")\n'
                     f'.output edge(IO=spark, path="{out}", format=parquet)', tables)
    engine.write_outputs(str(tables))
    assert sorted(tuple(r) for r in spark.table("db.paths").collect()) == _closure(EDGES)
    assert spark.table("db.paths").columns == ["a", "b"]
    assert sorted(tuple(r) for r in spark.read.parquet(str(out)).collect()) == sorted(EDGES)
    engine.commit(retracts={"edge": [(1, 2)]})
    engine.write_outputs(str(tables))                           # overwrite replaces, never appends
    assert sorted(tuple(r) for r in spark.table("db.paths").collect()) == engine.rows("path")


def test_cli_run_reads_and_writes_spark(tmp_path, tables, spark):
    from datalog.cli.commands import main
    prog = tmp_path / "prog.dl"
    prog.write_text(TC + f'.input edge(IO=spark, path="{tables}/edges.parquet")\n.output path(IO=stdout)\n')
    assert main(["run", str(prog), "--spark", "-F", str(tables), "-D", "-"]) == 0


# ---------------------------------------------------------------- the path policy (issue 23)
# A local path= is held to -F (sources) and -D (sinks) as .input/.output files are; only the
# user's --allow-paths lets it out, never a program or a stored workspace.

def _parquet_dir(spark, where, rows=EDGES):
    spark.createDataFrame(rows, "s long, d long").write.mode("overwrite").parquet(str(where))
    return where


def _listing(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "file-uri"])
def test_a_source_path_out_of_the_fact_dir_is_refused_unless_allowed(spark, tmp_path, how):
    from datalog.language.errors import InputPath
    facts, elsewhere = tmp_path / "facts", _parquet_dir(spark, tmp_path / "elsewhere" / "edges")
    facts.mkdir()
    (facts / "link").symlink_to(elsewhere.parent, target_is_directory=True)
    name = {"absolute": str(elsewhere), "dotdot": "../elsewhere/edges", "symlink": "link/edges",
            "file-uri": f"file://{elsewhere}"}[how]
    text = TC + f'.input edge(IO=spark, path="{name}")\n'
    engine = Engine.from_source(text, facts)
    with pytest.raises(InputPath) as err:
        engine.run()
    assert "edge" in err.value.message and "--allow-paths" in err.value.message and err.value.span.line == 6
    assert engine.stored_relation("edge").sorted_rows() == [] and not engine._inputs_loaded
    assert _engine(text, facts, allow_paths=True).rows("path") == _closure(EDGES)   # the user's choice


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "itself"])
def test_a_sink_path_out_of_the_output_dir_is_refused_and_writes_nothing(spark, tables, tmp_path, how):
    from datalog.language.errors import OutputPath
    out, victim = tmp_path / "out", _parquet_dir(spark, tmp_path / "victim" / "data", [(9, 9)])
    out.mkdir()
    (out / "link").symlink_to(victim.parent, target_is_directory=True)
    name = {"absolute": str(victim), "dotdot": "../victim/data", "symlink": "link/data", "itself": "."}[how]
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")\n'
                     f'.output edge(IO=spark, path="{name}")\n', tmp_path)
    before = {d: _listing(d) for d in (out, victim.parent)}
    with pytest.raises(OutputPath) as err:
        engine.write_outputs(str(out))
    assert "edge" in err.value.message
    assert {d: _listing(d) for d in (out, victim.parent)} == before
    assert sorted(tuple(r) for r in spark.read.parquet(str(victim)).collect()) == [(9, 9)]
    if how != "itself":                                    # the user may allow it on the command line
        allowed = _engine(TC + '.input edge(IO=spark, table="db.edges")\n'
                          f'.output edge(IO=spark, path="{name}")\n', tmp_path, allow_paths=True)
        allowed.write_outputs(str(out))
        assert sorted(tuple(r) for r in spark.read.parquet(str(victim)).collect()) == sorted(EDGES)


def test_a_sink_path_inside_the_output_dir_is_written_there(spark, tmp_path, tables):
    out = tmp_path / "out"
    out.mkdir()
    engine = _engine(TC + '.input edge(IO=spark, table="db.edges")\n'
                     '.output path(IO=spark, path="sub/paths")\n', tables)
    engine.write_outputs(str(out))
    assert sorted(tuple(r) for r in spark.read.parquet(str(out / "sub" / "paths")).collect()) == _closure(EDGES)
    assert not (tables / "sub").exists()


def test_a_received_workspace_cannot_make_refresh_write_out_of_its_directories(spark, tmp_path, capsys):
    """A workspace made elsewhere with --allow-paths stores a sink outside; refreshing it here
    without --allow-paths is refused before anything is written."""
    from datalog.cli.commands import main
    from datalog.workspace.workspace import Workspace
    victim = _parquet_dir(spark, tmp_path / "victim", [(9, 9)])
    work = tmp_path / "work"
    edges = _parquet_dir(spark, work / "edges")
    text = TC + f'.input edge(IO=spark, path="{edges}")\n.output path(IO=spark, path="{victim}")\n'
    Workspace.create(work / "ws", text, facts_dir=work, out_dir=work, allow_paths=True).close()
    spark.createDataFrame([(9, 9)], "s long, d long").write.mode("overwrite").parquet(str(victim))
    before = _listing(victim)
    _parquet_dir(spark, edges, EDGES + [(4, 5)])                 # something to refresh
    assert main(["refresh", str(work / "ws"), "-F", str(work), "-D", str(work)]) == 1
    assert "error[output_path]" in capsys.readouterr().err
    assert _listing(victim) == before
    with Workspace.open(work / "ws", readonly=True) as ws:       # refused before the transaction
        assert ws.seq == 0 and ws.engine.rows("edge") == sorted(EDGES)
    assert sorted(tuple(r) for r in spark.read.parquet(str(victim)).collect()) == [(9, 9)]
    assert main(["refresh", str(work / "ws"), "-F", str(work), "-D", str(work), "--allow-paths"]) == 0
    assert sorted(tuple(r) for r in spark.read.parquet(str(victim)).collect()) == _closure(EDGES + [(4, 5)])


def test_unsigned_goes_through_spark_as_decimal_20_0(spark, tables):
    """Spark has no uint64 (issue 18): an unsigned column is written as DecimalType(20,0), read
    back from it (or from an integer column) with every value 0 .. 2^64-1; a negative one is
    bad_fact_file."""
    from datalog.language.errors import BadFactFile
    big = [(0,), (2 ** 63,), (2 ** 64 - 1,)]
    engine = _engine(".decl u(x: unsigned)\n" + "".join(f"u({x}u).\n" for (x,) in big)
                     + '.output u(IO=spark, table="db.unsigned")')
    engine.write_outputs()
    assert spark.table("db.unsigned").schema.fields[0].dataType.simpleString() == "decimal(20,0)"
    back = _engine('.decl u(x: unsigned)\n.input u(IO=spark, table="db.unsigned")\n'
                   '.decl wrapped(x: unsigned)\nwrapped(x + 1) :- u(x).')
    assert back.rows("u") == big
    assert back.rows("wrapped") == [(0,), (1,), (2 ** 63 + 1,)]
    assert _engine('.decl u(x: unsigned, y: unsigned)\n.input u(IO=spark, table="db.edges")').rows("u") == sorted(EDGES)
    spark.createDataFrame([(-1,)], "x long").write.mode("overwrite").saveAsTable("db.negative")
    with pytest.raises(BadFactFile, match="unsigned"):
        _engine('.decl u(x: unsigned)\n.input u(IO=spark, table="db.negative")')


def test_observed_aggregates_equal_a_job_and_never_wait_without_end(spark, tmp_path):
    """datalog.spark.session.Observed: the values counted while a write or a checkpoint runs
    the frame equal the same aggregates run as a job of their own; read without any action
    having run the frame, they are computed by a job after a bounded wait."""
    from pyspark.sql import functions as F
    from datalog.spark.session import Observed
    frame = spark.range(5000).withColumn("x", (F.col("id") * 7) % 13)
    exprs = lambda: (F.count(F.lit(1)).alias("n"), F.min("x").alias("lo"), F.max("x").alias("hi"),  # noqa: E731
                     F.count(F.when(F.col("x") > 10, 1)).alias("big"))
    expected = frame.agg(*exprs()).first().asDict()
    observed = Observed(frame.where("id % 3 = 0"), *exprs())
    observed.frame.write.parquet(str(tmp_path / "w"))
    assert observed.values() == frame.where("id % 3 = 0").agg(*exprs()).first().asDict()
    observed = Observed(frame, *exprs())
    observed.frame.localCheckpoint(eager=True)
    assert observed.values() == expected
    empty = Observed(frame.where("id < 0"), *exprs())
    empty.frame.write.parquet(str(tmp_path / "e"))
    assert empty.values() == {"n": 0, "lo": None, "hi": None, "big": 0}
    never = Observed(frame, *exprs())
    never.WAIT = 0.05
    assert never.values() == expected                   # no action ran it: computed by a job
