"""A relation's known rows as a few sorted runs, merged geometrically (as a log-structured merge tree).

Semi-naive evaluation adds each round's new rows (``recent``) to the known ones (``stable``) and
asks which rows of the next round's derivations (``to_add``) are not known yet. Kept as one sorted
array, every round rewrites the whole relation (a union) and reads it whole (a difference): on
transitive closure that was most of the run. :class:`Runs` keeps the rows as sorted, pairwise
disjoint runs instead, each at least twice the size of the next (so at most ``log2(n) + 1`` of
them): new rows join as a run of their own, and the last two runs merge while the one before is
less than twice the last, so a row is merged ``O(log n)`` times over the whole evaluation
(amortised). :meth:`Runs.absent` looks rows up in every run by galloping (:func:`lftj.kernel.absent`),
at ``O(|rows| log n)`` a run; :meth:`Runs.rows` merges them into one run only when a caller needs
the whole relation as one array (a trie of it, a join driven by all of it).

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

import numpy as np

from lftj.kernel_input import sorted_rows
from lftj.kernels import kernel

GROWTH = 2                  # each run at least this many times the size of the next


class Runs:
    """The rows of one relation: sorted distinct int64 rows, as disjoint sorted runs."""

    def __init__(self, rows: np.ndarray):
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.arity = rows.shape[1]
        self.runs = [sorted_rows("the known rows", rows)] if len(rows) else []
        self.version = 0                      # counts the additions: a cache key of what is built on it

    def __len__(self) -> int:
        return sum(len(run) for run in self.runs)

    def sizes(self) -> list[int]:
        return [len(run) for run in self.runs]

    def absent(self, rows: np.ndarray) -> np.ndarray:
        """The rows (sorted distinct) that no run holds."""
        return kernel.absent(rows, self.runs) if self.runs and len(rows) else rows

    def add(self, new: np.ndarray) -> None:
        """Add rows (sorted distinct, none known yet) as a run, then merge while the runs are
        out of their geometric sizes."""
        if not len(new):
            return
        self.runs.append(sorted_rows("the new rows", new, self.arity))
        self.version += 1
        while len(self.runs) > 1 and len(self.runs[-2]) < GROWTH * len(self.runs[-1]):
            last = self.runs.pop()
            self.runs[-1] = kernel.merged(self.runs[-1], last)

    def rows(self) -> np.ndarray:
        """Every row, as one sorted array (the runs merged into one, which stays)."""
        while len(self.runs) > 1:
            last = self.runs.pop()
            self.runs[-1] = kernel.merged(self.runs[-1], last)
        return self.runs[0].rows if self.runs else np.zeros((0, self.arity), np.int64)
