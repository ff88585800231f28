"""``.decl r(x: T, y: T) eqrel``: r is an equivalence relation, the reflexive, symmetric and
transitive closure of what is inserted or derived into it, on the values that occur in it.

The qualifier becomes two rules the engine evaluates (and maintains, deletions included, by
its ordinary recursive maintenance) as any others, in Soufflé's order (its provenance numbers
them so: a proof of ``r(1, 1)`` from ``r(0, 1)`` is transitivity over ``r(1, 0)``, ``r(0, 1)``):

    r(x, z) :- r(x, y), r(y, z).     transitive
    r(y, x) :- r(x, y).              symmetric

Reflexivity on the values that occur follows: ``r(x, y)`` gives ``r(y, x)``, and the two give
``r(x, x)`` and ``r(y, y)``.
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
    return [ast.Rule((atom(x, z),), (atom(x, y), atom(y, z)), span),
            ast.Rule((atom(y, x),), (atom(x, y),), span)]
