"""The variable order of a rule: the order in which leapfrog triejoin binds its variables.

Heuristic (documented in the README; override per rule with a ``// @order x, y, z`` comment
on the line before it):
  1. start with the variable that occurs in the most positive atoms
     (ties: the one in an atom with constants, then the first in the body);
  2. then repeatedly take, among the variables that share an atom with one already chosen,
     the one in the most atoms (ties: first in the body); if none is connected, fall back to
     rule 1 (a cross product).

>>> from datalog.language.parser import parse
>>> body = parse('t(x, z) :- e(y, z), e(x, y), f(y).').rules[0].body
>>> variable_order([lit for lit in body], [], None, None)
['y', 'z', 'x']
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import BadPragma


def pragma_order(clause) -> list[str] | None:
    """The variables of ``// @order x, y, z`` on the clause's rule, or None without one."""
    for key, value in clause.rule.pragma if clause else ():
        if key == "order":
            return [v.strip() for v in value.replace(",", " ").split()]
    return None


def variable_order(atoms: list[ast.Atom], params: list[str], forced: list[str] | None, clause) -> list[str]:
    """The variables the positive ``atoms`` bind (``params``, bound before, excepted), ordered
    by the heuristic, after the ``forced`` ones (a pragma's: each must be bound by an atom)."""
    names = list(dict.fromkeys(t.name for a in atoms for t in a.args
                               if isinstance(t, ast.Variable) and t.name not in params))
    chosen = _forced(forced, names, clause)
    occurrences = {n: sum(1 for a in atoms if any(isinstance(t, ast.Variable) and t.name == n for t in a.args))
                   for n in names}
    with_constants = {t.name for a in atoms if any(not isinstance(x, (ast.Variable, ast.Wildcard))
                                                   or (isinstance(x, ast.Variable) and x.name in params)
                                                   for x in a.args)
                      for t in a.args if isinstance(t, ast.Variable)}
    while len(chosen) < len(names):
        remaining = [n for n in names if n not in chosen]
        connected = [n for n in remaining if any(_shares_atom(atoms, n, c) for c in chosen)]
        pool = connected or remaining
        best = max(pool, key=lambda n: (occurrences[n], n in with_constants, -names.index(n)))
        chosen.append(best)
    return chosen


def _forced(forced: list[str] | None, names: list[str], clause) -> list[str]:
    if forced is None:
        return []
    unknown = [v for v in forced if v not in names]
    if unknown:
        raise BadPragma(f"@order names {', '.join(unknown)}, which no positive atom of this rule binds "
                        f"(its variables: {', '.join(names)})", clause.rule.span if clause else None)
    return list(dict.fromkeys(forced))


def _shares_atom(atoms, a: str, b: str) -> bool:
    for atom in atoms:
        present = {t.name for t in atom.args if isinstance(t, ast.Variable)}
        if a in present and b in present:
            return True
    return False
