"""Incremental maintenance against its from-scratch twin, and the paper's §4.1.1 example.

The property test draws random stratified programs (joins, projection,
constants, repeated variables, negation, recursion, aggregates) and random
streams of insert/retract batches -- including a tuple inserted and
retracted in the same batch, retracts of absent tuples and empty batches --
and after every commit compares every relation of the incremental engine with
an engine maintained by evaluating from scratch.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from maintenance.incremental import IncrementalMaintainer
from maintenance.rule import RuleMaintainer
from tests.strategies import DOMAIN, programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

MAINTAIN = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def update_streams(draw, generated):
    """Batches of (sign, relation, row) over the program's EDB relations."""
    names = sorted(generated.edb)
    batches = []
    for _ in range(draw(st.integers(1, 4))):
        batch = []
        for _ in range(draw(st.integers(0, 6))):
            name = draw(st.sampled_from(names))
            row = draw(st.tuples(*[DOMAIN] * generated.arity[name]))
            if draw(st.booleans()) and generated.edb[name]:
                row = draw(st.sampled_from(sorted(generated.edb[name])))    # often an existing tuple
            batch.append((draw(st.sampled_from("+-")), name, row))
            if draw(st.integers(0, 9)) == 0:
                batch.append(("-" if batch[-1][0] == "+" else "+", name, row))   # both in one batch
        batches.append(batch)
    return batches


def _engine(generated, maintenance: str) -> Engine:
    engine = Engine.from_source(generated.text, maintenance=maintenance)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine


def _commit(engine: Engine, batch) -> dict:
    with engine.transaction() as tx:
        for sign, name, row in batch:
            (tx.insert if sign == "+" else tx.retract)(name, [row])
    return tx.delta


def _commit_both(engine: Engine, twin: Engine, batch) -> tuple | None:
    """The batch committed to ``twin`` then ``engine``: their deltas, or None when the twin's
    commit failed (then the engine's must fail too, and both are left as they were)."""
    try:
        expected = _commit(twin, batch)
    except DatalogError:
        with pytest.raises(DatalogError):
            _commit(engine, batch)
        return None
    return _commit(engine, batch), expected


@MAINTAIN
@given(st.data())
def test_incremental_matches_recompute(data):
    generated = data.draw(programs())
    try:
        incremental, reference = _engine(generated, "incremental"), _engine(generated, "recompute")
    except DatalogError:
        return                                   # e.g. a division by zero in the initial evaluation
    for batch in data.draw(update_streams(generated)):
        both = _commit_both(incremental, reference, batch)
        if both is None:
            continue
        got, expected = both
        for name in generated.relations:
            assert incremental.rows(name) == reference.rows(name), name
        assert {n: c for n, c in got.items() if c} == {n: c for n, c in expected.items() if c}


@MAINTAIN
@given(st.data())
def test_a_first_recording_at_once_equals_one_by_one(data):
    """The first commit records every leapfrog at once (``RuleMaintainer.AT_ONCE``: the keys and
    operations computed in one call, the rows appended in one loop); through Recording
    iterators, operation by operation, it must leave the same sensitivity intervals, the same
    traces with the same entries at each node, and the same answers to the next commits."""
    generated = data.draw(programs())
    engines = []
    for at_once in (True, False):
        RuleMaintainer.AT_ONCE = at_once
        try:
            engine = _engine(generated, "incremental")
            engine.commit()
        except DatalogError:
            return
        finally:
            RuleMaintainer.AT_ONCE = True
        engines.append(engine)
    fast, slow = engines
    assert snapshot(fast) == snapshot(slow)
    for batch in data.draw(update_streams(generated)):
        both = _commit_both(fast, slow, batch)
        if both is not None:
            assert both[0] == both[1]
        assert snapshot(fast) == snapshot(slow)


# ---------------------------------------------------------------- §4.1.1, exactly

def test_unary_join_example_of_section_4_1_1():
    engine = Engine.from_source(".decl A(x: number)\n.decl B(x: number)\nF(x) :- A(x), B(x).\n.decl F(c0: number)\n")
    engine.insert("A", [(0,), (2,), (4,), (5,), (6,)])
    engine.insert("B", [(1,), (2,), (6,), (7,)])
    engine.run()
    engine.adopt(IncrementalMaintainer(engine.planned(), engine.db, drop_prefix=False))
    indexes = engine.maintainer.registry.indexes

    def sensitivity(name):
        return [(lo, hi) for _, lo, hi in indexes[(name, (0,), 0)].intervals()]
    assert sensitivity("A") == [("-inf", 0), (1, 2), (2, 4), (6, 6), (6, "+inf")]
    assert sensitivity("B") == [("-inf", 1), (2, 2), (4, 6)]

    delta = engine.commit(inserts={"A": [(8,)], "B": [(3,)]}, retracts={"A": [(5,)], "B": [(2,)]})
    (rule,) = engine.maintainer.rules.values()
    assert rule.visited == [((), 2, 2), ((), 6, None)]          # ChangeOracle = [2,2] u [6,+inf]
    assert delta["F"].retracted == {(2,)} and not delta["F"].inserted
    # matched intervals were removed; the revisited regions were recorded afresh
    assert sensitivity("A") == [("-inf", 0), (1, 2), (2, 2), (2, 4), (6, 6), (6, 8)]
    assert sensitivity("B") == [("-inf", 1), (2, 3), (4, 6), (6, 6), (8, "+inf")]
    assert engine.rows("F") == [(6,)]


# ---------------------------------------------------------------- rollback

ROLLBACK_PROGRAM = """
.decl e(x: number, y: number)
p(x, y) :- e(x, y).
q(x, r) :- p(x, y), r = 100 / y.
n(x, c) :- p(x, _), c = count : { e(x, _) }.
m(x, v) :- p(x, _), v = max y : { e(x, y) }.
t(x) :- q(x, _), !e(x, x).
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
.decl p(c0: number, c1: number)
.decl q(c0: number, c1: number)
.decl n(c0: number, c1: number)
.decl m(c0: number, c1: number)
.decl t(c0: number)
.decl path(c0: number, c1: number)
"""


def snapshot(engine: Engine) -> dict:
    """Everything maintenance may touch, as plain values: relations and every trie index,
    support counts, sensitivity indices, trace trees, aggregate values."""
    state = {"relations": {n: sorted(r.tuples) for n, r in engine.db.items()},
             # trie indexes are built lazily (one may appear during a rolled-back commit): each
             # must hold exactly its relation's tuples, in its column order
             "stale indexes": [(n, o) for n, r in engine.db.items() for o, root in r.indexes.items()
                               if len(o) and sorted(root.rows(len(o))) !=
                               sorted(tuple(t[i] for i in o) for t in r.tuples)]}
    m = engine.maintainer
    state["support"] = {n: dict(c) for n, c in m.support.items()}
    state["sensitivity"] = {k: index.intervals() for k, index in m.registry.indexes.items()}
    entry = m.registry.entry
    state["traces"] = {str(rule.clause): _trace(rule.root, entry) for rule in m.rules.values() if hasattr(rule, "root")}
    state["views"] = {v.name: (_trace(v.rule.root, entry), {g: v.value(g) for g in _groups(v)}) for v in m.views}
    return state


def _trace(node, entry) -> tuple:
    """The trace below ``node``; ``entry``: a handle's entry as values (``Registry.entry``)."""
    entries = sorted(repr((e.alpha, e.start, e.end, e.region[1:], e.alive)) for e in map(entry, node.entries or ()))
    children = tuple((repr(k), _trace(child, entry) if hasattr(child, "entries") else child)
                     for k, child in node.items())
    keys = [k for k, _ in node.items()]
    assert sorted(keys) == keys and len(keys) == len(node.kids or ()) and len(set(keys)) == len(keys)
    assert all(child.key == k for k, child in node.items() if hasattr(child, "entries"))
    return node.alive, tuple(entries), children


def _groups(view):
    return sorted(view.accumulators) if view.minmax is None else sorted({k[0] for k, _ in view.minmax._tree})


def _rollback_engine() -> Engine:
    engine = Engine.from_source(ROLLBACK_PROGRAM)
    engine.insert("e", [(1, 2), (2, 3), (3, 3), (3, 4), (4, 1)])
    engine.run()
    engine.adopt(IncrementalMaintainer(engine.planned(), engine.db, drop_prefix=False))   # every index: more to roll back
    return engine


def test_failed_transaction_changes_nothing():
    engine = _rollback_engine()
    before = snapshot(engine)
    with pytest.raises(DatalogError) as info:
        engine.commit(inserts={"e": [(5, 6), (2, 0), (6, 6)]}, retracts={"e": [(3, 4), (1, 2)]})
    assert info.value.code == "division_by_zero" and "rule for q" in info.value.message
    assert snapshot(engine) == before
    delta = engine.commit(inserts={"e": [(5, 6)]}, retracts={"e": [(3, 4)]})   # and it still works
    reference = Engine.from_source(ROLLBACK_PROGRAM, maintenance="recompute")
    reference.insert("e", [(1, 2), (2, 3), (3, 3), (4, 1), (5, 6)])
    reference.run()
    for name in engine.relations():
        assert engine.rows(name) == reference.rows(name), name
    assert delta["path"].inserted and delta["path"].retracted


def test_python_exception_mid_maintenance_rolls_back(monkeypatch):
    engine = _rollback_engine()
    before = snapshot(engine)
    from maintenance.aggregate import AggregateView
    fold = AggregateView.fold

    def failing_fold(self, contributions, journal):
        fold(self, contributions, journal)          # change the view, then fail
        raise RuntimeError("injected failure")
    monkeypatch.setattr(AggregateView, "fold", failing_fold)
    with pytest.raises(RuntimeError):
        engine.commit(inserts={"e": [(3, 9), (7, 7)]}, retracts={"e": [(4, 1)]})
    assert snapshot(engine) == before


# ---------------------------------------------------------------- observability

STATS_PROGRAM = """
.decl a(x: number, y: number)
.decl b(x: number)
.decl e(x: number, y: number)
.decl pa(x: number, y: number)
.decl pb(x: number)
.decl path(x: number, y: number)
pa(x, z) :- a(x, y), a(y, z).
pb(x) :- b(x), !a(x, _).
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
"""


def _stats_engine() -> Engine:
    engine = Engine.from_source(STATS_PROGRAM)
    engine.insert("a", [(1, 2), (2, 3), (5, 6)])
    engine.insert("b", [(1,), (4,)])
    engine.insert("e", [(1, 2), (2, 3)])
    engine.run()
    return engine


def test_stats_report_skipped_rules_and_work_per_rule():
    engine = _stats_engine()
    engine.commit(inserts={"b": [(7,)]})
    stats = {rule.split(" :- ")[0]: values for rule, values in engine.stats().items()}
    assert stats["pa(x, z)"]["skipped"] and stats["pa(x, z)"]["operations"] == 0
    assert not stats["pb(x)"]["skipped"]
    assert stats["pb(x)"]["operations"] > 0 and stats["pb(x)"]["regions"] >= 1
    assert stats["pa(x, z)"]["sensitivity_intervals"] > 0          # recorded at the first commit
    assert all(v["skipped"] and v["strategy"] == "B/F" and v["derived"] == 0
               for k, v in stats.items() if k.startswith("path"))
    assert engine.rows("pb") == [(4,), (7,)]


def test_stats_of_dred_count_delta_rules_and_derived_heads():
    engine = _stats_engine()
    engine.commit(inserts={"e": [(3, 4)]})
    stats = {rule: values for rule, values in engine.stats().items()}
    base, step = stats["path(x, y) :- e(x, y)."], stats["path(x, z) :- path(x, y), e(y, z)."]
    assert not base["skipped"] and not step["skipped"]
    assert base["derived"] == 1                                  # path(3, 4) from the new edge
    # step: path(2,4) and path(1,4) come from the new edge and then from new path tuples
    assert step["derived"] >= 2 and step["delta_rules"] >= 2
    assert sorted(engine.rows("path")) == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    assert all(v["skipped"] for k, v in stats.items() if k.startswith(("pa(", "pb(")))


# ---------------------------------------------------------------- Ctrl-C

INTERRUPT_PROGRAM = """
.decl e(x: number, y: number)
.decl s(x: number)
p(x, y) :- e(x, y), !s(y).
j(x, z) :- p(x, y), e(y, z).
n(x, c) :- s(x), c = count : { e(x, _) }.
m(x, v) :- s(x), v = max y : { e(x, y) }.
path(x, y) :- p(x, y).
path(x, z) :- path(x, y), p(y, z).
.decl p(c0: number, c1: number)
.decl j(c0: number, c1: number)
.decl n(c0: number, c1: number)
.decl m(c0: number, c1: number)
.decl path(c0: number, c1: number)
"""


def test_ctrl_c_at_any_instant_of_a_commit_leaves_it_all_or_nothing():
    """SIGINT from a timer at random instants: the commit is either wholly undone (it raised
    KeyboardInterrupt before its durable point) or wholly applied (the signal came before or
    after it, or after its durable point -- maintenance done -- and was held until the commit was
    finished, then raised: datalog/engine/serial.py)."""
    import os
    import random
    import signal
    import threading
    rng = random.Random(7)
    edb = {(rng.randrange(60), rng.randrange(60)) for _ in range(400)}
    engine = Engine.from_source(INTERRUPT_PROGRAM)
    engine.insert("e", sorted(edb))
    engine.insert("s", [(i,) for i in range(0, 60, 7)])
    engine.run()
    engine.adopt(IncrementalMaintainer(engine.planned(), engine.db, drop_prefix=False))
    twin = Engine.from_source(INTERRUPT_PROGRAM, maintenance="recompute")
    twin.insert("e", sorted(edb))
    twin.insert("s", [(i,) for i in range(0, 60, 7)])
    twin.run()
    late = []
    previous = signal.signal(signal.SIGINT, lambda *_: late.append(1))    # outside a commit
    cancelled = undone = 0
    try:
        for _ in range(40):
            inserts = {"e": [(rng.randrange(60), rng.randrange(60)) for _ in range(25)],
                       "s": [(rng.randrange(60),)]}
            retracts = {"e": rng.sample(sorted(engine.db["e"].tuples), 25)}
            before = snapshot(engine)
            timer = threading.Timer(rng.uniform(0, 0.03), os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                engine.commit(inserts=inserts, retracts=retracts)
            except KeyboardInterrupt:
                cancelled += 1
                timer.join()
                if snapshot(engine) == before:
                    undone += 1
                    continue                  # else made, the Ctrl-C held past it: as the twin's
            timer.join()
            twin.commit(inserts=inserts, retracts=retracts)
            assert {n: engine.rows(n) for n in engine.relations()} == \
                   {n: twin.rows(n) for n in twin.relations()}
    finally:
        signal.signal(signal.SIGINT, previous)
    assert cancelled >= 5 and undone >= 3     # the timer did land inside commits, and undid some


# ---------------------------------------------------------------- short-circuit (§2.2.1)

SHORT_CIRCUIT = """
.decl r(a: number, b: number)
.decl s(b: number, c: number)
// @order a, b, c
q(a) :- r(a, b), s(b, c).
.decl q(c0: number)
"""


def test_short_circuit_keeps_one_witness_per_head_tuple():
    engine = Engine.from_source(SHORT_CIRCUIT)
    engine.insert("r", [(1, b) for b in range(20)] + [(2, 7)])
    engine.insert("s", [(b, c) for b in range(20) for c in range(3)])
    engine.run()
    engine.commit()
    (rule,) = engine.maintainer.rules.values()
    assert rule.short == 1                            # b and c only need one witness
    assert dict(engine.maintainer.support["q"]) == {(1,): 1, (2,): 1}
    engine.commit(retracts={"s": [(19, 2)]})          # not a witness: no change reaches the rule
    assert engine.stats()[str(rule.clause)]["skipped"]
    engine.commit(retracts={"s": [(0, 0)]})           # the witness of q(1): the search resumes
    assert engine.rows("q") == [(1,), (2,)]
    assert 0 < engine.stats()[str(rule.clause)]["operations"] < 20
    for b in range(20):                               # retract every witness of q(1) in turn
        for c in range(3):
            engine.commit(retracts={"s": [(b, c)]})
            assert engine.rows("q") == ([(1,)] if (b, c) < (19, 1) else []) + \
                ([(2,)] if (b, c) < (7, 2) else [])
            assert all(count == 1 for count in engine.maintainer.support["q"].values())


ASSIGNED_ABOVE = """
.decl t(a: number)
.decl r(a: number)
.decl q(a: number, b: number)
// @order x, y
q(v, y) :- t(x), r(y), v = x * 10.
"""


def test_a_region_below_an_assignment_binds_it_again():
    """A change of r is maintained by regions at y's level under every x node; v = x * 10 was
    placed above them and must be computed again for each, not left from the last x evaluated
    (found by test_incremental_matches_recompute: every head came out with the last x's v)."""
    engine = Engine.from_source(ASSIGNED_ABOVE)
    engine.insert("t", [(0,), (3,), (9,)])
    engine.insert("r", [(3,)])
    engine.run()
    engine.commit(inserts={"t": [(5,)]})              # the maintainer exists from here on
    delta = engine.commit(inserts={"r": [(0,)]})
    assert sorted(delta["q"].inserted) == [(0, 0), (30, 0), (50, 0), (90, 0)]
    assert not delta["q"].retracted
    assert engine.rows("q") == sorted((10 * x, y) for x in (0, 3, 5, 9) for y in (0, 3))


@given(st.sets(st.integers(-50, 50)), st.data())
@settings(max_examples=examples(200), deadline=None)
def test_spliced_key_lists_equal_sorting_from_scratch(keys, data):
    """surgery._spliced against its slow twin: the sorted set difference and union."""
    from maintenance.surgery import _spliced
    erased = data.draw(st.lists(st.sampled_from(sorted(keys)), unique=True) if keys else st.just([]))
    inserted = data.draw(st.lists(st.integers(-60, 60).filter(lambda k: k not in set(keys) - set(erased)),
                                  unique=True))
    assert _spliced(sorted(keys), erased, inserted) == sorted((keys - set(erased)) | set(inserted))


@given(st.sets(st.integers(-50, 50)), st.data())
@settings(max_examples=examples(200), deadline=None)
def test_chunked_keys_equal_sorting_from_scratch(keys, data):
    """surgery.ChunkedKeys after edits, and its windows, against sorted sets: every key in
    [lo, hi] (None: unbounded) and the first key above hi."""
    from maintenance.surgery import ChunkedKeys
    chunked, model = ChunkedKeys(keys), set(keys)
    chunked._reset(4)                                  # small chunks: edits cross their edges
    for _ in range(data.draw(st.integers(1, 4))):
        erased = data.draw(st.lists(st.sampled_from(sorted(model)), unique=True) if model else st.just([]))
        inserted = data.draw(st.lists(st.integers(-60, 60).filter(lambda k: k not in model - set(erased)),
                                      unique=True))
        chunked.edit(erased, inserted)
        model = (model - set(erased)) | set(inserted)
        assert list(chunked) == sorted(model)
        lo, hi = data.draw(st.one_of(st.none(), st.integers(-70, 70))), data.draw(st.one_of(st.none(), st.integers(-70, 70)))
        if lo is not None and hi is not None and lo > hi:
            lo, hi = hi, lo
        inside = [k for k in sorted(model) if (lo is None or k >= lo) and (hi is None or k <= hi)]
        above = [k for k in sorted(model) if hi is not None and k > hi][:1]
        assert chunked.window(lo, hi) == inside + above


@MAINTAIN
@given(st.data())
def test_chunked_levels_do_the_same_maintenance(data):
    """Every edited trie level kept as ChunkedKeys (surgery.CHUNKED and FEW lowered), its regions
    read through windows: the same relations as evaluating from scratch, and the same work
    (iterator operations, intervals, regions per rule) as the engine whose levels stay lists."""
    import maintenance.surgery as surgery
    generated = data.draw(programs())
    try:
        chunked, lists, reference = (_engine(generated, m) for m in ("incremental", "incremental", "recompute"))
    except DatalogError:
        return
    default = surgery.CHUNKED, surgery.FEW
    for batch in data.draw(update_streams(generated)):
        try:
            _commit(reference, batch)
        except DatalogError:
            continue
        surgery.CHUNKED, surgery.FEW = 2, 0
        try:
            _commit(chunked, batch)
        finally:
            surgery.CHUNKED, surgery.FEW = default
        _commit(lists, batch)
        for name in generated.relations:
            assert chunked.rows(name) == reference.rows(name), name
        assert chunked.stats() == lists.stats()


def test_change_erased_is_the_deprecated_name_of_retracted():
    from maintenance.delta import Change
    change = Change(inserted={(1,)}, retracted={(2,)})
    with pytest.warns(DeprecationWarning, match="Change.retracted"):
        assert change.erased == {(2,)}
