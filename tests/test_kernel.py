"""The compiled leapfrog kernel against its uncompiled twin against naive joins in plain Python.

The twin is the same source, ``lftj/kernel.py``, loaded in this process by
``lftj.kernels.load("python")`` (importlib from the file, so the plain interpreter runs it);
the compiled one is the extension module the install built. Joins are random atoms (1-4, arity
1-3) over random variable orders with random relations (empty, one row, duplicate rows before the
dedup, negative numbers, the int64 extremes); triangles and cartesian products also by name.
"""

import doctest
import os
import re
import subprocess
import sys
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lftj import kernels
from lftj.csr import CsrTrie, distinct_rows
from lftj.kernel_input import check_trie, checked_trie
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

COMPILED, TWIN = kernels.load("compiled"), kernels.load("python")
BOTH = pytest.mark.parametrize("k", [COMPILED, TWIN], ids=["compiled", "twin"])
LOW, HIGH = -2**63, 2**63 - 1
values = st.one_of(st.integers(-3, 3), st.sampled_from([LOW, LOW + 1, HIGH - 1, HIGH]))


def relation(arity: int, max_rows: int = 8):
    return st.lists(st.tuples(*[values] * arity), max_size=max_rows)


@st.composite
def joins(draw):
    """-> (n_vars, [(the variable of each column, rows)]): every variable bound by some atom."""
    n_vars = draw(st.integers(1, 4))
    atoms = []
    for _ in range(draw(st.integers(1, 4))):
        arity = draw(st.integers(1, min(3, n_vars)))
        columns = draw(st.permutations(range(n_vars)))[:arity]
        atoms.append((list(columns), draw(relation(arity))))
    unbound = sorted(set(range(n_vars)) - {v for cols, _ in atoms for v in cols})
    if unbound:
        atoms.append((unbound[:3], draw(relation(len(unbound[:3])))))
        atoms += [([v], draw(relation(1))) for v in unbound[3:]]
    return n_vars, atoms


def tries_of(atoms):
    """The plan and tries of a join: each atom's trie in the order of its columns' variables."""
    plan, tries = [], []
    for columns, rows in atoms:
        order = tuple(int(c) for c in np.argsort(columns))
        plan.append(sorted(columns))
        tries.append(CsrTrie.build(np.array(rows, dtype=np.int64).reshape(len(rows), len(columns)), order))
    return plan, tries


def kernel_join(k, n_vars: int, atoms, emit=None) -> list[tuple]:
    """The join by a kernel."""
    out = k.triejoin(n_vars, *tries_of(atoms), emit)
    assert out.dtype == np.int64 and out.shape[1] == (n_vars if emit is None else len(emit))
    return [tuple(r) for r in out.tolist()]


def naive_join(n_vars: int, atoms) -> list[tuple]:
    """Every binding of the variables that matches one row of every atom: nested loops."""
    results = set()
    for choice in product(*[set(rows) for _, rows in atoms]):
        binding = {}
        if all(binding.setdefault(v, x) == x for (columns, _), row in zip(atoms, choice)
               for v, x in zip(columns, row)):
            results.add(tuple(binding[v] for v in range(n_vars)))
    return sorted(results)


@settings(max_examples=examples(150), deadline=None)
@given(joins())
def test_compiled_equals_twin_equals_naive_join(join):
    expected = naive_join(*join)                 # sorted: the kernel emits in variable order
    assert kernel_join(COMPILED, *join) == expected
    assert kernel_join(TWIN, *join) == expected


@settings(max_examples=examples(150), deadline=None)
@given(joins().flatmap(lambda j: st.tuples(st.just(j), st.one_of(st.none(), st.lists(st.integers(0, j[0] - 1),
                                                                                     max_size=3)),
                                           st.integers(1, 5))))
def test_a_join_in_batches_gives_its_rows_in_order(case):
    # batches of at most `rows` rows, every one full but the last, together the whole join's rows
    (n_vars, atoms), emit, rows = case
    plan, tries = tries_of(atoms)
    for k in (COMPILED, TWIN):
        whole = k.triejoin(n_vars, plan, tries, emit)
        batches = list(k.triejoin_batches(n_vars, plan, tries, emit, rows))
        assert all(len(b) == rows for b in batches[:-1]) and all(0 < len(b) <= rows for b in batches)
        joined = np.concatenate(batches) if batches else np.zeros((0, whole.shape[1]), np.int64)
        assert joined.shape == whole.shape and joined.tolist() == whole.tolist()


OPS = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def compared_joins(draw):
    """-> (n_vars, atoms, compares): a join of :func:`joins` and up to three comparisons, each
    between two depths or a depth and a constant (on either side), signed or unsigned."""
    n_vars, atoms = draw(joins())
    depth = st.integers(0, n_vars - 1)
    compares = []
    for _ in range(draw(st.integers(0, 3))):
        sides = [draw(depth), draw(st.one_of(depth, values.map(lambda w: ("word", w))))]
        if draw(st.booleans()):
            sides.reverse()
        compares.append((draw(st.sampled_from(OPS)), *sides, draw(st.booleans())))
    return n_vars, atoms, compares


def passes(binding: tuple, compares) -> bool:
    """Whether a binding passes every comparison, decided in Python ints."""
    for op, left, right, unsigned in compares:
        a, b = (binding[s] if isinstance(s, int) else s[1] for s in (left, right))
        if unsigned:
            a, b = a % 2**64, b % 2**64
        if not {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]:
            return False
    return True


@settings(max_examples=examples(150), deadline=None)
@given(compared_joins(), st.integers(1, 5), st.integers(1, 9))
def test_comparisons_in_the_kernel_equal_the_naive_join_filtered(join, rows, steps):
    # x != y, x < 3, tested at the depth that binds them: the bindings that pass, in order; in
    # batches of at most `rows` rows made in at most `steps` steps, some of them empty, the same
    n_vars, atoms, compares = join
    expected = [b for b in naive_join(n_vars, atoms) if passes(b, compares)]
    plan, tries = tries_of(atoms)
    for k in (COMPILED, TWIN):
        assert [tuple(r) for r in k.triejoin(n_vars, plan, tries, None, compares).tolist()] == expected
        batches = list(k.triejoin_batches(n_vars, plan, tries, None, rows, compares, steps))
        assert all(len(b) <= rows for b in batches)
        assert [tuple(r) for b in batches for r in b.tolist()] == expected


@BOTH
@pytest.mark.parametrize("compare, message", [
    (("~", 0, 1, False), "op one of"),
    (("<", 0), "op, left, right, unsigned"),
    (("<", 0, 2, False), "depth 2, outside the 2 variable"),
    (("<", -1, 1, False), "depth -1, outside"),
    (("<", ("word", 1), ("word", 2), False), "has no variable"),
    (("<", 0, ("word", 2**63), False), "a depth or"),
    (("<", 0, 1.5, False), "a depth or"),
    (("<", True, 1, False), "a depth or"),
])
def test_a_malformed_comparison_is_a_value_error(k, compare, message):
    with pytest.raises(ValueError, match=message):
        k.triejoin(2, [[0, 1]], [edge_trie()], None, [compare])


@BOTH
@pytest.mark.parametrize("steps", [-1, 2.5, None])
def test_a_batch_s_steps_are_a_count(k, steps):
    with pytest.raises(ValueError, match="steps must be a count"):
        next(k.triejoin_batches(2, [[0, 1]], [edge_trie()], None, 4, (), steps))


@BOTH
@pytest.mark.parametrize("rows", [0, -1, 2.5, None])
def test_a_batch_holds_at_least_one_row(k, rows):
    with pytest.raises(ValueError, match="at least one row"):
        next(k.triejoin_batches(2, [[0, 1]], [edge_trie()], None, rows))


@settings(max_examples=examples(150), deadline=None)
@given(joins().flatmap(lambda j: st.tuples(st.just(j), st.lists(st.integers(0, j[0] - 1), max_size=4))))
def test_a_join_projected_in_the_kernel_is_the_projection_of_its_bindings(case):
    # emit: depths in any order, repeated or none; the deeper variables need one binding each
    # (the kernel leaps back), so compare the distinct rows, and no row may be missing
    (n_vars, atoms), emit = case
    expected = sorted({tuple(row[d] for d in emit) for row in naive_join(n_vars, atoms)})
    for k in (COMPILED, TWIN):
        got = kernel_join(k, n_vars, atoms, emit)
        assert sorted(set(got)) == expected
        assert len(got) <= len(naive_join(n_vars, atoms))


@BOTH
def test_an_emitted_depth_out_of_range_is_a_value_error(k):
    with pytest.raises(ValueError, match="outside the 2 variable"):
        k.triejoin(2, [[0, 1]], [edge_trie()], [0, 2])


@settings(max_examples=examples(40), deadline=None)
@given(relation(2, 25))
def test_triangles(edges):
    # tri(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).
    join = (3, [([0, 1], edges), ([1, 2], edges), ([2, 0], edges)])
    expected = naive_join(*join)
    assert kernel_join(COMPILED, *join) == expected == kernel_join(TWIN, *join)


@settings(max_examples=examples(40), deadline=None)
@given(relation(1), relation(2), relation(1))
def test_cartesian_products(a, b, c):
    # p(x, y, z, w) :- a(x), b(w, y), c(z).   no variable shared
    join = (4, [([0], a), ([3, 1], b), ([2], c)])
    expected = naive_join(*join)
    assert len(expected) == len(set(a)) * len(set(b)) * len(set(c))
    assert kernel_join(COMPILED, *join) == expected == kernel_join(TWIN, *join)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(relation(k, 15), st.permutations(range(k)))))
def test_a_built_trie_holds_its_rows_and_passes_the_checks(case):
    rows, order = case
    arity = len(order)
    trie = CsrTrie.build(np.array(rows, dtype=np.int64).reshape(len(rows), arity), tuple(order))
    check_trie("the trie", trie, arity)
    assert [tuple(r) for r in trie.rows().tolist()] == sorted({tuple(r[c] for c in order) for r in rows})


def edge_trie():
    return CsrTrie.build(np.array([(1, 2), (1, 3), (2, 3)]), (0, 1))


def broken(keys=None, offsets=None):
    good = edge_trie()
    return CsrTrie(tuple(good.keys if keys is None else keys), tuple(good.offsets if offsets is None else offsets))


I64 = np.int64
MALFORMED_TRIES = {
    "not monotone": broken(offsets=[np.array([0, 4, 3], I64)]),
    "must run from 0 to 3": broken(offsets=[np.array([0, 2, 4], I64)]),
    "needs 3": broken(offsets=[np.array([0, 3], I64)]),
    "1-D int64": broken(keys=[np.array([1.0, 2.0]), np.array([2, 3, 3], I64)]),
    "level(s)": broken(keys=[np.array([1, 2], I64)], offsets=[]),
    "keys[0] do not strictly ascend": broken(keys=[np.array([2, 1], I64), np.array([2, 3, 3], I64)]),
    "keys[1] do not strictly ascend within a node": broken(keys=[np.array([1, 2], I64), np.array([3, 2, 3], I64)]),
}


@BOTH
@pytest.mark.parametrize("message", MALFORMED_TRIES)
def test_a_malformed_trie_is_a_value_error(k, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        k.triejoin(2, [[0, 1]], [MALFORMED_TRIES[message]])


@pytest.mark.parametrize("message", MALFORMED_TRIES)
def test_a_malformed_trie_is_refused_when_it_is_checked_once_for_many_joins(message):
    with pytest.raises(ValueError, match=re.escape(message)):
        checked_trie("the trie", MALFORMED_TRIES[message], 2)


@settings(max_examples=examples(100), deadline=None)
@given(joins())
def test_a_join_over_tries_checked_once_is_the_same_join(join):
    # CheckedTrie: checked when made (the columnar evaluator's tries), not again per join
    n_vars, atoms = join
    plan, tries = tries_of(atoms)
    checked = [checked_trie("a trie", t, len(vs)) for t, vs in zip(tries, plan)]
    for k in (COMPILED, TWIN):
        assert k.triejoin(n_vars, plan, checked).tolist() == k.triejoin(n_vars, plan, tries).tolist()


@BOTH
def test_a_checked_trie_of_other_levels_than_the_atom_is_still_refused(k):
    with pytest.raises(ValueError, match="has 2 level"):
        k.triejoin(1, [[0]], [checked_trie("the trie", edge_trie(), 2)])


MALFORMED_PLANS = [
    ((2, [[0, 2]]), "binds variable 2, outside the 2 variable"),
    ((2, [[-1, 1]]), "binds variable -1"),
    ((3, [[1, 0]]), "must increase in the variable order"),
    ((3, [[0, 0]]), "no repeated variable"),
    ((3, [[0, 1]]), "variable 2 is bound by no atom"),
    ((0, [[0, 1]]), "at least one variable"),
    ((2, [[0, 1], [0, 1]]), "2 atom\\(s\\) but 1 trie"),
    ((1, [[0]]), "has 2 level\\(s\\)"),
]


@BOTH
@pytest.mark.parametrize("plan, message", MALFORMED_PLANS)
def test_a_malformed_plan_is_a_value_error(k, plan, message):
    with pytest.raises(ValueError, match=message):
        k.triejoin(plan[0], plan[1], [edge_trie()])


@BOTH
def test_a_join_runs_only_on_checked_input(k):
    with pytest.raises(TypeError, match="checked JoinInput"):
        k.Triejoin(type("Unchecked", (), {})())


@pytest.mark.skipif(os.environ.get("DATALOG_KERNEL_CHECKS") != "1", reason="make test-kernel-checked only")
def test_the_bounds_checked_build_is_the_one_that_runs():
    # a JoinInput made by hand, past join_input's checks: its offsets run to 100 over 2 keys. The
    # bounds-checked build raises IndexError there, where the normal one would read past the array
    # (on a warm tree, make test-kernel-checked once ran its tests on the normal build)
    from lftj.kernel_input import JoinInput
    forged = JoinInput(2, np.array([0, 1], I64), np.array([1, 2], I64), np.array([0, 1, 2], I64),
                       np.array([0, 100], I64), np.array([0, -1], I64), np.array([1, 0], np.uint8),
                       np.array([0, 1], I64), np.array([0, 1, 2], I64))
    with pytest.raises(IndexError):
        COMPILED.Triejoin(forged).run()


@BOTH
def test_the_kernel_doctests(k):
    result = doctest.testmod(k, verbose=False)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("choice, expected", [(None, "compiled"), ("compiled", "compiled"), ("python", "python")])
def test_the_normal_install_runs_the_compiled_kernel(choice, expected):
    env = {k: v for k, v in os.environ.items() if k != "DATALOG_KERNEL"}
    if choice:
        env["DATALOG_KERNEL"] = choice
    which = subprocess.run([sys.executable, "-c", "from lftj import kernels; print(kernels.which())"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert which.stdout.strip() == expected, which.stderr


def test_an_unknown_kernel_choice_is_refused():
    env = dict(os.environ, DATALOG_KERNEL="numba")
    run = subprocess.run([sys.executable, "-c", "import lftj.kernels"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode != 0 and "DATALOG_KERNEL='numba' is not a kernel" in run.stderr


@pytest.mark.parametrize("order", [(0, 0), (2,), (), (-1, 0)])
def test_a_trie_of_a_column_order_that_is_not_one_is_a_value_error(order):
    with pytest.raises(ValueError, match="is not a list of distinct columns of 2"):
        CsrTrie.build(np.array([(1, 2)]), order)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: relation(k, 20)), st.sampled_from([1, 2**31, 2**62, 2**63 - 1]))
def test_distinct_rows_equal_sorted_sets(rows, scale):
    # scale widens the columns' ranges across the packed key's limit (one int64 key per row) and back
    a = np.array(rows, dtype=np.int64).reshape(len(rows), -1) if rows else np.zeros((0, 1), np.int64)
    wide = np.where(np.abs(a) <= 3, a * np.int64(scale // 3 if scale > 3 else 1), a)
    expected = sorted({tuple(r) for r in wide.tolist()})
    assert [tuple(r) for r in distinct_rows(wide).tolist()] == expected


@pytest.mark.parametrize("rows", [
    [(5, 0), (5, 2**63 - 1), (5, -1)],                   # column 0 constant, column 1 wider than 2**63
    [(0, -2**62), (0, 2**62 - 1), (0, 0)],               # the ranges multiply to exactly 2**63
    [(1, -2**63), (0, 2**63 - 1), (1, 2**63 - 1), (0, -2**63)],
])
def test_distinct_rows_at_the_packed_keys_limit(rows):
    assert [tuple(r) for r in distinct_rows(np.array(rows, dtype=np.int64)).tolist()] == sorted(set(rows))
