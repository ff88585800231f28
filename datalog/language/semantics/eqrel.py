"""``.decl r(x: T, y: T) eqrel``: r is an equivalence relation, the reflexive, symmetric and
transitive closure of what is inserted or derived into it, on the values that occur in it.

The qualifier becomes three rules the engine evaluates (and maintains, deletions included, by
its ordinary recursive maintenance) as any others:

    r(x, x) :- r(x, _).              reflexive on the values that occur (with symmetry: both columns)
    r(y, x) :- r(x, y).              symmetric
    r(x, z) :- r(x, y), r(y, z).     transitive
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import InvalidQualifier

QUALIFIER = "eqrel"


def eqrel_rules(program: ast.Program) -> list[ast.Rule]:
    """The closure rules of every ``eqrel`` relation of ``program``."""
    return [rule for decl in program.declarations if QUALIFIER in decl.qualifiers
            for rule in _closure(decl)]


def _closure(decl: ast.Declaration) -> list[ast.Rule]:
    if decl.arity != 2:
        raise InvalidQualifier(f"eqrel relation {decl.relation} must have two columns, it has "
                               f"{decl.arity}", decl.span)
    span = decl.span
    x, y, z = (ast.Variable(n, span) for n in ("x", "y", "z"))

    def atom(a, b) -> ast.Atom:
        return ast.Atom(decl.relation, (a, b), span)
    return [ast.Rule((atom(x, x),), (atom(x, ast.Wildcard(span)),), span),
            ast.Rule((atom(y, x),), (atom(x, y),), span),
            ast.Rule((atom(x, z),), (atom(x, y), atom(y, z)), span)]
