"""Soufflé's disjoint names: a type, a relation, a component and an instance may not share a name
(Soufflé's "Name clash"), ``name_clash`` at the later of the two.

Components and instances are checked on the program as written (:func:`check_scope`, before
the components are expanded), types against relations on the expanded program
(:func:`check_types_and_relations`), where an instance's relations and types have their
qualified names (``g.r``).

>>> from datalog.language.parser import parse
>>> parse('.type t <: number\\n.comp t { }')
Traceback (most recent call last):
    ...
datalog.language.errors.NameClash: <input>:2:1: error[name_clash]: name clash on component t: it is a type already
  .comp t { }
  ^^^^^^^^^^^
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import NameClash


def _kind_and_name(stmt):
    if isinstance(stmt, ast.Component):
        return "component", stmt.type.name
    if isinstance(stmt, ast.Instantiation):
        return "instantiation", stmt.name
    if isinstance(stmt, ast.Declaration):
        return "relation", stmt.relation
    if isinstance(stmt, ast.TYPE_DECLARATIONS):
        return "type", stmt.name
    return None


def check_scope(statements) -> None:
    """The types, relations, components and instances of one scope have distinct names, kinds
    compared as Soufflé does: a component or an instance with any other kind, so two types or
    two relations of one name are left to their own checks; components' scopes, recursively."""
    kinds: dict[str, str] = {}
    for stmt in statements:
        if isinstance(stmt, ast.Component):
            check_scope(stmt.body)
    for kind, name, stmt in _named(statements, ("type", "relation")):
        kinds.setdefault(name, kind)
    for kind, name, stmt in _named(statements, ("component", "instantiation")):
        if name in kinds:
            raise NameClash(f"name clash on {kind} {name}: it is a {kinds[name]} already", stmt.span)
        kinds[name] = kind


def check_types_and_relations(program: ast.Program) -> None:
    """No relation has the name of a type (after expansion: ``g.r`` against ``g.r``)."""
    types = {d.name for d in program.type_declarations}
    for decl in program.declarations:
        if decl.relation in types:
            raise NameClash(f"name clash on relation {decl.relation}: it is a type already", decl.span)


def _named(statements, kinds):
    for stmt in statements:
        found = _kind_and_name(stmt)
        if found is not None and found[0] in kinds:
            yield found[0], found[1], stmt
