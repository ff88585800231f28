"""The AST as the naive evaluator walks it: a node's children, every node below one, and
bodies without disjunction (a disjunction is as many rules as it has alternatives).

>>> from datalog.language.parser import parse
>>> [str(r) for r in split_disjunctions(parse("h(x) :- a(x), (b(x) ; c(x)).").rules[0])]
['h(x) :- a(x), b(x).', 'h(x) :- a(x), c(x).']
"""

from __future__ import annotations

from collections.abc import Iterator

from datalog.language.ast import (Aggregate, Atom, BinaryOp, BranchTerm, Cast, Comparison, Disjunction, Functor,
                                  Negate, Negation, RecordTerm, Rule)


def children(node) -> tuple:
    if isinstance(node, tuple):
        return node
    if isinstance(node, list):
        return tuple(node)
    if isinstance(node, Rule):
        return (node.heads, node.body)
    if isinstance(node, (Atom, Functor, RecordTerm, BranchTerm)):
        return node.args
    if isinstance(node, Cast):
        return (node.term,)
    if isinstance(node, Negation):
        return (node.atom,)
    if isinstance(node, (Comparison, BinaryOp)):
        return (node.left, node.right)
    if isinstance(node, Negate):
        return (node.operand,)
    if isinstance(node, Disjunction):
        return node.alternatives
    if isinstance(node, Aggregate):
        return (node.body,) if node.target is None else (node.target, node.body)
    return ()


def walk(node) -> Iterator:
    yield node
    for child in children(node):
        yield from walk(child)


# ---------------------------------------------------------------- disjunction

def dnf(literals: tuple) -> list[tuple]:
    """A body as a list of conjunctions: ``a, (b ; c), d`` -> ``[(a, b, d), (a, c, d)]``."""
    out: list[tuple] = [()]
    for literal in literals:
        if isinstance(literal, Disjunction):
            alternatives = [conj for alt in literal.alternatives for conj in dnf(alt)]
            out = [prefix + alt for prefix in out for alt in alternatives]
        else:
            out = [prefix + (literal,) for prefix in out]
    return out


def split_disjunctions(rule: Rule) -> list[Rule]:
    """``h :- a, (b ; c).`` is the two rules ``h :- a, b.`` and ``h :- a, c.`` (as in Soufflé)."""
    return [Rule(rule.heads, body, rule.span) for body in dnf(rule.body)]
