"""Sources that carry their own changes (:mod:`datalog.spark.feeds`): append-only files,
partitioned datasets whose unchanged partitions are skipped by their metadata, and a Delta Lake
table's change data feed. For the in-process refresh and the Spark-resident one: the rows read
are counted and are what changed (not the source), the relations equal from-scratch evaluation
after every refresh, a refresh that fails leaves the watermark (the next one reads the same
changes again), and a deletion in an append-only source is ``append_only_violated``."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

from datalog import refresh as refresh_module  # noqa: E402
from datalog.engine.engine import Engine  # noqa: E402
from datalog.language.errors import BadOption, DatalogError, SourceNotAppendOnly, UnknownDirective  # noqa: E402
from datalog.refresh import refresh  # noqa: E402
from datalog.spark import resident_workspace as rw  # noqa: E402
from datalog.workspace.workspace import Workspace  # noqa: E402
from tiers import long_only  # noqa: E402

RULES = """
.decl two(a: number, c: number)
two(x, z) :- edge(x, y), edge(y, z), x != z.
.decl deg(a: number, n: number)
deg(x, n) :- edge(x, _), n = count : { edge(x, _) }.
.decl loop(a: number)
loop(x) :- edge(x, x).
"""
DERIVED = ("two", "deg", "loop")


def _scratch(edges) -> dict[str, list]:
    engine = Engine.from_source(".decl edge(src: number, dst: number)\n" + RULES)
    engine.insert("edge", sorted(edges))
    engine.run()
    return {n: engine.rows(n) for n in ("edge",) + DERIVED}


def _append(spark, where: Path, rows, schema="src long, dst long") -> None:
    spark.createDataFrame(sorted(rows), schema).coalesce(1).write.mode("append").parquet(str(where))


class InProcess:
    """The in-process workspace: create, refresh, its relations."""

    def __init__(self, tmp_path: Path, text: str):
        self.tmp, self.ws = tmp_path, tmp_path / "ws"
        Workspace.create(self.ws, text, facts_dir=tmp_path, out_dir=tmp_path).close()

    def refresh(self):
        with Workspace.open(self.ws) as ws:
            return refresh(ws, facts_dir=self.tmp, out_dir=self.tmp)

    def rows(self, name):
        with Workspace.open(self.ws, readonly=True) as ws:
            return ws.engine.rows(name)


class Resident:
    """The Spark-resident workspace."""

    def __init__(self, tmp_path: Path, text: str):
        self.tmp, self.ws = tmp_path, tmp_path / "ws"
        rw.create(self.ws, text, self._engine_of, out_dir=tmp_path)

    def _engine_of(self, text, source):
        return Engine.from_source(text, self.tmp, name=source)

    def refresh(self):
        return rw.refresh(self.ws, self._engine_of, out_dir=self.tmp)

    def rows(self, name):
        return sorted(tuple(r) for r in rw.relation(self.ws, name).drop("__n").collect())


KINDS = [InProcess, Resident]


def _check(kind, edges) -> None:
    expected = _scratch(edges)
    for name, rows in expected.items():
        assert kind.rows(name) == rows, name


def _read(report, name="edge"):
    (source,) = [s for s in report.sources if s.relation == name]
    return source.rows_read


# ---------------------------------------------------------------- append-only

APPEND = '.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges", append_only=true)\n' + RULES


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_append_only_reads_only_the_new_files(spark, tmp_path, Kind):
    rng = random.Random(3)
    edges = {(rng.randrange(5000), rng.randrange(5000)) for _ in range(10_000)}
    _append(spark, tmp_path / "edges", edges)
    kind = Kind(tmp_path, APPEND)
    _check(kind, edges)
    added = {(rng.randrange(5000), rng.randrange(5000)) for _ in range(10)} | {(7, 7), sorted(edges)[0]}
    _append(spark, tmp_path / "edges", added)
    report = kind.refresh()
    assert _read(report) == len(added)              # the new file, not the 10k rows before it
    edges |= added
    _check(kind, edges)
    report = kind.refresh()                         # nothing new: nothing read, no commit
    assert _read(report) == 0 and report.commit is None
    _check(kind, edges)


def test_appended_rows_beyond_the_kept_bounds_are_new_and_the_bounds_follow(spark, tmp_path):
    from datalog.spark import manifest
    edges = {(1, 2), (2, 3), (3, 1)}
    _append(spark, tmp_path / "edges", edges)
    kind = Resident(tmp_path, APPEND)
    assert manifest.read(kind.ws)["relations"]["edge"]["bounds"] == [[1, 3], [1, 3]]
    steps = [{(100, 1), (100, 1), (101, 2)},      # beyond src's bounds: new without a look; a copy kept once
             {(100, 1), (2, 100)},                # (100, 1) within the widened bounds: there already
             {(3, 1), (-5, -5)},                  # overlapping them: looked up; (3, 1) there already
             {(-6, -5), (-5, 7)},                 # below them
             set()]
    for added in steps:
        if added:
            spark.createDataFrame(sorted(added) + [sorted(added)[0]], "src long, dst long").coalesce(1) \
                .write.mode("append").parquet(str(tmp_path / "edges"))
        report = kind.refresh()
        assert (report.commit is None) == (not added - edges)
        edges |= added
        _check(kind, edges)
        entry = manifest.read(kind.ws)["relations"]["edge"]
        assert entry["rows"] == len(edges)
        assert entry["bounds"] == [[min(e[i] for e in edges), max(e[i] for e in edges)] for i in (0, 1)]


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_a_deletion_in_an_append_only_source_is_an_error_and_changes_nothing(spark, tmp_path, Kind):
    _append(spark, tmp_path / "edges", [(1, 2), (2, 3)])
    _append(spark, tmp_path / "edges", [(3, 4)])
    kind = Kind(tmp_path, APPEND)
    files = sorted((tmp_path / "edges").glob("part-*"))
    files[0].unlink()
    with pytest.raises(SourceNotAppendOnly) as info:
        kind.refresh()
    assert info.value.code == "append_only_violated" and "edge" in info.value.message
    _check(kind, {(1, 2), (2, 3), (3, 4)})


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_a_failed_refresh_leaves_the_watermark_and_the_next_reads_again(spark, tmp_path, Kind, monkeypatch):
    _append(spark, tmp_path / "edges", [(1, 2), (2, 3)])
    kind = Kind(tmp_path, APPEND)
    _append(spark, tmp_path / "edges", [(3, 1), (4, 4)])

    def fail(phase):
        if phase == "transaction":
            raise OSError("killed before the commit")
    module = refresh_module if Kind is InProcess else rw
    monkeypatch.setattr(module, "checkpoint", fail)
    with pytest.raises(OSError):
        kind.refresh()
    _check(kind, {(1, 2), (2, 3)})
    monkeypatch.undo()
    assert _read(kind.refresh()) == 2              # the same two rows read again
    _check(kind, {(1, 2), (2, 3), (3, 1), (4, 4)})


def test_append_only_managed_table_reads_only_its_new_files(spark, tmp_path):
    spark.sql("CREATE DATABASE IF NOT EXISTS db_feeds")
    spark.sql("DROP TABLE IF EXISTS db_feeds.events")
    spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long").write.saveAsTable("db_feeds.events")
    text = '.decl edge(src: number, dst: number)\n.input edge(IO=spark, table="db_feeds.events", append_only=true)\n'
    kind = InProcess(tmp_path, text + RULES)
    spark.createDataFrame([(3, 1)], "src long, dst long").coalesce(1).write.mode("append").saveAsTable("db_feeds.events")
    assert _read(kind.refresh()) == 1
    _check(kind, {(1, 2), (2, 3), (3, 1)})


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=5), min_size=1, max_size=3))
def test_random_appends_equal_from_scratch(spark, tmp_path_factory, batches):
    tmp_path = tmp_path_factory.mktemp("append")
    _append(spark, tmp_path / "edges", [(0, 1)])
    kind, edges = InProcess(tmp_path, APPEND), {(0, 1)}
    for batch in batches:
        if batch:
            _append(spark, tmp_path / "edges", batch)
        assert _read(kind.refresh()) == len(batch)
        edges |= set(batch)
        _check(kind, edges)


# ---------------------------------------------------------------- partitioned

PARTITIONED = """
.decl edge3(src: number, dst: number, part: number)
.input edge3(IO=spark, path="parts", partitioned=true)
.decl pair(src: number, dst: number)
.input pair(IO=spark, path="parts", partitioned=true, columns="src,dst")
.decl edge(src: number, dst: number)
edge(x, y) :- pair(x, y).
""" + RULES


def _write_part(spark, root: Path, part: int, rows) -> None:
    shutil.rmtree(root / f"part={part}", ignore_errors=True)
    if rows:
        spark.createDataFrame(sorted(rows), "src long, dst long").coalesce(1).write.parquet(str(root / f"part={part}"))


def _check_parts(kind, parts: dict[int, set]) -> None:
    edges = {e for rows in parts.values() for e in rows}
    _check(kind, edges)
    assert kind.rows("edge3") == sorted((s, d, p) for p, rows in parts.items() for s, d in rows)
    assert kind.rows("pair") == sorted(edges)


@pytest.mark.parametrize("Kind", [pytest.param(InProcess, id="in-process"),     # resident: a minute and more
                                  pytest.param(Resident, id="resident", marks=long_only)])
def test_partitioned_reads_only_the_changed_partitions(spark, tmp_path, Kind):
    rng = random.Random(5)
    parts = {p: {(rng.randrange(300), rng.randrange(300)) for _ in range(50)} for p in range(20)}
    parts[1] |= {(9, 9)}
    parts[2] |= {(9, 9)}                             # one row in two partitions
    for p, rows in parts.items():
        _write_part(spark, tmp_path / "parts", p, rows)
    kind = Kind(tmp_path, PARTITIONED)
    _check_parts(kind, parts)
    parts[3] = set(rng.sample(sorted(parts[3]), 40)) | {(1, 1), (2, 1)}
    _write_part(spark, tmp_path / "parts", 3, parts[3])
    report = kind.refresh()
    # each source reads partition 3 only
    assert _read(report, "edge3") == len(parts[3]) and _read(report, "pair") == len(parts[3])
    _check_parts(kind, parts)
    parts[1] -= {(9, 9)}                             # still in partition 2: no retraction of pair(9, 9)
    parts[20] = {(4, 5)}                             # a new partition
    del parts[0]                                     # a partition removed
    _write_part(spark, tmp_path / "parts", 1, parts[1])
    _write_part(spark, tmp_path / "parts", 20, parts[20])
    _write_part(spark, tmp_path / "parts", 0, set())
    report = kind.refresh()
    assert _read(report, "edge3") == len(parts[1]) + 1
    _check_parts(kind, parts)
    assert _read(kind.refresh(), "edge3") == 0


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.dictionaries(st.integers(0, 3), st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)),
                                                               max_size=4), max_size=2), min_size=1, max_size=3))
def test_random_partition_rewrites_equal_from_scratch(spark, tmp_path_factory, steps):
    tmp_path = tmp_path_factory.mktemp("parts")
    parts = {p: {(p, p + 1)} for p in range(4)}
    for p, rows in parts.items():
        _write_part(spark, tmp_path / "parts", p, rows)
    kind = InProcess(tmp_path, PARTITIONED)
    for step in steps:
        for p, rows in step.items():
            _write_part(spark, tmp_path / "parts", p, rows)
            parts[p] = rows
        parts = {p: rows for p, rows in parts.items() if rows}
        kind.refresh()
        _check_parts(kind, parts)


# ---------------------------------------------------------------- Delta change data feed

DELTA = ".decl edge(src: number, dst: number)\n.input edge(IO=delta, path=\"delta\", cdf=CDF)\n" + RULES


@pytest.fixture
def deltalake():
    return pytest.importorskip("deltalake", reason="the deltalake package is not installed (the spark extra)")


def _delta_write(deltalake, where: Path, rows, mode="append") -> None:
    import pyarrow as pa
    table = pa.table({"src": pa.array([r[0] for r in rows], pa.int64()),
                      "dst": pa.array([r[1] for r in rows], pa.int64())})
    deltalake.write_deltalake(str(where), table, mode=mode,
                              configuration={"delta.enableChangeDataFeed": "true"})


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_delta_change_data_feed_reads_only_the_changes(spark, tmp_path, Kind, deltalake):
    rng = random.Random(11)
    edges = {(rng.randrange(500), rng.randrange(500)) for _ in range(2000)}
    _delta_write(deltalake, tmp_path / "delta", sorted(edges), mode="overwrite")
    kind = Kind(tmp_path, DELTA.replace("CDF", "true"))
    _check(kind, edges)
    added = {(1000 + i, i) for i in range(7)}
    _delta_write(deltalake, tmp_path / "delta", sorted(added))
    table = deltalake.DeltaTable(str(tmp_path / "delta"))
    victim = sorted(edges)[0]
    table.delete(f"src = {victim[0]} AND dst = {victim[1]}")
    table = deltalake.DeltaTable(str(tmp_path / "delta"))
    table.update(updates={"dst": "dst + 10000"}, predicate="src = 1000")
    edges = (edges | added) - {victim, (1000, 0)} | {(1000, 10000)}
    report = kind.refresh()
    assert _read(report) == len(added) + 1 + 2        # 7 inserts, a delete, an update's two images
    _check(kind, edges)
    assert _read(kind.refresh()) == 0


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_delta_without_cdf_is_a_snapshot(spark, tmp_path, Kind, deltalake):
    _delta_write(deltalake, tmp_path / "delta", [(1, 2), (2, 3)], mode="overwrite")
    kind = Kind(tmp_path, DELTA.replace("CDF", "false"))
    _delta_write(deltalake, tmp_path / "delta", [(3, 1)])
    deltalake.DeltaTable(str(tmp_path / "delta")).delete("src = 1")
    kind.refresh()
    _check(kind, {(2, 3), (3, 1)})


# ---------------------------------------------------------------- declarations

@pytest.mark.parametrize("decl, says", [
    ('.input edge(IO=spark, query="SELECT 1, 2", append_only=true)', "needs table= or path="),
    ('.input edge(IO=spark, path="e", append_only=true, partitioned=true)', "both"),
    ('.input edge(IO=spark, path="e", cdf=true)', "needs IO=delta"),
    ('.input edge(IO=delta, table="t")', "needs path="),
    ('.input edge(IO=spark, path="e", append_only=yes)', "true or false"),
    ('.input edge(append_only=true)', "needs IO=spark"),
])
def test_bad_declarations_are_refused_with_a_code(decl, says):
    with pytest.raises(UnknownDirective) as info:
        Engine.from_source(".decl edge(a: number, b: number)\n" + decl)
    assert says in info.value.message


def test_a_delta_path_leading_out_of_the_fact_directory_is_refused(spark, tmp_path):
    text = '.decl edge(a: number, b: number)\n.input edge(IO=delta, path="../elsewhere")\n'
    with pytest.raises(DatalogError) as info:
        Engine.from_source(text, tmp_path).run()
    assert info.value.code == "input_path"


# ---------------------------------------------------------------- scale knobs

def test_scale_knobs_become_spark_settings():
    from datalog.cli.commands import _parser
    from datalog.cli.options import spark_options
    args = _parser().parse_args(["refresh", "ws", "--partitions", "8", "--executor-memory", "8g", "--driver-memory",
                                 "4G", "--driver-max-rows", "1000", "--conf", "spark.sql.shuffle.partitions=3",
                                 "--conf", "spark.x=y"])
    conf = spark_options(args)["conf"]
    assert conf == {"spark.sql.shuffle.partitions": "8", "spark.default.parallelism": "8", "spark.x": "y",
                    "spark.executor.memory": "8g", "spark.driver.memory": "4g", "spark.datalog.driverMaxRows": "1000"}
    for bad in (["--partitions", "0"], ["--driver-memory", "lots"], ["--driver-max-rows", "-3"]):
        with pytest.raises(BadOption):
            _parser().parse_args(["run", "p.dl", *bad])


def test_a_relation_too_large_for_the_driver_is_a_coded_error_naming_it(spark, tmp_path, capsys):
    _append(spark, tmp_path / "edges", [(i, i + 1) for i in range(50)])
    text = '.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges")\n' + RULES
    spark.conf.set("spark.datalog.driverMaxRows", "49")
    try:
        with pytest.raises(DatalogError) as info:
            Engine.from_source(text, tmp_path).run()
    finally:
        spark.conf.unset("spark.datalog.driverMaxRows")
    assert info.value.code == "driver_too_large"
    assert "source edge" in info.value.message and "--driver-max-rows" in info.value.message
    spark.conf.set("spark.datalog.driverMaxRows", "50")          # exactly the limit: read
    try:
        engine = Engine.from_source(text, tmp_path)
        engine.run()
    finally:
        spark.conf.unset("spark.datalog.driverMaxRows")
    assert len(engine.rows("edge")) == 50


def test_cli_refresh_prints_the_rows_read(spark, tmp_path):
    import os
    import subprocess
    import sys
    _append(spark, tmp_path / "edges", [(i, i + 1) for i in range(100)])
    (tmp_path / "p.dl").write_text(APPEND)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    run = [sys.executable, "-m", "datalog"]
    subprocess.run([*run, "init", "ws", "p.dl", "--partitions", "3"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    _append(spark, tmp_path / "edges", [(500, 501), (501, 502)])
    out = subprocess.run([*run, "refresh", "ws"], cwd=tmp_path, env=env, check=True, capture_output=True,
                         text=True).stdout
    assert "source edge: 2 rows read (of 102: only what changed), +2 -0" in out


# ---------------------------------------------------------------- snapshot sources' files

SNAPSHOT = '.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges")\n' + RULES


def _overwrite(spark, where: Path, rows) -> None:
    spark.createDataFrame(sorted(rows), "src long, dst long").coalesce(1).write.mode("overwrite").parquet(str(where))


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_a_snapshot_source_whose_files_did_not_change_is_not_read(spark, tmp_path, Kind):
    edges = {(1, 2), (2, 3)}
    _overwrite(spark, tmp_path / "edges", edges)
    kind = Kind(tmp_path, SNAPSHOT)
    edges |= {(3, 1), (4, 4)}
    _overwrite(spark, tmp_path / "edges", edges)
    assert kind.refresh().commit is not None            # read, diffed; its files' listing kept
    _check(kind, edges)
    (data,) = (tmp_path / "edges").glob("*.parquet")
    good, stamp = data.read_bytes(), data.stat()
    data.write_bytes(b"\0" * len(good))                 # unreadable, same size and time: not read
    os.utime(data, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    report = kind.refresh()
    assert report.commit is None and _read(report) == 0
    _check(kind, edges)
    os.utime(data, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 5_000_000))    # a later time: read
    with pytest.raises(DatalogError) as caught:
        kind.refresh()
    assert caught.value.code == "spark_error"
    data.write_bytes(good)                              # the rows as before, a new time: read, no change
    report = kind.refresh()
    assert report.commit is None and _read(report) == len(edges)
    _check(kind, edges)
    edges -= {(1, 2)}
    _overwrite(spark, tmp_path / "edges", edges)
    assert kind.refresh().commit is not None
    _check(kind, edges)


SINGLE = ('.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges.parquet")\n' + RULES +
          '.output two(IO=spark, path="out/two")\n')
NO_SPARK_IN_PROCESS = """
import json, sys
from datalog.language.errors import DatalogError
from datalog.refresh import refresh
from datalog.spark import session
from datalog.workspace.workspace import Workspace
with Workspace.open(sys.argv[1]) as ws:
    try:
        report = refresh(ws, facts_dir=sys.argv[2], out_dir=sys.argv[3])
        answer = [report.commit, [s.rows_read for s in report.sources]]
    except DatalogError as exc:
        answer = [exc.code]
print(json.dumps(answer + [session._session is None]))
"""
NO_SPARK_RESIDENT = """
import json, sys
from datalog.engine.engine import Engine
from datalog.spark import resident_workspace as rw, session
report = rw.refresh(sys.argv[1], lambda text, source: Engine.from_source(text, sys.argv[2], name=source),
                    out_dir=sys.argv[3])
print(json.dumps([report.commit, [s.rows_read for s in report.sources], session._session is None]))
"""
NO_SPARK = {InProcess: NO_SPARK_IN_PROCESS, Resident: NO_SPARK_RESIDENT}


@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_an_unchanged_local_source_is_refreshed_without_starting_spark(spark, tmp_path, Kind):
    """A refresh whose local sources' files did not change and whose sinks are in sync starts no
    Spark session (datalog/spark/unchanged.py), in a process of its own, for either kind of
    workspace; a changed file is read the Spark way, and after it the next unchanged refresh
    needs no Spark again."""
    import json
    import subprocess
    import sys
    import pyarrow as pa
    import pyarrow.parquet as pq
    edges = {(1, 2), (2, 3), (3, 3)}
    pq.write_table(pa.table({"src": [a for a, _ in sorted(edges)], "dst": [b for _, b in sorted(edges)]}),
                   tmp_path / "edges.parquet")
    kind = Kind(tmp_path, SINGLE)

    def fresh(out_dir):
        done = subprocess.run([sys.executable, "-c", NO_SPARK[Kind], str(kind.ws), str(tmp_path), str(out_dir)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert fresh(tmp_path) == [None, [0], True]
    (tmp_path / "elsewhere").mkdir()
    assert fresh(tmp_path / "elsewhere" / "..") == [None, [0], True]        # the same -D, another spelling
    edges |= {(3, 1)}
    pq.write_table(pa.table({"src": [a for a, _ in sorted(edges)], "dst": [b for _, b in sorted(edges)]}),
                   tmp_path / "edges.parquet")
    assert kind.refresh().commit is not None                                # read, in this process's session
    _check(kind, edges)
    assert fresh(tmp_path) == [None, [0], True]
    _check(kind, edges)


def test_a_damaged_or_edited_files_record_means_read_again(tmp_path):
    from datalog.spark import diff
    files = {"a.parquet": [10, 1_700_000_000_000], "b/c.parquet": [7, 1_700_000_000_001]}
    assert not diff.same_files(tmp_path, files)                   # no record: read
    diff.record_files(tmp_path, files)
    assert diff.same_files(tmp_path, files)
    assert not diff.same_files(tmp_path, {**files, "d.parquet": [1, 1]})
    assert not diff.same_files(tmp_path, None)                    # not a directory of files: read
    record = tmp_path / diff.FILES
    record.write_text(record.read_text().replace("1700000000001", "1700000000002"))
    assert not diff.same_files(tmp_path, {**files, "b/c.parquet": [7, 1_700_000_000_002]})   # checksum fails
    record.write_text("{not json")
    assert not diff.same_files(tmp_path, files)


# ---------------------------------------------------------------- NULL in what a refresh reads

@pytest.mark.parametrize("how", ["append", "partitioned", "snapshot"])
@pytest.mark.parametrize("Kind", KINDS, ids=["in-process", "resident"])
def test_a_null_read_by_a_refresh_is_refused_and_changes_nothing(spark, tmp_path, Kind, how):
    edges = {(1, 2), (2, 3), (3, 1)}
    if how == "partitioned":
        _write_part(spark, tmp_path / "edges", 0, edges)
        flag = ", partitioned=true, columns=\"src,dst\""
    else:
        _append(spark, tmp_path / "edges", edges)
        flag = ", append_only=true" if how == "append" else ""
    kind = Kind(tmp_path, f'.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges"{flag})\n'
                + RULES)
    bad = [(4, None), (1_000_000, 5)]                   # beyond the kept bounds, and a NULL
    if how == "partitioned":
        _write_part(spark, tmp_path / "edges", 1, bad)
    else:
        _append(spark, tmp_path / "edges", bad)
    with pytest.raises(DatalogError) as caught:
        kind.refresh()
    assert caught.value.code == "type_mismatch" and "edge" in str(caught.value)
    _check(kind, edges)                                 # nothing committed


def test_many_new_files_are_read_whole_and_the_listing_setting_is_restored(spark, tmp_path, monkeypatch):
    """Past 32 new files of a local source, Spark is told to list them in the driver for that
    read only (datalog.spark.tables._listed_here): every row is read, the setting is as before."""
    edges = {(1, 2), (2, 3)}
    _append(spark, tmp_path / "edges", edges)
    kind = Resident(tmp_path, APPEND)
    added = {(100 + i, i) for i in range(40)}
    import pyarrow as pa
    import pyarrow.parquet as pq
    for src, dst in sorted(added):                  # one file each
        pq.write_table(pa.table({"src": [src], "dst": [dst]}), tmp_path / "edges" / f"more-{src}.parquet")
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(key, None)
    from datalog.spark import tables
    settings, conf_set = [], tables.conf_set

    def recorded(session, name, value):
        settings.append((name, value, session.conf.get(name, None)))
        return conf_set(session, name, value)
    monkeypatch.setattr(tables, "conf_set", recorded)
    report = kind.refresh()
    assert _read(report) == 40 and spark.conf.get(key, None) == before
    assert settings == [(key, "40", before)]        # set for the read of the 40 new files only
    _check(kind, edges | added)
