"""T-reducts under updates (Idris et al., §4-5, §7) against the brute-force twin (oracle.py).

After every update: Algorithm 1 and the bulk enumeration (bulk.py, with any list budget)
enumerate exactly the oracle's Q(db) with multiplicities, delta enumeration gives exactly Q(db+u) - Q(db), and every
rho[n] equals π_var(n) Q_n(db) (Lemma 5).
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gjt_strategies import gcqs, update_streams
from datalog.planning.gjt import GCQ, GJT, build_gjt, parse_gcq
from maintenance.gjt import ProjectedView, TReduct, maintain
from maintenance.gjt import bulk, oracle
from datalog.planning.gjt.tree import Node
from test_gjt_classify import PAPER_QUERIES, paper_query
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

EXAMPLE_1 = "r(x, y), s(y, z, w), t(u, v) | x < z, w < u"


# -- §4's worked example --------------------------------------------------------------------

def paper_t2():
    """T2 of Fig. 2: root {y,w} over {y,z,w} (children r(x,y) with x<z, and s) and {u} (w<u) over t."""
    query = parse_gcq(EXAMPLE_1, out="y z w u")
    r, s, t = query.atoms
    x_less_z, w_less_u = query.predicates
    yzw = Node.interior("yzw", [Node.leaf(r), Node.leaf(s)], preds=[(x_less_z,), ()])
    u = Node.interior("u", [Node.leaf(t)])
    root = Node.interior("yw", [yzw, u], preds=[(), (w_less_u,)])
    return GJT(root, {root.id, yzw.id, u.id}, query), yzw, u, root


# A database consistent with the §4 text (Fig. 6 is lost): rho[{y,z,w}](1,3,3) = 12,
# the only r-tuple with y = 2 is <x:2, y:2> with multiplicity 2, and no u > 6.
SECTION_4_DB = [("r", (1, 1), 4), ("r", (2, 2), 2), ("s", (1, 3, 3), 3), ("s", (2, 4, 6), 1), ("t", (5, 1), 1)]


@pytest.mark.parametrize("tree", ["paper T2", "built"])
def test_section_4_worked_example(tree):
    if tree == "paper T2":
        gjt, yzw, u, top = paper_t2()
    else:   # Algorithm 3's tree: {} -> {w} -> ({w,y,z} -> r, s ; {u} -> t)
        gjt = build_gjt(parse_gcq(EXAMPLE_1, out="y z w u"))
        top = gjt.root.children[0]
        yzw, u = sorted(top.children, key=lambda n: len(n.vars), reverse=True)
    reduct = TReduct(gjt)
    reduct.update_batch(SECTION_4_DB)
    assert reduct.rho[yzw.id][_order(yzw, y=1, z=3, w=3)] == 12
    reduct.update("s", (2, 3, 6), 2)
    assert reduct.delta_of(yzw) == {_order(yzw, y=2, z=3, w=6): 4}        # Δρ_{y,z,w} = [t1 -> 4]
    assert reduct.delta_of(top) == {}                                    # no u > 6
    reduct.update("t", (4, 9), 3)
    assert reduct.delta_of(u) == {(4,): 3}
    assert reduct.delta_of(top) == {_order(top, y=1, w=3): 36}           # Δρ_{y,w} = [<1,3> -> 36]


def _order(node, **values):
    return tuple(values[v] for v in node.vars)


# -- differential tests against the brute-force twin ----------------------------------------

def _acyclic(query):
    return bool(build_gjt(query))


def _check_reduct_invariant(reduct: TReduct, db) -> None:
    """Lemma 5: rho[n] = π_var(n) Q_n(db) for every node n."""
    for n in reduct.nodes:
        atoms = tuple(m.atom for m in n.walk() if m.atom)
        preds = tuple(p for m in n.walk() if m is not n for p in m.pred_in)
        sub = GCQ(atoms, preds, n.varset)
        assert reduct.rho[n.id] == oracle.evaluate(sub, db, n.vars), n.label()


def _apply(db, batch):
    for relation, row, d in batch:
        current = db.setdefault(relation, {})
        m = current.get(row, 0) + d
        if m:
            current[row] = m
        else:
            del current[row]


def _run_stream(query, stream, check_rho=False):
    view = maintain(query)
    out = view.output_vars
    db: dict = {}
    for batch in stream:
        before = oracle.evaluate(query, db, out)
        _apply(db, batch)
        view.update_batch(batch)
        after = oracle.evaluate(query, db, out)
        got = list(view.enumerate())
        assert len(got) == len({t for t, _ in got}), "enumeration repeats a tuple"
        assert dict(got) == after
        for bulk in _bulk_enumerations(view):
            assert len(bulk) == len({t for t, _ in bulk}), "bulk enumeration repeats a tuple"
            assert dict(bulk) == after
        assert dict(view.enumerate_delta()) == oracle.difference(after, before)
        for delta in _bulk_enumerations(view, "enumerate_delta_bulk"):
            assert len(delta) == len({t for t, _ in delta}), "bulk delta enumeration repeats a tuple"
            assert dict(delta) == oracle.difference(after, before)
        if check_rho and isinstance(view, TReduct):
            _check_reduct_invariant(view, db)
    return view


def _bulk_enumerations(view, method: str = "enumerate_bulk") -> list[list]:
    """enumerate_bulk (or enumerate_delta_bulk) with the default list budget, with none (every side streamed) and with an
    unbounded one (every side that can be listed is)."""
    out, saved = [], (bulk.BUDGET, bulk.SLACK)
    try:
        for budget, slack in (saved, (0, 0), (10**6, 10**9)):
            bulk.BUDGET, bulk.SLACK = budget, slack
            out.append(list(getattr(view, method)()))
    finally:
        bulk.BUDGET, bulk.SLACK = saved
    return out


@st.composite
def acyclic_query_and_stream(draw, max_batch=1):
    query = draw(gcqs(max_atoms=3, max_predicates=3).filter(_acyclic))
    return query, draw(update_streams(query.relations(), min_length=8, max_length=16, max_batch=max_batch))


@settings(max_examples=examples(120), deadline=None)
@given(acyclic_query_and_stream())
def test_single_updates_match_the_oracle(case):
    query, stream = case
    _run_stream(query, stream, check_rho=True)


@settings(max_examples=examples(60), deadline=None)
@given(acyclic_query_and_stream(max_batch=4))
def test_batches_match_the_oracle(case):
    query, stream = case
    _run_stream(query, stream)


@settings(max_examples=examples(60), deadline=None)
@given(acyclic_query_and_stream(max_batch=4))
def test_one_pass_over_several_atoms_keeps_the_reduct(case):
    """Algorithm 2 with an update u touching several leaves at once (track_delta=False)."""
    query, stream = case
    gjt = build_gjt(query)
    reduct = TReduct(gjt, track_delta=False)
    db: dict = {}
    for batch in stream:
        _apply(db, batch)
        reduct.update_batch(batch)
        _check_reduct_invariant(reduct, db)
    assert reduct.count() == sum(oracle.evaluate(query, db, ()).values())


@pytest.mark.parametrize("name", sorted(PAPER_QUERIES, key=lambda q: int(q[1:])))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_paper_queries_match_the_oracle(name, data):
    query = paper_query(name)
    arity = {a.relation: len(a.vars) for a in query.atoms}
    stream = data.draw(update_streams(query.relations(), max_length=14, max_batch=2, arity=arity))
    _run_stream(query, stream)


@pytest.mark.parametrize("text, out", [
    ("r(a, b), s(b, c, d) | c < a + 2, a < c", None),                 # a band: two inequalities, one pair
    ("r(a, b), t(c, d) | a < c, b < d", None),                        # lexicographic sort on (c, d)
    ("r(a, b), t(c, d) | a < c, b > d, a != d", "a b"),
    ("r(a, b), r(b, c), t(c, d) | b <= d", None),                     # self-join, r twice
    ("r(a, a), s(a, b, c) | b >= 2, c != a", "a c"),
    ("r(a, b), s(b, c, d), t(d, e) | a < c, c < e", "b e"),           # not free-connex: §7 view
    (EXAMPLE_1.replace("x", "a").replace("y", "b"), "b z w u"),     # Example 3's Q2
    (EXAMPLE_1, "x u"),                                             # acyclic, not free-connex
    # bulk rows of a frontier tuple keep only variables no row to their left gave (bulk._layout):
    ("r(b, d), t(d, b), s(c, e, b) | d <= c, b != c, b >= e", None),   # s under a flat node
    ("r(b, d), t(e, a), s(b, a, f) | d != f, e < b - 1, b >= e", None),  # s streamed tuple by tuple
    ("t(c, e), t(a, e), t(b, e) | b <= c, c = a + 2", None),          # a listed frontier node
])
def test_chosen_queries_match_the_oracle(text, out):
    query = parse_gcq(text, out)
    rng = random.Random(7)
    db: dict = {}
    stream = []
    for _ in range(60):
        relation = rng.choice(sorted(query.relations()))
        current = db.setdefault(relation, {})
        if current and rng.random() < 0.3:
            row = rng.choice(sorted(current))
            d = -1
        else:
            row = tuple(rng.randint(0, 4) for _ in range({"r": 2, "s": 3, "t": 2}[relation]))
            d = 1
        _apply(db, [(relation, row, d)])
        stream.append([(relation, row, d)])
    view = _run_stream(query, stream, check_rho=True)
    assert isinstance(view, ProjectedView) == (out in ("b e", "x u"))


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["<", "<=", ">", ">="]), st.sampled_from(["<", "<=", ">", ">="]),
       st.integers(-2, 2), st.data())
def test_merge_join_equals_nested_loop(op1, op2, offset, data):
    """The fast path (§4's hybrid sort-merge join) against its slow twin, on Q4's shape."""
    query = parse_gcq(f"r(a, b), s(b, c, d), t(d, e) | a {op1} c + {offset}, c {op2} e", None) \
        if offset >= 0 else parse_gcq(f"r(a, b), s(b, c, d), t(d, e) | a {op1} c - {-offset}, c {op2} e")
    stream = data.draw(update_streams(query.relations(), min_length=6, max_length=16, max_batch=3))
    gjt = build_gjt(query)
    fast, slow = TReduct(gjt, merge_joins=True), TReduct(gjt, merge_joins=False)
    for batch in stream:
        fast.update_batch(batch)
        slow.update_batch(batch)
        assert fast.rho == slow.rho
        assert dict(fast.enumerate_delta()) == dict(slow.enumerate_delta())


# -- constant delay (Prop. 5, Theorem 2) ------------------------------------------------------

def _max_gap(reduct: TReduct, outputs: int) -> int:
    """Most index entries touched before the first output or between two consecutive ones."""
    reduct.stats.touched = reduct.stats.bisects = 0
    gaps, last = [], 0
    for _, (_, mult) in zip(range(outputs), reduct.enumerate()):
        assert mult > 0
        gaps.append(reduct.stats.touched - last)
        last = reduct.stats.touched
    assert gaps, "no output to measure"
    return max(gaps)


def _loaded(query, per_relation: int) -> TReduct:
    rng = random.Random(per_relation)
    reduct = TReduct(build_gjt(query), track_delta=False)
    rows = []
    for atom in query.atoms:
        for _ in range(per_relation):
            row = [rng.randrange(10 * per_relation) for _ in atom.vars]
            if "k" in atom.vars:
                row[atom.vars.index("k")] = rng.randrange(1, 5)
            rows.append((atom.relation, tuple(row), 1))
    reduct.update_batch(rows)
    return reduct


@pytest.mark.parametrize("name", [f"Q{i}" for i in range(1, 10)])
def test_enumeration_delay_stays_constant_as_the_database_grows(name):
    query = paper_query(name)
    small = _max_gap(_loaded(query, 100), 200)
    large_reduct = _loaded(query, 10_000)
    large = _max_gap(large_reduct, 200)
    assert large_reduct.stats.bisects == 0          # no binary search: one inequality per node
    bound = 2 * len(large_reduct.nodes) + 1        # a constant of the query, not of the data
    assert small <= bound and large <= bound


def test_delta_enumeration_delay_stays_constant():
    """Push mode (§7): after one insert into S of Q4, ΔQ is enumerated from the indexed Δ_n."""
    query = paper_query("Q4")
    for size in (100, 10_000):
        reduct = _loaded(query, size)
        reduct.track_delta = True
        reduct.update("S", (5 * size, 0, 0), 1)      # d in the middle: many a < d, many g > d
        reduct.stats.touched = reduct.stats.bisects = 0
        gaps, last = [], 0
        for _, (_, d) in zip(range(200), reduct.enumerate_delta()):
            assert d == 1
            gaps.append(reduct.stats.touched - last)
            last = reduct.stats.touched
        assert len(gaps) == 200 and max(gaps) <= 2 * len(reduct.nodes) + 1
        assert reduct.stats.bisects == 0
