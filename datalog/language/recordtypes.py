"""The types of records and ADTs (issue 18): declaring them, and typing the terms that build
or take apart their values.

A ``.type`` declaration gives an entry of the program's type table (``Checked.aliases``): an
alias or subtype (``.type Even <: number``) names its base; a union ``.type U = A | B`` of
subtypes of one primitive type is that primitive (Soufflé refuses a union that mixes
primitives, or takes in a record or ADT); a record type or an ADT is a
:class:`~datalog.language.composites.CompositeType`. Two branches of the program's ADTs may
not share a name (a branch term names its ADT).

A record term is typed by where it stands: a column or a field of a record type takes a
record term of that arity (or ``nil``), a column of an ADT a branch of that ADT with its
arguments; the variables of a pattern take the types of the fields they stand in.

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> c = check(parse('.type P = [a: number, b: symbol]\\n.decl r(p: P)\\n.decl q(y: symbol)\\nq(y) :- r([_, y]).'))
>>> c.schema["q"].types, c.aliases["P"].fields
(['symbol'], ('number', 'symbol'))
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.composites import NIL, AdtType, Branch, Record, RecordType
from datalog.language.errors import TypeMismatch
from datalog.language.types import PRIMITIVES, resolve_type


def declare(decl, aliases: dict) -> object:
    """The type table's entry for one ``.type`` declaration."""
    resolve = lambda name, span: resolve_type(name, aliases, span)     # noqa: E731 (fields, later)
    if isinstance(decl, ast.RecordTypeDeclaration):
        return RecordType(decl.name, decl, resolve)
    if isinstance(decl, ast.AdtTypeDeclaration):
        return AdtType(decl.name, decl, resolve)
    if isinstance(decl, ast.UnionTypeDeclaration):
        return decl.members[0]              # checked by check_declarations: all of one primitive (or an alias)
    return decl.base


def check_declarations(declarations, aliases: dict) -> None:
    """Unions of one primitive; record fields and branch arguments of known types; branch
    names unique among the program's ADTs."""
    branches: dict[str, str] = {}
    for decl in declarations:
        if isinstance(decl, ast.UnionTypeDeclaration):
            _check_union(decl, aliases)
        elif isinstance(decl, ast.RecordTypeDeclaration):
            aliases[decl.name].fields                                   # resolves (or raises)
        elif isinstance(decl, ast.AdtTypeDeclaration):
            aliases[decl.name].branches
            for branch in decl.branches:
                if branch.name in branches:
                    raise TypeMismatch(f"branch {branch.name} of {decl.name} is already a branch of "
                                       f"{branches[branch.name]}", branch.span)
                branches[branch.name] = decl.name


def _check_union(decl: ast.UnionTypeDeclaration, aliases: dict) -> None:
    if len(decl.members) == 1:          # an alias: `.type Id = number`, `.type Path = List`
        resolve_type(decl.members[0], aliases, decl.span)
        return
    kinds = {}
    for member in decl.members:
        kind = resolve_type(member, aliases, decl.span)
        if getattr(kind, "is_composite", False):
            raise TypeMismatch(f"union type {decl.name} takes in {member}, a {kind.kind} type; a union "
                               f"joins subtypes of one primitive type", decl.span)
        kinds.setdefault(kind, member)
    if len(kinds) > 1:
        shown = " and ".join(f"{m} ({k})" for k, m in kinds.items())
        raise TypeMismatch(f"union type {decl.name} mixes {shown}", decl.span)


def is_composite(type_) -> bool:
    return getattr(type_, "is_composite", False)


def branch_type(aliases: dict, term: ast.BranchTerm) -> AdtType:
    """The ADT of which ``term`` names a branch."""
    for entry in aliases.values():
        if getattr(entry, "kind", None) == "adt" and term.name in entry.branches:
            return entry
    raise TypeMismatch(f"${term.name} is a branch of no declared ADT", term.span)


def parts(term, column, aliases: dict) -> list[tuple[object, str]]:
    """The arguments of a record or branch term, each with the type its place takes; a
    TypeMismatch if the term cannot stand where ``column`` is expected."""
    if isinstance(term, ast.Nil):
        if getattr(column, "kind", "record") != "record":
            raise TypeMismatch(f"nil is a record but a {column} is expected here", term.span)
        return []
    if isinstance(term, ast.RecordTerm):
        if column in (None, "auto"):
            return [(arg, None) for arg in term.args]
        if getattr(column, "kind", None) != "record":
            raise TypeMismatch(f"the record {term} stands where a {column} is expected", term.span)
        if len(column.fields) != len(term.args):
            raise TypeMismatch(f"the record {term} has {len(term.args)} field{'s' * (len(term.args) != 1)} "
                               f"but {column} has {len(column.fields)}", term.span)
        return list(zip(term.args, column.fields))
    adt = branch_type(aliases, term)
    if column not in (None, "auto") and column != adt:
        raise TypeMismatch(f"${term.name} is a branch of {adt} but a {column} is expected here", term.span)
    types = adt.branches[term.name]
    if len(types) != len(term.args):
        raise TypeMismatch(f"${term.name} takes {len(types)} argument{'s' * (len(types) != 1)}, "
                           f"got {len(term.args)}", term.span)
    return list(zip(term.args, types))


def cast_type(aliases: dict, term: ast.Cast) -> str:
    return resolve_type(term.type, aliases, term.span)


def bind_pattern(term, column, aliases: dict, env: dict) -> None:
    """The variables of a pattern take the types of the fields they stand in."""
    if isinstance(term, ast.Variable) and column not in (None, "auto") and term.name not in env:
        env[term.name] = column
    elif isinstance(term, (ast.RecordTerm, ast.BranchTerm)):
        for arg, type_ in parts(term, column, aliases):
            bind_pattern(arg, type_, aliases, env)


def is_ground(term) -> bool:
    """A constant, ``nil``, or a record or branch term of ground terms (``[1, "a"]``,
    ``$Circle(5)``): what a change of an updates file or a transaction may hold."""
    if isinstance(term, (ast.Constant, ast.Nil)):
        return True
    return isinstance(term, ast.STRUCTURED) and all(map(is_ground, term.args))


def value_of(term):
    """The value of a ground term (a Record or Branch for a record or branch term)."""
    if isinstance(term, ast.Constant):
        return term.value
    if isinstance(term, ast.Nil):
        return NIL
    values = [value_of(arg) for arg in term.args]
    return Record(values) if isinstance(term, ast.RecordTerm) else Branch([term.name] + values)


def primitive(type_) -> bool:
    return type_ in PRIMITIVES.values()
