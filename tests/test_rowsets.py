"""The compiled set operations on sorted rows (:mod:`lftj.rowsets`) against their uncompiled twin
against Python sets, and the sorted runs (:mod:`lftj.runs`) built on them.

The twin is the same source, ``lftj/rowsets.py``, loaded by ``lftj.kernels.load("python", "rowsets")``.
Rows are random (empty, one row, duplicates before the dedup, the int64 extremes), of 1-3 columns.
"""

import doctest
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lftj import kernels
from lftj.csr import distinct_rows
from lftj.kernel_input import SortedRows, sorted_rows
from lftj.runs import Runs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

COMPILED, TWIN = kernels.load("compiled", "rowsets"), kernels.load("python", "rowsets")
BOTH = pytest.mark.parametrize("k", [COMPILED, TWIN], ids=["compiled", "twin"])
I64 = np.int64
LOW, HIGH = -2**63, 2**63 - 1
values = st.one_of(st.integers(-3, 3), st.sampled_from([LOW, LOW + 1, HIGH - 1, HIGH]))


def relation(arity: int, max_rows: int = 8):
    return st.lists(st.tuples(*[values] * arity), max_size=max_rows)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(relation(k, 12), relation(k, 12), st.just(k))))
def test_set_operations_equal_python_sets(case):
    a_rows, b_rows, arity = case
    a, b = (distinct_rows(np.array(r, dtype=np.int64).reshape(len(r), arity)) for r in (a_rows, b_rows))
    sa, sb = set(a_rows), set(b_rows)
    for k in (COMPILED, TWIN):
        assert [tuple(r) for r in k.union(a, b).tolist()] == sorted(sa | sb)
        assert [tuple(r) for r in k.difference(a, b).tolist()] == sorted(sa - sb)
        assert [tuple(r) for r in k.intersection(a, b).tolist()] == sorted(sa & sb)


@BOTH
@pytest.mark.parametrize("a, b, message", [
    (np.array([1, 2], I64), np.zeros((0, 1), I64), "2-D int64"),
    (np.array([[1.5]]), np.zeros((0, 1), I64), "2-D int64"),
    (np.array([[1, 2]], I64), np.array([[1]], I64), "1 column"),
    (np.array([[2], [1]], I64), np.zeros((0, 1), I64), "not sorted and distinct"),
    (np.array([[1]], I64), np.array([[1], [1]], I64), "not sorted and distinct"),
])
def test_malformed_rows_are_a_value_error(k, a, b, message):
    for operation in (k.union, k.difference, k.intersection):
        with pytest.raises(ValueError, match=message):
            operation(a, b)


def rows_of(rows, arity: int) -> np.ndarray:
    return distinct_rows(np.array(rows, dtype=np.int64).reshape(len(rows), arity))


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(relation(k, 30), st.lists(relation(k, 30), max_size=4),
                                                     st.just(k))))
def test_absent_and_merged_equal_python_sets(case):
    # absent: the rows of a in no run, by galloping in each run; merged: the union of two runs
    a_rows, runs_rows, arity = case
    a = rows_of(a_rows, arity)
    runs = [sorted_rows("a run", rows_of(r, arity)) for r in runs_rows]
    known = set().union(*map(set, runs_rows))
    for k in (COMPILED, TWIN):
        assert [tuple(r) for r in k.absent(a, runs).tolist()] == sorted(set(a_rows) - known)
        if len(runs) >= 2:
            both = k.merged(runs[0], runs[1])
            assert isinstance(both, SortedRows)
            assert [tuple(r) for r in both.rows.tolist()] == sorted(set(runs_rows[0]) | set(runs_rows[1]))


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(relation(k, 10), st.lists(relation(k, 40), max_size=8),
                                                     relation(k, 40), st.just(k))))
def test_runs_hold_the_rows_added_in_geometric_runs(case):
    # each round's new rows (not known yet) join as a run; the runs stay disjoint, sorted, each at
    # least twice the next; absent() and rows() are the set's difference and sorted contents
    first, rounds, probe, arity = case
    known = Runs(rows_of(first, arity))
    expected = set(first)
    for derived in rounds:
        new = known.absent(rows_of(derived, arity))
        assert [tuple(r) for r in new.tolist()] == sorted(set(derived) - expected)
        known.add(new)
        expected |= set(derived)
        sizes = known.sizes()
        assert all(size >= 2 * after for size, after in zip(sizes, sizes[1:])) and sum(sizes) == len(expected)
    assert [tuple(r) for r in known.absent(rows_of(probe, arity)).tolist()] == sorted(set(probe) - expected)
    assert [tuple(r) for r in known.rows().tolist()] == sorted(expected) and len(known.sizes()) <= 1


ROOM_SCRIPT = """
import resource, sys, numpy as np
from lftj import runs
vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
if sys.argv[1] == "limited":             # 400 MB more address space: 16x the union (512 MB) is refused
    resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), vm + (400 << 20)))
rows = np.arange(4_000_000, dtype=np.int64).reshape(-1, 2) * 2      # 2M rows, 32 MB
known = runs.Runs(rows[:1000])
known.add(rows[1000:])
known.add(rows[:1000] + 1)
got = known.rows()
print(round(len(known.buffer) / len(got)), len(got), bool((got[1:] > got[:-1]).any(axis=1).all()))
"""


@pytest.mark.parametrize("address_space, room", [("unlimited", "16"), ("limited", "4")])
def test_the_first_runs_room_is_smaller_where_the_address_space_is_limited(address_space, room):
    # 16x the rows is mapped where the system allows it (the room costs address space only);
    # under a limit the room is 4x, and the rows are the same
    done = subprocess.run([sys.executable, "-c", ROOM_SCRIPT, address_space], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == [room, "2001000", "True"], done.stdout + done.stderr


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(relation(k, 30), relation(k, 30), st.integers(0, 5), st.just(k))))
def test_merged_into_writes_the_union_of_disjoint_runs_in_place(case):
    # the rows of a at the buffer's front, b's (those not in a) merged in from the back
    a_rows, b_rows, room, arity = case
    b_rows = [r for r in b_rows if r not in set(a_rows)]
    for k in (COMPILED, TWIN):
        a, b = rows_of(a_rows, arity), rows_of(b_rows, arity)
        buffer = np.full((len(a) + len(b) + room, arity), 7, np.int64)
        buffer[:len(a)] = a
        union = k.merged_into(buffer, SortedRows(buffer[:len(a)]), SortedRows(b))
        assert isinstance(union, SortedRows) and (not len(union) or np.shares_memory(union.rows, buffer))
        assert [tuple(r) for r in union.rows.tolist()] == sorted(set(a_rows) | set(b_rows))
        assert (buffer[len(union):] == 7).all()                  # nothing written past the union


@BOTH
def test_merged_into_refuses_what_it_cannot_merge_in_place_and_changes_nothing(k):
    buffer = np.zeros((6, 2), np.int64)
    buffer[:2] = [[1, 1], [3, 3]]
    a = SortedRows(buffer[:2])
    for args, message in [
            ((buffer, a, SortedRows(np.array([[3, 3]], I64))), "share a row"),
            ((buffer, a, SortedRows(np.array([[i, i] for i in range(4, 9)], I64))), "holds 6 rows, not 2 [+] 5"),
            ((buffer, SortedRows(np.array([[1, 1], [3, 3]], I64)), SortedRows(np.array([[2, 2]], I64))), "first rows"),
            ((buffer, a, SortedRows(buffer[3:4])), "must not be in the buffer"),
            ((buffer, a, SortedRows(np.array([[2]], I64))), "2 column"),
            ((buffer.astype(np.int32), a, SortedRows(np.array([[2, 2]], I64))), "int64"),
            ((buffer, a, np.array([[2, 2]], I64)), "two SortedRows")]:
        before = buffer.copy()
        with pytest.raises(ValueError, match=message):
            k.merged_into(*args)
        assert (buffer == before).all(), message


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 2).flatmap(lambda k: st.tuples(relation(k, 6), st.lists(st.tuples(relation(k, 40), st.booleans()),
                                                                             max_size=10), st.just(k))))
def test_runs_read_whole_between_additions_hold_every_row(case):
    # rows() between rounds (a trie of the relation) merges into the first run's buffer in place;
    # what it returns is right when returned, and later rounds go on in the same buffer
    first, rounds, arity = case
    known, expected = Runs(rows_of(first, arity)), set(first)
    for derived, read in rounds:
        known.add(known.absent(rows_of(derived, arity)))
        expected |= set(derived)
        if read:
            assert [tuple(r) for r in known.rows().tolist()] == sorted(expected)
    whole = known.rows()
    assert [tuple(r) for r in whole.tolist()] == sorted(expected)
    assert known.buffer is None or not len(whole) or np.shares_memory(whole, known.buffer)


@BOTH
@pytest.mark.parametrize("a, runs, message", [
    (np.array([[2], [1]], I64), [], "not sorted and distinct"),
    (np.array([[1.0]]), [], "2-D int64"),
    (np.array([[1]], I64), [np.array([[1]], I64)], "must be SortedRows"),      # an unchecked array
    (np.array([[1]], I64), [SortedRows(np.array([[1, 2]], I64))], "of 1 column"),
])
def test_absent_takes_sorted_rows_and_checked_runs_only(k, a, runs, message):
    with pytest.raises(ValueError, match=message):
        k.absent(a, runs)


@BOTH
def test_merged_takes_two_checked_runs_of_one_width(k):
    one = sorted_rows("one", np.array([[1]], I64))
    for a, b in ((one, np.array([[2]], I64)), (one, sorted_rows("two", np.array([[1, 2]], I64)))):
        with pytest.raises(ValueError, match="two SortedRows of as many columns"):
            k.merged(a, b)
    with pytest.raises(ValueError, match="not sorted and distinct"):
        sorted_rows("the new rows", np.array([[3], [3]], I64))


@BOTH
def test_the_rowsets_doctests(k):
    result = doctest.testmod(k, verbose=False)
    assert result.attempted > 0 and result.failed == 0
