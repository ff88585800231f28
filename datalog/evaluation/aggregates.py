"""Aggregates evaluated from scratch: ``v = kind target : { body }`` as a memoized sub-evaluation.

For each group (the values of the outer variables the body shares with the rule) the body's
plans run by triejoin with the group as their parameters, and the targets of their
satisfying assignments are reduced: ``count`` and ``sum`` of nothing are 0; ``min``, ``max``
and ``mean`` of nothing are :data:`NO_VALUE`, which makes the reading filter fail. A body
with several alternatives ranges over the distinct assignments of its named variables.
Sums follow :mod:`datalog.language.numbers`: an integer sum beyond the signed 64-bit range is
``number_out_of_range`` (a sum of unsigned values wraps modulo 2^64, as Soufflé's does); a float sum is IEEE 754's correctly rounded one (``inf`` if one
contribution is ``inf`` or the exact sum passes the largest double), and ``invalid_arithmetic``
where IEEE's is NaN (``inf`` and ``-inf`` both contribute), at the aggregate.
(Incremental maintenance keeps aggregates per group instead: :mod:`maintenance.aggregate`.)

>>> reduce("sum", [1, 2.5], False), reduce("min", [], False), reduce("count", [(1, 1), (1, 1)], True)
(3.5, <no value>, 1)
"""

from __future__ import annotations

import math

from datalog.evaluation.evaluate import run_plan
from datalog.language import numbers
from datalog.language.errors import InvalidArithmetic, NumberOutOfRange


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"

    def __reduce__(self) -> str:
        return "NO_VALUE"       # pickled by name: a plan shipped to Spark executors keeps ``is NO_VALUE``


NO_VALUE = _NoValue()   # min/max/mean of nothing: the literal fails


def aggregate_value(agg, bodies: list, targets: list, outer_slots: list[int], rule: str = "?"):
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
                value = reduce(kind, rows, distinct)
                if kind == "sum" and agg.aggregate.unsigned:
                    value = numbers.wrap_unsigned(value)        # a sum of unsigned: modulo 2^64
                elif kind == "sum" and numbers.WIDTH[0] == 32:
                    value = numbers.wrap(value, 32)             # Soufflé's 32-bit sum wraps
                memo[key] = settle(value, agg.aggregate, rule)
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
    """The aggregate of the contributions ``rows`` (with ``distinct``: (assignment, value) pairs);
    NaN or an int beyond the range where that is the exact result (:func:`settle` refuses them)."""
    if distinct:
        rows = [value for _, value in dict.fromkeys(rows)]
    if kind == "count":
        return len(rows)
    if kind == "sum":       # exact: correctly rounded as math.fsum, as maintenance keeps it
        return exact_sum(rows)
    if not rows:
        return NO_VALUE
    if kind == "min":
        return min(rows)
    if kind == "max":
        return max(rows)
    return exact_sum(rows) / len(rows)   # mean


def exact_sum(rows: list):
    """The exact int sum of ints; of floats, the double nearest the exact sum (IEEE 754: ``inf``
    past the largest double, NaN for ``inf`` and ``-inf`` together).

    >>> exact_sum([1e308, 1e308, -1e308]), exact_sum([math.inf, 1.0]), exact_sum([math.inf, -math.inf])
    (1e+308, inf, nan)
    >>> exact_sum([1e308, 1e308, -math.inf]), exact_sum([1e308, 1e308, math.inf, -math.inf])
    (-inf, nan)
    """
    if not any(isinstance(r, float) for r in rows):
        return sum(rows)
    try:
        return math.fsum(rows)
    except ValueError:                  # inf + -inf
        return math.nan
    except OverflowError:               # the partial sums of finite values passed the largest double
        infinities = {r for r in rows if isinstance(r, float) and math.isinf(r)}
        if infinities:                  # an infinity decides the sum (both: NaN), as ExactSum's value()
            return infinities.pop() if len(infinities) == 1 else math.nan
        from fractions import Fraction            # (rare: start-up)
        exact = sum(map(Fraction, rows))
        try:
            return float(exact)
        except OverflowError:
            return math.inf if exact > 0 else -math.inf


def settle(value, aggregate, rule: str):
    """``value`` of ``aggregate`` (an ast.Aggregate) if it is a value of the engine, else the
    coded error at the aggregate."""
    problem = numbers.value_problem(value, "unsigned" if aggregate.unsigned else None)
    if problem is None:
        return value
    kind = aggregate.kind
    if isinstance(value, float):
        raise InvalidArithmetic(f"the {kind} in a rule for {rule} is not a number (NaN: inf and -inf "
                                f"both contribute)", aggregate.span)
    raise NumberOutOfRange(f"the {kind} in a rule for {rule}: {problem}", aggregate.span)
