"""Aggregates evaluated from scratch: ``v = kind target : { body }`` as a memoized sub-evaluation.

For each group (the values of the outer variables the body shares with the rule) the body's
plans run by triejoin with the group as their parameters, and the targets of their
satisfying assignments are reduced: ``count`` and ``sum`` of nothing are 0; ``min``, ``max``
and ``mean`` of nothing are :data:`NO_VALUE`, which makes the reading filter fail. A body
with several alternatives ranges over the distinct assignments of its named variables.
(Incremental maintenance keeps aggregates per group instead: :mod:`maintenance.aggregate`.)

>>> reduce("sum", [1, 2.5], False), reduce("min", [], False), reduce("count", [(1, 1), (1, 1)], True)
(3.5, <no value>, 1)
"""

from __future__ import annotations

import math

from datalog.evaluation.evaluate import run_plan


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"

    def __reduce__(self) -> str:
        return "NO_VALUE"       # pickled by name: a plan shipped to Spark executors keeps ``is NO_VALUE``


NO_VALUE = _NoValue()   # min/max/mean of nothing: the literal fails


def aggregate_value(agg, bodies: list, targets: list, outer_slots: list[int]):
    """(relations) -> (binding -> the aggregate's value for the binding's group); ``bodies``
    are the compiled plans of ``agg``'s alternatives, ``targets`` their target functions."""
    kind, outer, distinct = agg.aggregate.kind, agg.outer, agg.distinct

    def make(db):
        memo: dict[tuple, object] = {}

        def value(b):
            key = tuple(b[s] for s in outer_slots)
            if key not in memo:
                rows = []
                for body, target in zip(bodies, targets):
                    params = [None] * len(body.slots)
                    for name, v in zip(outer, key):
                        params[body.slots[name]] = v
                    local = list(range(body.depth)) + list(range(body.depth + len(outer), len(body.slots)))
                    run_plan(body, db, _collector(rows, local, target, distinct), binding=params)
                memo[key] = reduce(kind, rows, distinct)
            return memo[key]
        return value
    return make


def _collector(rows: list, local_slots, target, distinct: bool):
    if distinct:
        return lambda b: rows.append((tuple(b[s] for s in local_slots), target(b) if target else None))
    if target is None:
        return lambda b: rows.append(None)
    return lambda b: rows.append(target(b))


def reduce(kind: str, rows: list, distinct: bool):
    """The aggregate of the contributions ``rows`` (with ``distinct``: (assignment, value) pairs)."""
    if distinct:
        rows = [value for _, value in dict.fromkeys(rows)]
    if kind == "count":
        return len(rows)
    if kind == "sum":       # exact: math.fsum of the contributions, as maintenance keeps it
        return math.fsum(rows) if any(isinstance(r, float) for r in rows) else sum(rows)
    if not rows:
        return NO_VALUE
    if kind == "min":
        return min(rows)
    if kind == "max":
        return max(rows)
    total = math.fsum(rows) if any(isinstance(r, float) for r in rows) else sum(rows)
    return total / len(rows)   # mean
