"""Answers read off a relation: an atom's matching rows, and a one-atom query filtered as it streams.

A one-atom query (``?- path(1, x), x > 2.``) is answered from the relation's rows; any other query
is a rule of its own (:meth:`Engine.ask <datalog.engine.engine.Engine.ask>`).

>>> from datalog.language.parser import parse_atom
>>> from lftj.relation import Relation
>>> path = Relation("path", 2, [(1, 2), (1, 3), (2, 2)])
>>> matching(path, parse_atom("path(1, X)")), matching(path, parse_atom("path(x, x)"))
([(1, 2), (1, 3)], [(2, 2)])
"""

from __future__ import annotations

from operator import itemgetter

from datalog.evaluation.compile import COMPARE
from datalog.language import ast
from datalog.language.composites import NIL, Branch, Record
from datalog.language.errors import ArityMismatch, DatalogError
from datalog.language.display import plural

_SIMPLE = (ast.Constant, ast.Variable, ast.Wildcard)


def matching(relation, atom: ast.Atom) -> list[tuple]:
    """The rows of ``relation`` that ``atom`` matches (constants equal, a repeated variable the same
    value, ``_`` anything), sorted; a relation that is not stored is filtered as it streams."""
    if len(atom.args) != relation.arity:
        raise ArityMismatch(f"{atom.relation} has arity {relation.arity}, the query has "
                            f"{plural(len(atom.args), 'argument')}", atom.span)
    if not relation.stored:             # enumerated on demand: filtered as it streams, not sorted whole
        return sorted(row for row in relation if matches(atom, row))
    return [row for row in relation.sorted_rows() if matches(atom, row)]


def scannable(rule: ast.Rule, db) -> bool:
    """Whether a query rule's body is one atom of constants, variables and ``_`` with comparisons
    of its variables and constants: then :func:`scan` answers it from the relation's rows (a
    relation that is not stored, a theta-join view of maintenance/view_relation.py, from its
    enumeration), without a rule to plan and evaluate."""
    if not rule.body:
        return False
    atom, *tests = rule.body
    if type(atom) is not ast.Atom or not all(type(test) is ast.Comparison for test in tests):
        return False
    relation = db.get(atom.relation)
    if relation is None or not all(isinstance(a, _SIMPLE) for a in atom.args):
        return False
    first = ast.first_positions(atom)
    sides = [side for test in tests for side in (test.left, test.right)]
    return all(type(s) is ast.Constant or (type(s) is ast.Variable and s.name in first) for s in sides)


def scan(rule: ast.Rule, relation) -> list[tuple]:
    """The answers of a :func:`scannable` query rule, filtered from the relation's enumeration as
    it streams: as a rule, the query would build a trie of every row first (at 1.5M rows, 14-26 s
    for a few thousand answers, against 0.8 s)."""
    (head,), (atom, *tests) = rule.heads, rule.body
    first = ast.first_positions(atom)
    holds = [_comparison(test, first) for test in tests]
    pick = [first[v.name] for v in head.args]
    return sorted({tuple(row[i] for i in pick) for row in relation
                   if matches(atom, row) and all(test(row) for test in holds)})


def matches(atom: ast.Atom, row: tuple) -> bool:
    seen: dict[str, object] = {}
    for arg, value in zip(atom.args, row):
        if isinstance(arg, (ast.Nil, *ast.STRUCTURED)):     # records (issue 18): p([1, x]), s($A(_))
            if not _matches_pattern(arg, value, seen):
                return False
        elif isinstance(arg, ast.Constant):
            if arg.value != value and not (isinstance(value, float) and arg.value == value):
                return False
        elif isinstance(arg, ast.Variable):
            if seen.setdefault(arg.name, value) != value:
                return False
        elif not isinstance(arg, ast.Wildcard):
            raise DatalogError(f"a query argument must be a constant, a variable or _, not {arg}", atom.span)
    return True


def _matches_pattern(term, value, seen: dict) -> bool:
    """Whether a record or branch pattern of constants, variables and ``_`` matches ``value``."""
    if isinstance(term, ast.Nil):
        return value == NIL and type(value) is Record
    if isinstance(term, ast.RecordTerm):
        if type(value) is not Record or not value or len(value) != len(term.args):
            return False
        parts = value
    elif isinstance(term, ast.BranchTerm):
        if type(value) is not Branch or value[0] != term.name or len(value) != len(term.args) + 1:
            return False
        parts = value[1:]
    else:
        return matches(ast.Atom("", (term,)), (value,)) and \
            (not isinstance(term, ast.Variable) or seen.setdefault(term.name, value) == value)
    return all(_matches_pattern(t, v, seen) for t, v in zip(term.args, parts))


def _comparison(test: ast.Comparison, first: dict[str, int]):
    """row -> whether ``test`` holds, a variable read at its first position in the atom."""
    compare = COMPARE[test.op]
    left, right = (_cell(side, first) for side in (test.left, test.right))
    return lambda row: compare(left(row), right(row))


def _cell(term, first: dict[str, int]):
    if type(term) is ast.Constant:
        value = term.value
        return lambda row: value
    return itemgetter(first[term.name])
