"""Soufflé programs and plain Datalog: which relations must be declared.

A program with any ``.decl``, ``.type``, ``.comp`` or ``.init`` is a Soufflé program, and as in
Soufflé every relation it uses (in a head, a body, a fact or a directive) needs a ``.decl``: a
misspelt head (``cann(u) :- ...`` where ``can`` is declared) is ``undefined_relation`` at the
misspelt atom, not a new relation.

A program with none of these is plain Datalog, as Nemo and Crepe read it: every relation is
inferred from its uses (arity from the first use, column types from facts and uses; an
``.input`` column nothing constrains from its values), a relation used only in bodies is empty,
and a variable that occurs only inside one negated atom is existential there (``!edge(x, y)``
with y nowhere else: no y with ``edge(x, y)``). ``.input`` may name its relations (their
columns typed from the files' values); ``.output`` and ``.printsize`` name declared relations in
either kind of program, as in Soufflé, which rejects ``f(x) :- x = 100. .output f``: plain
Datalog's relations are read in the REPL or from Python.

>>> from datalog.language.parser import parse
>>> plain(parse('p(x) :- q(x).'))
True
>>> plain(parse('.decl q(x: number)\\np(x) :- q(x).'))
False
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from datalog.language import ast
from datalog.language.errors import UndefinedRelation
from datalog.language.rewrites import Clause
from datalog.language.types import RelationInfo

_SOUFFLE = (ast.Declaration, ast.Component, ast.Instantiation, *ast.TYPE_DECLARATIONS)


def plain(program: ast.Program) -> bool:
    """No declaration of Soufflé's (relation, type, component): plain Datalog."""
    return not any(isinstance(s, _SOUFFLE) for s in program.statements)


def check_declared(ctx, atoms) -> None:
    """In a Soufflé program, the first atom (of ``atoms``, every use in source order) or
    directive whose relation has no ``.decl`` is ``undefined_relation``; in plain Datalog, the
    first ``.output`` or ``.printsize`` of one (an ``.input`` may name any relation)."""
    is_plain = plain(ctx.program)
    if not is_plain:
        for atom in atoms:
            if not _declared(ctx, atom.relation):
                raise UndefinedRelation(f"undefined relation {atom.relation}/{len(atom.args)}: it has no .decl "
                                        f"(a program with any .decl or .type declares every relation it uses)",
                                        atom.span)
    for directive in ctx.program.directives:
        if is_plain and directive.kind == "input":
            continue                                  # plain Datalog's facts from files
        if not _declared(ctx, directive.relation):
            hint = "" if not is_plain else (f" (.{directive.kind} names a declared relation, as in Soufflé; "
                                            "plain Datalog's relations are read in the REPL or Python)")
            raise UndefinedRelation(f"undefined relation {directive.relation} in .{directive.kind}: it has "
                                    f"no .decl{hint}", directive.span)


def _declared(ctx, name: str) -> bool:
    info = ctx.schema.get(name)
    return name.startswith(("_", "?")) or "@" in name or (info is not None and info.declared)


def existential_negations(ctx) -> None:
    """Plain Datalog: ``!e(x, y, y)`` where y occurs nowhere else in the rule is "no y with
    ``e(x, y, y)``": the negation of ``_exists_N(x) :- e(x, y, y).``, a clause made here (a
    variable once in the rule is a wildcard already, :func:`checks.negated_singletons`)."""
    for i, clause in enumerate(list(ctx.clauses)):
        counts = Counter(v.name for v in ast.variables((clause.head, clause.body)))
        body = []
        for literal in clause.body:
            if isinstance(literal, ast.Negation):
                own = Counter(v.name for v in ast.variables(literal.atom))
                local = {name for name, k in own.items() if counts[name] == k}
                if local:
                    literal = _exists(ctx, clause, literal, local)
            body.append(literal)
        ctx.clauses[i] = replace(clause, body=tuple(body))


def _exists(ctx, clause, negation: ast.Negation, local: set[str]) -> ast.Negation:
    atom = negation.atom
    shared = list(dict.fromkeys(v.name for v in ast.variables(atom) if v.name not in local))
    name = f"_exists_{sum(1 for n in ctx.schema if n.startswith('_exists_'))}"
    head = ast.Atom(name, tuple(ast.Variable(v, atom.span) for v in shared), atom.span)
    ctx.schema[name] = RelationInfo(name, len(shared), [None] * len(shared), False, atom.span)
    ctx.clauses.append(Clause(head, (atom,), clause.rule, len(ctx.clauses)))
    return ast.Negation(head, negation.span)
