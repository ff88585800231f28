"""The theta-join backend inside the engine (issue 4, items 4-5).

Routing decisions and their reasons, the ``// @backend`` pragma, ``explain``; and the
differential property test: random acyclic rules with inequalities (self-joins, bands,
constants, wildcards, unified variables) under random insert/retract batches give, after
every commit, the same relations and deltas as the from-scratch twin
(``maintenance="recompute"``), including a later stratum that reads the head; a failed
transaction restores everything, the T-reduct's rho included.
"""

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog.language.parser import parse, parse_query
from maintenance.theta_rule import ThetaRule
from maintenance.view_relation import ViewRelation
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

DECLS = """\
.decl r(a: number, b: number, c: number)
.decl s(d: number, e: number, f: number)
.decl t(g: number, h: number, i: number)
"""


def declared(text: str) -> str:
    """DECLS, a ``.decl`` (number columns) of each relation ``text`` derives without declaring it (a
    program with declarations declares every relation, as in Soufflé), then ``text``."""
    parsed = parse(DECLS + text)
    known = {d.relation for d in parsed.declarations}
    heads = {h.relation: len(h.args) for rule in parsed.rules for h in rule.heads if h.relation not in known}
    columns = {name: ", ".join(f"c{k}: number" for k in range(arity)) for name, arity in heads.items()}
    return DECLS + "".join(f".decl {name}({cols})\n" for name, cols in columns.items()) + text


def routes(text: str) -> dict[str, tuple[str, str]]:
    engine = Engine.from_source(declared(text))
    return {str(c): (engine.plans[c.index].backend.name, engine.plans[c.index].backend.reason)
            for c in engine.checked.clauses if c.body}


def only_route(text: str) -> tuple[str, str]:
    (route,) = routes(text).values()
    return route


# ---------------------------------------------------------------- routing

@pytest.mark.parametrize("rule, shape", [
    ("q1(a, b, c, d, e, f) :- r(a, b, c), s(d, e, f), a < d.", "(free-connex)"),
    ("q3(a, b, c, d, e, f, g, h, i) :- r(a, b, c), s(d, e, f), t(g, h, i), a < d, e < g.", "(free-connex)"),
    ("q4(a, d, g) :- r(a, _, _), s(d, _, _), t(g, _, _), a < d, d < g.", "(free-connex)"),
    ("q5(a, d, g, k) :- r(a, _, k), s(d, _, k), t(g, _, _), a < d, d < g.", "(free-connex)"),
    ("q10(b, h) :- r(_, b, _), s(d, _, _), t(_, h, _), r(a, b, _), a < d, d < h.", "§7 approximation"),
    ("band(a, d) :- r(a, _, _), s(d, _, _), d < a + 10, d > a.", ""),
])
def test_acyclic_rules_with_an_inequality_between_atoms_go_to_thetajoin(rule, shape):
    backend, reason = only_route(rule)
    assert backend == "thetajoin" and reason.startswith("acyclic GCQ with inequality") and shape in reason


@pytest.mark.parametrize("rule, reason", [
    ("tri(a, b, c) :- r(a, b, _), r(b, c, _), r(c, a, _), a < b.", "cyclic: no ear among"),
    ("cyc(a, d, g) :- r(a, _, _), s(d, _, _), t(g, _, _), a < d, d < g, g < a.", "cyclic: no ear among"),
    ("j(a, e) :- r(a, b, _), s(b, e, _).", "no inequality between variables of different atoms"),
    ("one(a) :- r(a, b, _), a < b.", "no inequality between variables of different atoms"),
    ("neg(a) :- r(a, _, _), s(d, _, _), a < d, !t(a, _, _).", "not a GCQ: negation !t(a, _, _)"),
    ("ex(a) :- r(a, _, _), s(d, _, _), a < d * 2.", "not a GCQ: expression (d * 2) in a comparison"),
    ("asg(x) :- r(a, _, _), s(d, _, _), a < d, x = a + 1.", "not a GCQ: variable x is assigned"),
])
def test_other_rules_stay_on_lftj_with_a_reason(rule, reason):
    backend, why = only_route(rule)
    assert backend == "lftj" and why.startswith(reason)


def test_recursive_rules_stay_on_dred():
    got = routes("p(a, d) :- r(a, d, _).\np(a, d) :- p(a, b), r(b, d, _), a < d.")
    assert {v for v in got.values()} == {("lftj", "recursive stratum: B/F or DRed")}


def test_pragma_forces_either_backend():
    assert only_route("// @backend lftj\nq(a, d) :- r(a, _, _), s(d, _, _), a < d.") == \
        ("lftj", "forced by // @backend lftj")
    backend, reason = only_route("// @backend thetajoin\nj(a, e) :- r(a, b, _), s(b, e, _).")
    assert backend == "thetajoin" and reason.startswith("forced by // @backend thetajoin")


@pytest.mark.parametrize("text, message", [
    ("// @backend thetajoin\ntri(a, b, c) :- r(a, b, _), r(b, c, _), r(c, a, _).", "cyclic"),
    ("// @backend thetajoin\nn(a) :- r(a, _, _), !s(a, _, _).", "not a GCQ: negation"),
    ("// @backend fast\nq(a) :- r(a, _, _).", "expected thetajoin or lftj"),
    ("p(a, d) :- r(a, d, _).\n// @backend thetajoin\np(a, d) :- p(a, b), r(b, d, _).", "recursive"),
])
def test_bad_backend_pragmas_are_errors(text, message):
    with pytest.raises(DatalogError) as info:
        Engine.from_source(declared(text))
    assert info.value.code == "bad_pragma" and message in info.value.message


def test_explain_shows_backend_reason_and_tree():
    engine = Engine.from_source(declared("q(a, d, g) :- r(a, _, _), s(d, _, _), t(g, _, _), a < d, d < g.\n"
                                         "tri(a, b, c) :- r(a, b, _), r(b, c, _), r(c, a, _)."))
    text = engine.explain()
    assert "backend thetajoin: acyclic GCQ with inequality a < d between atoms (free-connex)" in text
    assert "pred({d}->{a}) = {a < d}" in text and "pred({g}->{d}) = {d < g}" in text
    assert "backend lftj: cyclic: no ear among r(a, b, _w0) | r(b, c, _w1) | r(c, a, _w2)" in text


def test_a_thetajoin_rule_is_maintained_by_a_treduct_and_reports_stats():
    engine = Engine.from_source(declared("q(a, d) :- r(a, _, _), s(d, _, _), a < d."))
    engine.insert("r", [(1, 0, 0), (5, 0, 0)])
    engine.insert("s", [(3, 0, 0)])
    engine.run()
    delta = engine.commit(inserts={"s": [(7, 0, 0)]}, retracts={"r": [(1, 0, 0)]})
    assert delta["q"].inserted == {(5, 7)} and delta["q"].retracted == {(1, 3)}
    assert engine.rows("q") == [(5, 7)]
    (stats,) = engine.stats().values()
    assert stats["strategy"] == "thetajoin" and stats["operations"] == 2 and not stats["skipped"]
    (rule,) = engine.maintainer.rules.values()
    assert isinstance(rule, ThetaRule) and rule.view.count() == 1


# ---------------------------------------------------------------- differential property test

RELATIONS = {"r": 3, "s": 3, "t": 3}
VALUES = st.integers(0, 3)
OPS = ("<", "<=", ">", ">=", "!=")


@st.composite
def acyclic_rules(draw, downstream: bool = True):
    """A chain of 2-3 atoms (each shares at most one variable with the one before), constants,
    wildcards, repeated variables, 1-3 comparisons (at least one between atoms: plain, band
    ``x < y + k``, or a filter), an occasional ``x = y`` unification, a head of body variables
    (sometimes all of them, without wildcards or constants: a full query); with ``downstream``,
    a later rule reads the head through a negation."""
    n = draw(st.integers(2, 3))
    full = draw(st.booleans())
    kinds = ["new", "new", "new", "new", "link", "link", "repeat"] + ([] if full else ["_", "_", "const"])
    atoms, names, fresh = [], [], iter(range(100))
    for i in range(n):
        rel = draw(st.sampled_from(sorted(RELATIONS)))
        mine = []
        for col in range(RELATIONS[rel]):
            kind = draw(st.sampled_from(kinds))
            if kind == "link" and i and names[i - 1] and not any(v in names[i - 1] for v in mine):
                mine.append(draw(st.sampled_from(names[i - 1])))
            elif kind == "repeat" and mine:
                mine.append(draw(st.sampled_from(mine)))
            elif kind == "_":
                mine.append("_")
            elif kind == "const":
                mine.append(str(draw(VALUES)))
            else:
                mine.append(f"v{next(fresh)}")
        atoms.append(f"{rel}({', '.join(mine)})")
        names.append([v for v in mine if v.startswith("v")])
    assume(all(names))
    comparisons = []
    for k in range(draw(st.integers(1, 3))):
        i, j = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)))
        others = [v for v in names[j] if v not in names[i]]
        assume(others)
        left, right = draw(st.sampled_from(names[i])), draw(st.sampled_from(others))
        shape = draw(st.sampled_from(["plain", "band"] if k == 0 else ["plain", "band", "filter", "unify"]))
        op = draw(st.sampled_from(OPS))
        if shape == "band":                                   # also x = y + k: a theta join, not an equi-join
            op = draw(st.sampled_from(OPS + ("=",)))
            comparisons.append(f"{left} {op} {right} {draw(st.sampled_from('+-'))} {draw(st.integers(1, 2))}")
        elif shape == "filter":
            comparisons.append(f"{left} {op} {draw(VALUES)}")
        elif shape == "unify":
            comparisons.append(f"{left} = {right}")
        else:
            comparisons.append(f"{left} {op} {right}")
    variables = sorted({v for vs in names for v in vs})
    head = variables if full else draw(st.lists(st.sampled_from(variables), min_size=1, max_size=3))
    head_text = ", ".join(head + (["0"] if draw(st.booleans()) else []))
    arity = len(head) + (1 if head_text.endswith(", 0") else 0)
    columns = ", ".join(f"c{k}: number" for k in range(arity))
    rule = f".decl h({columns})\nh({head_text}) :- {', '.join(atoms + comparisons)}.\n"
    return rule + (f".decl down(x: number)\ndown(x) :- h(x{', _' * (arity - 1)}), !r(x, _, _).\n"
                   if downstream else "")


rows = st.tuples(VALUES, VALUES, VALUES)
batches = st.lists(st.tuples(st.sampled_from(sorted(RELATIONS)), st.booleans(), rows), min_size=1, max_size=10)


def engines(program: str, edb: dict):
    pair = []
    for mode in ("incremental", "recompute"):
        engine = Engine.from_source(DECLS + program, maintenance=mode)
        for name, rows_ in edb.items():
            engine.insert(name, rows_)
        engine.run()
        pair.append(engine)
    return pair


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.booleans().flatmap(acyclic_rules), st.fixed_dictionaries({name: st.lists(rows, min_size=4, max_size=12) for name in RELATIONS}),
       st.lists(batches, min_size=1, max_size=6))
def test_thetajoin_backend_equals_recompute_after_every_commit(program, edb, stream):
    probe = Engine.from_source(DECLS + program)
    (clause,) = [c for c in probe.checked.clauses if c.head.relation == "h"]
    assume(probe.plans[clause.index].backend.name == "thetajoin")
    fast, slow = engines(program, edb)
    changed = 0
    for batch in stream:
        inserts, retracts = {}, {}
        for name, insert, row in batch:
            (inserts if insert else retracts).setdefault(name, []).append(row)
        got, want = fast.commit(inserts, retracts), slow.commit(inserts, retracts)
        assert got == want
        changed += "h" in got
        for name in fast.relations():
            assert fast.rows(name) == slow.rows(name), name
    (rule,) = [r for r in fast.maintainer.rules.values() if isinstance(r, ThetaRule)]
    stored = "down(" in program or not rule.can_be_virtual()     # else enumerated from the view
    assert isinstance(fast.db["h"], ViewRelation) != stored
    assert len(fast.db["h"]) == len(slow.db["h"])               # rows() was compared above
    event(f"head {'stored' if stored else 'not stored'}")
    event(f"head rows at the end: {'0' if not fast.rows('h') else '>0'}; commits that changed it: {min(changed, 2)}")


def query_args(values: list, arity: int):
    """Arguments of a one-atom query: values of the head's rows, repeated variables, _."""
    arg = st.one_of(st.sampled_from(values).map(str), st.sampled_from(["X", "Y", "Z", "_"]))
    return st.lists(arg, min_size=arity, max_size=arity)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.booleans().flatmap(acyclic_rules), st.fixed_dictionaries({name: st.lists(rows, min_size=4, max_size=12) for name in RELATIONS}),
       st.data())
def test_one_atom_queries_of_an_unstored_head_equal_the_stored_twin(program, edb, data):
    """``query`` and ``ask`` (one atom, comparisons of its variables and constants) filter an
    unstored head as it streams (Engine._scan); the twin stores it and answers ``ask`` with a rule."""
    fast, slow = engines(program, edb)
    fast.commit()                                           # builds the maintainer: h becomes a view
    assume(isinstance(fast.db["h"], ViewRelation))
    head_rows = fast.rows("h")
    values = [str(v) for v in sorted({v for row in head_rows for v in row}) or [0]]
    event(f"head rows: {'>0' if head_rows else '0'}")
    for _ in range(4):
        args = data.draw(query_args(values, fast.db["h"].arity))
        text = f"h({', '.join(args)})"
        assert fast.query(text) == slow.query(text)
        names = sorted({a for a in args if a.isalpha()})
        tests = data.draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(OPS + ("=",)),
                                             st.sampled_from(names + values)), max_size=2) if names else st.just([]))
        question = f"?- {', '.join([text] + [' '.join(test) for test in tests])}."
        assert fast.ask(parse_query(question)) == slow.ask(parse_query(question)), question


# ---------------------------------------------------------------- rollback

ROLLBACK = DECLS + """\
.decl q(a: number, d: number, x: number)
.decl w(a: number, v: number)
q(a, d, x) :- r(a, x, _), s(d, _, _), a < d + 1.
w(a, v) :- q(a, d, x), v = 10 / x.
"""


def treduct_state(engine: Engine) -> tuple:
    (rule,) = [r for r in engine.maintainer.rules.values() if isinstance(r, ThetaRule)]
    reduct = rule.view if hasattr(rule.view, "rho") else rule.view.reduct
    return ({n: dict(gmr) for n, gmr in reduct.rho.items()}, sorted(rule.view.enumerate()),
            {n: dict(c) for n, c in engine.maintainer.support.items()},
            {n: engine.rows(n) for n in engine.relations()})


def test_failed_transaction_restores_the_treduct():
    engine = Engine.from_source(ROLLBACK)
    engine.insert("r", [(1, 2, 0), (4, 1, 0)])
    engine.insert("s", [(3, 0, 0), (0, 0, 0)])
    engine.run()
    engine.commit()                                        # builds the maintainer
    before = treduct_state(engine)
    with pytest.raises(DatalogError) as info:              # 10 / 0 in the later stratum
        engine.commit(inserts={"r": [(2, 0, 0)], "s": [(5, 0, 0)]}, retracts={"r": [(4, 1, 0)]})
    assert info.value.code == "division_by_zero"
    assert treduct_state(engine) == before
    delta = engine.commit(inserts={"s": [(5, 0, 0)]})
    assert delta["q"].inserted == {(1, 5, 2), (4, 5, 1)}


def test_a_failure_inside_the_treduct_drops_the_maintainer(monkeypatch):
    engine = Engine.from_source(ROLLBACK)
    engine.insert("r", [(1, 2, 0)])
    engine.run()
    engine.commit()
    rows = {n: engine.rows(n) for n in engine.relations()}
    (rule,) = [r for r in engine.maintainer.rules.values() if isinstance(r, ThetaRule)]

    def boom(changes):
        raise RuntimeError("boom")
    monkeypatch.setattr(rule.view, "update_batch", boom)
    with pytest.raises(RuntimeError):
        engine.commit(inserts={"s": [(5, 0, 0)]})
    assert engine.maintainer is None and {n: engine.rows(n) for n in engine.relations()} == rows
    assert engine.commit(inserts={"s": [(5, 0, 0)]})["q"].inserted == {(1, 5, 2)}


def test_a_head_without_variables_counts_the_assignments():
    engine = Engine.from_source(DECLS + ".decl flag(x: float)\nflag(0) :- r(a, _, _), s(d, _, _), a < d.")
    engine.insert("r", [(1, 0, 0), (2, 0, 0)])
    engine.run()
    assert engine.commit(inserts={"s": [(5, 0, 0)]})["flag"].inserted == {(0.0,)}
    assert "flag" not in engine.commit(retracts={"r": [(1, 0, 0)]})        # one assignment left
    assert engine.commit(retracts={"r": [(2, 0, 0)]})["flag"].retracted == {(0.0,)}


SHARED_HEAD = DECLS + """\
.decl h(x: number, y: number)
h(a, d) :- r(a, b, _), s(d, b, _), t(g, _, _), a < d, d <= g - 1.
h(a, e) :- r(a, e, _), s(e, _, _).
h(1, 1).
.decl above(x: number)
above(x) :- h(x, y), h(y, _), x < y.
"""


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({name: st.lists(rows, min_size=4, max_size=12) for name in RELATIONS}),
       st.lists(batches, min_size=1, max_size=6))
def test_a_head_shared_by_both_backends_and_a_fact(edb, stream):
    """Support counts add up over a thetajoin rule, an LFTJ rule and a program fact."""
    fast, slow = engines(SHARED_HEAD[len(DECLS):], edb)
    fast.commit(), slow.commit()                           # builds the maintainers
    assert {type(rule).__name__ for rule in fast.maintainer.rules.values()} == {"ThetaRule", "RuleMaintainer"}
    for batch in stream:
        inserts, retracts = {}, {}
        for name, insert, row in batch:
            (inserts if insert else retracts).setdefault(name, []).append(row)
        assert fast.commit(inserts, retracts) == slow.commit(inserts, retracts)
        for name in fast.relations():
            assert fast.rows(name) == slow.rows(name), name


# ---------------------------------------------------------------- heads that are not stored

UNREAD = """\
.decl r(a: number, b: number)
.decl s(d: number, e: number)
.decl q(a: number, b: number, d: number, e: number)
.output q
.printsize q
q(a, b, d, e) :- r(a, b), s(d, e), a < d.
.decl bad(v: number)
bad(v) :- s(_, e), v = 10 / e.
"""


def _unread_engine() -> Engine:
    engine = Engine.from_source(UNREAD)
    engine.insert("r", [(1, 1), (4, 1)])
    engine.insert("s", [(3, 1)])
    engine.run()
    engine.commit()
    return engine


def test_an_output_no_rule_reads_is_enumerated_from_the_treduct(tmp_path):
    engine = _unread_engine()
    assert isinstance(engine.db["q"], ViewRelation) and not engine.maintainer.support["q"]
    assert engine.commit(inserts={"s": [(7, 2)]})["q"].inserted == {(1, 1, 7, 2), (4, 1, 7, 2)}
    assert engine.rows("q") == [(1, 1, 3, 1), (1, 1, 7, 2), (4, 1, 7, 2)]
    assert engine.query("q(4, _, X, _)") == [(4, 1, 7, 2)] and len(engine.db["q"]) == 3
    assert engine.write_outputs(str(tmp_path)) == ["q\t3"]
    assert (tmp_path / "q.csv").read_text().splitlines() == ["1\t1\t3\t1", "1\t1\t7\t2", "4\t1\t7\t2"]


def test_a_one_atom_query_of_an_unstored_head_builds_no_trie(monkeypatch):
    engine = _unread_engine()
    engine.commit(inserts={"s": [(7, 2)]})
    stored = _unread_engine()
    stored.extend(".decl x(a: number)\nx(a) :- q(a, _, _, _).")     # read by a rule: stored again
    stored.commit(inserts={"s": [(7, 2)]})
    questions = ["?- q(A, 1, D, E).", "?- q(4, _, D, _).", "?- q(A, A, _, _).", "?- q(_, _, _, _).",
                 "?- q(A, B, D, E), D > 3, A != 4.", "?- q(A, _, D, _), A < D, 2 >= A."]
    want = [stored.ask(parse_query(q)) for q in questions]
    monkeypatch.setattr(ViewRelation, "index", lambda self, order: pytest.fail("a trie of the view was built"))
    monkeypatch.setattr(ViewRelation, "sorted_rows", lambda self: pytest.fail("the whole view was sorted"))
    assert [engine.ask(parse_query(q)) for q in questions] == want
    assert engine.query("q(4, _, D, _)") == stored.query("q(4, _, D, _)") == [(4, 1, 7, 2)]
    assert want[1] == (["D"], [(7,)]) and want[2] == (["A"], [(1,)]) and want[3] == ([], [()])
    assert want[4] == (["A", "B", "D", "E"], [(1, 1, 7, 2)]) and want[5] == (["A", "D"], [(1, 3), (1, 7)])
    for wrong, code in [("?- q(\"x\", B, D, E).", "type_mismatch"), ("?- q(A, B).", "arity_mismatch"),
                        ("?- q(A, B, D, E), A < \"x\".", "type_mismatch")]:
        with pytest.raises(DatalogError) as got:
            engine.ask(parse_query(wrong))
        with pytest.raises(DatalogError) as expected:
            stored.ask(parse_query(wrong))
        assert got.value.code == expected.value.code == code
    monkeypatch.undo()                                      # arithmetic: evaluated as a rule
    assert engine.ask(parse_query("?- q(A, B, D, E), D - 1 > 3.")) == (["A", "B", "D", "E"], [(1, 1, 7, 2), (4, 1, 7, 2)])


def test_a_failed_transaction_restores_an_unstored_head():
    engine = _unread_engine()
    before = treduct_state(engine)
    with pytest.raises(DatalogError) as info:              # q is maintained, then bad divides by 0
        engine.commit(inserts={"s": [(5, 0)]})
    assert info.value.code == "division_by_zero"
    assert treduct_state(engine) == before and engine.rows("q") == [(1, 1, 3, 1)]


def test_a_rule_added_later_that_reads_the_head_stores_it_again():
    engine = _unread_engine()
    assert engine.extend(".decl x(a: number)\nx(a) :- q(a, _, _, _).")["x"].inserted == {(1,)}
    delta = engine.commit(inserts={"r": [(0, 1)]})
    assert type(engine.db["q"]).__name__ == "Relation" and engine.maintainer.support["q"]
    assert delta["q"].inserted == {(0, 1, 3, 1)} and engine.rows("x") == [(0,), (1,)]
