"""GYO reduction for GCQs, Algorithm 3 and the GJT rewrites (Idris et al., §3 and §6.2).

Every built GJT pair is checked against Definitions 1-5; verdicts are compared with
the paper's (Q1-Q12, Examples 1-3 and 6-8) and, for plain CQs, with classical GYO (the slow twin).
"""

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gjt_strategies import gcqs
from datalog.planning.gjt import Cyclic, build_gjt, classify, parse_gcq
from datalog.planning.gjt.gyo import ForestTriplet, enact_cse, enact_flt, enact_iso
from datalog.planning.gjt.query import GCQ, Atom
from datalog.planning.gjt.transform import binarize, make_sibling_closed
from datalog.planning.gjt.tree import GJT, Node, atoms_and_predicates, violations
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

RST = "R(a,b,c), S(d,e,f), T(g,h,i)"
RST_K5 = "R(a,b,c,k), S(d,e,f,k), T(g,h,i)"
RST_K6 = "R(a,b,c), S(d,e,f,k), T(g,h,i,k)"
PROJECTION = "b c e f h i"

# Table 1 of the paper: (query text, out or None for full, free-connex?)
PAPER_QUERIES = {
    "Q1": ("R(a,b,c), S(d,e,f) | a<d", None, True),
    "Q2": ("R(a,b,c,k), S(d,e,f,k) | a<d", None, True),
    "Q3": (RST + " | a<d, e<g", None, True),
    "Q4": (RST + " | a<d, d<g", None, True),
    "Q5": (RST_K5 + " | a<d, d<g", None, True),
    "Q6": (RST_K6 + " | a<d, d<g", None, True),
    "Q7": (RST + " | a<d, d<g", "a b d e f g h", True),
    "Q8": (RST_K5 + " | a<d, d<g", "a d e f g h k", True),
    "Q9": (RST_K6 + " | a<d, d<g", "d e f g h k", True),
    "Q10": (RST + " | a<d, d<g", PROJECTION, False),
    "Q11": (RST_K5 + " | a<d, d<g", PROJECTION, False),
    "Q12": (RST_K6 + " | a<d, d<g", PROJECTION, False),
}

EXAMPLE_1 = "r(x, y), s(y, z, w), t(u, v) | x < z, w < u"


def paper_query(name: str) -> GCQ:
    text, out, _ = PAPER_QUERIES[name]
    return parse_gcq(text, out)


def assert_valid_pair(gjt: GJT, query: GCQ) -> None:
    """Definitions 1-5 and Definition 2's 'GJT for Q', plus Algorithm 3's promises."""
    assert violations(gjt) == []
    atoms, preds = atoms_and_predicates(gjt)
    assert Counter(map(id, atoms)) == Counter(map(id, query.atoms))      # leaves are the atoms
    assert Counter(preds) == Counter(query.predicates)                   # each θ on exactly one edge
    assert all(n.is_guarded_by(n.guard_child()) for n in gjt.nodes() if n.children)
    assert gjt.root.id in gjt.connex and gjt.is_sibling_closed() and gjt.is_binary()
    assert query.out <= gjt.connex_vars()


@pytest.mark.parametrize("name", sorted(PAPER_QUERIES, key=lambda q: int(q[1:])))
def test_paper_queries_are_acyclic_and_free_connex_up_to_q9(name):
    query = paper_query(name)
    verdict = classify(query)
    assert verdict.acyclic
    assert verdict.free_connex == PAPER_QUERIES[name][2]
    gjt = build_gjt(query)
    assert_valid_pair(gjt, query)
    assert gjt.connex_vars() == set(verdict.connex_vars)                 # var(N) = var(hyp(I)), Prop. 8
    assert (gjt.connex_vars() == query.out) == verdict.free_connex
    assert all(len(n.pred()) <= 1 for n in gjt.nodes())                  # Theorem 2 applies


def test_q10_to_q12_need_every_variable_in_the_connex_subset():
    for name, width in (("Q10", 9), ("Q11", 10), ("Q12", 10)):
        assert len(classify(paper_query(name)).connex_vars) == width


@pytest.mark.parametrize("out, free_connex", [(None, True), ("y z w u", True), ("x u", False)])
def test_example_1(out, free_connex):
    query = parse_gcq(EXAMPLE_1, out)
    assert classify(query).free_connex == free_connex
    gjt = build_gjt(query)
    assert_valid_pair(gjt, query)
    assert (gjt.connex_vars() == query.out) == free_connex


def test_example_6_and_8_stage_one_keeps_t_u_w_x_y_z():
    query = parse_gcq("r1(s, t, u), r2(t, u), r3(u, w, x), r4(s, v), r5(w, z, y) | t < v, x < y", "t u z w")
    verdict = classify(query)
    assert verdict.acyclic and not verdict.free_connex
    assert verdict.connex_vars == ("t", "u", "w", "x", "y", "z")


def test_conditional_subset_of_example_6():
    query = parse_gcq("r1(s, t, u), r2(t, u), r3(u, w, x), r4(s, v), r5(w, z, y) | t < v, x < y", "t u z w")
    f = ForestTriplet([Node.leaf(a) for a in query.atoms], query.out, list(query.predicates))
    assert f.jev() == set("stuwz")
    assert f.ext(frozenset("v")) == {"t"}
    assert f.conditional_subset(frozenset("sv"), frozenset("stu"))
    assert f.conditional_subset(frozenset("tu"), frozenset("stu"))


@pytest.mark.parametrize("text, named", [
    ("r(x, y), s(y, z), t(x, z)", ["r(x, y)", "s(y, z)", "t(x, z)"]),
    (RST + " | a<d, d<g, g<a", ["a < d", "d < g", "g < a"]),
    ("Trans(acc, ts1, amnt1), Trans(acc, ts2, amnt2), Trans(acc, ts3, amnt3) | ts1 < ts2, ts2 < ts3, "
     "ts3 < ts1 + 3600, amnt1 < 100, amnt2 < 100, amnt3 > 400", ["ts1 < ts2", "ts2 < ts3", "ts3 < ts1 + 3600"]),
    ("r(xr), s(xs, ys), t(xt, yt), u(yu) | xs <= xr, xt <= xr, ys <= yu, yt <= yu", ["xs <= xr", "yt <= yu"]),
])
def test_cyclic_queries_are_rejected_with_the_cycle_named(text, named):
    query = parse_gcq(text)
    result = build_gjt(query)
    assert isinstance(result, Cyclic) and not result
    assert not classify(query).acyclic
    for piece in named:
        assert piece in result.reason


def test_fraud_pattern_without_its_window_is_free_connex():
    query = parse_gcq("Trans(acc, ts1, amnt1), Trans(acc, ts2, amnt2), Trans(acc, ts3, amnt3) | "
                      "ts1 < ts2, ts2 < ts3, amnt1 < 100, amnt2 < 100, amnt3 > 400")
    assert classify(query).free_connex
    assert_valid_pair(build_gjt(query), query)


def test_equality_and_inequality_on_one_pair_is_acyclic():
    query = parse_gcq("r(x, y), s(x, z) | y < z")     # excluded by Bernstein-Goodman, acyclic here
    assert_valid_pair(build_gjt(query), query)


def test_describe_prints_every_predicate_on_its_edge():
    gjt = build_gjt(paper_query("Q3"))
    text = gjt.describe()
    assert "pred({d,e}->{a}) = {a < d}" in text and "pred({g}->{e}) = {e < g}" in text
    assert text.count("\n") == len(gjt.nodes()) - 1


# -- property tests -----------------------------------------------------------------------

def classical_gyo_acyclic(hyperedges) -> bool:
    """The slow twin for CQs (§6.1): remove isolated variables and subsets until stuck."""
    edges = [set(e) for e in hyperedges if e]
    while True:
        count = Counter(v for e in edges for v in e)
        for e in edges:
            e -= {v for v in e if count[v] == 1}
        edges = [e for e in edges if e]
        subset = next((i for i, e in enumerate(edges)
                       if any(j != i and e <= f for j, f in enumerate(edges))), None)
        if subset is None:
            return not edges
        del edges[subset]


@settings(max_examples=examples(150), deadline=None)
@given(gcqs(max_atoms=4, max_predicates=0))
def test_cqs_agree_with_classical_gyo(query):
    verdict = classify(query)
    hyperedges = [a.hyperedge() for a in query.atoms]
    assert verdict.acyclic == classical_gyo_acyclic(hyperedges)
    assert verdict.free_connex == (verdict.acyclic and classical_gyo_acyclic(hyperedges + [query.out]))


@settings(max_examples=examples(200), deadline=None)
@given(gcqs(max_atoms=4, max_predicates=4))
def test_build_gjt_gives_a_valid_pair_or_a_reason(query):
    result = build_gjt(query)
    verdict = classify(query)
    assert bool(result) == verdict.acyclic
    if result:
        assert_valid_pair(result, query)
        assert result.connex_vars() == set(verdict.connex_vars)
    else:
        assert result.reason.startswith("cyclic: no ear among")


def _applicable_steps(f: ForestTriplet):
    hyp = f.hyp()
    steps = [(enact_flt, e, [p for p in f.preds if p.variables() <= e]) for e in hyp
             if any(p.variables() <= e for p in f.preds)]
    steps += [(enact_iso, e, f.isol(e)) for e in hyp if f.isol(e)]
    steps += [(enact_cse, e, l) for e in hyp for l in hyp if e != l and f.conditional_subset(e, l)]
    return steps


def _reduce_randomly(f: ForestTriplet, rng: random.Random) -> ForestTriplet:
    while steps := _applicable_steps(f):
        enact, *args = rng.choice(steps)
        enact(f, *args)
    return f


@settings(max_examples=examples(100), deadline=None)
@given(gcqs(max_atoms=4, max_predicates=4), st.randoms(use_true_random=False))
def test_any_order_of_reduction_steps_reaches_the_same_verdict(query, rng):
    """Prop. 7 (confluence): verdict and var(hyp(I)) do not depend on the step order."""
    f = _reduce_randomly(ForestTriplet([Node.leaf(a) for a in query.atoms], query.out,
                                       list(query.predicates)), rng)
    connex_vars = tuple(sorted({v for r in f.roots for v in r.vars}))
    f.out = frozenset()
    _reduce_randomly(f, rng)
    verdict = classify(query)
    assert f.is_empty() == verdict.acyclic
    if verdict.acyclic:
        assert connex_vars == verdict.connex_vars


@settings(max_examples=examples(100), deadline=None)
@given(gcqs(max_atoms=4, max_predicates=3), st.randoms(use_true_random=False))
def test_sibling_closed_transform_and_binarization_keep_the_pair_equivalent(query, rng):
    """Prop. 1-3 on random connex subsets of built GJTs."""
    gjt = build_gjt(query)
    if not gjt:
        return
    connex = {gjt.root.id}
    for n in gjt.nodes():                       # pre-order: parents are decided first
        if n.parent is not None and n.parent.id in connex and rng.random() < 0.6:
            connex.add(n.id)
    pair = GJT(gjt.root, connex, query)
    before_vars, before = pair.connex_vars(), atoms_and_predicates(pair)
    binarize(make_sibling_closed(pair))
    assert violations(pair) == [] and pair.is_sibling_closed() and pair.is_binary()
    assert pair.connex_vars() == before_vars
    after = atoms_and_predicates(pair)
    assert Counter(map(id, after[0])) == Counter(map(id, before[0])) and Counter(after[1]) == Counter(before[1])


def test_violations_catch_a_broken_tree():
    r, s = Atom("r", ("x", "y")), Atom("s", ("y", "z"))
    bad = Node.interior({"x", "z"}, [Node.leaf(r), Node.leaf(s)])      # neither child holds both x and z
    root = Node.interior((), [bad])
    found = violations(GJT(root, {root.id}, GCQ((r, s))))
    assert any("no guard child" in v for v in found)
