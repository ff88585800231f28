"""Soufflé's components, expanded away: every ``.init`` becomes plain statements, before the checks.

``.init a = C<number>`` copies C's declarations, types, rules, facts and directives (with those of
its bases and of the instances it holds), binds C's type parameters to the arguments, and renames
every relation and type C declares: ``r`` becomes ``a.r`` (``a.b.r`` for instance ``b`` inside
``a``), in declarations, atoms and directives. A rule whose head is not one of C's relations is
an *orphan*: it goes up to the enclosing scope (in the end, the program), its atoms renamed all
the same. A derived component's ``.override r`` drops the base's rules for r, which the base
must have declared ``overridable``. This follows Soufflé's ComponentInstantiation transform.

>>> from datalog.language.parser import parse
>>> print(parse('''
... .comp Reach<N> { .decl edge(a: N, b: N)  .decl path(a: N, b: N)
...   path(x, y) :- edge(x, y).  path(x, z) :- path(x, y), edge(y, z). }
... .init g = Reach<number>
... g.edge(1, 2).'''))
.decl g.edge(a: number, b: number)
.decl g.path(a: number, b: number)
g.path(x, y) :- g.edge(x, y).
g.path(x, z) :- g.path(x, y), g.edge(y, z).
g.edge(1, 2).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from datalog.language import ast
from datalog.language.names import check_scope
from datalog.language.errors import BadOverride, ComponentArity, ComponentCycle, Span, UnknownComponent

MAX_DEPTH = 100          # Soufflé's instantiation limit: .init inside components nested this deep


def expand(program: ast.Program) -> ast.Program:
    """The program with its components instantiated and their definitions gone; ``program``
    itself when it has none."""
    if not any(isinstance(s, (ast.Component, ast.Instantiation)) for s in program.statements):
        return program
    check_scope(program.statements)
    scopes = _Scopes(program)
    for component in scopes.every():            # overrides, as Soufflé checks them without an .init
        try:
            scopes.collect(component, {}, _Content(), [], frozenset(), MAX_DEPTH, ())
        except (UnknownComponent, ComponentArity, ComponentCycle):
            pass                                # a base known only at an instance: checked there
    out: list = []
    for stmt in program.statements:
        if isinstance(stmt, ast.Instantiation):
            orphans: list[ast.Rule] = []
            content = scopes.instantiate(stmt, None, orphans, frozenset(), {}, MAX_DEPTH)
            out.extend(content.statements() + orphans)
        elif not isinstance(stmt, ast.Component):
            out.append(stmt)
    return ast.Program(tuple(out), program.warnings)


@dataclass
class _Content:
    """What an instance holds, in Soufflé's order: types, relations, rules, directives."""

    types: list = field(default_factory=list)
    relations: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    directives: list = field(default_factory=list)

    def add(self, other: "_Content") -> None:
        self.types += other.types
        self.relations += other.relations
        self.rules += other.rules
        self.directives += other.directives

    def statements(self) -> list:
        return self.types + self.relations + self.rules + self.directives


class _Scopes:
    """Which component a name means where: the components declared in a component (and in its
    bases), then in the enclosing ones, then at the top of the program (ComponentLookup)."""

    def __init__(self, program: ast.Program):
        self.top = [s for s in program.statements if isinstance(s, ast.Component)]
        self.enclosing: dict[int, ast.Component | None] = {}
        for component in self.top:
            self._note(component, None)

    def _note(self, component: ast.Component, parent) -> None:
        self.enclosing[id(component)] = parent
        for inner in _components(component):
            self._note(inner, component)

    def every(self) -> list[ast.Component]:
        """Every component of the program, nested ones too, whose bases are components (not type
        parameters): Soufflé checks their overrides even when no ``.init`` instantiates them."""
        out, todo = [], [(c, frozenset()) for c in self.top]
        while todo:
            component, params = todo.pop(0)
            params = params | set(component.type.params)
            if not any(base.name in params for base in component.bases):     # a base known only
                out.append(component)                                        # at an instance
            todo.extend((inner, params) for inner in _components(component))
        return out

    def lookup(self, scope, name: str, binding: dict, seen=()) -> ast.Component | None:
        """The component ``name`` (a type parameter is followed once) means inside ``scope``."""
        bound = binding.get(name, name)
        while scope is not None:
            for inner in _components(scope):
                if inner.type.name == bound:
                    return inner
            for base in scope.bases:                     # components declared in a base are visible
                found = self.lookup(self.enclosing[id(scope)], base.name, binding)
                if found is not None and found is not scope and id(found) not in seen:
                    inner = self.lookup(found, name, binding, seen + (id(scope),))
                    if inner is not None:
                        return inner
            scope = self.enclosing[id(scope)]
        return next((c for c in self.top if c.type.name == bound), None)

    def resolve(self, scope, use: ast.ComponentType, binding: dict) -> tuple[ast.Component, dict]:
        """The component ``use`` names and the binding of its parameters to ``use``'s arguments."""
        component = self.lookup(scope, use.name, binding)
        if component is None:
            raise UnknownComponent(f"unknown component {use.name}: no .comp {use.name} is declared here",
                                   use.span)
        if len(component.type.params) != len(use.params):
            raise ComponentArity(f"component {component.type.name} has {len(component.type.params)} type "
                                 f"parameter(s), given {len(use.params)}", use.span)
        # parameters bind to the arguments as the enclosing binding resolves them (TypeBinding.extend)
        return component, {p: binding.get(a, a) for p, a in zip(component.type.params, use.params)}

    def instantiate(self, init: ast.Instantiation, scope, orphans: list, overridden: frozenset,
                    binding: dict, depth: int) -> _Content:
        """The content of instance ``init`` (declared in ``scope``), renamed under its name."""
        if depth == 0:
            raise ComponentCycle(f"component instantiation limit reached at {init.name} ({MAX_DEPTH} "
                                 f"nested .init)", init.span)
        component, active = self.resolve(scope, init.type, binding)
        content = _Content()
        for inner in _inits(component):
            content.add(self.instantiate(inner, component, orphans, overridden, active, depth - 1))
        self.collect(component, active, content, orphans, overridden, depth, ())
        return _renamed(content, orphans, init.name)

    def collect(self, component: ast.Component, binding: dict, content: _Content, orphans: list,
                overridden: frozenset, depth: int, deriving: tuple) -> None:
        """Add ``component``'s own statements and its bases' to ``content`` (collectContent)."""
        own_overrides = frozenset(s.relation for s in component.body if isinstance(s, ast.Override))
        from_bases = len(content.relations)
        for base in component.bases:
            base_component, active = self.resolve(self.enclosing[id(component)], base, binding)
            if id(base_component) in deriving + (id(component),):
                raise ComponentCycle(f"component {base_component.type.name} inherits from itself (through "
                                     f"{component.type.name})", base.span)
            for inner in _inits(base_component):
                content.add(self.instantiate(inner, base_component, orphans, frozenset(), active, depth - 1))
            self.collect(base_component, active, content, orphans, overridden | own_overrides, depth,
                         deriving + (id(component),))
        _check_overrides(component, content.relations[from_bases:])
        _collect_own(component, binding, content, orphans, overridden)


def _collect_own(component, binding: dict, content: _Content, orphans: list, overridden) -> None:
    """The component's own types, relations, directives and rules; a rule whose head is not a
    relation of the instance is an orphan, kept until a scope declares its relation."""
    for stmt in component.body:
        if _is_type(stmt):
            content.types.append(_bound_type(stmt, binding))
        elif isinstance(stmt, ast.Declaration):
            columns = tuple(dataclasses.replace(c, type=binding.get(c.type, c.type)) for c in stmt.columns)
            content.relations.append(dataclasses.replace(stmt, columns=columns))
        elif isinstance(stmt, (ast.Directive, ast.LimitSize)):
            content.directives.append(stmt)
    declared = {d.relation for d in content.relations}
    for stmt in component.body:
        if isinstance(stmt, (ast.Rule, ast.Subsumption)):           # a subsumption is a rule of its relation
            for rule in _single_heads(stmt) if isinstance(stmt, ast.Rule) else [stmt]:
                if rule.heads[0].relation.split(".")[0] in overridden:
                    continue                            # a derived component replaces these rules
                (content.rules if rule.heads[0].relation in declared else orphans).append(rule)
    for rule in [r for r in orphans if r.heads[0].relation in declared]:
        orphans.remove(rule)
        content.rules.append(rule)


def _check_overrides(component: ast.Component, inherited: list) -> None:
    """``.override r`` needs an inherited r declared ``overridable`` (ComponentChecker). Soufflé
    checks the declaration, not the instance: a base that is a type parameter is not known there,
    so its relations are not checked."""
    if any(base.name in component.type.params for base in component.bases):
        return
    declared = {d.relation: d for d in inherited}
    for stmt in component.body:
        if not isinstance(stmt, ast.Override):
            continue
        decl = declared.get(stmt.relation)
        if decl is None:
            raise BadOverride(f"override of non-inherited relation {stmt.relation} in component "
                              f"{component.type.name}", stmt.span)
        if not decl.overridable:
            raise BadOverride(f"override of non-overridable relation {stmt.relation} in component "
                              f"{component.type.name}: declare it `overridable` in the base", stmt.span)


_NOT_TYPES = (ast.Rule, ast.Declaration, ast.Directive, ast.LimitSize, ast.Component, ast.Instantiation,
              ast.Override, ast.Include, ast.Once, ast.FunctorDeclaration)


def _is_type(stmt) -> bool:
    """A type declaration: ``.type``, or any other kind of statement with a ``name`` (records',
    unions' and ADTs' declarations are their own classes)."""
    return not isinstance(stmt, _NOT_TYPES) and isinstance(getattr(stmt, "name", None), str)


def _bound_type(stmt, binding: dict):
    """A type declaration with the component's type parameters replaced by their arguments: in
    every name it holds (its own, its base, a union's members, a field's type)."""
    return _map_type_names(stmt, binding)


def _map_type_names(node, names: dict):
    """``node`` with each string that names a type of ``names`` replaced, in the fields of a type
    declaration and of the nodes it holds (fields, branches); never in a rule."""
    if isinstance(node, str):
        return names.get(node, node)
    if isinstance(node, tuple):
        return tuple(_map_type_names(n, names) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (Span, type)):
        return node
    changes = {f.name: _map_type_names(getattr(node, f.name), names)
               for f in dataclasses.fields(node) if f.name != "span"}
    return dataclasses.replace(node, **changes)


def _renamed(content: _Content, orphans: list, instance: str) -> _Content:
    """Every relation and type the instance declares as ``instance.name``, wherever it is used,
    orphans included."""
    types = {t.name: f"{instance}.{t.name}" for t in content.types}
    relations = {d.relation: f"{instance}.{d.relation}" for d in content.relations}
    branches = {b.name: f"{instance}.{b.name}" for t in content.types if isinstance(t, ast.AdtTypeDeclaration)
                for b in t.branches}        # $myB.branch(1), as Soufflé qualifies an instance's ADT branches

    def rename(node):
        return _rename(node, relations, types, branches)
    orphans[:] = [rename(r) for r in orphans]
    return _Content([_rename_branches(_map_type_names(t, types), branches) for t in content.types],
                    [rename(d) for d in content.relations],
                    [rename(r) for r in content.rules], [rename(d) for d in content.directives])


def _rename_branches(decl, branches: dict):
    """An ADT's declaration with its branches' names qualified by the instance (others unchanged)."""
    if not isinstance(decl, ast.AdtTypeDeclaration):
        return decl
    renamed = tuple(dataclasses.replace(b, name=branches.get(b.name, b.name)) for b in decl.branches)
    return dataclasses.replace(decl, branches=renamed)


def _rename(node, relations: dict, types: dict, branches: dict | None = None):
    """``node`` rebuilt with relation names (atoms, declarations, directives), type names
    (declarations, columns, ``as(x, T)``) and ADT branch names (``$B(...)``) mapped; any AST node,
    including ones this module does not know."""
    branches = branches or {}
    if isinstance(node, tuple):
        return tuple(_rename(n, relations, types, branches) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (Span, type)):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name == "span":
            continue
        if f.name == "relation" and isinstance(value, str):
            changes[f.name] = relations.get(value, value)
        elif isinstance(value, str) and f.name == "type" and isinstance(node, (ast.Column, ast.Cast)):
            changes[f.name] = types.get(value, value)
        elif isinstance(value, str) and f.name == "name" and isinstance(node, ast.BranchTerm):
            changes[f.name] = branches.get(value, value)
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            changes[f.name] = _rename(value, relations, types, branches)
    return dataclasses.replace(node, **changes)


def _single_heads(rule: ast.Rule) -> list[ast.Rule]:
    """``a(x), b(x) :- c(x).`` as one rule per head, as Soufflé keeps them (an override names one)."""
    if len(rule.heads) == 1:
        return [rule]
    return [dataclasses.replace(rule, heads=(head,)) for head in rule.heads]


def _components(component: ast.Component) -> list[ast.Component]:
    return [s for s in component.body if isinstance(s, ast.Component)]


def _inits(component: ast.Component) -> list[ast.Instantiation]:
    return [s for s in component.body if isinstance(s, ast.Instantiation)]
