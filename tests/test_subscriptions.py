"""Change subscriptions (issue 20, part 3), against recomputation: on random streams of commits
(some rolled back) over a recursive program with negation, the weights delivered add up to the
final relation, which is what evaluating the program from scratch gives; commit numbers rise;
a rollback delivers nothing; a raising callback leaves its commit in place. For a workspace, a
change is delivered once its commit is durable."""

from __future__ import annotations

import warnings
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from datalog import DatalogError, Engine, SubscriptionWarning, Workspace
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

PROGRAM = """
.decl e(x: number, y: number)
.decl blocked(x: number)
.decl reach(x: number, y: number)
.decl open(x: number, y: number)
reach(x, y) :- e(x, y).
reach(x, z) :- reach(x, y), e(y, z).
open(x, y) :- reach(x, y), !blocked(x), !blocked(y).
e(0, 1).
"""
WATCHED = ("reach", "open", "e")

NODE = st.integers(0, 4)
CHANGE = st.one_of(st.tuples(st.sampled_from("+-"), st.just("e"), st.tuples(NODE, NODE)),
                   st.tuples(st.sampled_from("+-"), st.just("blocked"), st.tuples(NODE)))
BATCH = st.tuples(st.lists(CHANGE, max_size=5), st.booleans())     # (changes, rolled back)


class Boom(Exception):
    pass


def from_scratch(edb: dict[str, set]) -> Engine:
    engine = Engine.from_source(PROGRAM.replace("e(0, 1).", ""))
    for name, rows in edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine


def weights(changes) -> dict[tuple, int]:
    """The weight delivered per row, summed over the changes' Arrow tables (zero sums dropped)."""
    total: Counter = Counter()
    for change in changes:
        for *row, weight in (tuple(r.values()) for r in change.table.to_pylist()):
            total[tuple(row)] += weight
    return {row: weight for row, weight in total.items() if weight}


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(BATCH, max_size=8), st.booleans())
def test_delivered_weights_add_up_to_the_relation(batches, snapshot_first):
    engine = Engine.from_source(PROGRAM)
    engine.run()
    edb = {"e": {(0, 1)}, "blocked": set()}
    queued = {name: engine.changes(name, snapshot=snapshot_first) for name in WATCHED}
    called = []
    engine.subscribe("reach", called.append, snapshot=snapshot_first)
    raising = engine.subscribe("open", lambda change: (_ for _ in ()).throw(Boom(change.commit)), snapshot=False)
    initial = {name: set(engine.rows(name)) for name in WATCHED}
    delivered = {name: ([] if not snapshot_first else s.poll()) for name, s in queued.items()}
    last = engine.commit_number
    for changes, rolled_back in batches:
        count = {name: len(called) if name == "reach" else 0 for name in WATCHED}
        before = {n: engine.rows(n) for n in engine.relations()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with engine.transaction() as tx:
                    for sign, name, row in changes:
                        (tx.insert if sign == "+" else tx.retract)(name, [row])
                    if rolled_back:
                        raise Boom("rollback")
            except Boom:
                assert rolled_back
        if rolled_back:
            assert all(not s.poll() for s in queued.values()) and len(called) == count["reach"]
            assert {n: engine.rows(n) for n in engine.relations()} == before and engine.commit_number == last
            continue
        for sign, name, row in changes:                           # the model: the last request wins
            (edb[name].add if sign == "+" else edb[name].discard)(row)
        assert engine.commit_number == last + 1
        last = engine.commit_number
        for name, s in queued.items():
            new = s.poll()
            assert all(c.commit == last for c in new) and len(new) <= 1
            assert bool(new) == bool(tx.delta.get(name))             # a commit that changes nothing: nothing
            delivered[name].extend(new)
        if tx.delta.get("open"):                                   # the raising callback: reported, commit kept
            assert raising.errors[-1][0] == last and isinstance(raising.errors[-1][1], Boom)
            assert any(issubclass(w.category, SubscriptionWarning) for w in caught)
        assert {n: set(engine.rows(n)) for n in ("e", "blocked")} == edb
    expected = from_scratch(edb)
    for name in WATCHED:
        commits = [c.commit for c in delivered[name]]
        assert commits == sorted(set(commits))                    # in commit order, one per commit
        final = set(engine.rows(name))
        assert final == set(expected.rows(name))
        start = set() if snapshot_first else initial[name]
        assert weights(delivered[name]) == {**{r: 1 for r in final - start}, **{r: -1 for r in start - final}}
    assert [c.commit for c in called] == [c.commit for c in delivered["reach"]]
    assert [c.rows() for c in called] == [c.rows() for c in delivered["reach"]]


def test_change_tables_have_the_columns_and_a_weight():
    engine = Engine.from_source(PROGRAM)
    engine.run()
    changes = engine.changes("reach")
    engine.commit(inserts={"e": [(1, 2)]}, retracts={"e": [(0, 1)]})
    first, second = changes.poll()
    assert (first.commit, second.commit) == (0, 1)
    assert second.table.schema == pa.schema([("x", pa.int64()), ("y", pa.int64()), ("weight", pa.int8())])
    assert second.table.to_pydict() == {"x": [0, 1], "y": [1, 2], "weight": [-1, 1]}
    assert second.rows() == [(0, 1, -1), (1, 2, 1)] and first.rows() == [(0, 1, 1)]
    assert pa.table(second).equals(second.table)


def test_closed_subscription_receives_nothing():
    engine = Engine.from_source(PROGRAM)
    with engine.changes("reach", snapshot=False) as changes:
        engine.commit(inserts={"e": [(1, 2)]})
        assert len(changes.poll()) == 1
    engine.commit(inserts={"e": [(2, 3)]})
    assert changes.poll() == [] and changes.closed


def test_extend_is_a_commit_too():
    engine = Engine.from_source(PROGRAM)
    engine.run()
    changes = engine.changes("reach", snapshot=False)
    engine.extend("e(1, 7).")
    change, = changes.poll()
    assert change.commit == engine.commit_number and sorted(change.inserted) == [(0, 7), (1, 7)]


def test_undefined_relation():
    with pytest.raises(DatalogError) as caught:
        Engine.from_source(PROGRAM).subscribe("nothing", print)
    assert caught.value.code == "undefined_relation"


def test_workspace_delivers_durable_commits(tmp_path):
    path = tmp_path / "ws"
    seen = []

    def check(change):
        with Workspace.open(path, readonly=True) as reader:      # the commit is on disk already
            seen.append((change.commit, reader.seq, set(reader.engine.rows("reach"))))

    with Workspace.create(path, PROGRAM) as ws:
        ws.subscribe("reach", check, snapshot=False)
        ws.engine.commit(inserts={"e": [(1, 2)]})
        ws.engine.commit(inserts={"blocked": [(3,)]})              # reach unchanged: nothing delivered
        ws.engine.commit(retracts={"e": [(0, 1)]})
        rows = set(ws.engine.rows("reach"))
        assert [commit for commit, _, _ in seen] == [ws.seq - 2, ws.seq]
        assert all(commit == on_disk for commit, on_disk, _ in seen)
        assert seen[-1][2] == rows
        ws.addblock("more", "reach(y, x) :- e(x, y).")
        assert seen[-1][0] == ws.seq and (2, 1) in seen[-1][2]
        ws.removeblock("more")                                   # a new engine: the subscription follows
        assert seen[-1][0] == ws.seq and seen[-1][2] == rows


def test_workspace_commit_that_fails_to_log_delivers_nothing(tmp_path, monkeypatch):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        changes = ws.changes("reach", snapshot=False)
        seq = ws.seq

        def full_disk(*_):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr("datalog.workspace.workspace.wsfile.append", full_disk)
        with pytest.raises(Exception):
            ws.engine.commit(inserts={"e": [(1, 2)]})
        assert changes.poll() == [] and ws.seq == seq and (0, 2) not in ws.engine.rows("reach")


def test_workspace_records_are_delivered_as_their_text(tmp_path):
    from datalog.language.composites import NIL, Record
    program = ".type P = [x: number, s: symbol]\n.decl item(p: P)\n.decl copy(p: P)\ncopy(p) :- item(p).\n"
    with Workspace.create(tmp_path / "ws", program) as ws:
        changes = ws.changes("copy", snapshot=False)
        ws.engine.commit(inserts={"item": [(Record((1, "a, b")),), (NIL,)]})
        change, = changes.poll()
        assert change.commit == ws.seq
        assert change.table.to_pydict() == {"p": ["nil", '[1, "a, b"]'], "weight": [1, 1]}
        ws.engine.commit(retracts={"item": change.table.select(["p"])})     # its own table, read back
        assert ws.engine.rows("copy") == [] and changes.poll()[0].table["weight"].to_pylist() == [-1, -1]
