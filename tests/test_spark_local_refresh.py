"""A refresh of local Parquet sources and sinks without Spark (datalog.spark.local_refresh):
it gives what the Spark way gives -- the workspace equals from-scratch evaluation, the sinks as
Spark reads them equal their relations -- either way may follow the other on one workspace's
snapshots, what it cannot read as Spark would goes the Spark way, and it imports no pyspark."""

import math
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog.refresh import refresh
from datalog.spark import local_refresh
from datalog.workspace.workspace import Workspace
from tiers import scale

pytest.importorskip("pyspark")

PROGRAM = """
.decl edge(src: number, dst: number)
.input edge(IO=spark, path="edges")
.decl blocked(n: number)
.input blocked(IO=spark, path="blocked/b.parquet")
.decl path(a: number, b: number)
.output path(IO=spark, path="paths", mode=merge)
.decl open_path(a: number, b: number)
.output open_path(IO=spark, path="open", mode=overwrite)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
open_path(x, y) :- path(x, y), !blocked(x), !blocked(y).
"""


def _write_edges(where, edges, wide=False, files=2):
    """``edges`` as ``files`` Parquet files of ``where`` (a directory, replaced), int32 columns
    unless ``wide``."""
    kind = pa.int64() if wide else pa.int32()
    where.mkdir(parents=True, exist_ok=True)
    for old in where.iterdir():
        old.unlink()
    rows = sorted(edges)
    for number in range(files):
        part = rows[number::files]
        pq.write_table(pa.table({"src": pa.array([r[0] for r in part], kind), "dst": pa.array([r[1] for r in part], kind)}),
                       where / f"part-{number}.parquet")


def _write_blocked(where, blocked):
    where.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"n": pa.array(sorted(blocked), pa.int64())}), where)


def _scratch(edges, blocked):
    plain = "\n".join(line for line in PROGRAM.splitlines() if "IO=spark" not in line)
    engine = Engine.from_source(plain)
    engine.insert("edge", edges)
    engine.insert("blocked", [(b,) for b in blocked])
    engine.run()
    return {n: engine.rows(n) for n in ("edge", "blocked", "path", "open_path")}


def _check(ws, spark, tmp_path, edges, blocked):
    expected = _scratch(edges, blocked)
    assert {n: ws.engine.rows(n) for n in expected} == expected
    for name, where in (("path", "paths"), ("open_path", "open")):
        assert sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / where)).collect()) == expected[name]


def _way(monkeypatch, here: bool):
    if here:
        monkeypatch.delenv(local_refresh.ROWS, raising=False)
    else:
        monkeypatch.setenv(local_refresh.ROWS, "0")


@given(versions=st.lists(st.tuples(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14),
                                   st.sets(st.integers(0, 6), max_size=3), st.booleans(), st.booleans()),
                         min_size=2, max_size=4))
@settings(max_examples=scale(2, 8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_versions_refreshed_either_way_equal_from_scratch(spark, tmp_path_factory, versions):
    """Each refresh takes the way drawn (here, or in Spark), so each way reads the snapshots the
    other wrote: the Spark way's delta versions here, a version written here by the Spark way."""
    tmp_path = tmp_path_factory.mktemp("either")
    monkeypatch = pytest.MonkeyPatch()
    try:
        for number, (edges, blocked, here, wide) in enumerate(versions):
            _write_edges(tmp_path / "edges", edges, wide)
            _write_blocked(tmp_path / "blocked" / "b.parquet", blocked)
            if number == 0:
                Workspace.create(tmp_path / "ws", PROGRAM, facts_dir=tmp_path, out_dir=tmp_path).close()
                continue
            _way(monkeypatch, here)
            with Workspace.open(tmp_path / "ws") as ws:
                report = refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
                _check(ws, spark, tmp_path, edges, blocked)
                if report.commit is not None or any(s.read is None for s in report.sources):
                    assert ("diff without Spark" in report.seconds) == here, report.seconds
    finally:
        monkeypatch.undo()


def test_a_refresh_here_imports_no_pyspark_and_appends_to_the_merge_sink(spark, tmp_path):
    _write_edges(tmp_path / "edges", {(1, 2), (2, 3)})
    _write_blocked(tmp_path / "blocked" / "b.parquet", {3})
    where = tmp_path / "ws"
    Workspace.create(where, PROGRAM, facts_dir=tmp_path, out_dir=tmp_path).close()
    before = set(os.listdir(tmp_path / "paths"))
    _write_edges(tmp_path / "edges", {(1, 2), (2, 3), (3, 4)})
    script = ("import sys; from datalog.cli.commands import main; "
              f"code = main(['refresh', {str(where)!r}, '-F', {str(tmp_path)!r}, '-D', {str(tmp_path)!r}]); "
              "print('pyspark' in sys.modules, 'pandas' in sys.modules); sys.exit(code)")
    env = {k: v for k, v in os.environ.items() if k != local_refresh.ROWS}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "diff without Spark" in done.stdout and done.stdout.splitlines()[-1] == "False False"
    added = set(os.listdir(tmp_path / "paths")) - before
    assert len(added) == 1 and not any("datalog-new" in n for n in os.listdir(tmp_path / "paths"))
    assert sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "paths" / added.pop())).collect()) == \
        [(1, 4), (2, 4), (3, 4)]
    with Workspace.open(where, readonly=True) as ws:
        _check(ws, spark, tmp_path, {(1, 2), (2, 3), (3, 4)}, {3})
        assert ws.sources["edge"] == f"v{ws.seq}"             # a full version of its own


TYPED = """
.decl t(n: number, u: unsigned, f: float, s: symbol)
.input t(IO=spark, path="t")
.decl out(n: number, u: unsigned, f: float, s: symbol)
.output out(IO=spark, path="out", mode=overwrite)
out(n, u, f, s) :- t(n, u, f, s).
"""


def _write_typed(where, rows, narrow):
    where.mkdir(parents=True, exist_ok=True)
    for old in where.iterdir():
        old.unlink()
    pq.write_table(pa.table({"n": pa.array([r[0] for r in rows], pa.int32() if narrow else pa.int64()),
                             "u": pa.array([r[1] for r in rows], pa.int64()),
                             "f": pa.array([r[2] for r in rows], pa.float32() if narrow else pa.float64()),
                             "s": pa.array([r[3] for r in rows], pa.string())}), where / "part.parquet")


values = st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(0, 2**63 - 1),
                   st.sampled_from([0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, 1e300]),
                   st.text(max_size=6))


@given(first=st.sets(values, max_size=6), second=st.sets(values, max_size=6), narrow=st.booleans())
@settings(max_examples=scale(2, 6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_value_type_reads_and_writes_as_spark_does(spark, tmp_path_factory, first, second, narrow):
    """Two workspaces over the same source versions, one refreshed here and one by Spark: the same
    relations and sinks (int32 and float32 widened, -0.0, infinities, unsigned past 2^62,
    strings of any letters)."""
    if narrow:
        first = {(n, u, float(pa.scalar(f, pa.float32()).as_py()) if math.isfinite(f) and abs(f) < 1e38 else 0.0, s)
                 for n, u, f, s in first}
        second = {(n, u, float(pa.scalar(f, pa.float32()).as_py()) if math.isfinite(f) and abs(f) < 1e38 else 0.0, s)
                  for n, u, f, s in second}
    found, monkeypatch = {}, pytest.MonkeyPatch()
    try:
        for here in (True, False):
            tmp_path = tmp_path_factory.mktemp("typed")
            _write_typed(tmp_path / "t", sorted(first, key=repr), narrow)
            Workspace.create(tmp_path / "ws", TYPED, facts_dir=tmp_path, out_dir=tmp_path).close()
            _write_typed(tmp_path / "t", sorted(second, key=repr), narrow)
            _way(monkeypatch, here)
            with Workspace.open(tmp_path / "ws") as ws:
                report = refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
                assert report.commit is None or ("diff without Spark" in report.seconds) == here
                sink = sorted((r.n, int(r.u), r.f, r.s) for r in spark.read.parquet(str(tmp_path / "out")).collect())
                found[here] = (ws.engine.rows("t"), ws.engine.rows("out"), sink, spark.read.parquet(
                    str(tmp_path / "out")).schema.simpleString())
    finally:
        monkeypatch.undo()
    assert found[True] == found[False]
    assert sorted(found[True][1], key=repr) == sorted(found[True][2], key=repr)


def _declined(spark, tmp_path, table, message):
    """A source Spark must judge: the refresh goes the Spark way and fails there, changing nothing."""
    text = PROGRAM.replace('path="edges"', 'path="e"')
    _write_edges(tmp_path / "e", {(1, 2)})
    _write_blocked(tmp_path / "blocked" / "b.parquet", set())
    Workspace.create(tmp_path / "ws", text, facts_dir=tmp_path, out_dir=tmp_path).close()
    for old in (tmp_path / "e").iterdir():
        old.unlink()
    pq.write_table(table, tmp_path / "e" / "part-9.parquet")
    with Workspace.open(tmp_path / "ws") as ws:
        seq = ws.seq
        with pytest.raises(DatalogError, match=message):
            refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
        assert ws.seq == seq and ws.engine.rows("edge") == [(1, 2)]


def test_a_null_goes_the_spark_way_and_is_its_error(spark, tmp_path):
    _declined(spark, tmp_path, pa.table({"src": pa.array([1, None], pa.int64()), "dst": pa.array([2, 3], pa.int64())}),
              "NULL")


def test_a_column_of_another_type_goes_the_spark_way_and_is_its_error(spark, tmp_path):
    _declined(spark, tmp_path, pa.table({"src": pa.array(["a"]), "dst": pa.array([2], pa.int64())}),
              "column src is string")


def test_columns_by_name_and_a_large_source_choose_their_way(spark, tmp_path, monkeypatch):
    text = PROGRAM.replace('path="edges"', 'path="edges", columns="b,a"')
    (tmp_path / "edges").mkdir()
    pq.write_table(pa.table({"a": [2, 3], "x": ["p", "q"], "b": [1, 2]}), tmp_path / "edges" / "p.parquet")
    _write_blocked(tmp_path / "blocked" / "b.parquet", set())
    Workspace.create(tmp_path / "ws", text, facts_dir=tmp_path, out_dir=tmp_path).close()
    pq.write_table(pa.table({"a": [4], "x": ["r"], "b": [3]}), tmp_path / "edges" / "q.parquet")
    with Workspace.open(tmp_path / "ws") as ws:
        report = refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
        assert "diff without Spark" in report.seconds and ws.engine.rows("edge") == [(1, 2), (2, 3), (3, 4)]
    pq.write_table(pa.table({"a": [5], "x": ["s"], "b": [4]}), tmp_path / "edges" / "r.parquet")
    monkeypatch.setenv(local_refresh.ROWS, "3")              # the snapshot holds 3 rows: still here
    with Workspace.open(tmp_path / "ws") as ws:
        report = refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)
        assert "diff without Spark" not in report.seconds    # but the source has 4: the Spark way
        _check(ws, spark, tmp_path, {(1, 2), (2, 3), (3, 4), (4, 5)}, set())
