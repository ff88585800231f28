"""Growing a running program: the program a live engine has plus new statements, and the
relations the new statements can change.

Used by :meth:`datalog.engine.engine.Engine.extend`. A relation whose tuples came from
transactions and that new rules now derive keeps those tuples as facts of the
program (Soufflé allows facts of relations that also have rules).

>>> from datalog.language.parser import parse
>>> old = parse("e(1, 2). p(x, y) :- e(x, y). q(x) :- p(x, _). r(x) :- e(x, _).")
>>> new = parse("p(x, z) :- p(x, y), e(y, z).")
>>> sorted(downstream(rewrite(combined(old, new, {})), seeds(new)))
['p', 'q']
>>> print(combined(parse("s(1). s(2)."), parse("s(x) :- t(x)."), {"s": [(2,), (5,)]}))
s(2).
s(5).
s(x) :- t(x).
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.rewrites import Clause, rewrite
from datalog.language.strata import dependencies


def combined(program: ast.Program, added: ast.Program, converted: dict[str, list[tuple]]) -> ast.Program:
    """``program`` then ``added``; each relation of ``converted`` (EDB until now, derived by the new
    rules) has its program facts replaced by facts of its current rows."""
    kept = [s for s in program.statements if not _fact_of(s, converted)]
    facts = [ast.Rule((ast.Atom(name, tuple(ast.Constant(v) for v in row)),), ())
             for name, rows in converted.items() for row in rows]
    return ast.Program(tuple(kept + facts + list(added.statements)))


def newly_derived(added: ast.Program, idb: set[str], known) -> set[str]:
    """Relations that exist and are EDB now but that rules of ``added`` derive."""
    return {c.head.relation for c in rewrite(added) if c.body and c.head.relation in known} - idb


def seeds(added: ast.Program) -> set[str]:
    """Relations whose contents the new statements change directly: heads and new inputs."""
    inputs = {d.relation for d in added.directives if d.kind == "input"}
    return {c.head.relation for c in rewrite(added)} | inputs


def downstream(all_clauses: list[Clause], start: set[str]) -> set[str]:
    """``start`` and every relation that depends on one of them, directly or not."""
    readers: dict[str, set[str]] = {}
    for clause in all_clauses:
        for relation, _, _ in dependencies(clause):
            readers.setdefault(relation, set()).add(clause.head.relation)
    reached, frontier = set(start), list(start)
    while frontier:
        for reader in readers.get(frontier.pop(), ()):
            if reader not in reached:
                reached.add(reader)
                frontier.append(reader)
    return reached


def _fact_of(statement, relations) -> bool:
    return (isinstance(statement, ast.Rule) and not statement.body and len(statement.heads) == 1
            and statement.heads[0].relation in relations)
