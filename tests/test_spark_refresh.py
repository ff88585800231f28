"""Batch refresh from Spark tables (``datalog refresh``, ``datalog.refresh``): after every
refresh the workspace equals from-scratch evaluation over the current tables and every Spark
output equals its relation; a refresh killed in any phase converges on the next one."""

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog import refresh as refresh_module
from datalog.refresh import describe, refresh
from datalog.workspace.workspace import Workspace
from tiers import scale

pytest.importorskip("pyspark")

PROGRAM = """
.decl edge(src: number, dst: number)
.input edge(IO=spark, {edge})
.decl blocked(n: number)
.input blocked(IO=spark, {blocked})
.decl path(a: number, b: number)
.output path(IO=spark, {path_out}, mode=merge)
.decl open_path(a: number, b: number)
.output open_path(IO=spark, {open_out}, mode=overwrite)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
open_path(x, y) :- path(x, y), !blocked(x), !blocked(y).
"""


def _write(spark, rows, schema, table=None, path=None):
    frame = spark.createDataFrame(sorted(rows), schema)
    if table:
        frame.write.mode("overwrite").saveAsTable(table)
    else:
        frame.write.mode("overwrite").parquet(str(path))


def _read(spark, table=None, path=None):
    frame = spark.table(table) if table else spark.read.parquet(str(path))
    return sorted(tuple(r) for r in frame.collect())


def _scratch(text, edges, blocked):
    """The program evaluated from scratch over the given tables, without Spark."""
    plain = "\n".join(line for line in text.splitlines() if "IO=spark" not in line)
    engine = Engine.from_source(plain)
    engine.insert("edge", edges)
    engine.insert("blocked", [(b,) for b in blocked])
    engine.run()
    return {n: engine.rows(n) for n in ("edge", "blocked", "path", "open_path")}


def _check(ws, spark, text, edges, blocked, outputs):
    expected = _scratch(text, edges, blocked)
    assert {n: ws.engine.rows(n) for n in expected} == expected
    assert _read(spark, **outputs["path"]) == expected["path"]
    assert _read(spark, **outputs["open_path"]) == expected["open_path"]


@pytest.fixture
def managed(spark, tmp_path):
    """A program over managed tables db_r.edges / db_r.blocked writing db_r.paths / db_r.open."""
    spark.sql("CREATE DATABASE IF NOT EXISTS db_r")
    for table in ("edges", "blocked", "paths", "open"):
        spark.sql(f"DROP TABLE IF EXISTS db_r.{table}")
    text = PROGRAM.format(edge='table="db_r.edges"', blocked='table="db_r.blocked"',
                          path_out='table="db_r.paths"', open_out='table="db_r.open"')
    outputs = {"path": {"table": "db_r.paths"}, "open_path": {"table": "db_r.open"}}
    return text, outputs, tmp_path / "ws"


def test_refresh_inserts_deletes_mixed_and_empty(spark, managed):
    text, outputs, where = managed
    rng = random.Random(7)
    edges = {(rng.randrange(30), rng.randrange(30)) for _ in range(60)}
    blocked = {3, 4}
    _write(spark, edges, "src int, dst int", table="db_r.edges")
    _write(spark, [(b,) for b in blocked], "n int", table="db_r.blocked")
    with Workspace.create(where, text) as ws:
        _check(ws, spark, text, edges, blocked, outputs)
    steps = [("insert", {(rng.randrange(30), rng.randrange(30)) for _ in range(5)}, set()),
             ("delete", set(), set(rng.sample(sorted(edges), 6))),
             ("mixed", {(rng.randrange(30), rng.randrange(30)) for _ in range(4)}, set(rng.sample(sorted(edges), 4)))]
    for kind, added, removed in steps:
        old, edges = edges, (edges - removed) | added
        blocked = blocked ^ {rng.randrange(30)} if kind == "mixed" else blocked
        _write(spark, edges, "src int, dst int", table="db_r.edges")
        _write(spark, [(b,) for b in blocked], "n int", table="db_r.blocked")
        with Workspace.open(where) as ws:
            before = ws.seq
            report = refresh(ws)
            assert report.commit == before + 1, kind
            source = {s.relation: s for s in report.sources}["edge"]
            assert source.rows == len(edges)
            assert (source.inserted, source.retracted) == (len(edges - old), len(old - edges))
            _check(ws, spark, text, edges, blocked, outputs)
        with Workspace.open(where, readonly=True) as ws:          # durable: a new process sees it
            _check(ws, spark, text, edges, blocked, outputs)
    with Workspace.open(where) as ws:                             # no change: no commit, no engine work
        before, applied, apply = ws.seq, [], ws.engine.apply
        ws.engine.apply = lambda pending: applied.append(pending) or apply(pending)
        unread = {n for n, r in ws.engine.db.items() if type(r).__name__ == "LazyRelation"}
        report = refresh(ws)
        assert report.commit is None and ws.seq == before and "maintain" not in report.seconds
        assert applied == [] and "load" not in report.seconds      # the engine was never asked,
        assert unread == {n for n, r in ws.engine.db.items() if type(r).__name__ == "LazyRelation"}
        assert "no change" in "\n".join(describe(report))
        _check(ws, spark, text, edges, blocked, outputs)


def test_merge_appends_only_the_inserted_rows(spark, managed):
    text, outputs, where = managed
    _write(spark, {(1, 2)}, "src int, dst int", table="db_r.edges")
    _write(spark, [], "n int", table="db_r.blocked")
    Workspace.create(where, text).close()
    files_before = set(spark.table("db_r.paths").inputFiles())
    _write(spark, {(1, 2), (2, 3)}, "src int, dst int", table="db_r.edges")
    with Workspace.open(where) as ws:
        report = refresh(ws)
    assert report.outputs["path"] == (2, 0, "appended") and report.outputs["open_path"][2] == "rewritten"
    files_after = set(spark.table("db_r.paths").inputFiles())
    assert files_before <= files_after                           # the old files stay: an append
    assert _read(spark, table="db_r.paths") == [(1, 2), (1, 3), (2, 3)]


def test_datalog_update_between_refreshes_is_repaired_in_the_outputs(spark, managed, tmp_path):
    text, outputs, where = managed
    _write(spark, {(1, 2)}, "src int, dst int", table="db_r.edges")
    _write(spark, [], "n int", table="db_r.blocked")
    with Workspace.create(where, text) as ws:
        with pytest.raises(DatalogError) as caught:               # a Spark source's relation: only
            ws.engine.commit(inserts={"blocked": [(1,)]})         # refresh changes it
        assert caught.value.code == "not_updatable"
        ws.engine.commit()                                        # a commit no refresh made: outputs stale
    with Workspace.open(where) as ws:
        report = refresh(ws)
        assert report.repaired == ["path", "open_path"]
        assert _read(spark, table="db_r.open") == ws.engine.rows("open_path") == [(1, 2)]


# ---------------------------------------------------------------- killed refreshes

def _paths(tmp_path):
    """Local Parquet paths, relative to -F (sources) and -D (sinks), both ``tmp_path``."""
    text = PROGRAM.format(edge='path="edges"', blocked=f'path="{tmp_path}/blocked"',
                          path_out='path="paths"', open_out=f'path="file://{tmp_path}/open"')
    outputs = {"path": {"path": tmp_path / "paths"}, "open_path": {"path": tmp_path / "open"}}
    return text, outputs


def _killed_refresh(where, phase, tmp_path, here):
    """``datalog refresh`` in a child process, SIGKILLed once it reaches ``phase``; ``here``:
    without Spark (datalog.spark.local_refresh), else the Spark way."""
    env = {**os.environ, "DATALOG_REFRESH_PAUSE": phase, "DATALOG_LOCAL_REFRESH_ROWS": "1000000" if here else "0"}
    child = subprocess.Popen([sys.executable, "-m", "datalog", "refresh", str(where), "-F", str(tmp_path),
                              "-D", str(tmp_path)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    for line in child.stderr:
        if f"paused at {phase}" in line or time.time() > deadline:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert time.time() <= deadline, f"the refresh never reached {phase}"


@pytest.mark.parametrize("here", [True, False], ids=["here", "spark"])
@pytest.mark.parametrize("phase", ["diff", "transaction", "write back"])
def test_refresh_killed_in_any_phase_converges(spark, tmp_path, monkeypatch, phase, here):
    text, outputs = _paths(tmp_path)
    edges, blocked = {(1, 2), (2, 3), (5, 6)}, {6}
    _write(spark, edges, "src int, dst int", path=tmp_path / "edges")
    _write(spark, [(b,) for b in blocked], "n int", path=tmp_path / "blocked")
    where = tmp_path / "ws"
    Workspace.create(where, text, facts_dir=tmp_path, out_dir=tmp_path).close()
    old = _scratch(text, edges, blocked)
    edges = (edges - {(1, 2)}) | {(3, 4), (6, 7)}
    _write(spark, edges, "src int, dst int", path=tmp_path / "edges")
    new = _scratch(text, edges, blocked)
    _killed_refresh(where, phase, tmp_path, here)
    monkeypatch.setenv("DATALOG_LOCAL_REFRESH_ROWS", "1000000" if here else "0")
    with Workspace.open(where, readonly=True) as ws:             # the previous or the new state, whole
        state = {n: ws.engine.rows(n) for n in old}
        assert state == (new if phase == "write back" else old)
    with Workspace.open(where) as ws:                            # the next refresh converges
        refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
        _check(ws, spark, text, edges, blocked, outputs)
        chain = ws.sources["edge"].split("+")           # the full version, then this refresh's; here a full one
        assert chain == ([f"v{ws.seq}"] if here else ["v0", f"v{ws.seq}"])
        assert sorted(p.name for p in (where / "spark" / "edge").iterdir()) == chain
    with Workspace.open(where) as ws:                            # and is then a no-op
        assert refresh(ws, facts_dir=tmp_path, out_dir=tmp_path).commit is None


def test_cli_init_and_refresh_print_what_changed(spark, managed, capsys):
    from datalog.cli.commands import main
    text, outputs, where = managed
    _write(spark, {(1, 2), (2, 3)}, "src int, dst int", table="db_r.edges")
    _write(spark, [], "n int", table="db_r.blocked")
    program = where.parent / "prog.dl"
    program.write_text(text)
    assert main(["init", str(where), str(program)]) == 0
    assert "initialized" in capsys.readouterr().out
    _write(spark, {(1, 2), (3, 4)}, "src int, dst int", table="db_r.edges")
    assert main(["refresh", str(where), "--conf", "spark.sql.shuffle.partitions=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "source edge: 2 rows read, +1 -1" in out             # blocked as init read it: not read
    assert "source blocked: 0 rows read (of 0: only what changed), +0 -0" in out
    assert "output path: +1 -2 (rewritten)" in out and "committed 1" in out
    assert any(line.startswith("time: ") and "maintain" in line for line in out)
    assert main(["refresh", str(where), "--conf", "nonsense"]) == 1
    assert "error[bad_command]: --conf takes KEY=VALUE" in capsys.readouterr().err
    assert main(["refresh", str(where)]) == 0
    assert "no change: nothing to maintain" in capsys.readouterr().out


def test_duplicate_source_rows_are_one_tuple_and_a_dropped_copy_changes_nothing(spark, managed):
    text, outputs, where = managed
    _write(spark, [], "n int", table="db_r.blocked")
    spark.createDataFrame([(1, 2), (1, 2), (2, 3)], "src int, dst int").write.mode("overwrite") \
        .saveAsTable("db_r.edges")
    with Workspace.create(where, text) as ws:
        assert ws.engine.rows("edge") == [(1, 2), (2, 3)]
    spark.createDataFrame([(1, 2), (2, 3), (2, 3)], "src int, dst int").write.mode("overwrite") \
        .saveAsTable("db_r.edges")                               # other copies, the same set
    with Workspace.open(where) as ws:
        report = refresh(ws)
        assert report.commit is None and [(s.inserted, s.retracted) for s in report.sources] == [(0, 0), (0, 0)]
    spark.createDataFrame([(2, 3), (2, 3)], "src int, dst int").write.mode("overwrite").saveAsTable("db_r.edges")
    with Workspace.open(where) as ws:
        report = refresh(ws)
        assert {s.relation: (s.inserted, s.retracted) for s in report.sources}["edge"] == (0, 1)
        _check(ws, spark, text, {(2, 3)}, set(), outputs)


def test_a_source_whose_type_changed_is_refused_and_changes_nothing(spark, managed):
    from datalog.language.errors import TypeMismatch
    text, outputs, where = managed
    _write(spark, {(1, 2)}, "src int, dst int", table="db_r.edges")
    _write(spark, [], "n int", table="db_r.blocked")
    Workspace.create(where, text).close()
    spark.createDataFrame([("a", 2)], "src string, dst int").write.mode("overwrite").saveAsTable("db_r.edges")
    with Workspace.open(where) as ws:
        with pytest.raises(TypeMismatch, match="db_r.edges column src is string"):
            refresh(ws)
        assert ws.seq == 0 and ws.engine.rows("edge") == [(1, 2)]
    _write(spark, {(1, 2), (2, 3)}, "src int, dst int", table="db_r.edges")
    with Workspace.open(where) as ws:                            # and the next good refresh works
        assert refresh(ws).commit == 1
        _check(ws, spark, text, {(1, 2), (2, 3)}, set(), outputs)


def test_init_with_a_bad_source_creates_no_workspace(spark, managed):
    from datalog.language.errors import MissingInput
    text, outputs, where = managed
    _write(spark, [], "n int", table="db_r.blocked")
    with pytest.raises(MissingInput, match="db_r.edges"):
        Workspace.create(where, text)
    assert not (where / "snapshot").exists()


def test_missing_java_is_a_clear_error_without_a_traceback(tmp_path):
    prog = tmp_path / "prog.dl"
    prog.write_text('.decl e(a: number)\n.input e(IO=spark, table="t")\n.output e(IO=stdout)\n')
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)                                  # no java on it
    done = subprocess.run([sys.executable, "-m", "datalog", "run", str(prog)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error[spark_unavailable]" in done.stderr and "Java 17" in done.stderr


def test_refresh_without_spark_sources_is_a_no_op(tmp_path):
    with Workspace.create(tmp_path / "ws", "e(1). p(x) :- e(x).") as ws:
        report = refresh(ws)
    assert report.commit is None and describe(report) == [
        "nothing to refresh: the program names no Spark source or output"]


def _refreshed(spark, managed, versions):
    """Each table version written in turn: the first initializes the workspace, every later one
    is refreshed and checked against from-scratch evaluation. Yields each refreshed workspace,
    still open, with the refresh's report."""
    text, outputs, where = managed
    shutil.rmtree(where, ignore_errors=True)
    for number, (edges, blocked) in enumerate(versions):
        _write(spark, edges, "src int, dst int", table="db_r.edges")
        _write(spark, [(b,) for b in blocked], "n int", table="db_r.blocked")
        if number == 0:
            Workspace.create(where, text).close()
            continue
        with Workspace.open(where) as ws:
            report = refresh(ws)
            _check(ws, spark, text, edges, blocked, outputs)
            yield ws, report


@given(versions=st.lists(st.tuples(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14),
                                   st.sets(st.integers(0, 6), max_size=3)), min_size=2, max_size=4))
@settings(max_examples=scale(2, 5), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_table_versions_refresh_to_from_scratch(spark, managed, versions):
    """A random stream of table versions: after every refresh, from-scratch evaluation."""
    for _ in _refreshed(spark, managed, versions):
        pass


@given(versions=st.lists(st.tuples(st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12),
                                   st.sets(st.integers(0, 4), max_size=2)), min_size=5, max_size=7))
@settings(max_examples=scale(2, 4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_versions_through_snapshot_chains(spark, managed, monkeypatch, versions):
    """Delta versions only, up to three in a chain, then a full one: rows deleted in one version
    and inserted again in a later one are resolved by their last event."""
    monkeypatch.setattr(refresh_module, "CHAIN", 3)
    monkeypatch.setattr(refresh_module, "CHAIN_SHARE", 1e9)
    chain, where = ["v0"], managed[2]
    for ws, report in _refreshed(spark, managed, versions):
        if report.commit is not None:
            grown = chain + [f"v{ws.seq}"] if len(chain) < 3 else [f"v{ws.seq}"]
            assert ws.sources["edge"].split("+") in (chain, grown)
            chain = ws.sources["edge"].split("+")
            assert sorted(p.name for p in (where / "spark" / "edge").iterdir()) == sorted(chain)


def test_cli_refresh_writes_each_commits_changes(spark, managed, tmp_path):
    """``datalog refresh --changes DIR``: the Parquet files of the refreshes add up to each
    output relation's change, which is what from-scratch evaluation over the tables gives."""
    import pyarrow.parquet as pq
    from datalog.cli.commands import main
    text, outputs, where = managed
    changes = tmp_path / "changes"
    _write(spark, {(1, 2), (2, 3)}, "src int, dst int", table="db_r.edges")
    _write(spark, [], "n int", table="db_r.blocked")
    program = where.parent / "prog.dl"
    program.write_text(text)
    assert main(["init", str(where), str(program)]) == 0
    before = _scratch(text, {(1, 2), (2, 3)}, set())
    for edges, blocked in [({(1, 2), (3, 4), (2, 3)}, {3}), ({(1, 2), (3, 4)}, set())]:
        _write(spark, edges, "src int, dst int", table="db_r.edges")
        _write(spark, [(b,) for b in blocked], "n int", table="db_r.blocked")
        assert main(["refresh", str(where), "--changes", str(changes)]) == 0
    after = _scratch(text, edges, blocked)
    files = sorted(changes.iterdir())
    assert [f.name for f in files if f.name.endswith("-path.parquet")] == ["0000000001-path.parquet",
                                                                          "0000000002-path.parquet"]
    for name in ("path", "open_path"):
        total = Counter()
        for f in files:
            if f.name.endswith(f"-{name}.parquet"):
                for row in pq.read_table(f).to_pylist():
                    weight = row.pop("weight")
                    total[tuple(row.values())] += weight
        expected = {**{r: 1 for r in set(after[name]) - set(before[name])},
                    **{r: -1 for r in set(before[name]) - set(after[name])}}
        assert {r: w for r, w in total.items() if w} == expected, name
