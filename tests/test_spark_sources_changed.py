"""Sources that change under a workspace: a Delta table dropped and made again, a vacuumed one,
an update of a relation a Spark source feeds, and a single Parquet file left as it was (in-process
workspaces; the tables are written with pyarrow and deltalake, no Spark job)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from datalog.language.errors import DatalogError  # noqa: E402
from datalog.refresh import refresh  # noqa: E402
from datalog.workspace.workspace import Workspace  # noqa: E402

RULES = ".decl hop(a: number, c: number)\nhop(x, z) :- edge(x, y), edge(y, z).\n"
DELTA = '.decl edge(src: number, dst: number)\n.input edge(IO=delta, path="delta", cdf=true)\n' + RULES
SINGLE = '.decl edge(src: number, dst: number)\n.input edge(IO=spark, path="edges.parquet", format=parquet)\n' + RULES


def _table(rows):
    return pa.table({"src": pa.array([r[0] for r in rows], pa.int64()),
                     "dst": pa.array([r[1] for r in rows], pa.int64())})


def _delta(where: Path, rows, mode="append") -> None:
    deltalake.write_deltalake(str(where), _table(rows), mode=mode,
                              configuration={"delta.enableChangeDataFeed": "true"})


def _refresh(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        return refresh(ws, facts_dir=tmp_path, out_dir=tmp_path)


def _edges(tmp_path):
    with Workspace.open(tmp_path / "ws", readonly=True) as ws:
        return ws.engine.rows("edge")


def test_a_delta_table_made_again_at_the_same_version_is_source_replaced(spark, tmp_path):
    _delta(tmp_path / "delta", [(1, 2)], mode="overwrite")
    _delta(tmp_path / "delta", [(2, 3)])                                   # version 1
    Workspace.create(tmp_path / "ws", DELTA, facts_dir=tmp_path, out_dir=tmp_path).close()
    shutil.rmtree(tmp_path / "delta")                                      # dropped, made again: version 1
    _delta(tmp_path / "delta", [(7, 8)], mode="overwrite")
    _delta(tmp_path / "delta", [(8, 9)])
    with pytest.raises(DatalogError) as caught:
        _refresh(tmp_path)
    assert caught.value.code == "source_replaced" and "datalog init" in caught.value.message
    assert _edges(tmp_path) == [(1, 2), (2, 3)]                            # nothing changed
    _delta(tmp_path / "delta", [(9, 10)])                                  # a higher version: still refused
    with pytest.raises(DatalogError) as caught:
        _refresh(tmp_path)
    assert caught.value.code == "source_replaced"


def test_a_vacuumed_change_feed_says_to_init_again(spark, tmp_path):
    _delta(tmp_path / "delta", [(1, 2), (2, 3)], mode="overwrite")
    Workspace.create(tmp_path / "ws", DELTA, facts_dir=tmp_path, out_dir=tmp_path).close()
    deltalake.DeltaTable(str(tmp_path / "delta")).delete("src = 1")
    _delta(tmp_path / "delta", [(5, 6)], mode="overwrite")
    deltalake.DeltaTable(str(tmp_path / "delta")).vacuum(retention_hours=0, enforce_retention_duration=False,
                                                         dry_run=False)
    with pytest.raises(DatalogError) as caught:
        _refresh(tmp_path)
    assert caught.value.code == "missing_input" and "datalog init" in caught.value.message
    assert "VACUUM" in caught.value.message and "without cdf=true" in caught.value.message


def test_an_update_of_a_relation_a_source_feeds_is_not_updatable(spark, tmp_path):
    _delta(tmp_path / "delta", [(1, 2), (2, 3)], mode="overwrite")
    Workspace.create(tmp_path / "ws", DELTA, facts_dir=tmp_path, out_dir=tmp_path).close()
    with Workspace.open(tmp_path / "ws") as ws:
        seq = ws.seq
        for change in ({"inserts": {"edge": [(3, 4)]}}, {"retracts": {"edge": [(1, 2)]}}):
            with pytest.raises(DatalogError) as caught:
                ws.engine.commit(**change)
            assert caught.value.code == "not_updatable" and "datalog refresh" in caught.value.message
            assert "edge" in caught.value.message and "delta" in caught.value.message
        ws.engine.commit(inserts={})                                       # an empty commit is still one
        assert ws.seq == seq + 1
    assert _edges(tmp_path) == [(1, 2), (2, 3)]
    _delta(tmp_path / "delta", [(3, 4)])                                   # the source changes: refresh does it
    assert _refresh(tmp_path).commit is not None
    assert _edges(tmp_path) == [(1, 2), (2, 3), (3, 4)]


def test_an_unchanged_single_parquet_file_is_not_read(spark, tmp_path):
    rows = [(i, i + 1) for i in range(50)]
    pq.write_table(_table(rows), tmp_path / "edges.parquet")
    Workspace.create(tmp_path / "ws", SINGLE, facts_dir=tmp_path, out_dir=tmp_path).close()
    for _ in range(2):
        report = _refresh(tmp_path)
        (source,) = report.sources
        assert report.commit is None and source.rows_read == 0
    pq.write_table(_table(rows + [(100, 0)]), tmp_path / "edges.parquet")   # changed: read, diffed
    report = _refresh(tmp_path)
    assert report.commit is not None and report.sources[0].inserted == 1
    assert (100, 0) in _edges(tmp_path)
    assert _refresh(tmp_path).sources[0].rows_read == 0


def test_a_single_file_is_known_by_its_footer_not_only_its_size_and_time(tmp_path):
    import os
    from datalog.spark import diff
    where = tmp_path / "e.parquet"
    pq.write_table(_table([(1, 2), (3, 4)]), where)
    before, stamp = diff.file_identity(where, "parquet"), where.stat()
    pq.write_table(_table([(1, 2), (3, 5)]), where)                        # same size, other rows
    os.utime(where, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert where.stat().st_size == stamp.st_size
    assert diff.file_identity(where, "parquet") != before
    assert diff.file_identity(where, "parquet") == diff.file_identity(where, "parquet")
