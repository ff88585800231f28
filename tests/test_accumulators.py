"""The aggregate accumulators of incremental maintenance against their slow twins.

Each structure replays random sequences of adds and removes and, after every
step, must agree with the aggregate recomputed from the current multiset:
ScanTree.scan ↔ a sorted filter and reduce, MinMaxAggregate ↔ min/max per group,
ExactSum ↔ math.fsum (and the exact Fraction sum, rounded once), IntSum ↔ sum,
Count ↔ len, Mean ↔ sum / len.

Decisions on nan and inf (see ExactSum): nan if any nan or both infinities are
present, else the infinity present; a finite sum beyond the float range is ±inf;
an exact zero is +0.0. MinMaxAggregate takes no nan (min/max of nan is order-dependent).
"""

import math
import operator
import sys
from fractions import Fraction
from functools import reduce

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance.exact_sum import Count, ExactSum, IntSum, Mean, _to_float, _to_scaled
from maintenance.scan_tree import BOTTOM, TOP, MinMaxAggregate, ScanTree
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

INF, NAN, DBL_MAX, TINY = math.inf, math.nan, sys.float_info.max, 5e-324


def same(a, b) -> bool:
    """Equal floats, telling 0.0 from -0.0 and treating nan as equal to nan."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b and type(a) is type(b)


def operations(values, max_size=40):
    """(add?, value, which present contribution to remove) triples."""
    return st.lists(st.tuples(st.booleans(), values, st.integers(0, 1 << 16)), max_size=max_size)


def replay(accumulator, ops, check) -> None:
    """Apply ops (a remove takes a present contribution) and check after every step."""
    present: list = []
    check(accumulator, present)
    for is_add, value, pick in ops:
        if is_add or not present:
            accumulator.add(value)
            present.append(value)
        else:
            accumulator.remove(present.pop(pick % len(present)))
        check(accumulator, present)


# ---------------------------------------------------------------- scan tree

def scan_twin(records: dict, op, lo, hi):
    """⊕ of the values with lo <= key <= hi, in key order, by a linear filter."""
    values = [v for k, v in sorted(records.items()) if lo <= k <= hi]
    return reduce(op, values) if values else None


OPS = {"min": min, "max": max, "add": operator.add, "concat": operator.add}
KEYS = st.tuples(st.integers(0, 6), st.integers(0, 6))


def value_for(name: str, n: int):
    return chr(ord("a") + n % 26) if name == "concat" else n


@settings(max_examples=examples(300))
@given(st.sampled_from(sorted(OPS)), st.lists(st.tuples(st.booleans(), KEYS, st.integers(-50, 50))),
       st.lists(st.tuples(KEYS, KEYS), min_size=1, max_size=5))
def test_scan_tree_matches_linear_scan(name, ops, intervals):
    op, tree, records = OPS[name], ScanTree(OPS[name]), {}
    for is_insert, key, n in ops:
        if is_insert or not records:
            tree.insert(key, value_for(name, n))
            records[key] = value_for(name, n)
        else:
            victim = sorted(records)[n % len(records)]
            assert tree.remove(victim) == records.pop(victim)
        tree.check()
        assert list(tree) == sorted(records.items()) and len(tree) == len(records)
        for lo, hi in intervals:
            assert tree.scan(lo, hi) == scan_twin(records, op, lo, hi)
            group = (lo[0], BOTTOM), (lo[0], TOP)
            assert tree.scan(*group) == scan_twin(records, op, *group)


def test_scan_tree_paper_example():
    """maxsales[region] = maxtot <- agg<<maxtot = max(tot)>> sales[region, store] = tot. (§3.1)"""
    sales = [1000, 1500, 7300, 8000, 15000, 2900, 3500, 1440, 3300, 1245, 7024, 5510, 9000,
             325, 4000, 5300]
    regions = [1] * 5 + [2] * 8 + [3] * 3
    tree = ScanTree(max)
    for store, (region, tot) in enumerate(zip(regions, sales), start=1):
        tree.insert((region, store), tot)
    assert [tree.scan((r, BOTTOM), (r, TOP)) for r in (1, 2, 3, 4)] == [15000, 9000, 5300, None]
    assert tree.scan((2, 7), (2, 10)) == 3500


def test_scan_tree_insert_replaces_and_remove_of_absent_key_raises():
    tree = ScanTree(operator.add)
    tree.insert("k", 1)
    tree.insert("k", 5)
    assert len(tree) == 1 and tree.scan("a", "z") == 5 and tree.get("k") == 5
    with pytest.raises(KeyError):
        tree.remove("absent")
    assert tree.scan("z", "a") is None      # an empty interval


def test_scan_tree_work_is_logarithmic():
    """Sorted inserts stay balanced, and a scan or update calls ⊕ O(height) times, not O(n)."""
    calls = 0

    def counted_add(a, b):
        nonlocal calls
        calls += 1
        return a + b

    n = 1 << 12
    tree = ScanTree(counted_add)
    for key in range(n):
        tree.insert(key, 1)
    height = tree.height()
    assert height <= 4 * math.log2(n)
    for lo, hi in [(0, n), (1, n - 2), (n // 3, n // 2), (17, 17)]:
        calls = 0
        assert tree.scan(lo, hi) == len(range(lo, min(hi, n - 1) + 1))
        assert calls <= 4 * height + 2
    calls = 0
    tree.remove(n // 2)
    tree.insert(n // 2, 1)
    assert calls <= 2 * 4 * height


# ---------------------------------------------------------------- min / max aggregate

NO_NAN = st.one_of(st.integers(-5, 5).map(float),
                   st.floats(allow_nan=False), st.sampled_from([0.0, -0.0, TINY, -INF, INF]))


@settings(max_examples=examples(300))
@given(st.sampled_from(["min", "max"]),
       st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 5), NO_NAN),
                max_size=60))
def test_min_max_aggregate_matches_recomputation(kind, ops):
    aggregate, contributions = MinMaxAggregate(kind), {}      # (group, witness) -> value
    for is_insert, g, w, value in ops:
        key = ((g,), (w,))
        if key in contributions and is_insert:
            continue
        if key in contributions:
            aggregate.erase(*key, contributions.pop(key))
        else:
            aggregate.insert(*key, value)
            contributions[key] = value
        for group in [(h,) for h in range(4)]:
            values = [v for (gr, _), v in contributions.items() if gr == group]
            expected = (min if kind == "min" else max)(values) if values else None
            assert aggregate.value(group) == expected and aggregate.count(group) == len(values)


def test_min_max_equal_values_from_different_witnesses():
    """Erasing one of two equal minima keeps the other."""
    low = MinMaxAggregate("min")
    low.insert(("a",), (1,), 3)
    low.insert(("a",), (2,), 3)
    low.insert(("a",), (3,), 7)
    low.insert(("b",), (1,), 1)
    low.erase(("a",), (1,), 3)
    assert (low.value(("a",)), low.count(("a",))) == (3, 2)
    low.erase(("a",), (2,), 3)
    assert low.value(("a",)) == 7 and low.value(("b",)) == 1


def test_min_max_contract_errors():
    high = MinMaxAggregate("max")
    high.insert((1,), (1,), 5)
    with pytest.raises(ValueError, match="already contributes"):
        high.insert((1,), (1,), 6)
    with pytest.raises(KeyError):
        high.erase((1,), (1,), 6)
    with pytest.raises(KeyError):
        high.erase((1,), (2,), 5)
    with pytest.raises(ValueError, match="unknown semigroup aggregate sum"):
        MinMaxAggregate("sum")


# ---------------------------------------------------------------- exact float sums

EDGES = [0.0, -0.0, 1.0, -1.0, 1e308, -1e308, DBL_MAX, -DBL_MAX, TINY, -TINY, 2.0 ** -1022,
         1e-300, 2.0 ** 53, 1.0 + 2.0 ** -52, 0.1, 1e16, -1e16, 2.0 ** 970, 2.0 ** 969]
FINITE = st.one_of(st.sampled_from(EDGES), st.floats(allow_nan=False, allow_infinity=False))
ANY_FLOAT = st.one_of(FINITE, st.sampled_from([NAN, INF, -INF]), st.floats())


def exact_twin(xs: list) -> float:
    """The documented decisions for nan and inf, else the exact Fraction sum rounded once."""
    if any(math.isnan(x) for x in xs) or (INF in xs and -INF in xs):
        return NAN
    if INF in xs or -INF in xs:
        return INF if INF in xs else -INF
    exact = sum(map(Fraction, xs), Fraction(0))
    try:
        return float(exact)
    except OverflowError:
        return INF if exact > 0 else -INF


def fsum_twin(xs: list) -> float | None:
    """math.fsum with the sum started at +0.0; None where fsum raises."""
    try:
        return math.fsum(xs) + 0.0
    except (OverflowError, ValueError):
        return None


def check_exact_sum(total: ExactSum, present: list) -> None:
    assert total.count == len(present)
    assert same(total.value(), exact_twin(present))
    fsum = fsum_twin(present)
    assert fsum is None or same(total.value(), fsum)


@settings(max_examples=examples(500))
@given(operations(FINITE))
def test_exact_sum_matches_fsum_on_finite_floats(ops):
    replay(ExactSum(), ops, check_exact_sum)


@settings(max_examples=examples(300))
@given(operations(ANY_FLOAT))
def test_exact_sum_matches_fsum_with_nan_and_inf(ops):
    replay(ExactSum(), ops, check_exact_sum)


@pytest.mark.parametrize("xs, expected", [
    ([1e308, -1e308, 1.0], 1.0),                        # cancellation
    ([1e308, 1.0, -1e308], 1.0),
    ([1e308, 1e308, -1e308], 1e308),                    # intermediate overflow: fsum raises
    ([1e308, 1e308], INF),                              # final overflow
    ([-DBL_MAX, -DBL_MAX], -INF),
    ([DBL_MAX, 2.0 ** 970], INF),                       # half an ulp above: ties to even, up
    ([DBL_MAX, 2.0 ** 970 - 2.0 ** 918], DBL_MAX),      # just under half an ulp
    ([2.0 ** 53, 1.0], 2.0 ** 53),                      # tie, even stays
    ([2.0 ** 53, 3.0], 2.0 ** 53 + 4),                  # tie, odd goes up
    ([2.0 ** 53, 1.0, TINY], 2.0 ** 53 + 2),            # above the tie
    ([TINY, TINY, TINY], 3 * TINY),                     # subnormals are exact
    ([2.0 ** -1022, -TINY], 2.0 ** -1022 - TINY),       # normal to subnormal
    ([0.1] * 10, 1.0),
    ([-0.0], 0.0), ([-0.0, -0.0], 0.0), ([1.0, -1.0], 0.0), ([], 0.0),   # zero is +0.0
    ([INF, 1.0], INF), ([-INF, DBL_MAX, DBL_MAX], -INF),
    ([INF, -INF], NAN), ([NAN, 1.0], NAN), ([NAN, INF], NAN),
])
def test_exact_sum_cases(xs, expected):
    total = ExactSum()
    for x in xs:
        total.add(x)
    assert same(total.value(), expected) and same(exact_twin(xs), expected)


def test_exact_sum_removes_specials_and_rejects_absent_ones():
    total = ExactSum()
    for x in (NAN, INF, -INF, 2.5):
        total.add(x)
    total.remove(NAN)
    assert math.isnan(total.value())                    # inf and -inf are both still there
    total.remove(-INF)
    assert total.value() == INF
    total.remove(INF)
    assert total.value() == 2.5 and total.count == 1
    with pytest.raises(ValueError, match="not a contribution"):
        total.remove(NAN)
    assert total.count == 1                             # a failed remove changes nothing
    total.remove(2.5)
    with pytest.raises(ValueError, match="ExactSum is empty"):
        total.remove(2.5)


def test_exact_sum_keeps_ints_exact():
    total = ExactSum()
    for x in (2 ** 53, 1, 1):
        total.add(x)
    assert total.value() == 2.0 ** 53 + 2


def assert_rounds_like_fraction(scaled: int) -> None:
    try:
        expected = float(Fraction(scaled, 1 << 1074))
    except OverflowError:
        expected = INF if scaled > 0 else -INF
    assert same(_to_float(scaled), expected)


@given(st.integers(-(1 << 2110), 1 << 2110))
def test_to_float_matches_fraction(scaled):
    assert_rounds_like_fraction(scaled)


@given(st.integers(1 << 52, (1 << 53) - 1), st.integers(1, 1030), st.sampled_from([-1, 0, 1]),
       st.booleans())
def test_to_float_rounds_ties_to_even(mantissa, shift, offset, negative):
    """scaled values at, just below and just above a halfway point."""
    scaled = (mantissa << shift) + (1 << (shift - 1)) + offset
    assert_rounds_like_fraction(-scaled if negative else scaled)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_scaled_round_trip(x):
    assert _to_float(_to_scaled(x)) == x
    assert Fraction(_to_scaled(x), 1 << 1074) == Fraction(x)


# ---------------------------------------------------------------- int sums, counts, means

INTS = st.one_of(st.integers(-10, 10), st.integers())


@settings(max_examples=examples(200))
@given(operations(INTS))
def test_int_sum_matches_sum(ops):
    def check(total, present):
        assert total.value() == sum(present) and total.count == len(present)

    replay(IntSum(), ops, check)


@given(operations(INTS))
def test_count_matches_len(ops):
    def check(count, present):
        assert count.value() == count.count == len(present)

    replay(Count(), ops, check)


@settings(max_examples=examples(300))
@given(operations(ANY_FLOAT))
def test_float_mean_matches_sum_over_count(ops):
    def check(mean, present):
        expected = exact_twin(present) / len(present) if present else None
        assert same(mean.value(), expected) and mean.count == len(present)
        fsum = fsum_twin(present)
        assert fsum is None or not present or same(mean.value(), fsum / len(present))

    replay(Mean(), ops, check)


@settings(max_examples=examples(200))
@given(operations(st.one_of(INTS, st.just(10 ** 400))))
def test_int_mean_matches_sum_over_count(ops):
    def check(mean, present):
        if not present:
            assert mean.value() is None
            return
        try:
            expected = sum(present) / len(present)
        except OverflowError:
            expected = INF if sum(present) > 0 else -INF
        assert same(mean.value(), expected)

    replay(Mean(IntSum()), ops, check)


def test_empty_accumulators():
    assert IntSum().value() == 0 and Count().value() == 0
    assert same(ExactSum().value(), 0.0) and Mean().value() is None
    for empty in (IntSum(), Count(), ExactSum(), Mean()):
        with pytest.raises(ValueError, match="empty"):
            empty.remove(1)
