"""Subtypes (issue 18): the checks Soufflé makes on named types, which this engine's column
types (their primitive types, :mod:`datalog.language.types`) do not see.

``.type A <: number`` makes A a subtype of number; ``.type U = A | B`` a union that A and B are
subtypes of; ``.type Id = number`` an alias, the same type. Soufflé deduces a variable's type
from the body atoms it stands in: the most specific of their column types, none if two of them
are unrelated (``a(x), b(x)`` with A and B both subtypes of number: "unable to deduce type").
A positive atom takes a value whose type is a subtype of its column's, or of the primitive type
(a constant, an arithmetic result): so ``b(x) :- a(x).`` moving an A into a B column is an error
there, while ``b(x + 1) :- a(x).`` is not.

Only what is certain is reported: variables whose types come from plain arguments of the
clause's atoms, types made of subtypes and aliases (a union among them, or a variable also
compared with ``=``, is left alone: its type could be narrower).

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> check(parse('.type A <: number\\n.type B <: number\\n.decl a(x: A)\\n.decl b(x: B)\\nb(x) :- a(x).'))
Traceback (most recent call last):
    ...
datalog.language.errors.TypeMismatch: <input>:5:3: error[type_mismatch]: x is a A (from a) but the column x of b is a B: Soufflé needs a subtype of B here
  b(x) :- a(x).
    ^
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import TypeMismatch

PRIMITIVE = frozenset({"number", "symbol", "float", "unsigned"})


class Lattice:
    """The program's named types: each one's supertypes, and which are unions."""

    def __init__(self, declarations):
        self.aliases = {d.name: d.members[0] for d in declarations
                        if isinstance(d, ast.UnionTypeDeclaration) and len(d.members) == 1}
        self.parents: dict[str, set[str]] = {p: set() for p in PRIMITIVE}
        self.unions: set[str] = set()
        for decl in declarations:
            if isinstance(decl, ast.TypeDeclaration):
                self.parents.setdefault(self.canon(decl.name), set()).add(self.canon(decl.base))
            elif isinstance(decl, ast.UnionTypeDeclaration) and len(decl.members) > 1:
                self.unions.add(decl.name)
                self.parents.setdefault(decl.name, set())
                for member in decl.members:
                    self.parents.setdefault(self.canon(member), set()).add(decl.name)

    def canon(self, name: str) -> str:
        seen = set()
        while name in self.aliases and name not in seen:
            seen.add(name)
            name = self.aliases[name]
        return name

    def known(self, name: str) -> bool:
        return name in self.parents

    def ancestors(self, name: str) -> set[str]:
        out, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current not in out:
                out.add(current)
                todo.extend(self.parents.get(current, ()))
        return out

    def leaves(self, name: str) -> set[str]:
        """The types a value of ``name`` may have that are no union: a union's members (their
        members in turn), or ``name`` itself."""
        if name not in self.unions:
            return {name}
        return {leaf for member, parents in self.parents.items() if name in parents
                for leaf in self.leaves(member)}

    def plain(self, name: str) -> bool:
        """A subtype or primitive type whose supertypes hold no union."""
        return self.known(name) and not (self.ancestors(name) & self.unions)


def check_subtypes(ctx) -> None:
    lattice = Lattice(ctx.program.type_declarations)
    columns = {d.relation: [(c.name, lattice.canon(c.type)) for c in d.columns] for d in ctx.program.declarations}
    for clause in ctx.clauses:
        types = _deduced(clause, columns, lattice)
        compared = {v.name for lit in clause.body if isinstance(lit, ast.Comparison) and lit.op == "="
                    for v in ast.variables(lit)}
        if clause.head.relation in columns and clause.body:
            _check_head(clause.head, columns[clause.head.relation], types, compared, lattice)
            _check_head_unions(clause, columns, compared, lattice)


def _deduced(clause, columns, lattice) -> dict[str, tuple[str, str]]:
    """Variable -> (its deduced type, the relation it came from) for the variables of plain
    arguments of the body's positive atoms; ``unable to deduce`` if two are unrelated."""
    seen: dict[str, list[tuple[str, str, ast.Variable]]] = {}
    for literal in clause.body:
        if isinstance(literal, ast.Atom) and literal.relation in columns:
            for arg, (_, type_) in zip(literal.args, columns[literal.relation]):
                if isinstance(arg, ast.Variable) and lattice.plain(type_):
                    seen.setdefault(arg.name, []).append((type_, literal.relation, arg))
    out = {}
    for name, uses in seen.items():
        lowest = [u for u in uses if all(other[0] in lattice.ancestors(u[0]) for other in uses)]
        if not lowest and all(u[0] not in PRIMITIVE for u in uses):
            (a, ra, _), (b, rb, var) = next((u, v) for u in uses for v in uses
                                           if u[0] not in lattice.ancestors(v[0]) and
                                           v[0] not in lattice.ancestors(u[0]))
                                          # (a number mixing with a float is this engine's, not Soufflé's)
            raise TypeMismatch(f"unable to deduce a type for variable {name}: it is a {a} in {ra} and a "
                               f"{b} in {rb}, and neither is a subtype of the other", var.span)
        if lowest:
            out[name] = lowest[0][:2]
    return out


def _check_head(head: ast.Atom, columns, types, compared, lattice) -> None:
    for arg, (column, declared) in zip(head.args, columns):
        if not isinstance(arg, ast.Variable) or arg.name not in types or arg.name in compared:
            continue
        type_, source = types[arg.name]
        if type_ in PRIMITIVE or declared in PRIMITIVE or not lattice.plain(declared) or \
                declared in lattice.ancestors(type_):
            continue
        raise TypeMismatch(f"{arg.name} is a {type_} (from {source}) but the column {column} of "
                           f"{head.relation} is a {declared}: Soufflé needs a subtype of {declared} here",
                           arg.span)


def _check_head_unions(clause, columns, compared, lattice) -> None:
    """A variable some body atom types by a union (``B(x: U)``, ``U = S1 | S2``) may be any of
    the union's members its other atoms allow (``D(x: S1)`` narrows it to S1): moved into a
    column of a subtype, each of those must be one (Soufflé: "not a subtype of its declared
    type"). A variable also compared with ``=`` is left alone."""
    uses: dict[str, list[str]] = {}
    for literal in clause.body:
        if isinstance(literal, ast.Atom) and literal.relation in columns:
            for arg, (_, type_) in zip(literal.args, columns[literal.relation]):
                if isinstance(arg, ast.Variable) and lattice.known(type_):
                    uses.setdefault(arg.name, []).append(type_)
    for arg, (column, declared) in zip(clause.head.args, columns[clause.head.relation]):
        types = uses.get(arg.name, []) if isinstance(arg, ast.Variable) else []
        if arg.name in compared if isinstance(arg, ast.Variable) else True:
            continue
        if not any(t in lattice.unions for t in types) or declared in PRIMITIVE or declared in lattice.unions \
                or not lattice.known(declared):
            continue
        possible = {leaf for t in types for leaf in lattice.leaves(t)
                    if all(u in lattice.ancestors(leaf) for u in types)}
        wrong = sorted(leaf for leaf in possible if declared not in lattice.ancestors(leaf))
        if possible and wrong:
            raise TypeMismatch(f"{arg.name} may be a {wrong[0]} (its type is {' and '.join(types)} in the body) "
                               f"but the column {column} of {clause.head.relation} is a {declared}: Soufflé "
                               f"needs a subtype of {declared} here", arg.span)
