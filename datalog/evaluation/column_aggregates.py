"""An aggregate's value per group, from its body's bindings as int64 words (the columnar evaluator).

The columnar twin of :mod:`datalog.evaluation.aggregates` for what
:func:`datalog.evaluation.kernel_steps.kernel_aggregate` accepts: ``count``, ``sum``, ``min`` and
``max`` over number or unsigned words, one alternative. The kernel joins the body with its group
variables first in the variable order (:class:`~datalog.evaluation.kernel_steps.KernelAggregate`),
so its bindings come out sorted by group; here each run of one group is reduced at once (numpy's
``reduceat``), not group by group in Python:

  * ``count``: the group's distinct assignments (its bindings: the kernel makes each once);
  * ``sum``: of the target over them, exact: in int64 when no sum can leave its range (the
    greatest magnitude times the largest group), else in Python integers; a sum beyond the range
    is the tuple path's ``number_out_of_range`` when a binding of the rule reads it (as there, a
    group no binding reads is never an error); of unsigned words, modulo 2^64, as Soufflé's;
  * ``min``, ``max``: of the target, unsigned words compared as unsigned.

A group with no binding has no row here: the rule reads a count or sum of 0 for it, and a min or
max fails (:func:`datalog.evaluation.column_steps.finished`).

>>> from datalog.evaluation.kernel_join import KernelRule
>>> from datalog.evaluation.kernel_steps import KernelAggregate
>>> body = KernelRule("", 2, (), (0, 1))          # groups: depth 0; target: depth 1
>>> rows = np.array([[1, 5], [1, 7], [2, 3]])
>>> sums = table(KernelAggregate("sum", body, (0,), 1, "number"), rows)
>>> sums.groups.rows.tolist(), sums.values.tolist()
([[1], [2]], [12, 3])
>>> table(KernelAggregate("count", body, (0,), None, "number"), rows).values.tolist()
[2, 1]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from datalog.evaluation.aggregates import settle
from lftj.kernel_input import SortedRows

LIMIT = 2**63                    # an int64 sum stays below this magnitude


@dataclass(frozen=True)
class Table:
    """An aggregate's ``groups`` (their words, sorted) and each one's value (``values``, int64 words);
    ``beyond``: the exact sums past the range, by group (None: there is none)."""

    groups: SortedRows
    values: np.ndarray
    beyond: dict | None = None

    def check(self, places: np.ndarray, agg) -> None:
        """The coded error of the first group read (``places``, -1 for none) whose sum is past the range."""
        if self.beyond:
            for place in places[np.isin(places, list(self.beyond))][:1].tolist():
                settle(self.beyond[place], agg.aggregate, agg.rule)


def table(agg, rows: np.ndarray) -> Table:
    """The groups of ``rows`` (the body's bindings, read at ``agg.body.head_depths``: the group's
    columns first, sorted by them) and the aggregate's value for each."""
    n = len(agg.groups)
    if not len(rows):
        return Table(SortedRows(np.zeros((0, n), np.int64)), np.zeros(0, np.int64))
    keys = rows[:, :n]
    starts = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1 if n else np.zeros(0, np.int64)
    starts = np.concatenate([[0], starts]).astype(np.int64)
    groups = SortedRows(np.ascontiguousarray(keys[starts]))
    if agg.kind == "count":
        return Table(groups, np.diff(np.append(starts, len(rows))))
    target = np.ascontiguousarray(rows[:, list(agg.body.head_depths).index(agg.target)])
    unsigned = agg.type_ == "unsigned"
    words = target.view(np.uint64) if unsigned else target
    if agg.kind == "min":
        return Table(groups, np.minimum.reduceat(words, starts).view(np.int64))
    if agg.kind == "max":
        return Table(groups, np.maximum.reduceat(words, starts).view(np.int64))
    if unsigned:                                  # modulo 2^64: uint64's own arithmetic
        return Table(groups, np.add.reduceat(words, starts).view(np.int64))
    return _signed_sums(groups, target, starts)


def _signed_sums(groups: SortedRows, target: np.ndarray, starts: np.ndarray) -> Table:
    """Each group's sum of ``target``: in int64 where no partial sum can pass its range, else in
    Python integers, those past the range kept aside (:attr:`Table.beyond`)."""
    largest = max(-int(target.min()), int(target.max()))
    sizes = np.diff(np.append(starts, len(target)))
    if largest * int(sizes.max()) < LIMIT:
        return Table(groups, np.add.reduceat(target, starts))
    ends = np.append(starts[1:], len(target))
    sums = [sum(target[a:b].tolist()) for a, b in zip(starts.tolist(), ends.tolist())]
    beyond = {g: total for g, total in enumerate(sums) if not -LIMIT <= total < LIMIT}
    return Table(groups, np.array([0 if g in beyond else total for g, total in enumerate(sums)], np.int64), beyond)
