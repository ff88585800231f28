"""Unit and property tests for the leapfrog triejoin core (:mod:`lftj`).

* :class:`~lftj.trie.TrieNode` and :func:`~lftj.trie.build`;
* :class:`~lftj.iterator.TrieIterator` and its contract;
* the three intersections (``leapfrog``, ``leapfrog_intersect``, ``hash_intersect``)
  against a brute-force set intersection;
* :func:`~lftj.triejoin.triejoin` against a brute-force nested-loop join, for
  triangles, projections (``needed``), repeated variables (``repeats``),
  checks, bulk emission (``emit_last``) and product tails (``emit_product``).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lftj.iterator import LevelIterator, TrieIterator
from lftj.leapfrog import leapfrog, leapfrog_intersect, hash_intersect, hash_intersect_unordered
from lftj.recording import leapfrog_recorded, leapfrog_recording
from lftj.trie import TrieNode, build
from lftj.triejoin import JoinPlan, product_tail, triejoin
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

FAST = settings(max_examples=examples(150), deadline=None)
INTERSECTIONS = [pytest.param(hash_intersect, id="hash_intersect"),
                 pytest.param(leapfrog_intersect, id="leapfrog_intersect")]


# --------------------------------------------------------------------------- helpers

def trie(rows) -> TrieNode:
    """A trie built by plain inserts (the reference for ``build``)."""
    root = TrieNode()
    for row in rows:
        root.insert(tuple(row))
    return root


def as_dict(node):
    """The trie as nested dicts (leaves None), for structural comparison."""
    if node is None:
        return None
    return {key: as_dict(child) for key, child in node.children.items()}


def check_invariants(node: TrieNode, depth: int, arity: int, root: bool = True) -> None:
    """Sorted keys equal to the children; no empty nodes below the root; leaves None."""
    assert node.keys == sorted(node.children)
    assert len(node) == len(node.children)
    if not root:
        assert node.children, "empty non-root node"
    for key, child in node.children.items():
        if depth == arity - 1:
            assert child is None
        else:
            assert isinstance(child, TrieNode)
            check_invariants(child, depth + 1, arity, root=False)


def iterator(keys, arity=1) -> TrieIterator:
    return TrieIterator(trie((k,) for k in keys), arity)


class CheckedIterator:
    """Wraps a TrieIterator: checks seek's postcondition and forward motion, counts operations."""

    def __init__(self, inner: TrieIterator):
        self.inner = inner
        self.seeks = self.nexts = 0

    def at_end(self):
        return self.inner.at_end()

    def key(self):
        return self.inner.key()

    def position(self):
        return self.inner.position()

    def next(self):
        before = self.inner.position()
        self.inner.next()
        self.nexts += 1
        assert self.inner.position() == before + 1

    def seek(self, k):
        before_pos, before_key = self.inner.position(), self.inner.key()
        self.inner.seek(k)
        self.seeks += 1
        assert self.at_end() or self.key() >= k, "seek postcondition"
        assert self.inner.position() >= before_pos, "seek moved backwards"
        # leapfrog only seeks an iterator whose key is below the target: it must advance
        assert before_key < k
        assert self.inner.position() > before_pos


sorted_sets = st.lists(st.integers(-20, 20), max_size=15, unique=True).map(sorted)
set_families = st.lists(sorted_sets, min_size=1, max_size=4)


# --------------------------------------------------------------------------- TrieNode

def test_insert_rejects_duplicates():
    root = TrieNode()
    assert root.insert((1, 2, 3))
    assert root.insert((1, 2, 4))
    size = sum(1 for _ in root.rows(3))
    assert root.insert((1, 2, 3)) is False
    assert sum(1 for _ in root.rows(3)) == size == 2
    assert len(root) == 1 and len(root.children[1]) == 1 and len(root.children[1].children[2]) == 2


def test_insert_zero_arity_row_is_not_stored():
    root = TrieNode()
    assert root.insert(()) is False
    assert not root.children


def test_erase_prunes_empty_nodes():
    root = trie([(1, 2, 3), (1, 2, 4), (1, 5, 6), (7, 8, 9)])
    assert root.erase((1, 2, 3))
    assert root.find((1, 2)) is not None and root.find((1, 2)).keys == [4]
    assert root.erase((1, 2, 4))
    assert root.find((1, 2)) is None           # (1, 2) node pruned
    assert root.keys == [1, 7] and root.children[1].keys == [5]
    assert root.erase((1, 5, 6))
    assert 1 not in root.children and root.keys == [7]
    assert root.erase((7, 8, 9))
    assert root.children == {} and root.keys == []   # the root stays, empty
    check_invariants(root, 0, 3)


def test_erase_absent_rows():
    root = trie([(1, 2), (3, 4)])
    assert root.erase((1, 3)) is False
    assert root.erase((2, 2)) is False
    assert root.erase(()) is False
    assert list(root.rows(2)) == [(1, 2), (3, 4)]


def test_find_and_contains_prefix():
    root = trie([(1, 2, 3), (1, 4, 5)])
    assert root.find(()) is root
    assert root.find((1,)).keys == [2, 4]
    assert root.find((1, 2)).keys == [3]
    assert root.find((2,)) is None and root.find((1, 3)) is None
    assert root.contains_prefix(()) and root.contains_prefix((1, 4, 5))
    assert not root.contains_prefix((1, 4, 6)) and not root.contains_prefix((9,))


def test_rows_of_empty_trie():
    assert list(TrieNode().rows(1)) == []
    assert list(TrieNode().rows(3)) == []


@FAST
@given(st.integers(1, 3).flatmap(
    lambda n: st.lists(st.tuples(*[st.integers(0, 4)] * n), max_size=30)))
def test_rows_sorted_and_build_equals_permuted_inserts(rows):
    arity = len(rows[0]) if rows else 2
    rows = [r for r in rows if len(r) == arity]
    reference = trie(rows)
    assert list(reference.rows(arity)) == sorted(set(rows))
    for order in itertools.permutations(range(arity)):
        permuted = [tuple(r[i] for i in order) for r in rows]
        built = build(rows, order)
        inserted = trie(permuted)
        assert as_dict(built) == as_dict(inserted)
        assert list(built.rows(arity)) == sorted(set(permuted))
        check_invariants(built, 0, arity)
        # build from a one-shot iterator as well
        assert as_dict(build(iter(rows), order)) == as_dict(inserted)


def test_build_empty():
    for order in [(0,), (0, 1), (1, 0), (2, 0, 1)]:
        root = build([], order)
        assert root.keys == [] and not root.children


@FAST
@given(st.lists(st.tuples(st.booleans(), st.tuples(*[st.integers(0, 3)] * 3)), max_size=60))
def test_interleaved_inserts_and_erases(ops):
    root, model = TrieNode(), set()
    for step, (is_insert, row) in enumerate(ops):
        if is_insert:
            assert root.insert(row) == (row not in model)
            model.add(row)
        else:
            assert root.erase(row) == (row in model)
            model.discard(row)
        if step % 3 == 0:   # touch keys mid-sequence so lazily sorted lists get re-sorted
            check_invariants(root, 0, 3)
    check_invariants(root, 0, 3)
    assert list(root.rows(3)) == sorted(model)


# --------------------------------------------------------------------------- TrieIterator

def test_iterator_on_empty_relation():
    it = TrieIterator(TrieNode(), arity=1)
    assert it.depth == -1
    it.open()
    assert it.depth == 0 and it.at_end()
    it.up()
    assert it.depth == -1
    it = TrieIterator(build([], (1, 0)), arity=2)
    it.open()
    assert it.at_end()


def test_iterator_single_element():
    it = iterator([7])
    it.open()
    assert not it.at_end() and it.key() == 7
    it.next()
    assert it.at_end()
    it = iterator([7])
    it.open()
    it.seek(7)
    assert it.key() == 7
    it.seek(8)
    assert it.at_end()


def test_iterator_seek_existing_gap_and_past_end():
    it = iterator([1, 3, 5, 9])
    it.open()
    it.seek(3)
    assert it.key() == 3 and it.position() == 1
    it.seek(4)                      # a gap: the least key >= 4
    assert it.key() == 5
    it.seek(2)                      # seeks never move backwards
    assert it.key() == 5
    it.seek(9)
    assert it.key() == 9
    it.seek(10)
    assert it.at_end()
    it = iterator([1, 3, 5, 9])
    it.open()
    it.seek(100)
    assert it.at_end()


def test_iterator_next_to_end():
    keys = [2, 4, 6, 8]
    it = iterator(keys)
    it.open()
    seen = []
    while not it.at_end():
        seen.append(it.key())
        it.next()
    assert seen == keys and it.level_keys() == keys


def test_iterator_up_open_round_trips():
    rows = [(1, 2, 3), (1, 2, 4), (1, 5, 6), (3, 0, 0), (3, 7, 8), (3, 7, 9)]
    it = TrieIterator(trie(rows), arity=3)
    it.open()
    assert it.depth == 0 and it.key() == 1
    it.open()
    assert it.depth == 1 and it.key() == 2
    it.open()
    assert it.depth == 2 and it.key() == 3
    it.next()
    assert it.key() == 4
    it.up()
    assert it.depth == 1 and it.key() == 2      # the parent position is kept
    it.next()
    assert it.key() == 5
    it.open()
    assert it.key() == 6                         # reopened under the new key
    it.up()
    it.up()
    assert it.depth == 0 and it.key() == 1
    it.open()
    assert it.key() == 2                         # reopening starts at the first key again
    it.up()
    it.next()
    assert it.key() == 3
    it.open()
    it.seek(7)
    it.open()
    assert it.level_keys() == [8, 9]
    it.up()
    it.up()
    it.up()
    assert it.depth == -1
    it.open()
    assert it.key() == 1                         # fresh open at the root


def test_iterator_enumerates_all_rows():
    rows = sorted({(a, b, c) for a in range(3) for b in range(a, 3) for c in range(b, 4)})
    it = TrieIterator(build(rows, (0, 1, 2)), arity=3)
    out = []
    it.open()
    while not it.at_end():
        a = it.key()
        it.open()
        while not it.at_end():
            b = it.key()
            it.open()
            while not it.at_end():
                out.append((a, b, it.key()))
                it.next()
            it.up()
            it.next()
        it.up()
        it.next()
    assert out == rows
    it.up()
    assert it.depth == -1


def test_iterator_contract_asserts():
    it = iterator([1])
    it.open()
    it.next()
    assert it.at_end()
    with pytest.raises(AssertionError):
        it.key()
    with pytest.raises(AssertionError):
        it.next()
    with pytest.raises(AssertionError):
        it.seek(0)
    # open below the last level
    it = iterator([1])
    it.open()
    with pytest.raises(AssertionError):
        it.open()
    it = TrieIterator(trie([(1, 2)]), arity=2)
    it.open()
    it.open()
    with pytest.raises(AssertionError):
        it.open()
    # open at end of a non-last level
    it = TrieIterator(trie([(1, 2)]), arity=2)
    it.open()
    it.next()
    with pytest.raises(AssertionError):
        it.open()
    # up above the root
    it = iterator([1])
    with pytest.raises(AssertionError):
        it.up()


# --------------------------------------------------------------------------- leapfrog

def brute_intersection(sets):
    return sorted(set.intersection(*map(set, sets)))


@FAST
@given(set_families)
def test_intersections_equal_brute_force(sets):
    expected = brute_intersection(sets)
    nodes = [trie((k,) for k in keys) for keys in sets]
    assert list(leapfrog_intersect(nodes)) == expected
    assert list(hash_intersect(nodes)) == expected
    assert sorted(hash_intersect_unordered(nodes)) == expected

    wrapped = []
    for node in nodes:
        inner = TrieIterator(node, arity=1)
        inner.open()
        wrapped.append(CheckedIterator(inner))
    assert list(leapfrog(wrapped)) == expected
    # every seek/next strictly advances one iterator, so the work is bounded by the input
    ops = sum(w.seeks + w.nexts for w in wrapped)
    assert ops <= sum(map(len, sets))
    if expected:
        assert sum(w.nexts for w in wrapped) >= len(expected)


@FAST
@given(set_families, st.integers(-3, 3))
def test_leapfrog_at_a_deeper_level(sets, prefix):
    """leapfrog over iterators opened two levels down, under a shared prefix key."""
    expected = brute_intersection(sets)
    its = []
    for keys in sets:
        rows = [(prefix, k) for k in keys] + [(prefix - 1, 0), (prefix + 1, 99)]
        it = TrieIterator(build(rows, (0, 1)), arity=2)
        it.open()
        it.seek(prefix)
        if not keys:               # an empty set: no tuple under the prefix
            assert it.key() == prefix + 1
            return
        assert it.key() == prefix
        it.open()
        its.append(CheckedIterator(it))
    assert list(leapfrog(its)) == expected


def _recorded_one_by_one(levels, lo, hi):
    """The slow twin of leapfrog_recorded: Recording iterators under the paper's leapfrog."""
    seen = []
    keys = list(leapfrog_recording(levels, lo, hi, lambda i, s, e: seen.append((i, s, e))))
    return keys, seen


@FAST
@given(set_families, st.one_of(st.none(), st.integers(-21, 21)), st.one_of(st.none(), st.integers(-21, 21)))
def test_leapfrog_recorded_equals_recording_iterators(sets, lo, hi):
    """The at-once leapfrog of a first recording yields the same keys and reports the same
    operations, in the same order, as Recording iterators under the leapfrog."""
    levels = [sorted(keys) for keys in sets]
    keys, who, starts, ends = leapfrog_recorded(levels, lo, hi)
    expected_keys, expected_ops = _recorded_one_by_one(levels, lo, hi)
    assert keys == expected_keys
    assert list(zip(who, starts, ends)) == expected_ops
    assert len(who) == len(starts) == len(ends)
    inside = [k for k in brute_intersection(sets) if (lo is None or k >= lo) and (hi is None or k <= hi)]
    assert keys == inside


@pytest.mark.parametrize("sets", [[[]], [[], [1]], [[1, 2], []], [[5]], [[1, 2, 3]] * 4])
def test_intersections_small_cases(sets):
    expected = brute_intersection(sets)
    nodes = [trie((k,) for k in keys) for keys in sets]
    its = []
    for node in nodes:
        it = TrieIterator(node, arity=1)
        it.open()
        its.append(it)
    assert list(leapfrog(its)) == expected
    assert list(leapfrog_intersect(nodes)) == expected
    assert list(hash_intersect(nodes)) == expected


# --------------------------------------------------------------------------- triejoin

def brute_join(atoms, rels, out_vars, check=None):
    """Nested-loop join: ``atoms`` is a list of (relation index, variable tuple)."""
    results = set()

    def go(i, env):
        if i == len(atoms):
            if check is None or check(env):
                results.add(tuple(env[v] for v in out_vars))
            return
        rel, vars_ = atoms[i]
        for row in rels[rel]:
            new = dict(env)
            if all(new.setdefault(v, x) == x for v, x in zip(vars_, row)):
                go(i + 1, new)

    go(0, {})
    return results


def prefix_join(atoms, rels, prefix_vars):
    """Bindings of ``prefix_vars`` (a prefix of the variable order) that every atom's
    projection onto them admits: what triejoin enumerates at that depth."""
    projected_atoms, projected_rels = [], []
    for i, (rel, vars_) in enumerate(atoms):
        cols = [c for c, v in enumerate(vars_) if v in prefix_vars]
        if cols:
            projected_rels.append({tuple(row[c] for c in cols) for row in rels[rel]})
            projected_atoms.append((len(projected_rels) - 1, "".join(vars_[c] for c in cols)))
    return brute_join(projected_atoms, projected_rels, prefix_vars)


def plan_for(atoms, rels, order, needed=None, **kwargs):
    """A minimal planner: each atom's trie orders its columns by the variable order;
    a variable's first column in an atom participates, further columns repeat."""
    depth = len(order)
    pos = {v: i for i, v in enumerate(order)}
    participants = [[] for _ in range(depth)]
    repeats = [[] for _ in range(depth)]
    roots = []
    for a, (rel, vars_) in enumerate(atoms):
        cols = sorted(range(len(vars_)), key=lambda c: (pos[vars_[c]], c))
        roots.append(build(sorted(rels[rel]), tuple(cols)))
        seen = set()
        for c in cols:
            v = vars_[c]
            (repeats if v in seen else participants)[pos[v]].append(a)
            seen.add(v)
    plan = JoinPlan(depth=depth, participants=participants,
                    repeats=repeats if any(repeats) else [], needed=needed, **kwargs)
    return plan, roots


def run(plan, roots, intersect, **kwargs):
    out = []
    triejoin(plan, roots, lambda b: out.append(tuple(b)), intersect=intersect, **kwargs)
    return out


pairs = st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=14)
singles = st.sets(st.tuples(st.integers(0, 4)), max_size=4)


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, pairs, pairs)
def test_triangle(intersect, r, s, t):
    atoms = [(0, "xy"), (1, "yz"), (2, "zx")]
    expected = brute_join(atoms, [r, s, t], "xyz")
    for order in ["xyz", "zxy", "yzx", "xzy"]:
        plan, roots = plan_for(atoms, [r, s, t], order)
        out = run(plan, roots, intersect)
        assert len(out) == len(set(out))
        got = {tuple(dict(zip(order, b))[v] for v in "xyz") for b in out}
        assert got == expected
        if order == "xyz":
            assert out == sorted(out)          # depth-first, ascending at each level


def test_triangle_hand_written_plan():
    r = {(1, 2), (2, 3), (3, 1), (2, 4)}
    plan = JoinPlan(depth=3, participants=[[0, 2], [0, 1], [1, 2]])
    roots = [build(r, (0, 1)), build(r, (0, 1)), build(r, (1, 0))]
    for intersect in (hash_intersect, leapfrog_intersect):
        assert run(plan, roots, intersect) == [(1, 2, 3), (2, 3, 1), (3, 1, 2)]


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, pairs)
def test_two_path_projection_with_needed(intersect, e, f):
    atoms = [(0, "xy"), (1, "yz")]
    rels = [e, f]
    # q(x, z) :- e(x, y), f(y, z).  order x, z, y: y is existential
    plan, roots = plan_for(atoms, rels, "xzy", needed=2)
    out = run(plan, roots, intersect)
    assert len(out) == len(set(out)), "short-circuit emits each projection once"
    assert {b[:2] for b in out} == brute_join(atoms, rels, "xz")
    # q(x) :- e(x, y), f(y, z).  order x, y, z: y and z are existential
    plan, roots = plan_for(atoms, rels, "xyz", needed=1)
    out = run(plan, roots, intersect)
    assert len(out) == len(set(b[:1] for b in out))
    assert {b[:1] for b in out} == brute_join(atoms, rels, "x")
    # q() :- e(x, y), f(y, z).  everything existential: one emission iff non-empty
    plan, roots = plan_for(atoms, rels, "xyz", needed=0)
    out = run(plan, roots, intersect)
    assert len(out) == (1 if brute_join(atoms, rels, "") else 0)


def test_needed_short_circuits_work():
    """With y existential (and not the last depth), the y level stops at the first witness."""
    e = {(0, y) for y in range(50)}
    f = {(y, 0) for y in range(50)}
    plan, roots = plan_for([(0, "xy"), (1, "yz")], [e, f], "xyz", needed=1)
    calls = []

    def counting(nodes):
        return (calls.append(k) or k for k in hash_intersect(nodes))

    for intersect in (counting, hash_intersect, leapfrog_intersect):
        calls.clear()
        out = run(plan, roots, intersect)
        assert [b[:1] for b in out] == [(0,)]
    out = run(plan, roots, counting)
    assert len(calls) == 3       # x = 0, the first y, then z (bulk: all of f's z under y = 0)


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, pairs)
def test_repeated_variable(intersect, r, e):
    rels = [r, e]
    # q(x, y) :- r(x, x), e(x, y).
    atoms = [(0, "xx"), (1, "xy")]
    plan, roots = plan_for(atoms, rels, "xy")
    assert plan.repeats == [[0], []]
    out = run(plan, roots, intersect)
    assert len(out) == len(set(out))
    assert set(out) == brute_join(atoms, rels, "xy")
    # q(x, y) :- e(x, y), r(y, y).  the repeat at the last depth
    atoms = [(1, "xy"), (0, "yy")]
    plan, roots = plan_for(atoms, rels, "xy")
    assert plan.repeats == [[], [1]]
    out = run(plan, roots, intersect)
    assert set(out) == brute_join(atoms, rels, "xy") and len(out) == len(set(out))
    # q(x) :- r(x, x).  a single depth
    plan, roots = plan_for([(0, "xx")], rels, "x")
    assert run(plan, roots, intersect) == sorted(brute_join([(0, "xx")], rels, "x"))
    # q(x, y) :- r(x, y), r(y, x), r(x, x).  two repeats in the same depth
    atoms = [(0, "xy"), (0, "yx"), (0, "xx")]
    plan, roots = plan_for(atoms, rels, "xy")
    assert set(run(plan, roots, intersect)) == brute_join(atoms, rels, "xy")


def test_repeated_variable_hand_written_plan():
    r = {(1, 1), (1, 2), (2, 2), (3, 4)}
    plan = JoinPlan(depth=1, participants=[[0]], repeats=[[0]])
    assert run(plan, [build(r, (0, 1))], hash_intersect) == [(1,), (2,)]


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, pairs, pairs)
def test_check_at_the_binding_depth(intersect, r, s, t):
    atoms = [(0, "xy"), (1, "yz"), (2, "zx")]
    rels = [r, s, t]
    expected = brute_join(atoms, rels, "xyz", check=lambda env: env["x"] < env["z"])
    for order in ["xyz", "xzy", "zxy"]:
        ix, iz = order.index("x"), order.index("z")
        bound_at = max(ix, iz) + 1              # checks[d + 1] runs once depth d is bound
        calls = []

        def x_lt_z(b, ix=ix, iz=iz):
            calls.append(1)
            assert b[ix] is not None and b[iz] is not None
            return b[ix] < b[iz]

        checks = [[] for _ in range(4)]
        checks[bound_at].append(x_lt_z)
        plan, roots = plan_for(atoms, rels, order, checks=checks)
        out = run(plan, roots, intersect)
        got = {tuple(dict(zip(order, b))[v] for v in "xyz") for b in out}
        assert got == expected and len(out) == len(got)
        # the check runs exactly once per binding of the variables up to its depth
        assert len(calls) == len(prefix_join(atoms, rels, order[:bound_at]))


def test_check_before_any_variable():
    r = {(1, 2)}
    plan = JoinPlan(depth=2, participants=[[0], [0]], checks=[[lambda b: b[2] == "go"], [], []],
                    slots=3)
    assert run(plan, [build(r, (0, 1))], hash_intersect, binding=[None, None, "go"]) == [(1, 2, "go")]
    assert run(plan, [build(r, (0, 1))], hash_intersect, binding=[None, None, "stop"]) == []


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, pairs, pairs)
def test_emit_last_equals_per_key_emission(intersect, r, s, t):
    cases = [
        ([(0, "xy"), (1, "yz"), (2, "zx")], "xyz"),     # triangle: z from two atoms
        ([(0, "xy"), (1, "yz")], "xyz"),                  # 2-path: z from one atom
        ([(0, "xy"), (1, "xy")], "xy"),                   # intersection at the last level
    ]
    for atoms, order in cases:
        rels = [r, s, t]
        plan, roots = plan_for(atoms, rels, order)
        per_key = run(plan, roots, intersect)
        bulk = []

        def emit_last(binding, keys):
            assert len(keys) > 0
            for k in keys:
                bulk.append((*binding[:-1], k))

        plan, roots = plan_for(atoms, rels, order, emit_last=emit_last)
        never = run(plan, roots, intersect)
        assert never == []                          # the last depth went to emit_last
        assert bulk == per_key
        assert set(bulk) == brute_join(atoms, rels, order)


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@FAST
@given(pairs, singles, pairs)
def test_product_tail(intersect, e, g, f):
    # q(x, y, z) :- e(x, y), g(z).  y and z are a product tail
    atoms = [(0, "xy"), (1, "z")]
    rels = [e, g]
    plan, _ = plan_for(atoms, rels, "xyz")
    assert product_tail(plan) == 1
    expected = brute_join(atoms, rels, "xyz")
    plan, roots = plan_for(atoms, rels, "xyz")
    assert set(run(plan, roots, intersect)) == expected     # no emit_product: per-key loop
    got = []

    def emit_product(binding, levels):
        for combo in itertools.product(*levels):
            got.append((*binding[:1], *combo))

    plan, roots = plan_for(atoms, rels, "xyz", emit_product=emit_product)
    assert run(plan, roots, intersect) == []
    assert sorted(got) == sorted(expected) and len(got) == len(expected)
    # q(x) :- e(x, y), g(z).  existential product tail: one emission per x
    plan, roots = plan_for(atoms, rels, "xyz", needed=1)
    out = run(plan, roots, intersect)
    assert [b[:1] for b in out] == sorted(brute_join(atoms, rels, "x"))
    # q(x, w, z) :- e(x, y), f(y, w), g(z).  order x, y, w, z: the tail is w, z
    atoms = [(0, "xy"), (2, "yw"), (1, "z")]
    rels = [e, g, f]
    plan, roots = plan_for(atoms, rels, "xywz")
    assert product_tail(plan) == 2
    got.clear()
    plan, roots = plan_for(atoms, rels, "xywz", emit_product=lambda b, levels: got.extend(
        (*b[:2], *combo) for combo in itertools.product(*levels)))
    assert run(plan, roots, intersect) == []
    assert sorted(got) == sorted(brute_join(atoms, rels, "xywz")) and len(got) == len(set(got))
    for needed, out_vars in [(1, "x"), (2, "xy")]:
        plan, roots = plan_for(atoms, rels, "xywz", needed=needed)
        out = [b[:needed] for b in run(plan, roots, intersect)]
        assert out == sorted(brute_join(atoms, rels, out_vars))
    # order y, x, w, z: y joins e and f; x, w, z each come from one atom (e again is fine)
    plan, _ = plan_for(atoms, rels, "yxwz")
    assert product_tail(plan) == 1
    # a check inside the tail ends it
    plan, _ = plan_for(atoms, rels, "xywz", checks=[[], [], [], [lambda b: True], []])
    assert product_tail(plan) is None


def test_empty_or_missing_roots():
    r = build([(1, 2)], (0, 1))
    plan = JoinPlan(depth=2, participants=[[0, 1], [0, 1]])
    for roots in ([r, None], [r, TrieNode()], [TrieNode(), r]):
        for intersect in (hash_intersect, leapfrog_intersect):
            assert run(plan, roots, intersect) == []
    assert run(JoinPlan(depth=0, participants=[]), [], hash_intersect) == [()]


@st.composite
def conjunctive_queries(draw):
    """Random atoms (arity 1..3) over up to four variables, their relations, and an order."""
    n_atoms = draw(st.integers(1, 3))
    atoms, rels = [], []
    for a in range(n_atoms):
        arity = draw(st.integers(1, 3))
        atoms.append((a, "".join(draw(st.lists(st.sampled_from("xyzw"),
                                               min_size=arity, max_size=arity)))))
        rels.append(draw(st.sets(st.tuples(*[st.integers(0, 3)] * arity), max_size=10)))
    used = sorted({v for _, vars_ in atoms for v in vars_})
    order = "".join(draw(st.permutations(used)))
    needed = draw(st.integers(0, len(order)))
    return atoms, rels, order, needed


@pytest.mark.parametrize("intersect", INTERSECTIONS)
@settings(max_examples=examples(250), deadline=None)
@given(conjunctive_queries())
def test_random_conjunctive_queries(intersect, query):
    """Any join (repeats included) projected on the needed prefix of the order; each
    projected tuple exactly once, with per-key, bulk (emit_last) and product emission."""
    atoms, rels, order, needed = query
    expected = sorted(brute_join(atoms, rels, order[:needed]))
    plan, roots = plan_for(atoms, rels, order, needed=needed)
    out = [b[:needed] for b in run(plan, roots, intersect)]
    assert out == expected                      # ascending, each exactly once

    bulk = []
    plan, roots = plan_for(atoms, rels, order, needed=needed,
                           emit_last=lambda b, keys: bulk.extend((*b[:-1], k) for k in keys))
    bulk.extend(b[:needed] for b in run(plan, roots, intersect))
    assert sorted(bulk) == expected and len(bulk) == len(expected)

    product = []

    def emit_product(b, levels):
        tail = needed - len(levels)
        product.extend((*b[:tail], *combo) for combo in itertools.product(*levels))

    plan, roots = plan_for(atoms, rels, order, needed=needed, emit_product=emit_product)
    product.extend(b[:needed] for b in run(plan, roots, intersect))
    assert sorted(product) == expected and len(product) == len(expected)


# --------------------------------------------------------------------------- recording iterators on a region

bounds = st.one_of(st.none(), st.integers(-22, 22))


def _inside(key, start, end) -> bool:
    return (start is None or start <= key) and (end is None or key <= end)


@FAST
@given(set_families, bounds, bounds)
def test_recording_leapfrog_on_a_region_is_sensitive_to_every_change_that_matters(sets, lo, hi):
    """The leapfrog over recording iterators opened on [lo, hi] (a change-oracle region) yields the
    intersection inside the region, each reported interval runs forward, and the trace is
    sensitive to every one-key change that would change the result: a key of the region that all
    sets but one hold lies in a reported interval of that one (inserting it adds an answer), and
    an answer lies in a reported interval of every set (erasing it removes the answer)."""
    seen = []

    def record(i, start, end):
        seen.append((i, start, end))
    expected = [k for k in brute_intersection(sets) if _inside(k, lo, hi)]
    got = list(leapfrog_recording(sets, lo, hi, record))     # opened one by one, as the maintainer does
    assert got == expected
    assert all(start is None or end is None or start <= end for _, start, end in seen)

    def sensitive(i, key) -> bool:
        return any(j == i and _inside(key, start, end) for j, start, end in seen)
    for i in range(len(sets)):
        others = [set(keys) for j, keys in enumerate(sets) if j != i]
        for key in range(-22, 23):
            if not _inside(key, lo, hi):
                continue
            if key not in sets[i] and all(key in o for o in others):
                assert sensitive(i, key), (i, key)
            if key in expected:
                assert sensitive(i, key), (i, key)


@FAST
@given(sorted_sets, bounds, bounds, st.lists(st.integers(-22, 22), max_size=8))
def test_level_iterator_keeps_the_contract(keys, lo, hi, targets):
    """A LevelIterator opened at lo: seek(k) lands on the least key >= k (or ends), never moves
    back, and a key past hi is the end."""
    it = LevelIterator(keys, lo, hi)
    inside = [k for k in keys if _inside(k, lo, hi)]
    assert it.at_end() if not inside else it.key() == inside[0]
    position = it.pos
    for target in sorted(targets):
        if it.at_end():
            break
        it.seek(target)
        assert it.pos >= position
        position = it.pos
        assert it.at_end() or it.key() >= target
        expected = [k for k in inside if k >= target]
        assert it.at_end() if not expected else (not it.at_end() and it.key() == expected[0])
