"""Backward/Forward maintenance of recursive strata (maintenance/backward_forward.py) against
DRed (maintenance/dred.py, its twin) and recomputation.

The test-only maintainer of tests/test_dred.py drives one of the two algorithms; every test
replays the same transactions on three engines -- B/F, DRed and ``maintenance="recompute"`` --
and compares every relation and every delta after each transaction.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import test_dred as twin
from datalog.engine.engine import Engine
from datalog.language.errors import DivisionByZero
from maintenance import backward_forward, dred
from maintenance.incremental import IncrementalMaintainer
from strategies import programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)


class OnlyMaintainer(twin.DRedOnlyMaintainer):
    """Non-recursive strata recomputed, recursive strata maintained by ``module``."""

    def __init__(self, engine, module, budget=None, probe=None):
        super().__init__(engine)
        self.module, self.budget, self.probe = module, budget, probe

    def apply(self, delta, journal):
        engine, out = self.engine, dict(delta)
        for name, change in delta.items():
            journal.erase(engine.db[name], change.retracted)
            journal.insert(engine.db[name], change.inserted)
        for stratum in engine.checked.strata:
            if not any(c.body for c in stratum.clauses):
                continue
            if stratum.recursive:
                args = (engine.planned(), engine.db, stratum, out, journal)
                if self.module is backward_forward and backward_forward.supports(stratum):
                    out.update(backward_forward.maintain_recursive(*args, budget=self.budget,
                                                                       probe=self.probe))
                else:
                    out.update(dred.maintain_recursive(*args))
            else:
                out.update(twin._recompute(engine, stratum, journal))
        return out


def three(text: str, edb: dict, intersect: str = "probe", budget=None, probe=None) -> list[Engine]:
    """B/F (stopping at ``budget``: then DRed for the rest; DRed whole if its overdeletion stays
    within ``probe``), DRed, recomputation."""
    out = []
    for module in (backward_forward, dred, None):
        engine = Engine.from_source(text, maintenance="incremental" if module else "recompute", intersect=intersect)
        for name, rows in edb.items():
            engine.insert(name, sorted(rows))
        engine.run()
        if module:
            engine.maintainer = OnlyMaintainer(engine, module, budget, probe)
        out.append(engine)
    return out


def replay(text: str, edb: dict, batches, intersect: str = "probe", budget=None, probe=None) -> Engine:
    """Apply each batch to the three engines; after each, every relation and delta must agree."""
    engines = three(text, edb, intersect, budget, probe)
    assert twin.contents(engines[0]) == twin.contents(engines[2])
    for ops in batches:
        got = [twin.transact(engine, ops) for engine in engines]
        assert got[0] == got[2] and got[1] == got[2], ops
        want = twin.contents(engines[2])
        assert twin.contents(engines[0]) == want and twin.contents(engines[1]) == want, ops
        twin.check_indexes(engines[0])
    return engines[0]


ins, ret = twin.ins, twin.ret


def test_deleting_an_edge_breaks_the_cycle():
    engine = replay(twin.TC, {"edge": {(1, 2), (2, 3), (3, 1), (3, 4)}}, [ret("edge", (3, 1))])
    assert engine.rows("path") == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]


@pytest.mark.parametrize("budget, probe", [(None, None), ((0, 0), None), ((0, 2), None), ((1, 1), None),
                                           (None, 0), (None, 3), ((0, 2), 5), (None, 1000)])
def test_cycles_and_facts_with_many_derivations(budget, probe):
    """With a small budget B/F stops part way and DRed finishes (``_handover``); within the probe
    DRed does it all; a probe stopped part way leaves nothing changed for B/F."""
    edges = {(1, 1), (1, 2), (2, 1), (2, 3), (3, 2), (3, 3), (0, 1), (0, 3), (3, 4)}
    batches = [ret("edge", (1, 1)), ret("edge", (2, 3)), ret("edge", (3, 3), (1, 2)), ins("edge", (3, 1)),
               ret("edge", (0, 1)), ret("edge", (2, 1), (3, 2), (3, 1))]
    replay(twin.TC, {"edge": edges}, batches, budget=budget, probe=probe)


@pytest.mark.parametrize("text", [twin.SAME_GENERATION, twin.NONLINEAR_MUTUAL, twin.NEGATION_IN_RECURSION,
                                  twin.BASE_RULES_AND_COMPARISONS, twin.PROBES, twin.AGGREGATES])
def test_the_dred_programs(text):
    """The programs of tests/test_dred.py, with the transactions drawn at random there too."""
    edb = {"SAME": None}
    if text is twin.SAME_GENERATION:
        edb = {"par": {("b", "a"), ("c", "a"), ("d", "b"), ("e", "c"), ("f", "d"), ("g", "e"), ("h", "e")}}
        batches = [ret("par", ("c", "a")), ins("par", ("c", "b")), ret("par", ("h", "e")),
                   ins("par", ("c", "a"), ("h", "d")), ret("par", ("b", "a"), ("c", "b"))]
    elif text is twin.NONLINEAR_MUTUAL:
        edb = {"e": {(1, 2), (2, 3), (3, 4), (4, 1), (2, 2)}}
        batches = [ret("e", (2, 2)), ret("e", (2, 3)), ins("e", (2, 3), (3, 3)), ret("e", (4, 1), (1, 2))]
    elif text is twin.NEGATION_IN_RECURSION:
        edb = {"edge": {(1, 2), (2, 3), (3, 4), (4, 2), (1, 5)}, "start": {(1,)},
               "flag": {(5, 0)}, "block": {(3, 1), (3, 2)}}
        batches = [ins("flag", (2, 1)), ret("flag", (2, 1)), ret("block", (3, 1)), ret("block", (3, 2)),
                   ins("flag", (4, 1)) + ret("flag", (5, 0)),
                   ins("block", (4, 0)) + ret("edge", (1, 2)) + ins("edge", (5, 3))]
    elif text is twin.BASE_RULES_AND_COMPARISONS:
        edb = {"e": {(1, 1), (2, 3), (3, 4), (4, 2), (1, 5)}, "w": {(0, 1), (5, 5), (3, 7)}}
        batches = [ret("e", (1, 1)), ins("e", (0, 2)), ret("w", (0, 1)), ins("w", (2, 1)),
                   ret("e", (2, 3), (3, 4)), ins("e", (7, 7)) + ret("w", (3, 7)), ret("e", (7, 7))]
    elif text is twin.PROBES:
        edb = {"e0": {(0, 0), (0, 1), (5, 2)}, "e1": {(0,), (1,), (3,)}}
        batches = [ret("e0", (0, 0)), ins("e0", (3, 3)), ret("e1", (3,)), ins("e1", (3,)),
                   ret("e0", (5, 2)), ins("e0", (6, 2)), ret("e0", (3, 3))]
    else:
        edb = {"e": {(1, 2), (2, 3), (3, 1), (2, 4)}, "start": {(1,)}}
        batches = [ins("e", (2, 5)), ret("e", (2, 4)), ret("e", (3, 1)), ins("start", (4,)), ins("e", (4, 2))]
    replay(text, edb, batches)


def test_a_long_chain_of_proofs_needs_no_recursion_limit():
    """checkProvability runs on an explicit stack: a chain of 3,000 edges, cut near its start."""
    chain = {(i, i + 1) for i in range(3000)} | {(0, 2)}
    program = ".decl edge(a: number, b: number)\nreach(y) :- edge(0, y).\nreach(z) :- reach(y), edge(y, z).\n.decl reach(c0: number)\n"
    replay(program, {"edge": chain}, [ret("edge", (0, 1)), ret("edge", (1, 2)), ret("edge", (0, 2))])


def test_supports_names_the_strata_left_to_dred():
    engine = Engine.from_source(".decl e(a: number, b: number)\n"
                                "p(x, y) :- e(x, y).\np(x, z) :- p(x + 1, z), e(x, z).\n.decl p(c0: number, c1: number)\n")
    (stratum,) = [s for s in engine.checked.strata if s.recursive]
    assert not backward_forward.supports(stratum)
    engine = Engine.from_source(twin.TC)
    (stratum,) = [s for s in engine.checked.strata if s.recursive]
    assert backward_forward.supports(stratum)


def test_division_by_zero_rolls_back_exactly():
    engines = three(twin.DIVIDES, {"e": {(1, 2), (2, 3), (3, 1), (3, 4)}, "f": {(1,), (2,), (3,), (4,), (5,)}})
    engine = engines[0]
    before = twin._state(engine)
    with pytest.raises(DivisionByZero):
        engine.commit(inserts={"e": [(4, 5)]}, retracts={"e": [(3, 1)], "f": [(2,)]})
    twin._assert_restored(engine, before)
    delta = engine.commit(retracts={"e": [(3, 1)]})
    assert (3, 1) in delta["p"].retracted


def test_an_error_at_any_step_of_the_search_rolls_back_exactly(monkeypatch):
    """An exception raised from the n-th rule-instance match (n = 1, 2, ...) leaves everything as before."""
    edges = {(1, 2), (2, 3), (3, 1), (3, 4), (4, 1), (0, 2)}
    real = backward_forward._instances
    for n in range(1, 40):
        (engine, _, reference) = three(twin.TC, {"edge": edges})
        for order in [(1, 0), (0, 1)]:
            engine.db["edge"].index(order)
        before = twin._state(engine)
        calls = []

        def failing(*args, **kwargs):
            calls.append(1)
            if len(calls) == n:
                raise RuntimeError("boom in the middle of B/F")
            return real(*args, **kwargs)
        monkeypatch.setattr(backward_forward, "_instances", failing)
        try:
            engine.commit(inserts={"edge": [(4, 5)]}, retracts={"edge": [(3, 1), (0, 2)]})
        except RuntimeError:
            twin._assert_restored(engine, before)
            continue
        finally:
            monkeypatch.setattr(backward_forward, "_instances", real)
        reference.commit(inserts={"edge": [(4, 5)]}, retracts={"edge": [(3, 1), (0, 2)]})
        assert twin.contents(engine) == twin.contents(reference)
        break
    else:
        pytest.fail("the search never finished")


# ---------------------------------------------------------------- property tests

@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_recursive_programs_match_dred_and_recompute(data):
    text, edb, arity = data.draw(twin.recursive_programs())
    replay(text, edb, data.draw(twin.batches(arity)), data.draw(st.sampled_from(["probe", "leapfrog"])),
           data.draw(BUDGETS), data.draw(PROBES))


BUDGETS = st.sampled_from([None, None, (0, 0), (0, 1), (0, 3), (1, 2), backward_forward.BUDGET])
PROBES = st.sampled_from([None, None, None, 0, 2, 8])


@st.composite
def dense_graphs(draw):
    """Graphs on few nodes with many edges: cycles everywhere and tuples with many derivations."""
    nodes = st.integers(0, 5)
    return draw(st.sets(st.tuples(nodes, nodes), min_size=5, max_size=25))


NONLINEAR_TC = """
.decl edge(a: number, b: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), path(y, z).
.decl path(c0: number, c1: number)
"""


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dense_cyclic_graphs_match_dred_and_recompute(data):
    edges = data.draw(dense_graphs())
    text = data.draw(st.sampled_from([twin.TC, NONLINEAR_TC]))
    node = st.integers(0, 5)
    op = st.tuples(st.sampled_from([+1, -1, -1]), st.just("edge"), st.tuples(node, node))
    retract_some = st.lists(st.sampled_from(sorted(edges)), min_size=1, max_size=6).map(
        lambda rows: [(-1, "edge", r) for r in rows])
    batches = data.draw(st.lists(st.one_of(st.lists(op, max_size=6), retract_some), min_size=1, max_size=6))
    replay(text, {"edge": edges}, batches, budget=data.draw(BUDGETS), probe=data.draw(PROBES))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_programs_match_dred_and_recompute(data):
    generated = data.draw(programs())
    edb_arity = {name: generated.arity[name] for name in generated.edb}
    replay(generated.text, dict(generated.edb), data.draw(twin.batches(edb_arity)), budget=data.draw(BUDGETS),
           probe=data.draw(PROBES))


# ---------------------------------------------------------------- the engine's maintainer

def test_the_maintainer_chooses_bf_and_dred_stays_the_twin(monkeypatch):
    engine = Engine.from_source(twin.TC)
    engine.insert("edge", [(1, 2), (2, 3), (3, 1)])
    engine.run()
    engine.commit(retracts={"edge": [(3, 1)]})
    assert {v["strategy"] for k, v in engine.stats().items() if k.startswith("path")} == {"B/F"}
    monkeypatch.setattr(IncrementalMaintainer, "recursive", "dred")
    assert {v["strategy"] for k, v in engine.stats().items() if k.startswith("path")} == {"DRed"}


class _Boom(Exception):
    pass


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_engine_rollback_at_a_random_instant_of_bf_restores_everything(data):
    """The engine's own maintainer with B/F alone (no probe, no budget): an exception at the n-th
    journal record of a commit leaves every relation and index as before; the same commit
    without it then equals recomputation."""
    from maintenance.journal import Journal
    text, edb, arity = data.draw(twin.recursive_programs())
    engine, reference = (Engine.from_source(text, maintenance=m) for m in ("incremental", "recompute"))
    for e in (engine, reference):
        for name, rows in edb.items():
            e.insert(name, sorted(rows))
        e.run()
    saved = backward_forward.PROBE, backward_forward.BUDGET
    backward_forward.PROBE = backward_forward.BUDGET = None
    real = Journal.record
    try:
        engine.commit()
        for ops in data.draw(twin.batches(arity)):
            before = twin._state(engine)
            n, calls = data.draw(st.integers(1, 60)), [0]

            def record(self, undo):
                real(self, undo)
                calls[0] += 1
                if calls[0] == n:
                    raise _Boom
            Journal.record = record
            try:
                twin.transact(engine, ops)
                failed = False
            except _Boom:
                failed = True
            finally:
                Journal.record = real
            if failed:
                twin._assert_restored(engine, before)
            if failed:
                twin.transact(engine, ops)
            twin.transact(reference, ops)
            assert twin.contents(engine) == twin.contents(reference), ops
    finally:
        Journal.record = real
        backward_forward.PROBE, backward_forward.BUDGET = saved
