"""The compiled radix sort (``lftj.radix``) against its uncompiled twin against ``np.unique``.

Random int64 arrays: empty, one value, many duplicates, negative values, the int64 extremes (whose
offsets from the least value need all 64 bits), narrow ranges (one pass) and wide ones (eight).
"""

import doctest

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lftj import csr, kernels
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

COMPILED, TWIN = kernels.load("compiled", "radix"), kernels.load("python", "radix")
BOTH = pytest.mark.parametrize("r", [COMPILED, TWIN], ids=["compiled", "twin"])
LOW, HIGH = -2**63, 2**63 - 1
values = st.one_of(st.integers(-3, 3), st.integers(0, 2**20), st.integers(LOW, HIGH),
                   st.sampled_from([LOW, LOW + 1, HIGH - 1, HIGH]))


@BOTH
@settings(max_examples=examples(400), deadline=None)
@given(st.lists(values, max_size=60), st.booleans())
def test_sorted_distinct_is_numpys_unique(r, keys, overwrite):
    a = np.array(keys, dtype=np.int64)
    before = a.copy()
    out = r.sorted_distinct(a, overwrite=overwrite)
    assert out.dtype == np.int64 and out.tolist() == sorted(set(keys))
    if not overwrite:
        assert a.tolist() == before.tolist()


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 64), st.integers(0, 3000), st.integers(0, 2**32))
def test_every_width_of_keys_on_the_compiled_sort(bits, n, seed):
    """Larger arrays than the twin can take, one width of offsets at a time (1 to 8 passes)."""
    rng = np.random.default_rng(seed)
    low = int(rng.integers(LOW, HIGH - (2**bits - 1), endpoint=True))
    a = (rng.integers(0, 2**bits, n, dtype=np.uint64, endpoint=False) + np.uint64(low % 2**64)).view(np.int64)
    assert COMPILED.sorted_distinct(a).tolist() == np.unique(a).tolist()


@pytest.mark.parametrize("bits", range(0, 65))
def test_digits_cover_the_bits_in_at_most_eight_passes(bits):
    digit, passes = COMPILED.digits(bits)
    assert digit * passes >= bits and passes <= 8 and 1 <= digit <= 16


def test_a_read_only_or_strided_array_is_copied_not_written():
    a = np.array([3, 1, 2, 1], dtype=np.int64)
    a.flags.writeable = False
    assert COMPILED.sorted_distinct(a, overwrite=True).tolist() == [1, 2, 3]
    b = np.array([9, 0, 4, 0, 9, 0], dtype=np.int64)[::2]
    assert COMPILED.sorted_distinct(b, overwrite=True).tolist() == [4, 9]
    assert b.tolist() == [9, 4, 9]


@BOTH
@pytest.mark.parametrize("bad", [np.zeros(3, np.int32), np.zeros((2, 2), np.int64), [1, 2], np.zeros(2)])
def test_anything_but_a_1d_int64_array_is_a_value_error(r, bad):
    with pytest.raises(ValueError, match="1-D int64 array"):
        r.sorted_distinct(bad)


def test_distinct_rows_sorts_by_the_compiled_sort_here():
    """The install compiles it, and ``distinct_rows`` then takes it (else numpy's sort)."""
    assert csr.RADIX
    rows = np.array([[2, 7], [1, 5], [2, 6], [1, 5], [-2**40, 3]])
    assert csr.distinct_rows(rows).tolist() == [[-2**40, 3], [1, 5], [2, 6], [2, 7]]


@BOTH
def test_the_radix_doctests(r):
    result = doctest.testmod(r, verbose=False)
    assert result.attempted >= 1 and result.failed == 0
