"""Kept heights (``provenance=True``, issue 21): every kept height is the brute-force least height,
every proof read off them passes the independent checker and has the height of the on-demand
search's, after evaluation and after every commit of random update streams; and evaluation
without provenance keeps nothing."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog.engine.loading import program_facts
from datalog.provenance import Explainer
from datalog.provenance import heights as kept_heights
from tests.provenance_oracle import check_proof, least_heights
from tests.strategies import linear_programs, programs
from tests.test_maintenance import _commit, update_streams
from tests.test_provenance import PATH, PROVE


def _engine(generated) -> Engine:
    engine = Engine.from_source(generated.text, provenance=True)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine


def _searching(engine: Engine) -> Explainer:
    """The on-demand explainer (no kept heights) over the same relations."""
    base: dict[str, set] = {}
    for name, rows in program_facts(engine.checked):
        base.setdefault(name, set()).update(rows)
    return Explainer(engine.checked.clauses, engine.db, engine.idb, base)


def _check_kept(engine: Engine, rng: random.Random) -> None:
    least = least_heights(engine)
    kept = engine.heights
    for name in sorted(engine.idb):
        for row in engine.db[name]:
            assert kept.of(name, row) == least[(name, row)], (name, row)
        rows = sorted(engine.db[name])
        for row in rng.sample(rows, min(4, len(rows))):
            proof = engine.why(engine_fact(name, row))
            assert check_proof(engine, proof) == [], proof.to_text()
            for node in proof.nodes():
                if node.kind in ("rule", "edb"):
                    assert node.height == least[(node.relation, node.row)], (node.text, proof.to_text())
            assert _searching(engine).why(name, row).height == proof.height


def engine_fact(name: str, row: tuple):
    from datalog.language import ast
    return ast.Atom(name, tuple(ast.Constant(v) for v in row))


def _after_every_commit(data, generated, repaired: bool = False) -> None:
    """After evaluation and every commit the kept heights are the brute-force least ones; with
    ``repaired``, a commit's were repaired, never recomputed: with no work or time limit (a
    small program can pass the limit of 256 steps, a loaded machine the 1 s budget), a repair
    declines only if it leaves a held fact without a height."""
    with _unlimited_repair() if repaired else contextlib.nullcontext():
        _commits(data, generated, repaired)


def _commits(data, generated, repaired: bool) -> None:
    try:
        engine = _engine(generated)
    except DatalogError:
        return
    rng = random.Random(data.draw(st.integers(0, 2 ** 16)))
    _check_kept(engine, rng)
    kept = engine.heights
    for batch in data.draw(update_streams(generated)):
        try:
            _commit(engine, batch)
        except DatalogError:
            continue
        _check_kept(engine, rng)
        if repaired:
            assert kept.recomputed == 1, "a commit's heights were recomputed, not repaired"


@contextlib.contextmanager
def _unlimited_repair():
    """:func:`repair.repair` with no work limit and no deadline, for :func:`_after_every_commit`."""
    real = kept_heights.repair
    kept_heights.repair = lambda kept, touched, retracted, **_: real(kept, touched, retracted, share=1e9,
                                                                     budget=1e9)
    try:
        yield
    finally:
        kept_heights.repair = real


@PROVE
@given(st.data())
def test_kept_heights_are_least_and_proofs_valid_after_every_commit(data):
    _after_every_commit(data, data.draw(programs()))


@PROVE
@given(st.data())
def test_the_same_on_linear_recursion_with_counters_and_head_expressions(data):
    _after_every_commit(data, data.draw(linear_programs()))


def test_kept_proof_is_the_least_after_deletes_and_inserts():
    engine = Engine.from_source(PATH, provenance=True)
    assert engine.why('reach("p", "s")').height == 2
    engine.commit(retracts={"link": [("p", "r")]})
    assert not engine.heights.dirty and engine.heights.repaired == 1     # maintained at the commit
    proof = engine.why('reach("p", "s")')
    assert proof.height == 3 and check_proof(engine, proof) == [] and engine.heights.recomputed == 1
    engine.commit(inserts={"link": [("p", "s")]})
    assert engine.why('reach("p", "s")').height == 1
    engine.extend('.decl far(a: symbol)\nfar(y) :- reach("p", y), !link("p", y).')
    proof = engine.why('far("r")')
    assert proof.height == 3 and check_proof(engine, proof) == []


def test_a_declined_repair_leaves_only_the_stale_relations_to_recompute(monkeypatch):
    engine = Engine.from_source(PATH + """
        .decl other(a: number)  .decl two(a: number)
        other(1). other(2).
        two(x) :- other(x).
    """, provenance=True)
    engine.run()
    monkeypatch.setattr(kept_heights, "repair", lambda *args, **kwargs: None)
    engine.commit(retracts={"link": [("p", "r")]})
    assert engine.heights.dirty == {"reach"} and engine.heights.touched is None
    assert engine.heights.recomputed == 1              # not at the commit: on the next question
    engine.commit(inserts={"other": [(3,)]})           # still stale, now "two" as well: recomputed
    assert engine.heights.dirty == {"reach", "two"}
    assert engine.why("two(1)").height == 1 and engine.heights.recomputed == 2
    assert engine.heights.of("reach", ("p", "s")) == least_heights(engine)[("reach", ("p", "s"))]


def test_evaluation_without_provenance_keeps_no_heights(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the heights were computed without --provenance")
    monkeypatch.setattr(kept_heights, "_levels", refuse)
    monkeypatch.setattr(kept_heights.Heights, "__init__", refuse)
    engine = Engine.from_source(PATH)
    engine.run()
    engine.commit(retracts={"link": [("p", "r")]})
    assert engine.why('reach("p", "s")').height == 3
    assert engine.heights is None and engine._kept is None and engine.explainer().kept is None


def test_evaluation_with_provenance_keeps_them_at_once(monkeypatch):
    engine = Engine.from_source(PATH, provenance=True)
    engine.run()
    assert engine.heights.recomputed == 1 and not engine.heights.dirty
    assert engine.heights.size() == len(engine.db["reach"])
    monkeypatch.setattr(kept_heights, "_levels", lambda *a: pytest.fail("why recomputed clean heights"))
    assert engine.why('reach("p", "s")').height == 2


POSITIVE = {
    "andersen": """
        .decl new(v: number, h: number)  .decl assign(v: number, w: number)
        .decl load(v: number, w: number)  .decl store(v: number, w: number)
        .decl pt(v: number, h: number)  .decl hpt(g: number, h: number)
        pt(v, h) :- new(v, h).
        pt(v, h) :- assign(v, w), pt(w, h).
        pt(v, h) :- load(v, w), pt(w, g), hpt(g, h).
        hpt(g, h) :- store(v, w), pt(v, g), pt(w, h).
    """,
    "nonlinear": """
        .decl new(a: number, b: number)  .decl assign(a: number, b: number)
        .decl load(a: number, b: number)  .decl store(a: number, b: number)
        .decl p(a: number, b: number)  .decl q(a: number)
        p(x, y) :- new(x, y).
        p(x, z) :- p(x, y), p(y, z).
        p(x, y) :- assign(x, y), q(y).
        q(x) :- load(x, _), p(x, x).
        q(y) :- store(3, y).
    """,
}


@PROVE
@given(st.sampled_from(sorted(POSITIVE)), st.data())
def test_repaired_heights_are_the_least_after_every_commit(name, data):
    """Commits whose changes no negation or aggregate reads are repaired (:mod:`repair`), not
    recomputed: the repaired heights are the brute-force least ones."""
    pairs = st.tuples(st.integers(0, 5), st.integers(0, 5))
    relations = ["new", "assign", "load", "store"]
    engine = Engine.from_source(POSITIVE[name], provenance=True)
    for relation in relations:
        engine.insert(relation, data.draw(st.lists(pairs, max_size=8)))
    engine.run()
    rng = random.Random(data.draw(st.integers(0, 2 ** 16)))
    for _ in range(data.draw(st.integers(1, 6))):
        inserts, retracts = {}, {}
        for _ in range(data.draw(st.integers(1, 3))):
            relation = data.draw(st.sampled_from(relations))
            held = sorted(engine.db[relation])
            if held and data.draw(st.booleans()):
                retracts.setdefault(relation, []).append(data.draw(st.sampled_from(held)))
            else:
                inserts.setdefault(relation, []).append(data.draw(pairs))
        for relation, rows in retracts.items():
            inserts[relation] = [r for r in inserts.get(relation, []) if r not in rows]
        engine.commit(inserts=inserts, retracts=retracts)
        if data.draw(st.booleans()):            # sometimes two commits before the next question
            _check_kept(engine, rng)
    _check_kept(engine, rng)


def test_a_small_commit_is_repaired_not_recomputed():
    engine = Engine.from_source(POSITIVE["andersen"], provenance=True)
    engine.insert("new", [(1, 10), (2, 20)])
    engine.insert("assign", [(3, 1), (4, 3), (5, 4)])
    engine.run()
    assert engine.heights.of("pt", (5, 10)) == 4
    engine.commit(inserts={"assign": [(5, 1)]})
    assert engine.heights.of("pt", (5, 10)) == 2
    engine.commit(retracts={"assign": [(5, 1), (3, 1)]}, inserts={"assign": [(5, 2)]})
    assert engine.heights.of("pt", (5, 20)) == 2 and engine.heights.of("pt", (5, 10)) is None
    assert (engine.heights.repaired, engine.heights.recomputed) == (2, 1)


def test_an_aggregate_beside_a_lookup_of_its_relation_reads_the_evaluated_relation():
    """``h(2, a) :- p(1, 1), a = max x : { p(x, 4) }.``: the lookup p(1, 1) waits for its height;
    the aggregate reads all of p, as evaluation did (it read only the facts of lower height, so
    h(2, 1) got no height: the linear-programs property test found it)."""
    engine = Engine.from_source(""".decl e(x: number, y: number)
.decl p(x: number, y: number)
.decl h(x: number, y: number)
p(x, x) :- e(x, _), x = 1.
p(x, y) :- p(x, _), e(_, y).
h(2, a) :- p(1, 1), a = max x : { p(x, 4) }.
e(1, 4). e(0, 1).
""", provenance=True)
    engine.run()
    assert engine.rows("h") == [(2, 1)]
    assert engine.heights.of("h", (2, 1)) == least_heights(engine)[("h", (2, 1))] == 2


@PROVE
@given(st.data())
def test_commits_under_negation_and_aggregates_are_repaired_to_the_least_heights(data):
    """Random programs with recursion, negation and aggregates, random update streams: the
    repair (seeding a guarded clause's head relation whole) gives the least heights."""
    _after_every_commit(data, data.draw(programs()), repaired=True)


@PROVE
@given(st.data())
def test_the_same_on_linear_recursion_repaired(data):
    _after_every_commit(data, data.draw(linear_programs()), repaired=True)


def test_a_commit_under_negation_is_repaired_not_recomputed():
    engine = Engine.from_source("""
        .decl e(x: number, y: number)  .decl block(x: number)
        .decl p(x: number, y: number)  .decl open(x: number, y: number)
        p(x, y) :- e(x, y).
        p(x, z) :- p(x, y), e(y, z).
        open(x, y) :- p(x, y), !block(y).
        e(1, 2). e(2, 3). e(3, 4). e(1, 4).
    """, provenance=True)
    engine.run()
    assert engine.heights.of("open", (1, 4)) == 2
    engine.commit(inserts={"block": [(4,)]}, retracts={"e": [(1, 4)]})
    assert engine.heights.of("open", (1, 4)) is None and engine.heights.of("p", (1, 4)) == 3
    engine.commit(retracts={"block": [(4,)]})
    assert engine.heights.of("open", (1, 4)) == 4
    assert (engine.heights.repaired, engine.heights.recomputed) == (2, 1)
    least = least_heights(engine)
    assert all(engine.heights.of(n, row) == least[(n, row)] for n in ("p", "open") for row in engine.db[n])


def test_a_height_that_rises_releases_only_what_it_supplied():
    """Deleting the short path raises p(1, 5) from 2 to 4 through the long one; the repair
    releases the facts whose least instance read the deleted edge and settles them again."""
    engine = Engine.from_source(POSITIVE["andersen"], provenance=True)
    engine.insert("new", [(1, 10)])
    engine.insert("assign", [(2, 1), (3, 2), (4, 3), (5, 1), (6, 5)])
    engine.run()
    assert [engine.heights.of("pt", (v, 10)) for v in (5, 6)] == [2, 3]
    engine.commit(retracts={"assign": [(5, 1)]}, inserts={"assign": [(5, 4)]})
    assert [engine.heights.of("pt", (v, 10)) for v in (5, 6)] == [5, 6]
    assert engine.heights.recomputed == 1


def test_the_first_heights_build_the_indexes_questions_and_repairs_read():
    """With provenance the level pass also builds the trie indexes a proof and a repair read
    (:meth:`Instances.prepare` walks the pick order), so neither the first question nor the
    first commit's repair builds one."""
    engine = Engine.from_source(POSITIVE["andersen"], provenance=True)
    engine.insert("new", [(1, 10), (2, 20), (3, 30)])
    engine.insert("assign", [(4, 1), (5, 4), (6, 2)])
    engine.insert("store", [(4, 2), (6, 3)])
    engine.insert("load", [(7, 5), (8, 6)])
    engine.run()

    def orders():
        return {(name, order) for name, r in engine.db.items() for order in r.indexes}
    built = orders()
    for name in ("pt", "hpt"):
        for row in sorted(engine.db[name]):
            assert check_proof(engine, engine.explainer().why(name, row)) == []
    engine.commit(retracts={"assign": [(5, 4)]}, inserts={"assign": [(7, 1)], "store": [(5, 3)]})
    engine.commit(retracts={"new": [(2, 20)]})
    assert engine.heights.repaired == 2
    assert orders() == built


def test_a_repair_stopped_part_way_leaves_the_heights_stale_not_wrong(monkeypatch):
    """Ctrl-C during the repair at a commit: the commit is made, and the heights it changed are
    recomputed by the next question instead of being read half repaired."""
    engine = Engine.from_source(PATH, provenance=True)
    engine.run()
    real = kept_heights.repair

    def interrupted(kept, *args, **kwargs):
        kept.heights["reach"].clear()                 # part-way: some heights already changed
        raise KeyboardInterrupt
    monkeypatch.setattr(kept_heights, "repair", interrupted)
    with pytest.raises(KeyboardInterrupt):
        engine.commit(retracts={"link": [("p", "r")]})
    assert ("p", "r") not in engine.db["link"] and engine.heights.dirty == {"reach"}
    monkeypatch.setattr(kept_heights, "repair", real)
    assert engine.why('reach("p", "s")').height == 3 and engine.heights.recomputed == 2


def test_extending_the_program_makes_new_heights_without_repairing_the_old(monkeypatch):
    """``extend`` replaces the checked program: the heights kept for the old one are dropped, not
    repaired with its clauses, and the next question computes the new program's."""
    engine = Engine.from_source(PATH, provenance=True)
    engine.run()
    old = engine.heights
    monkeypatch.setattr(kept_heights, "repair", lambda *a, **k: pytest.fail("repaired the old program's heights"))
    engine.extend('reach(y, x) :- link(x, y).')           # a rule of a kept relation: it grows
    monkeypatch.undo()
    proof = engine.why('reach("s", "r")')
    assert engine.heights is not old and proof.height == 1 and check_proof(engine, proof) == []
    assert engine.heights.of("reach", ("p", "s")) == least_heights(engine)[("reach", ("p", "s"))]
