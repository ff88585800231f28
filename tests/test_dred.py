"""DRed maintenance of recursive strata (maintenance/dred.py) against recomputation.

A tiny test-only maintainer drives :func:`maintain_recursive`: it applies the EDB
delta, recomputes each non-recursive stratum from scratch and maintains each
recursive stratum by DRed. Every test replays the same transactions on an engine
with ``maintenance="recompute"`` and compares every relation and the returned deltas.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError, DivisionByZero
from maintenance import dred
from maintenance.delta import diff
from maintenance.journal import Journal
from datalog.evaluation.evaluate import derive  # noqa: E402
from strategies import programs, unsigned_programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)


class DRedOnlyMaintainer:
    """Non-recursive strata recomputed, recursive strata maintained by DRed."""

    def __init__(self, engine):
        self.engine = engine

    def apply(self, delta, journal):
        engine, out = self.engine, dict(delta)
        for name, change in delta.items():
            journal.erase(engine.db[name], change.retracted)
            journal.insert(engine.db[name], change.inserted)
        for stratum in engine.checked.strata:
            if not any(c.body for c in stratum.clauses):
                continue
            if stratum.recursive:
                out.update(dred.maintain_recursive(engine.planned(), engine.db, stratum, out, journal))
            else:
                out.update(_recompute(engine, stratum, journal))
        return out

    def stats(self):
        return {}


def _recompute(engine, stratum, journal):
    (name,) = stratum.relations
    new = set(dred._facts(engine.planned(), stratum).get(name, ()))
    for clause in stratum.clauses:
        if clause.body:
            new |= derive(engine.compiled[clause.index], engine.db, {})
    relation = engine.db[name]
    change = diff(set(relation.tuples), new)
    journal.erase(relation, change.retracted)
    journal.insert(relation, change.inserted)
    return {name: change} if change else {}


def engines(text: str, edb: dict, intersect: str = "probe") -> tuple[Engine, Engine]:
    pair = []
    for strategy in ("incremental", "recompute"):
        engine = Engine.from_source(text, maintenance=strategy, intersect=intersect)
        for name, rows in edb.items():
            engine.insert(name, sorted(rows))
        engine.run()
        pair.append(engine)
    pair[0].maintainer = DRedOnlyMaintainer(pair[0])
    return pair[0], pair[1]


def transact(engine: Engine, ops):
    """``ops``: (sign, relation, row) in order; returns the delta or the error raised."""
    try:
        with engine.transaction() as tx:
            for sign, name, row in ops:
                (tx.insert if sign > 0 else tx.retract)(name, [row])
        return tx.delta
    except DatalogError as error:
        return type(error)


def contents(engine: Engine) -> dict:
    return {name: engine.rows(name) for name in engine.relations()}


def replay(text: str, edb: dict, batches, intersect: str = "probe") -> Engine:
    """Apply each batch to both engines; after each, every relation and delta must agree."""
    dred_engine, reference = engines(text, edb, intersect)
    assert contents(dred_engine) == contents(reference)
    for ops in batches:
        got, want = transact(dred_engine, ops), transact(reference, ops)
        assert got == want, ops
        assert contents(dred_engine) == contents(reference), ops
        check_indexes(dred_engine)
    return dred_engine


def check_indexes(engine: Engine) -> None:
    """Every trie index holds exactly its relation's tuples, with sorted keys and no empty node."""
    for name, relation in engine.db.items():
        for order, root in relation.indexes.items():
            if not order:
                continue
            want = sorted(tuple(row[i] for i in order) for row in relation.tuples)
            assert list(root.rows(len(order))) == want, (name, order)
            _check_node(root, len(order), is_root=True)


def _check_node(node, depth: int, is_root: bool = False) -> None:
    assert node.keys == sorted(node.children)
    assert is_root or node.children
    if depth > 1:
        for child in node.children.values():
            _check_node(child, depth - 1)


def ins(name, *rows):
    return [(+1, name, row) for row in rows]


def ret(name, *rows):
    return [(-1, name, row) for row in rows]


# ---------------------------------------------------------------- transitive closure

TC = """
.decl edge(a: number, b: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.decl path(c0: number, c1: number)
"""


def test_deleting_an_edge_breaks_the_cycle():
    engine = replay(TC, {"edge": {(1, 2), (2, 3), (3, 1), (3, 4)}}, [ret("edge", (3, 1))])
    assert engine.rows("path") == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]


def test_cycle_with_two_ways_in_keeps_what_is_still_reachable():
    edges = {(1, 2), (2, 3), (3, 1), (0, 1), (0, 3), (3, 4)}
    engine = replay(TC, {"edge": edges}, [ret("edge", (0, 1)), ret("edge", (2, 3)), ins("edge", (2, 3))])
    assert (0, 2) in engine.rows("path") and (0, 4) in engine.rows("path")


def test_self_loop_and_two_cycles_sharing_a_node():
    edges = {(1, 1), (1, 2), (2, 1), (2, 3), (3, 2), (3, 3)}
    replay(TC, {"edge": edges}, [ret("edge", (1, 1)), ret("edge", (2, 3)), ret("edge", (3, 3), (1, 2)),
                                 ins("edge", (3, 1)), ret("edge", (2, 1), (3, 2), (3, 1))])


def test_closing_a_cycle_then_deleting_everything():
    engine = replay(TC, {"edge": {(1, 2), (2, 3)}},
                    [ins("edge", (3, 1)), ret("edge", (1, 2), (2, 3), (3, 1))])
    assert engine.rows("path") == []


def test_insert_and_retract_in_one_transaction_and_absent_and_empty_batches():
    replay(TC, {"edge": {(1, 2), (2, 3), (3, 1)}},
           [ins("edge", (5, 6)) + ret("edge", (5, 6)),        # last request wins: nothing
            ret("edge", (1, 2)) + ins("edge", (1, 2)),         # nothing either
            ret("edge", (7, 8)),                               # absent
            [],                                                # empty
            ins("edge", (1, 2)),                               # present
            ret("edge", (2, 3)) + ins("edge", (2, 4), (4, 3))])


def test_delta_lists_only_real_changes():
    dred_engine, _ = engines(TC, {"edge": {(1, 2), (2, 1), (1, 3)}})
    delta = transact(dred_engine, ret("edge", (2, 1)) + ins("edge", (3, 1)))
    assert set(delta["path"].retracted) == {(2, 1), (2, 2), (2, 3)}
    assert set(delta["path"].inserted) == {(3, 1), (3, 2), (3, 3)}


def test_a_fact_of_the_recursive_relation_is_never_deleted():
    engine = replay(TC + "path(3, 1).\n", {"edge": {(1, 2), (2, 3), (3, 1)}},
                    [ret("edge", (3, 1)), ret("edge", (1, 2), (2, 3)), ins("edge", (3, 1))])
    assert engine.rows("path") == [(3, 1)]


SAME_GENERATION = """
.decl par(c: symbol, p: symbol)
sg(x, y) :- par(x, p), par(y, p), x != y.
sg(x, y) :- par(x, xp), sg(xp, yp), par(y, yp).
.decl sg(c0: symbol, c1: symbol)
"""


def test_same_generation():
    par = {("b", "a"), ("c", "a"), ("d", "b"), ("e", "c"), ("f", "d"), ("g", "e"), ("h", "e")}
    engine = replay(SAME_GENERATION, {"par": par},
                    [ret("par", ("c", "a")), ins("par", ("c", "b")), ret("par", ("h", "e")),
                     ins("par", ("c", "a"), ("h", "d")), ret("par", ("b", "a"), ("c", "b"))])
    assert engine.rows("sg") == [("f", "h"), ("h", "f")]


NONLINEAR_MUTUAL = """
.decl e(a: number, b: number)
p(x, y) :- e(x, y).
p(x, z) :- p(x, y), q(y, z).
q(x, y) :- p(x, y), x < y.
q(y, x) :- q(x, y), e(x, x).
.decl p(c0: number, c1: number)
.decl q(c0: number, c1: number)
"""


def test_nonlinear_mutual_recursion():
    replay(NONLINEAR_MUTUAL, {"e": {(1, 2), (2, 3), (3, 4), (4, 1), (2, 2)}},
           [ret("e", (2, 2)), ret("e", (2, 3)), ins("e", (2, 3), (3, 3)), ret("e", (4, 1), (1, 2))])


# ---------------------------------------------------------------- negation, base rules, facts

NEGATION_IN_RECURSION = """
.decl edge(a: number, b: number)
.decl start(a: number)
.decl flag(a: number, b: number)
.decl block(a: number, b: number)
bad(x) :- flag(x, 1).
reach(y) :- start(y).
reach(y) :- reach(x), edge(x, y), !bad(y), !block(y, _).
.decl bad(c0: number)
.decl reach(c0: number)
"""


def test_negation_of_a_lower_relation_inside_the_recursion():
    edb = {"edge": {(1, 2), (2, 3), (3, 4), (4, 2), (1, 5)}, "start": {(1,)},
           "flag": {(5, 0)}, "block": {(3, 1), (3, 2)}}
    engine = replay(NEGATION_IN_RECURSION, edb, [
        ins("flag", (2, 1)),                      # bad grows: 2, 3, 4 are cut off
        ret("flag", (2, 1)),                      # and come back
        ret("block", (3, 1)),                     # 3 still blocked through (3, 2)
        ret("block", (3, 2)),                     # now 3 is reachable
        ins("flag", (4, 1)) + ret("flag", (5, 0)),
        ins("block", (4, 0)) + ret("edge", (1, 2)) + ins("edge", (5, 3)),
    ])
    assert engine.rows("reach") == [(1,), (3,), (5,)]


BASE_RULES_AND_COMPARISONS = """
.decl e(a: number, b: number)
.decl w(a: number, b: number)
p(x, y + 1) :- e(x, y), y < 3.
p(x, y) :- w(x, y), x != y.
p(x, z) :- p(x, y), e(y, z), z != x, z <= 6.
p(7, 7).
q(x) :- p(x, _), p(_, x).
q(x) :- q(y), w(y, x).
.decl p(c0: number, c1: number)
.decl q(c0: number)
"""


def test_base_rules_with_expressions_comparisons_and_a_fact():
    edb = {"e": {(1, 1), (2, 3), (3, 4), (4, 2), (1, 5)}, "w": {(0, 1), (5, 5), (3, 7)}}
    engine = replay(BASE_RULES_AND_COMPARISONS, edb, [
        ret("e", (1, 1)), ins("e", (0, 2)), ret("w", (0, 1)), ins("w", (2, 1)),
        ret("e", (2, 3), (3, 4)), ins("e", (7, 7)) + ret("w", (3, 7)), ret("e", (7, 7)),
    ])
    assert (7, 7) in engine.rows("p")               # a fact is never deleted


PROBES = """
.decl e0(a: number, b: number)
.decl e1(a: number)
r(x) :- e1(x), r(_).
r(x) :- e0(x, x).
s(x) :- e1(x), !e0(x, _), s(_), r(3).
s(x) :- e0(x, 2).
.decl r(c0: number)
.decl s(c0: number)
"""


def test_existence_probes_of_same_stratum_and_lower_relations():
    replay(PROBES, {"e0": {(0, 0), (0, 1), (5, 2)}, "e1": {(0,), (1,), (3,)}}, [
        ret("e0", (0, 0)), ins("e0", (3, 3)), ret("e1", (3,)), ins("e1", (3,)),
        ret("e0", (5, 2)), ins("e0", (6, 2)), ret("e0", (3, 3)),
    ])


AGGREGATES = """
.decl e(a: number, b: number)
.decl start(a: number)
reach(x, n) :- start(x), n = count : { e(x, _) }.
reach(y, n) :- reach(x, _), e(x, y), n = count : { e(y, _) }, n < 3.
.decl reach(c0: number, c1: number)
"""


def test_aggregate_of_a_lower_relation_inside_the_recursion():
    replay(AGGREGATES, {"e": {(1, 2), (2, 3), (3, 1), (2, 4)}, "start": {(1,)}}, [
        ins("e", (2, 5)), ret("e", (2, 4)), ret("e", (3, 1)), ins("start", (4,)), ins("e", (4, 2)),
    ])


def test_rederive_plan_puts_the_head_variables_first():
    engine, _ = engines(TC, {"edge": {(1, 2)}})
    clause = [c for c in engine.checked.clauses if len(c.body) == 2][0]
    assert dred._rederive_plan(engine, clause).variable_order[:2] == ["x", "z"]


# ---------------------------------------------------------------- rollback

DIVIDES = """
.decl e(a: number, b: number)
.decl f(a: number)
p(x, y) :- e(x, y).
p(x, z) :- p(x, y), e(y, z), f(z), q = 10 / (z - 5).
.decl p(c0: number, c1: number)
"""


def _state(engine: Engine) -> dict:
    return {name: (set(r.tuples), {order: list(root.rows(len(order))) for order, root in r.indexes.items()
                                   if order})
            for name, r in engine.db.items()}


def _assert_restored(engine: Engine, before: dict) -> None:
    for name, (tuples, indexes) in before.items():
        relation = engine.db[name]
        assert relation.tuples == tuples, name
        for order, rows in indexes.items():
            assert list(relation.index(order).rows(len(order))) == rows, (name, order)
    check_indexes(engine)            # indexes built during maintenance hold the old tuples too


def test_division_by_zero_in_the_insert_phase_rolls_back_exactly():
    engine, _ = engines(DIVIDES, {"e": {(1, 2), (2, 3), (3, 1), (3, 4)}, "f": {(1,), (2,), (3,), (4,), (5,)}})
    before = _state(engine)
    with pytest.raises(DivisionByZero):          # overdelete and rederive happen first, then 4 -> 5
        engine.commit(inserts={"e": [(4, 5)]}, retracts={"e": [(3, 1)], "f": [(2,)]})
    _assert_restored(engine, before)
    delta = engine.commit(retracts={"e": [(3, 1)]})   # the engine still works afterwards
    assert (3, 1) in delta["p"].retracted


def test_error_while_lower_relations_are_reverted_rolls_back_exactly(monkeypatch):
    engine, _ = engines(TC, {"edge": {(1, 2), (2, 3), (3, 1)}})
    for order in [(1, 0), (0, 1)]:
        engine.db["edge"].index(order)
    before = _state(engine)
    calls = []
    real = dred._fresh

    def failing(*args):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom in the middle of overdelete")
        return real(*args)
    monkeypatch.setattr(dred, "_fresh", failing)
    with pytest.raises(RuntimeError):
        engine.commit(inserts={"edge": [(3, 4)]}, retracts={"edge": [(1, 2)]})
    _assert_restored(engine, before)


def test_direct_call_then_journal_rollback():
    engine, _ = engines(DIVIDES, {"e": {(1, 2), (2, 3)}, "f": {(3,), (5,)}})
    before = _state(engine)
    journal = Journal()
    from maintenance.delta import pending_changes
    delta = pending_changes({"e": {(3, 5): +1, (1, 2): -1}}, engine.db)
    engine.db["e"].insert(delta["e"].inserted)
    engine.db["e"].erase(delta["e"].retracted)
    journal.record(lambda: (engine.db["e"].erase(delta["e"].inserted), engine.db["e"].insert(delta["e"].retracted)))
    stratum = next(s for s in engine.checked.strata if s.recursive)
    with pytest.raises(DivisionByZero):
        dred.maintain_recursive(engine.planned(), engine.db, stratum, delta, journal)
    journal.rollback()
    _assert_restored(engine, before)


# ---------------------------------------------------------------- property tests

VALUES = st.integers(0, 4)


@st.composite
def recursive_programs(draw):
    """Two or three binary EDB relations, a lower IDB relation, and a recursive stratum p, q."""
    edb = [f"e{i}" for i in range(draw(st.integers(2, 3)))]
    e = st.sampled_from(edb)
    pq = st.sampled_from(["p", "q"])
    templates = [
        lambda h: f"{h}(x, y) :- {draw(e)}(x, y).",
        lambda h: f"{h}(x, y) :- {draw(e)}(x, y), !{draw(e)}(y, x).",
        lambda h: f"{h}(x, z) :- {draw(pq)}(x, y), {draw(e)}(y, z).",
        lambda h: f"{h}(x, z) :- {draw(e)}(x, y), {draw(pq)}(y, z).",
        lambda h: f"{h}(x, z) :- {draw(pq)}(x, y), {draw(pq)}(y, z).",
        lambda h: f"{h}(x, z) :- {draw(pq)}(x, y), {draw(e)}(y, z), !{draw(e)}(x, z).",
        lambda h: f"{h}(x, z) :- {draw(pq)}(x, y), {draw(e)}(y, z), !low(z, _).",
        lambda h: f"{h}(y, x) :- {draw(pq)}(x, y), x < y.",
        lambda h: f"{h}(x, y) :- {draw(e)}(x, y), {draw(pq)}(_, _).",
        lambda h: f"{h}(x, y + 1) :- {draw(e)}(x, y), y < 4.",
        lambda h: f"{h}(x, y) :- {draw(pq)}(x, y), {draw(e)}(y, _), x != {draw(VALUES)}.",
        lambda h: f"{h}(x, c) :- {draw(e)}(x, _), c = count : {{ {draw(e)}(x, _) }}.",
        lambda h: f"{h}(x, z) :- {draw(pq)}(x, y), {draw(e)}(y, z), n = count : {{ {draw(e)}(z, _) }}, n < 2.",
        lambda h: f"{h}({draw(VALUES)}, {draw(VALUES)}).",
        lambda h: f"{h}(x, x) :- {draw(pq)}(x, _), {draw(e)}(x, {draw(VALUES)}).",
    ]
    lines = [f".decl {n}(a: number, b: number)" for n in [*edb, "low", "p", "q"]]
    lines.append(f"low(x, y) :- {draw(e)}(x, y), x != y.")
    for head in ("p", "q"):
        lines.append(templates[0](head))
        for index in draw(st.lists(st.integers(1, len(templates) - 1), min_size=1, max_size=4)):
            lines.append(templates[index](head))
    facts = {n: draw(st.sets(st.tuples(VALUES, VALUES), max_size=8)) for n in edb}
    return "\n".join(lines), facts, {n: 2 for n in edb}


def batches(arity: dict[str, int]):
    names = sorted(arity)

    @st.composite
    def op_lists(draw):
        ops = []
        for _ in range(draw(st.integers(0, 6))):
            name = draw(st.sampled_from(names))
            row = tuple(draw(VALUES) for _ in range(arity[name]))
            kind = draw(st.sampled_from(["+", "+", "-", "-", "+-", "-+"]))
            ops += [(+1 if k == "+" else -1, name, row) for k in kind]
        return ops
    return st.lists(op_lists(), min_size=1, max_size=6)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_recursive_programs_match_recompute(data):
    text, edb, arity = data.draw(recursive_programs())
    replay(text, edb, data.draw(batches(arity)), data.draw(st.sampled_from(["probe", "leapfrog"])))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_programs_match_recompute(data):
    generated = data.draw(programs())
    edb_arity = {name: generated.arity[name] for name in generated.edb}
    replay(generated.text, dict(generated.edb), data.draw(batches(edb_arity)))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_unsigned_programs_match_recompute(data):
    """Over unsigned columns (issue 18): sums that wrap, values above 2^63, maintained as recomputed."""
    generated = data.draw(unsigned_programs())
    edb_arity = {name: generated.arity[name] for name in generated.edb}
    replay(generated.text, dict(generated.edb), data.draw(batches(edb_arity)))
