"""A rule's steps after the kernel's join, on a batch of its bindings at once (numpy).

The steps (:mod:`datalog.evaluation.kernel_steps`) run in the order the tuple path runs its
filters, each on the bindings that passed the steps before it, so that a binding the tuple path
never reaches a filter with is never computed here either: an expression beyond the 64-bit range
is the same coded error there and here (on the first such binding of the batch). Values are
int64 words: unsigned ones computed and compared as uint64, symbols compared as words (= and
!= only, as planned).

  ``d = d1 + w``   a column computed from columns: + and - checked by the signs of the operands
                   and the result, * by dividing the result again; unsigned ones wrap;
  ``m = min ...``  the aggregate's value read by each binding's group (a group with no
                   contribution: a count or sum of 0, no min or max);
  ``d <= 24``      the bindings that pass;
  ``!r(x, y)``     the bindings whose key the relation's rows do not hold.

>>> from datalog.evaluation.kernel_join import KernelRule
>>> from datalog.evaluation.kernel_steps import KernelStep
>>> # p(x, d) :- e(x, y), d = y * 2, d < 9.   (depths x 0, y 1; d is slot 2)
>>> rule = KernelRule("p", 2, (), (0, 2), steps=(KernelStep(2, ("*", ("slot", 1), ("word", 2), None)),
...                                              KernelStep(None, ("slot", 2), "<", ("word", 9))))
>>> finished(rule, [0, 1], np.array([[1, 3], [2, 5], [3, -4]]), {}).tolist()
[[1, 6], [3, -8]]
"""

from __future__ import annotations

import numpy as np

from datalog.evaluation.expressions import range_error
from datalog.language.errors import DivisionByZero
from lftj.kernels import rowsets

COMPARE = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
           ">=": np.greater_equal}
INT_MIN = np.int64(-2**63)


def finished(rule, emit: list, batch: np.ndarray, tables: dict) -> np.ndarray:
    """The head rows of a batch of the rule's bindings (its columns: the depths ``emit``), after
    its steps; ``tables``: by step, an aggregate's (:class:`column_aggregates.Table`) or a negated
    relation's rows (SortedRows)."""
    values = {d: batch[:, c] for c, d in enumerate(emit)}
    n = len(batch)
    for step in rule.steps:
        values, n = _run(step, values, n, tables)
    out = np.empty((n, len(rule.head_depths)), np.int64)
    for c, slot in enumerate(rule.head_depths):
        out[:, c] = values[slot]
    return out


def leading(rule, tables: dict) -> bool:
    """Run the rule's steps placed before any depth (``d = 1 + 2``, ``1 < 2``, an aggregate with no
    group) once, before the join, as the tuple path does: their coded errors then, whatever the
    join gives; False if one of them fails (the rule derives nothing)."""
    values, n = {}, 1
    for step in rule.steps:
        if not step.first:
            break
        values, n = _run(step, values, n, tables)
    return n > 0


def _kept(values: dict, keep: np.ndarray) -> tuple[dict, int]:
    return {slot: column[keep] for slot, column in values.items()}, int(np.count_nonzero(keep))


def _run(step, values: dict, n: int, tables: dict) -> tuple[dict, int]:
    """One step over the ``n`` bindings of ``values`` (slot -> its words): the bindings after it."""
    if step.aggregate is not None:
        picked, found = _aggregate(step.aggregate, tables[step], values, n)
        values[step.slot] = picked
        return (values, n) if found is None else _kept(values, found)
    if step.relation is not None:                 # !r(x, y): the bindings whose key r does not hold
        keys = np.empty((n, len(step.keys)), np.int64)
        for c, term in enumerate(step.keys):
            keys[:, c] = _computed(term, values, n, step)
        return _kept(values, rowsets.find(keys, tables[step]) < 0)
    if step.slot is not None:
        values[step.slot] = _computed(step.term, values, n, step)
        return values, n
    left, right = (_computed(t, values, n, step) for t in (step.term, step.right))
    if step.type_ == "unsigned":
        left, right = left.view(np.uint64), right.view(np.uint64)
    return _kept(values, COMPARE[step.op](left, right))


def _aggregate(agg, table, values: dict, n: int):
    """Each binding's value of ``agg`` and, for a min or max, which bindings have one (else None)."""
    keys = np.empty((n, len(agg.groups)), np.int64)
    for c, d in enumerate(agg.groups):
        keys[:, c] = values[d]
    places = rowsets.find(keys, table.groups)
    table.check(places, agg)                      # a sum past the range, read: its coded error
    found = places >= 0
    picked = table.values[np.where(found, places, 0)] if len(table.values) else np.zeros(n, np.int64)
    if agg.kind in ("count", "sum"):
        picked[~found] = 0
        return picked, None
    return picked, found


def _computed(term, values: dict, n: int, step) -> np.ndarray:
    """The term's words for every binding (a fresh array, or a column itself for a slot)."""
    kind = term[0]
    if kind == "slot":
        return values[term[1]]
    if kind == "word":
        return np.full(n, term[1], np.int64)
    if kind == "neg":
        operand = _computed(term[1], values, n, step)
        bad = np.flatnonzero(operand == INT_MIN)
        if len(bad):
            raise range_error(None, "-", int(operand[bad[0]]), step.rule, term[2])
        return -operand
    op, span = term[0], term[3]
    a, b = _computed(term[1], values, n, step), _computed(term[2], values, n, step)
    if op in ("/", "%"):
        return _divided(op, a, b, step, span)
    if step.type_ == "unsigned":                  # modulo 2^64: uint64's own arithmetic
        a, b = a.view(np.uint64), b.view(np.uint64)
        return (a + b if op == "+" else a - b if op == "-" else a * b).view(np.int64)
    with np.errstate(all="ignore"):
        if op == "+":
            out = a + b
            bad = ((a ^ out) & (b ^ out)) < 0          # the operands' sign, and not the result's
        elif op == "-":
            out = a - b
            bad = ((a ^ b) & (a ^ out)) < 0
        else:
            out = a * b
            divisor = np.where(a == 0, 1, a)
            bad = ((a != 0) & (out // divisor != b)) | ((a == -1) & (b == INT_MIN))
    wrong = np.flatnonzero(bad)
    if len(wrong):
        i = wrong[0]
        raise range_error(int(a[i]), op, int(b[i]), step.rule, span)
    return out


def _divided(op: str, a: np.ndarray, b: np.ndarray, step, span) -> np.ndarray:
    """``a / b`` or ``a % b`` as C's (the quotient truncated toward zero, the remainder of the
    dividend's sign), unsigned ones as unsigned; the first binding that divides by zero, or whose
    quotient leaves the range (``-2^63 / -1``), is the tuple path's coded error."""
    unsigned = step.type_ == "unsigned"
    zero = b == 0
    beyond = np.zeros(len(a), bool) if unsigned or op == "%" else (a == INT_MIN) & (b == -1)
    wrong = np.flatnonzero(zero | beyond)
    if len(wrong):
        i = wrong[0]
        x, y = (int(a[i:i + 1].view(np.uint64)[0]), int(b[i:i + 1].view(np.uint64)[0])) if unsigned else \
            (int(a[i]), int(b[i]))
        if zero[i]:
            kind = "division" if op == "/" else "modulo"
            shown = f"{x}u {op} {y}u" if unsigned else f"{x} {op} {y}"
            raise DivisionByZero(f"{kind} by zero in a rule for {step.rule} ({shown})", span)
        raise range_error(x, op, y, step.rule, span)
    if unsigned:
        x, y = a.view(np.uint64), b.view(np.uint64)
        return (x // y if op == "/" else x % y).view(np.int64)
    with np.errstate(all="ignore"):               # (0 - -2^63 wraps to its own magnitude as uint64)
        magnitude = [np.where(x < 0, 0 - x, x).view(np.uint64) for x in (a, b)]
        quotient = (magnitude[0] // magnitude[1]).view(np.int64)
        quotient = np.where((a < 0) != (b < 0), 0 - quotient, quotient)
        return quotient if op == "/" else a - b * quotient
