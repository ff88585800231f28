"""The variable order of a rule: the order in which leapfrog triejoin binds its variables.

Heuristic (documented in docs/language.md; override per rule with a ``// @order x, y, z`` comment
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

import heapq

from datalog.language import ast
from datalog.language.errors import BadPragma


def pragma_order(clause) -> list[str] | None:
    """The variables of ``// @order x, y, z`` on the clause's rule, else those of its Soufflé
    ``.plan``, or None without either."""
    for key, value in clause.rule.pragma if clause else ():
        if key == "order":
            return [v.strip() for v in value.replace(",", " ").split()]
    return plan_order(clause.rule) if clause and clause.rule.plan else None


class PlanOrder(list):
    """The variables a ``.plan`` puts first: those this clause binds lead, in that order (a
    ``.plan`` names atoms, and the rewrite may have bound some variables otherwise)."""


def plan_order(rule: ast.Rule) -> PlanOrder:
    """``r(x, z) :- a(x, y), b(y, z). .plan 0: (2, 1)``: Soufflé's atom order for version 0 of the
    rule (atoms numbered from 1 in the body), as a variable order: the variables of the atoms
    in that order, first occurrence first (here y, z, x). One order serves every semi-naive
    version here, so version 0's is used (the first listed when 0 is not)."""
    plans = dict(rule.plan)
    order = plans.get(0, rule.plan[0][1])
    atoms = [lit for lit in rule.body if isinstance(lit, ast.Atom)]
    chosen = [atoms[i - 1] for i in order if 0 < i <= len(atoms)]
    return PlanOrder(dict.fromkeys(t.name for a in chosen for t in a.args if isinstance(t, ast.Variable)))


def variable_order(atoms: list[ast.Atom], params: list[str], forced: list[str] | None, clause) -> list[str]:
    """The variables the positive ``atoms`` bind (``params``, bound before, excepted), ordered
    by the heuristic, after the ``forced`` ones (a pragma's: each must be bound by an atom).

    Near-linear in the body (issue 23): each variable's atoms are indexed once, the variables
    connected to the chosen ones are kept in a heap by rank, and the others in a second heap
    for the cross-product fallback (a rule of 300 atoms is ordered in milliseconds)."""
    names = list(dict.fromkeys(t.name for a in atoms for t in a.args
                               if isinstance(t, ast.Variable) and t.name not in params))
    chosen = _forced(forced, names, clause)
    atoms_of = _atoms_of(atoms, names)
    with_constants = {t.name for a in atoms if any(not isinstance(x, (ast.Variable, ast.Wildcard))
                                                   or (isinstance(x, ast.Variable) and x.name in params)
                                                   for x in a.args)
                      for t in a.args if isinstance(t, ast.Variable)}
    # the heuristic's preference as a heap key: most atoms, then constants, then first in the body
    rank = {n: (-len(atoms_of[n]), n not in with_constants, i) for i, n in enumerate(names)}
    done, connected, anywhere = set(chosen), [], [(rank[n], n) for n in names]
    heapq.heapify(anywhere)
    for n in chosen:
        _connect(n, atoms, atoms_of, done, connected, rank)
    while len(chosen) < len(names):
        pool = connected if _drop_done(connected, done) else anywhere
        _drop_done(anywhere, done)
        best = heapq.heappop(pool)[1]
        chosen.append(best)
        done.add(best)
        _connect(best, atoms, atoms_of, done, connected, rank)
    if forced is None and clause is not None:
        return independent_last(chosen, atoms, {v.name for v in ast.variables(clause.head)})
    return chosen


def independent_last(chosen: list[str], atoms, head: set[str]) -> list[str]:
    """``a(x) :- b(x), c(y), d(y).``: the part of the body that shares no variable with the head
    (c(y), d(y)) is bound last, so that its variables are existential (the planner's ``needed``)
    and the triejoin tests it for its first witness once per binding of x, instead of binding
    y first and x again for every y (issue 18: Soufflé tests such a part once). Each connected
    part keeps its order; the parts that reach the head come first."""
    atoms_of, part = _atoms_of(atoms, chosen), {}
    for name in chosen:                           # connected parts, by a walk over shared atoms
        if name in part:
            continue
        part[name], stack = name, [name]
        while stack:
            for i in atoms_of[stack.pop()]:
                for t in atoms[i].args:
                    if isinstance(t, ast.Variable) and t.name in atoms_of and t.name not in part:
                        part[t.name] = name
                        stack.append(t.name)
    reaching = {part[n] for n in chosen if n in head}
    return [n for n in chosen if part[n] in reaching] + [n for n in chosen if part[n] not in reaching]


def _atoms_of(atoms, names) -> dict[str, list[int]]:
    """Per variable, the positions of the atoms it occurs in (each atom once)."""
    found: dict[str, dict[int, None]] = {n: {} for n in names}
    for i, atom in enumerate(atoms):
        for t in atom.args:
            if isinstance(t, ast.Variable) and t.name in found:
                found[t.name][i] = None
    return {n: list(positions) for n, positions in found.items()}


def _connect(name, atoms, atoms_of, done, connected, rank) -> None:
    """The variables sharing an atom with ``name`` become candidates of the connected heap."""
    for i in atoms_of[name]:
        for t in atoms[i].args:
            if isinstance(t, ast.Variable) and t.name in rank and t.name not in done:
                heapq.heappush(connected, (rank[t.name], t.name))


def _drop_done(heap, done) -> bool:
    """Pop chosen variables off the top of ``heap``; whether a candidate is left."""
    while heap and heap[0][1] in done:
        heapq.heappop(heap)
    return bool(heap)


def _forced(forced: list[str] | None, names: list[str], clause) -> list[str]:
    if forced is None:
        return []
    if isinstance(forced, PlanOrder):
        return [v for v in forced if v in names]
    unknown = [v for v in forced if v not in names]
    if unknown:
        raise BadPragma(f"@order names {', '.join(unknown)}, which no positive atom of this rule binds "
                        f"(its variables: {', '.join(names)})", clause.rule.span if clause else None)
    return list(dict.fromkeys(forced))
