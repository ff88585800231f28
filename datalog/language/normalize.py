"""Rules -> clauses: one head and a conjunctive body each.

``a(x), b(x) :- c(x), (d(x) ; e(x)).`` becomes four clauses: each head with
each alternative of the disjunctive normal form of the body. Aggregate bodies
are put in disjunctive normal form too (a tuple of alternatives).

>>> from datalog.language.parser import parse
>>> for c in clauses(parse('a(x), b(x) :- c(x), (d(x) ; e(x)).')):
...     print(c)
a(x) :- c(x), d(x).
b(x) :- c(x), d(x).
a(x) :- c(x), e(x).
b(x) :- c(x), e(x).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from datalog.language import ast


@dataclass(frozen=True)
class Clause:
    head: ast.Atom
    body: tuple[ast.Literal, ...]   # atoms, negations, comparisons; no disjunctions
    rule: ast.Rule                  # the source rule, for spans, pragmas and error messages

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


def clauses(program: ast.Program) -> list[Clause]:
    out = []
    for rule in program.rules:
        for body in dnf(rule.body):
            for head in rule.heads:
                out.append(Clause(head, body, rule))
    return out


def dnf(body: tuple) -> list[tuple]:
    """The alternatives of a body: each a tuple of literals without Disjunction."""
    options = []
    for literal in body:
        if isinstance(literal, ast.Disjunction):
            options.append([alt for a in literal.alternatives for alt in dnf(a)])
        else:
            options.append([(literal,)])
    return [tuple(lit for part in combo for lit in part) for combo in product(*options)]
