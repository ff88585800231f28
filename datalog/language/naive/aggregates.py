"""Aggregates: ``count``, ``sum``, ``min``, ``max`` and ``mean`` over the assignments of a body,
with Soufflé's choice of what is counted.

>>> from datalog.language.parser import parse
>>> from datalog.language.naive import evaluate
>>> db = evaluate(parse('''
...     e(1, "a"). e(1, "b"). e(2, "a"). f(1). f(2).
...     n(x, c) :- f(x), c = count : { e(x, _) }.
... '''))
>>> sorted(db["n"])
[(1, 2), (2, 1)]
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.ast import Aggregate, Atom, BranchTerm, Disjunction, RecordTerm, Variable, Wildcard
from datalog.language.naive.nodes import dnf, walk
from datalog.language.naive.values import TWO64, Subst, Unsigned, number


class NoValue(Exception):
    """A term has no value (min, max or mean of nothing): the literal using it is false."""


def aggregate(rule, agg: Aggregate, subst: Subst):
    """``kind target : { body }`` for the variables of ``subst`` (those outside the aggregate);
    ``rule`` is the :class:`RuleEvaluator` of the rule it is in, whose ``solve`` and ``eval``
    find the body's assignments and the target's values.

    The aggregate ranges over the distinct satisfying assignments of the body's
    local variables (those not bound outside), as Soufflé's materialised body
    relation does. Soufflé materialises only bodies with more than one atom, a
    repeated variable in the atom, or a nested aggregate; a *simple* body (one atom)
    is scanned tuple by tuple, so there each ``_`` of the atom counts as a local
    variable of its own: ``count : { e(x, _) }`` is the number of e tuples with
    first column x, while ``count : { e(x, _), f(x) }`` is 0 or 1.

    count and sum of nothing are 0; min, max and mean of nothing have no value.
    """
    body = _name_wildcards(agg.body) if _simple(agg.body) else agg.body
    chosen: dict[tuple, object] = {}  # local assignment -> target value
    for conjunction in dnf(body):
        for s in rule.solve(conjunction, subst):
            local = tuple(sorted((k, v) for k, v in s.items() if k not in subst))
            chosen[local] = None if agg.target is None else rule.eval(agg.target, s)
    values = list(chosen.values())
    if agg.kind == "count":
        return len(values)
    values = [number(v, agg.kind) for v in values]
    if agg.kind == "sum":       # of unsigned values: modulo 2^64 (Soufflé's unsigned sum)
        # of nothing: 0 of the target's type (sum 1u : {...}; sum y : {e(x, y)}, y an unsigned column)
        unsigned = any(isinstance(v, Unsigned) for v in values) or (
            not values and _unsigned(agg.target, agg.body, rule, subst))
        return Unsigned(sum(values) % TWO64) if unsigned else sum(values)
    if not values:
        raise NoValue
    if agg.kind == "min":
        return min(values)
    if agg.kind == "max":
        return max(values)
    if agg.kind == "mean":
        return sum(values) / len(values)
    raise TypeError(f"unknown aggregate {agg.kind}")


def _unsigned(term, body: tuple, rule, subst: Subst) -> bool:
    """Whether ``term`` is of an unsigned type: an unsigned constant, a variable in an unsigned
    column of an atom of ``body``, or arithmetic on one (Soufflé's operands share their type)."""
    if isinstance(term, ast.Constant):
        return isinstance(rule.eval(term, subst), Unsigned)
    if isinstance(term, Variable):
        return any(isinstance(arg, Variable) and arg.name == term.name and i in rule.unsigned.get(node.relation, ())
                   for node in walk(body) if isinstance(node, Atom) for i, arg in enumerate(node.args))
    if isinstance(term, ast.BinaryOp):
        return _unsigned(term.left, body, rule, subst) or _unsigned(term.right, body, rule, subst)
    return False


def _simple(body: tuple) -> bool:
    """A body Soufflé scans directly: one atom (and filters), no repeated variable in it, no aggregate."""
    atoms = tuple(lit for lit in body if isinstance(lit, Atom))
    if any(isinstance(lit, Disjunction) for lit in body) or len(atoms) > 1:
        return False
    if any(isinstance(node, Aggregate) for node in walk(body)):
        return False
    names = [v.name for v in ast.variables(atoms)]
    return len(names) == len(set(names))


def _name_wildcards(body: tuple) -> tuple:
    """Each ``_`` of the body's atom becomes its own variable (named so no program can clash)."""
    counter = iter(range(1_000_000))

    def name(term):
        if isinstance(term, Wildcard):
            return Variable(f" _{next(counter)}")
        if isinstance(term, RecordTerm):            # records (issue 18): a `_` inside a pattern too
            return RecordTerm(tuple(map(name, term.args)), term.span)
        if isinstance(term, BranchTerm):
            return BranchTerm(term.name, tuple(map(name, term.args)), term.span)
        return term

    def rename(lit):
        if not isinstance(lit, Atom):
            return lit
        return Atom(lit.relation, tuple(map(name, lit.args)), lit.span)
    return tuple(rename(lit) for lit in body)
