"""A relation's known rows as a few sorted runs, merged geometrically (as a log-structured merge tree).

Semi-naive evaluation adds each round's new rows (``recent``) to the known ones (``stable``) and
asks which rows of the next round's derivations (``to_add``) are not known yet. Kept as one sorted
array, every round rewrites the whole relation (a union) and reads it whole (a difference): on
transitive closure that was most of the run. :class:`Runs` keeps the rows as sorted, pairwise
disjoint runs instead, each at least twice the size of the next (so at most ``log2(n) + 1`` of
them): new rows join as a run of their own, and the last two runs merge while the one before is
less than twice the last, so a row is merged ``O(log n)`` times over the whole evaluation
(amortised). :meth:`Runs.absent` looks rows up in every run by galloping (:func:`lftj.rowsets.absent`),
at ``O(|rows| log n)`` a run; :meth:`Runs.rows` merges them into one run only when a caller needs
the whole relation as one array (a trie of it, a join driven by all of it). A merge into the
first run, the largest, is made in place, in a buffer with room after its rows
(:func:`lftj.rowsets.merged_into`): the last merges of transitive closure at 2.5M rows made a
second copy of the relation, the run's peak (tc n=2k: 149 -> 138 MB).

>>> import numpy as np
>>> known = Runs(np.array([[1, 2], [3, 4]]))
>>> known.add(np.array([[2, 0]])); known.sizes()
[2, 1]
>>> known.absent(np.array([[1, 2], [2, 1], [3, 4], [5, 5]])).tolist()
[[2, 1], [5, 5]]
>>> known.rows().tolist(), known.sizes()
([[1, 2], [2, 0], [3, 4]], [3])
"""

from __future__ import annotations

import mmap

import numpy as np

from lftj.kernel_input import SortedRows, sorted_rows
from lftj.kernels import rowsets

GROWTH = 2                  # each run at least this many times the size of the next
ROOM = 16                   # the first run's buffer, when it grows: this many times its rows (see _room)


class Runs:
    """The rows of one relation: sorted distinct int64 rows, as disjoint sorted runs."""

    def __init__(self, rows: np.ndarray):
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.arity = rows.shape[1]
        self.runs = [sorted_rows("the known rows", rows)] if len(rows) else []
        self.version = 0                      # counts the additions: a cache key of what is built on it
        self.buffer = None                    # the first run's rows and room after them (see _into_first)

    def __len__(self) -> int:
        return sum(len(run) for run in self.runs)

    def sizes(self) -> list[int]:
        return [len(run) for run in self.runs]

    def absent(self, rows: np.ndarray) -> np.ndarray:
        """The rows (sorted distinct) that no run holds."""
        return rowsets.absent(rows, self.runs) if self.runs and len(rows) else rows

    def add(self, new: np.ndarray) -> None:
        """Add rows (sorted distinct, none known yet) as a run, then merge while the runs are
        out of their geometric sizes."""
        if not len(new):
            return
        self.runs.append(sorted_rows("the new rows", new, self.arity))
        self.version += 1
        while len(self.runs) > 1 and len(self.runs[-2]) < GROWTH * len(self.runs[-1]):
            self._merge_last()

    def rows(self) -> np.ndarray:
        """Every row, as one sorted array (the runs merged into one, which stays). It is the
        relation's rows until the next :meth:`add`, which may write over it (see _into_first)."""
        while len(self.runs) > 1:
            self._merge_last()
        return self.runs[0].rows if self.runs else np.zeros((0, self.arity), np.int64)

    def _merge_last(self) -> None:
        last = self.runs.pop()
        if len(self.runs) == 1:
            self.runs[0] = self._into_first(last)
        else:
            self.runs[-1] = rowsets.merged(self.runs[-1], last)

    def _into_first(self, last):
        """The first (largest) run with ``last`` merged in, in place: its rows are the front of
        :attr:`buffer` and the union is written from the back of the room after them
        (:func:`lftj.rowsets.merged_into`), so the largest merges (the last ones of transitive
        closure, into one array for the relation's words) make no second copy of the relation.
        When the room is short, a buffer of up to :data:`ROOM` times the union takes the rows (one
        copy a growth, when the relation is resident twice: so rarely)."""
        first, size = self.runs[0], len(self.runs[0]) + len(last)
        if self.buffer is None or size > len(self.buffer) or \
                first.rows.ctypes.data != self.buffer.ctypes.data:
            self.buffer = _room(size, self.arity)
            self.buffer[:len(first)] = first.rows
            first = SortedRows(self.buffer[:len(first)])
        return rowsets.merged_into(self.buffer, first, last)


def _room(rows: int, arity: int) -> np.ndarray:
    """An int64 array for :data:`ROOM` times ``rows`` rows in pages of its own (an anonymous
    memory map, freed with its last view): the rows never written are never resident, so a large
    room costs address space, not memory, and spares the copies of later growths (tc n=2k: the
    last growth's copy was its peak, 136 MB with a room of 4x, 122 MB with 16x). Where the
    system will not map so much, less room, down to the rows alone. (``np.empty`` of a few MB
    may reuse the allocator's resident pages, which the room then keeps from every other array:
    Andersen's peak was 17 MB more so.)"""
    if not arity:
        return np.empty((max(rows, 16), 0), np.int64)
    for room in (ROOM, 4):
        try:
            return _mapped(max(room * rows, 16), arity)
        except OSError:                          # ENOMEM: more than the system will commit
            pass
    return _mapped(max(rows, 16), arity)


def _mapped(rows: int, arity: int) -> np.ndarray:
    return np.frombuffer(mmap.mmap(-1, rows * arity * 8), np.int64).reshape(rows, arity)
