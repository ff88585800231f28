"""Programs Soufflé rejects, rejected here too: the checks of its semantic checker that the
engine's own checks (:mod:`datalog.language.checks`) do not make, one function each, each a
coded error at the offending declaration, directive, plan item or term.

- two columns of one ``.decl`` with one name (``duplicate_attribute``);
- a type declared twice, or a predefined type declared (``redefined_type``); a subtype of a
  record type or an ADT (``invalid_subtype``);
- a relation that is also a type (``name_clash``; components and instances in
  :mod:`datalog.language.names`);
- ``.printsize`` twice for one relation (``redefined_directive``);
- ``$``/``autoinc()`` in a recursive rule, whose fixpoint never comes (``recursive_counter``);
- a ``.plan`` on a non-recursive rule, for a version the rule does not have, or whose order is
  not a permutation of the rule's atoms (``invalid_plan``);
- two aggregates of a rule each using a variable that only the other binds
  (``dependent_aggregates``).

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> check(parse('.decl a(x: number)\\na(1).\\na($) :- a(_).'))
Traceback (most recent call last):
    ...
datalog.language.errors.RecursiveCounter: <input>:3:3: error[recursive_counter]: autoinc() in a recursive rule of a: each round would number new tuples, so the fixpoint never comes
  a($) :- a(_).
    ^
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import (DependentAggregates, DuplicateAttribute, InvalidPlan, InvalidSubtype,
                                     RecursiveCounter, RedefinedDirective, RedefinedType)
from datalog.language.names import check_types_and_relations
from datalog.language.strata import recursive_components
from datalog.language.types import PRIMITIVES
from datalog.language.variables import bound_variables


def check_declarations(ctx) -> None:
    """Columns, types and names as Soufflé's semantic checker wants them (before types are read)."""
    for decl in ctx.program.declarations:
        seen = set()
        for column in decl.columns:
            if column.name in seen:
                raise DuplicateAttribute(f"column {column.name} of {decl.relation} is declared twice",
                                         column.span or decl.span)
            seen.add(column.name)
    types: dict[str, object] = {}
    for decl in ctx.program.type_declarations:
        if decl.name in PRIMITIVES:
            raise RedefinedType(f"{decl.name} is a predefined type: it cannot be declared again", decl.span)
        if decl.name in types:
            where = types[decl.name].span
            raise RedefinedType(f"type {decl.name} is declared twice (first at {where})", decl.span)
        types[decl.name] = decl
    for decl in ctx.program.type_declarations:
        base = types.get(getattr(decl, "base", None))
        if isinstance(decl, ast.TypeDeclaration) and _composite(base, types):
            raise InvalidSubtype(f"subtype {decl.name} cannot be derived from {decl.base}, a record type or "
                                 f"an ADT: only primitive types and their subtypes have subtypes", decl.span)
    check_types_and_relations(ctx.program)
    printed: dict[str, ast.Directive] = {}
    for directive in ctx.directives("printsize"):
        if directive.relation in printed:
            raise RedefinedDirective(f".printsize {directive.relation} is given twice (first at "
                                     f"{printed[directive.relation].span})", directive.span)
        printed[directive.relation] = directive


def _composite(decl, types, seen=()) -> bool:
    """Whether the type ``decl`` declares is a record type or an ADT (through aliases)."""
    if isinstance(decl, (ast.RecordTypeDeclaration, ast.AdtTypeDeclaration)):
        return True
    if isinstance(decl, ast.UnionTypeDeclaration) and len(decl.members) == 1 and decl.name not in seen:
        return _composite(types.get(decl.members[0]), types, (*seen, decl.name))
    return False


def check_recursion(ctx) -> None:
    """Counters in recursive rules; ``.plan`` items against the rule's recursion and atoms."""
    scc = recursive_components(ctx.clauses)
    for clause in ctx.clauses:
        component = scc.get(clause.head.relation, frozenset())
        if not component or not any(rel in component for rel in _body_relations(clause.body)):
            continue
        for node in ast.walk((clause.head, clause.body)):
            if isinstance(node, ast.Functor) and node.name == "autoinc":
                raise RecursiveCounter(f"autoinc() in a recursive rule of {clause.head.relation}: each round "
                                       f"would number new tuples, so the fixpoint never comes",
                                       node.span or clause.rule.span)
    for rule in ctx.program.rules:
        if rule.plan and "@" not in rule.heads[0].relation:     # not a subsumption's dominance clause
            atoms = [lit for lit in rule.body if isinstance(lit, ast.Atom)]
            _check_plan(rule, atoms, scc.get(rule.heads[0].relation, frozenset()))
    for sub in ctx.program.subsumptions:
        if sub.plan:
            atoms = [sub.dominated, sub.dominating, *(lit for lit in sub.body if isinstance(lit, ast.Atom))]
            _check_plan(sub, atoms, scc.get(sub.dominated.relation, frozenset()) | {sub.dominated.relation})


def _body_relations(body):
    for node in ast.walk(body):
        if isinstance(node, ast.Atom):
            yield node.relation


def _check_plan(rule, atoms, component) -> None:
    spans = rule.plan_spans or (rule.span,) * len(rule.plan)
    versions = sum(1 for atom in atoms if atom.relation in component)
    if not versions:
        raise InvalidPlan(f"a .plan for a rule of {rule.heads[0].relation} that is not recursive: it has one "
                          f"version, whose order the variable order chooses (remove the .plan)", spans[0])
    for (version, order), span in zip(rule.plan, spans):
        if len(order) != len(atoms):
            raise InvalidPlan(f"the .plan order {order} of version {version} names {len(order)} atom"
                              f"{'s' * (len(order) != 1)}; the rule has {len(atoms)}", span)
        if sorted(order) != list(range(1, len(atoms) + 1)):
            raise InvalidPlan(f"the .plan order {order} of version {version} is not an order of the rule's "
                              f"atoms 1..{len(atoms)} (each once)", span)
        if version >= versions:
            raise InvalidPlan(f"a .plan for version {version}: this rule has versions 0..{versions - 1} "
                              f"(one per atom of its recursion)", span)


def check_aggregate_dependencies(ctx) -> None:
    """Soufflé's "mutually dependent aggregate": of two aggregate literals of one rule, each uses
    a variable that the other grounds and it does not."""
    for clause in ctx.clauses:
        literals = [lit for lit in clause.body if any(isinstance(n, ast.Aggregate) for n in ast.walk(lit))]
        grounds = [(lit, _grounded(lit), {v.name for v in ast.variables(lit)}) for lit in literals]
        for i, (lit, ground, names) in enumerate(grounds):
            for other, other_ground, other_names in grounds[i + 1:]:
                if (names & other_names & (other_ground - ground)) and \
                        (names & other_names & (ground - other_ground)):
                    agg = next(n for n in ast.walk(lit) if isinstance(n, ast.Aggregate))
                    raise DependentAggregates(
                        f"mutually dependent aggregates in a rule of {clause.head.relation}: each uses a variable "
                        f"only the other binds ({', '.join(sorted(names & other_names & (other_ground - ground)))} "
                        f"here, {', '.join(sorted(names & other_names & (ground - other_ground)))} there)",
                        agg.span or lit.span)


def _grounded(literal) -> set[str]:
    """The variables ``literal`` alone grounds: its own (an assignment's target) and those its
    aggregates' bodies bind."""
    out = set(bound_variables((literal,)))
    for node in ast.walk(literal):
        if isinstance(node, ast.Aggregate):
            out |= bound_variables(node.body)
    return out
