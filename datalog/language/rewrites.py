"""Rewrites: rules into the clauses later stages take, and the body rewrites of the planner.

:func:`rewrite` applies :data:`REWRITES` in order to the program's rules; each maps a list of
rules to an equivalent list, and the result has one head and a conjunctive body per rule:
a :class:`Clause` each. ``a(x), b(x) :- c(x), (d(x) ; e(x)).`` becomes four clauses:

>>> from datalog.language.parser import parse
>>> for c in rewrite(parse('a(x), b(x) :- c(x), (d(x) ; e(x)).')):
...     print(c)
a(x) :- c(x), d(x).
b(x) :- c(x), d(x).
a(x) :- c(x), e(x).
b(x) :- c(x), e(x).

The planner rewrites one clause body before planning it:

* :func:`lift_atom_expressions` -- atoms hold only variables, constants and ``_``, and an
  aggregate is a whole side of a comparison, so that every atom is a trie index and every
  aggregate a value to compute;
* :func:`name_wildcards` -- in an aggregate body Soufflé scans tuple by tuple, every wildcard
  is a variable of its own, so each tuple counts.

>>> body = parse('p(y) :- r(x + 1, y), n = count : { e(x, _) } + 1.').rules[0].body
>>> print(", ".join(map(str, lift_atom_expressions(body))))
r(_e0, y), n = (_e1 + 1), _e0 = (x + 1), _e1 = count : { e(x, _) }
>>> print(", ".join(map(str, name_wildcards(parse('q(1) :- e(x, _), f(_).').rules[0].body))))
e(x, _w0), f(_w1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from datalog.language import ast


@dataclass(frozen=True)
class Clause:
    """One head and a conjunctive body (atoms, negations, comparisons; no disjunction);
    ``rule`` keeps the source rule's span and pragmas; ``index`` is the clause's position among
    the program's clauses (what plans, maintainers and stored state are keyed by; None for a
    clause made for a delta rule)."""

    head: ast.Atom
    body: tuple[ast.Literal, ...]
    rule: ast.Rule
    index: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


def split_disjunctions(rules: list[ast.Rule]) -> list[ast.Rule]:
    """A rule whose body holds ``;`` becomes one rule per alternative of its disjunctive
    normal form (aggregate bodies are alternatives of their own, see :func:`dnf`)."""
    return [ast.Rule(rule.heads, body, rule.span, rule.pragma, rule.plan) for rule in rules for body in dnf(rule.body)]


def split_heads(rules: list[ast.Rule]) -> list[ast.Rule]:
    """``a(x), b(x) :- body.`` becomes ``a(x) :- body.`` and ``b(x) :- body.``"""
    return [ast.Rule((head,), rule.body, rule.span, rule.pragma, rule.plan) for rule in rules for head in rule.heads]


REWRITES = (
    split_disjunctions,
    split_heads,
)


def rewrite(program: ast.Program) -> list[Clause]:
    """The program's rules (facts included) as clauses, :data:`REWRITES` applied in order."""
    rules = list(program.rules)
    for step in REWRITES:
        rules = step(rules)
    return [Clause(rule.heads[0], rule.body, rule, i) for i, rule in enumerate(rules)]


def dnf(body: tuple) -> list[tuple]:
    """The alternatives of a body: each a tuple of literals without Disjunction."""
    options = []
    for literal in body:
        if isinstance(literal, ast.Disjunction):
            options.append([alt for a in literal.alternatives for alt in dnf(a)])
        else:
            options.append([(literal,)])
    return [tuple(lit for part in combo for lit in part) for combo in product(*options)]

_ATOM_ARGS = (ast.Variable, ast.Constant, ast.Wildcard)


def lift_atom_expressions(body: tuple) -> tuple:
    """``r(x + 1, y)`` becomes ``r(_e0, y), _e0 = x + 1``; ``n = count : {..} + 1`` becomes
    ``n = _e0 + 1, _e0 = count : {..}`` (an aggregate alone on its side stays)."""
    extra, counter = [], iter(range(10**9))

    def fresh(term) -> ast.Variable:
        var = ast.Variable(f"_e{next(counter)}", term.span)
        extra.append(ast.Comparison("=", var, term, term.span))
        return var

    def lift_aggregates(term):
        if isinstance(term, ast.Aggregate):
            return fresh(term)
        if isinstance(term, ast.BinaryOp):
            return ast.BinaryOp(term.op, lift_aggregates(term.left), lift_aggregates(term.right), term.span)
        if isinstance(term, ast.Negate):
            return ast.Negate(lift_aggregates(term.operand), term.span)
        if isinstance(term, ast.Functor):
            return ast.Functor(term.name, tuple(map(lift_aggregates, term.args)), term.span)
        return term

    def side(term):
        return term if isinstance(term, ast.Aggregate) else lift_aggregates(term)

    out = []
    for literal in body:
        if isinstance(literal, ast.Atom) and not all(isinstance(a, _ATOM_ARGS) for a in literal.args):
            args = tuple(a if isinstance(a, _ATOM_ARGS) else fresh(lift_aggregates(a)) for a in literal.args)
            literal = ast.Atom(literal.relation, args, literal.span)
        elif isinstance(literal, ast.Comparison):
            literal = ast.Comparison(literal.op, side(literal.left), side(literal.right), literal.span)
        out.append(literal)
    return tuple(out + extra)


def name_wildcards(body: tuple) -> tuple:
    """Every wildcard of the body's atoms becomes a variable of its own (``_w0``, ``_w1``, ...)."""
    counter = iter(range(10**9))

    def rename(atom: ast.Atom) -> ast.Atom:
        args = tuple(ast.Variable(f"_w{next(counter)}", a.span) if isinstance(a, ast.Wildcard) else a
                     for a in atom.args)
        return ast.Atom(atom.relation, args, atom.span)
    return tuple(rename(lit) if isinstance(lit, ast.Atom) else lit for lit in body)
