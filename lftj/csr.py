"""A relation's rows as sorted int64 columns, and its tries as CSR levels.

The columnar twin of :mod:`lftj.trie`: where a :class:`lftj.trie.TrieNode` is a Python object per
node, a :class:`CsrTrie` is one pair of numpy arrays per level, the layout the compiled kernel
(:mod:`lftj.kernel`) joins over.

Invariants of a ``CsrTrie`` of arity ``k`` (``k >= 1``), built from distinct rows in one column
order:

  * ``keys[d]`` (``d < k``) is a 1-D int64 array: the keys of every node of level ``d``, node after
    node in the order of their parents, each node's keys strictly ascending. ``keys[0]`` is the
    root node: the distinct values of the first column of the order.
  * ``offsets[d]`` (``d < k - 1``) is a 1-D int64 array of ``len(keys[d]) + 1`` non-decreasing
    positions into ``keys[d + 1]``, from ``0`` to ``len(keys[d + 1])``: the key at
    ``keys[d][i]`` has the children ``keys[d + 1][offsets[d][i]:offsets[d][i + 1]]``. Built from
    distinct rows, every node has at least one child (the offsets strictly ascend).
  * A path from the root to a last-level key is one row, read in the trie's column order; the rows
    come out in lexicographic order. An empty relation has ``k`` empty levels and offsets ``[0]``.

>>> rows = np.array([[2, 7], [1, 5], [2, 6], [1, 5]])        # a duplicate row, unsorted
>>> distinct_rows(rows).tolist()
[[1, 5], [2, 6], [2, 7]]
>>> t = CsrTrie.build(rows, (0, 1))
>>> [k.tolist() for k in t.keys], [o.tolist() for o in t.offsets]
([[1, 2], [5, 6, 7]], [[0, 1, 3]])
>>> by_second = CsrTrie.build(rows, (1, 0))                  # the same relation, column 1 first
>>> [k.tolist() for k in by_second.keys], [o.tolist() for o in by_second.offsets]
([[5, 6, 7], [1, 2, 2]], [[0, 1, 2, 3]])
>>> t.rows().tolist() == distinct_rows(rows).tolist()
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lftj import radix
from lftj.choice import chosen

# the compiled radix sort, unless the process runs the uncompiled twins (lftj.choice)
RADIX = radix.COMPILED and chosen() != "python"


def as_rows(rows, arity: int | None = None) -> np.ndarray:
    """``rows`` as a C-contiguous 2-D int64 array (a list of tuples, or an array), checked."""
    a = np.asarray(rows, dtype=np.int64)
    if a.ndim == 1 and a.size == 0 and arity is not None:
        a = a.reshape(0, arity)
    if a.ndim != 2:
        raise ValueError(f"rows must be a 2-D array of int64, got {a.ndim} dimension(s)")
    if arity is not None and a.shape[1] != arity:
        raise ValueError(f"rows have {a.shape[1]} column(s), expected {arity}")
    return np.ascontiguousarray(a)


def distinct_rows(rows) -> np.ndarray:
    """The distinct rows of a 2-D int64 array, in lexicographic order (column 0 first).

    Sorted by one packed int64 key per row when the columns' ranges multiply to less than 2**63
    (the key's order is the rows' lexicographic order; sorted and made distinct by the compiled
    :func:`lftj.radix.sorted_distinct`, or ``np.sort`` where it is not compiled), by ``np.lexsort``
    of the columns otherwise."""
    a = as_rows(rows)
    if len(a) == 0 or a.shape[1] == 0:
        return a[:1] if a.shape[1] == 0 else a
    packing = _packing(a)
    if packing is None:
        a = a[np.lexsort(a.T[::-1])]             # lexsort's last key is its primary one
        fresh = np.ones(len(a), dtype=bool)
        fresh[1:] = np.any(a[1:] != a[:-1], axis=1)
        return np.ascontiguousarray(a[fresh])
    return _unpacked(sorted_distinct_keys(_packed(a, *packing)), *packing)   # no gather of rows


def sorted_distinct_keys(key: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D int64 array, ascending; ``key`` is overwritten."""
    if RADIX:
        return radix.sorted_distinct(key, overwrite=True)
    key.sort()                                   # (the radix twin's loops are per key in Python)
    fresh = np.ones(len(key), dtype=bool)
    fresh[1:] = key[1:] != key[:-1]
    return key[fresh]


def packed_key(a: np.ndarray) -> np.ndarray | None:
    """Per row, ``sum((a[:, c] - low[c]) * weight[c])``: mixed-radix digits in column order, so
    keys compare as the rows do; None when the ranges are too wide for an int64 key."""
    packing = _packing(a)
    return None if packing is None else _packed(a, *packing)


def _packing(a: np.ndarray) -> tuple[list[int], list[int]] | None:
    """Per column its least value and its digit's weight, or None when the ranges' product is 2**63 or more."""
    columns = [a[:, c] for c in range(a.shape[1])]       # (a column at a time: 6x faster than axis=0)
    low = [int(column.min()) for column in columns]
    spans = [int(column.max()) - lo + 1 for column, lo in zip(columns, low)]
    weights, weight = [], 1
    for span in reversed(spans):
        weights.append(weight)
        weight *= span
    return None if weight >= 2**63 else (low, weights[::-1])


def _packed(a: np.ndarray, low: list[int], weights: list[int]) -> np.ndarray:
    key = np.zeros(len(a), dtype=np.int64)
    for c, w in enumerate(weights):
        key += (a[:, c] - np.int64(low[c])) * np.int64(w)    # each term and sum below 2**63: exact
    return key


def _unpacked(key: np.ndarray, low: list[int], weights: list[int]) -> np.ndarray:
    """The rows of packed keys (the inverse of :func:`_packed`)."""
    out = np.empty((len(key), len(weights)), dtype=np.int64)
    rest = key
    for c, w in enumerate(weights):
        if w > 1:
            digit, rest = np.divmod(rest, np.int64(w))
        else:                                    # the last column, or those after it are constant
            digit, rest = rest, (np.zeros_like(rest) if c + 1 < len(weights) else None)
        np.add(digit, np.int64(low[c]), out=out[:, c])   # digit <= high - low: the sum is exact
    return out


def is_sorted_distinct(rows: np.ndarray) -> bool:
    """Whether the rows of a 2-D array strictly ascend in lexicographic order."""
    if len(rows) < 2:
        return True
    before, after = rows[:-1], rows[1:]
    differ = before != after
    first = np.argmax(differ, axis=1)                # the first column where they differ
    at = np.arange(len(before))
    return bool(np.all(differ.any(axis=1)) and np.all(before[at, first] < after[at, first]))


@dataclass(frozen=True)
class CsrTrie:
    """A trie as CSR levels: ``keys[d]`` per level and ``offsets[d]`` into level ``d + 1``
    (the invariants are in the module's docstring)."""

    keys: tuple[np.ndarray, ...]
    offsets: tuple[np.ndarray, ...]

    @property
    def arity(self) -> int:
        return len(self.keys)

    def __len__(self) -> int:
        """The number of rows (of last-level keys)."""
        return len(self.keys[-1])

    @classmethod
    def build(cls, rows, order: tuple[int, ...]) -> "CsrTrie":
        """The trie of ``rows`` (duplicates allowed) in column ``order`` (a permutation of a
        subset of the columns: the others are projected away)."""
        a = as_rows(rows)
        if not order or sorted(set(order)) != sorted(order) or not all(0 <= c < a.shape[1] for c in order):
            raise ValueError(f"column order {tuple(order)} is not a list of distinct columns of {a.shape[1]}")
        return cls.from_sorted(distinct_rows(a[:, list(order)]))

    @classmethod
    def from_sorted(cls, rows: np.ndarray) -> "CsrTrie":
        """The trie of rows already sorted and distinct, in their own column order."""
        n, k = rows.shape
        if k == 0:
            raise ValueError("a trie needs at least one column")
        # a row starts a new node at level d when it differs from the row before in columns 0..d
        # (a column at a time: 3x faster than one accumulate over the rows' 2-D array)
        starts: list[np.ndarray] = []
        for d in range(k):
            start = np.ones(n, dtype=bool)
            if n > 1:
                np.not_equal(rows[1:, d], rows[:-1, d], out=start[1:])
                if starts:
                    start |= starts[-1]
            starts.append(start)
        keys = tuple(np.ascontiguousarray(rows[:, d][starts[d]]) for d in range(k))
        offsets = tuple(_offsets(starts[d], starts[d + 1]) for d in range(k - 1))
        return cls(keys, offsets)

    def rows(self) -> np.ndarray:
        """The rows back, sorted, as a 2-D int64 array (the inverse of :meth:`from_sorted`)."""
        n = len(self)
        columns = [self.keys[-1]]
        index = np.arange(n)
        for d in range(self.arity - 2, -1, -1):
            index = np.searchsorted(self.offsets[d], index, side="right") - 1
            columns.append(self.keys[d][index])
        return np.ascontiguousarray(np.stack(columns[::-1], axis=1).reshape(n, self.arity))


def _offsets(parent_starts: np.ndarray, child_starts: np.ndarray) -> np.ndarray:
    """Per parent key, the position of its first child key, and the number of child keys last."""
    child_rank = np.cumsum(child_starts) - 1          # row -> index of its key at the child level
    first = child_rank[parent_starts]
    return np.append(first, np.int64(child_starts.sum())).astype(np.int64)
