"""Checks that run before anything is evaluated: one function per check, in order.

Each check reads and fills a :class:`Checked` context and raises a :class:`DatalogError` with
the span of the offending node. A program that passes every check in :data:`CHECKS` is
evaluated; one that fails any is not. The checks of types are in
:mod:`datalog.language.typecheck`; stratification is a stage of its own (:mod:`datalog.language.strata`).

>>> from datalog.language.parser import parse
>>> checked = check(parse('.decl e(a: number, b: number)\\n.decl p(a: number, b: number)\\np(x, y) :- e(x, y).'))
>>> [str(c) for c in checked.clauses], checked.schema["p"].types
(['p(x, y) :- e(x, y).'], ['number', 'number'])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from datalog.language import ast, recordtypes, rejections
from datalog.language.errors import (AggregateInHead, ArityMismatch, DatalogWarning, RedefinedRelation,
                                     UnboundVariable, UndefinedRelation, UnknownDirective, UnsafeNegation,
                                     Unsupported, WildcardInHead)
from datalog.language.declared import check_declared, existential_negations, plain
from datalog.language.lints import warn_empty_relations, warn_singleton_variables
from datalog.language.rewrites import Clause, dnf, rewrite
from datalog.language.strata import Stratum
from datalog.language.subtypes import check_subtypes
from datalog.language.mixed import mixed_constants
from datalog.language.typecheck import check_types, infer_types, mark_unsigned, unsigned_ranges
from datalog.language.types import RelationInfo, resolve_type
from datalog.language.variables import aggregate_outer_variables, bound_variables, free_variables


@dataclass
class Checked:
    """A program and what the checks found: type aliases, the schema (every relation's arity and
    column types, inferred where undeclared), its clauses (from the rewrite stage) and, once the
    stratify stage ran, its strata."""

    program: ast.Program
    aliases: dict[str, str] = field(default_factory=dict)
    schema: dict[str, RelationInfo] = field(default_factory=dict)
    clauses: list[Clause] = field(default_factory=list)
    strata: list[Stratum] = field(default_factory=list)
    warnings: list[DatalogWarning] = field(default_factory=list)    # never blocking; see errors.py

    def directives(self, kind: str) -> list[ast.Directive]:
        return [d for d in self.program.directives if d.kind == kind]


def check(program: ast.Program, clauses: list[Clause] | None = None,
          known: dict[str, RelationInfo] | None = None) -> Checked:
    """Run :data:`CHECKS` in order on ``program`` and its ``clauses`` (the rewrite stage's; made
    here if not given); ``known``: relations declared before (a REPL's)."""
    ctx = Checked(program, schema=dict(known or {}), clauses=rewrite(program) if clauses is None else clauses,
                  warnings=list(program.warnings))
    for step in CHECKS:
        step(ctx)
    return ctx


# ---------------------------------------------------------------- declarations

def declare_types(ctx: Checked) -> None:
    for decl in ctx.program.type_declarations:
        ctx.aliases[decl.name] = recordtypes.declare(decl, ctx.aliases)    # unions, records, ADTs: issue 18
    for decl in ctx.program.type_declarations:
        resolve_type(decl.name, ctx.aliases, decl.span)
    recordtypes.check_declarations(ctx.program.type_declarations, ctx.aliases)


def declare_relations(ctx: Checked) -> None:
    for decl in ctx.program.declarations:
        if decl.relation in ctx.schema and ctx.schema[decl.relation].declared:
            raise RedefinedRelation(f"relation {decl.relation} is declared twice", decl.span)
        types = [resolve_type(c.type, ctx.aliases, c.span) for c in decl.columns]
        ctx.schema[decl.relation] = RelationInfo(decl.relation, decl.arity, types, True, decl.span,
                                                 [c.name for c in decl.columns])


def check_arity(ctx: Checked) -> None:
    """Every use of a relation has the declared arity (or the arity of its first use)."""
    # relations the rewrites made (range's, which may have no fact: range(5, 5))
    made = [atom for clause in ctx.clauses for atom in (clause.head, *_body_atoms(clause.body))
            if atom.relation.startswith("_range_")]
    for atom in [*_all_atoms(ctx.program), *made]:
        info = ctx.schema.get(atom.relation)
        if info is None:
            ctx.schema[atom.relation] = RelationInfo(atom.relation, len(atom.args), [None] * len(atom.args),
                                                     False, atom.span)
        elif info.arity != len(atom.args):
            where = "declared" if info.declared else "first used"
            raise ArityMismatch(f"{atom.relation} is {where} with arity {info.arity} but used here with "
                                f"{len(atom.args)} argument{'s' * (len(atom.args) != 1)}", atom.span)


def check_undefined(ctx: Checked) -> None:
    """A relation read by a rule or a directive must be declared, given facts, derived or input;
    in a Soufflé program every relation needs a ``.decl`` (:mod:`datalog.language.declared`);
    in plain Datalog one only read is empty."""
    check_declared(ctx, _all_atoms(ctx.program))
    for directive in ctx.program.directives:
        if directive.relation not in ctx.schema:          # no .decl and no use: arity unknown
            raise UndefinedRelation(f"undefined relation {directive.relation} in .{directive.kind}",
                                    directive.span)


# Soufflé's I/O parameters (``name`` renames the file, table or printed block; ``dbname`` is
# SQLite's; ``attributeNames`` replaces an output's header line) and our Spark ones.
_COMMON = {"io", "filename", "delimiter", "headers", "rfc4180", "compress", "name", "dbname",
           "table", "path", "format"}
KNOWN_PARAMETERS = {"input": _COMMON | {"query", "columns", "append_only", "partitioned", "cdf"},
                    "output": _COMMON | {"mode", "attributenames"},
                    "printsize": set()}
KNOWN_IO = {"input": ("file", "stdin", "sqlite", "jsonfile", "spark", "delta"),
            "output": ("file", "stdout", "sqlite", "jsonfile", "json", "stdoutprintsize", "spark"),
            "printsize": ("file",)}


def check_directives(ctx: Checked) -> None:
    for directive in ctx.program.directives:
        for key, value in directive.params:
            if key.lower() not in KNOWN_PARAMETERS[directive.kind]:
                raise UnknownDirective(f"unknown parameter {key} for .{directive.kind} {directive.relation}",
                                       directive.span)
        io = directive.io
        if io not in KNOWN_IO[directive.kind]:
            raise UnknownDirective(f"unknown IO={io} for .{directive.kind} {directive.relation} "
                                   f"(use {', '.join(KNOWN_IO[directive.kind])})", directive.span)
        if directive.kind == "input":
            _check_change_flags(directive)
        if io in ("spark", "delta"):
            check_spark_directive(directive)
            _refuse_spark_records(ctx, directive)
        if io == "sqlite" and ctx.schema[directive.relation].arity == 0:
            raise UnknownDirective(f"IO=sqlite cannot hold the nullary relation {directive.relation}: "
                                   f"a SQLite table needs a column", directive.span)
        if directive.param("rfc4180", "").lower() == "true" and '"' in (directive.param("delimiter") or ""):
            raise UnknownDirective(f"the delimiter of {directive.relation} holds '\"', which rfc4180=true "
                                   f"uses to quote fields", directive.span)


def _refuse_spark_records(ctx: Checked, directive: ast.Directive) -> None:
    """Records and ADTs (issue 18) have no Spark column type here: refused, not mangled."""
    info = ctx.schema.get(directive.relation)
    for type_ in info.types if info else ():
        if recordtypes.is_composite(type_):
            raise Unsupported(f"IO=spark cannot {'read' if directive.kind == 'input' else 'write'} "
                              f"{directive.relation}: its column of type {type_} holds records or ADTs",
                              directive.span)


SPARK_FORMATS, SPARK_MODES = ("parquet", "orc", "json", "csv"), ("overwrite", "merge")


def check_spark_directive(directive: ast.Directive) -> None:
    """``IO=spark``: an input names one of ``table``/``path``/``query``, an output one of
    ``table``/``path``; ``format`` and ``mode`` take the values Spark is asked for. A source that
    carries its own changes (:mod:`datalog.spark.feeds`): ``append_only=true`` or
    ``partitioned=true`` (one of them) on a ``table=`` or ``path=``; ``IO=delta`` names a
    ``path=`` and may say ``cdf=true``."""
    _check_change_flags(directive)
    if directive.io == "delta":
        if directive.param("path") is None or any(directive.param(k) is not None for k in ("table", "query", "format")):
            raise UnknownDirective(f".input {directive.relation}(IO=delta) needs path= (a Delta Lake table's "
                                   f"directory) and no table=, query= or format=", directive.span)
        return
    where = ("table", "path", "query") if directive.kind == "input" else ("table", "path")
    given = [k for k in where if directive.param(k) is not None]
    if len(given) != 1:
        raise UnknownDirective(f".{directive.kind} {directive.relation}(IO=spark) needs exactly one of "
                               f"{', '.join(k + '=' for k in where)} (found {len(given) or 'none'})", directive.span)
    fmt = (directive.param("format") or "parquet").lower()
    if fmt not in SPARK_FORMATS:
        raise UnknownDirective(f"format={fmt} for {directive.relation} (use {', '.join(SPARK_FORMATS)})",
                               directive.span)
    mode = (directive.param("mode") or "overwrite").lower()
    if directive.kind == "output" and mode not in SPARK_MODES:
        raise UnknownDirective(f"mode={mode} for {directive.relation} (use overwrite or merge)", directive.span)


def flag(directive: ast.Directive, key: str) -> bool:
    """A ``true``/``false`` directive parameter (absent: false)."""
    return (directive.param(key) or "false").strip().lower() == "true"


def _check_change_flags(directive: ast.Directive) -> None:
    for key in ("append_only", "partitioned", "cdf"):
        value = directive.param(key)
        if value is not None and value.strip().lower() not in ("true", "false"):
            raise UnknownDirective(f"{key}={value} for {directive.relation} (use true or false)", directive.span)
    if flag(directive, "cdf") and directive.io != "delta":
        raise UnknownDirective(f"cdf=true for {directive.relation} needs IO=delta (a Delta Lake table's change "
                               f"data feed)", directive.span)
    kinds = [k for k in ("append_only", "partitioned") if flag(directive, k)]
    if kinds and directive.io != "spark":
        raise UnknownDirective(f"{kinds[0]}=true for {directive.relation} needs IO=spark", directive.span)
    if len(kinds) > 1:
        raise UnknownDirective(f"{directive.relation} says both append_only=true and partitioned=true; an "
                               f"append-only source reads its new files already (name one)", directive.span)
    if kinds and directive.param("query") is not None:
        raise UnknownDirective(f"{kinds[0]}=true for {directive.relation} needs table= or path= (files whose "
                               f"metadata a refresh compares), not query=", directive.span)


# ---------------------------------------------------------------- rule shape

def check_wildcard_in_head(ctx: Checked) -> None:
    for clause in ctx.clauses:
        for arg in clause.head.args:
            for node in ast.subterms(arg):
                if isinstance(node, ast.Wildcard):
                    raise WildcardInHead(f"the head of {clause.head.relation} uses the wildcard _; "
                                         f"heads need a value in every column", node.span or clause.head.span)
                if isinstance(node, ast.Aggregate):
                    raise AggregateInHead(f"the head of {clause.head.relation} holds an aggregate; bind it "
                                          f"in the body: {clause.head.relation}(n) :- n = {node}.",
                                          node.span or clause.head.span)


def check_safety(ctx: Checked) -> None:
    """Head, comparison and negated variables must be bound by a positive atom (or an assignment)."""
    for clause in ctx.clauses:
        bound = bound_variables(clause.body)
        _check_body_safety(clause.body, bound)
        for var in ast.variables(clause.head):
            if var.name not in bound:
                raise UnboundVariable(f"variable {var.name} in the head of {clause.head.relation} is not "
                                      f"bound by a positive atom", var.span)


def _check_body_safety(body, bound) -> None:
    for literal in body:
        if isinstance(literal, (ast.Atom, ast.Negation)):
            _check_no_wildcard_in_expressions(literal if isinstance(literal, ast.Atom) else literal.atom,
                                              patterns=True)
        if isinstance(literal, ast.Negation):
            for arg in literal.atom.args:
                for var in free_variables(arg):
                    if var.name not in bound:
                        raise UnsafeNegation(f"variable {var.name} occurs only under negation in "
                                             f"!{literal.atom.relation}(...); bind it with a positive atom",
                                             var.span)
        elif isinstance(literal, ast.Comparison):
            # the side that is a lone variable last: in `q = q1 * q3` blame q3, not q
            for side in sorted((literal.left, literal.right), key=lambda t: isinstance(t, ast.Variable)):
                if isinstance(side, ast.Wildcard):          # `_ = _`, `x < _`: no value (only a record's field matches any)
                    raise UnboundVariable("the wildcard _ cannot be compared", side.span or literal.span)
                for node in _expression_subterms(side, literal.op == "="):
                    if isinstance(node, ast.Wildcard):
                        raise UnboundVariable("the wildcard _ cannot be compared", node.span or literal.span)
                for var in free_variables(side):
                    if var.name not in bound:
                        raise UnboundVariable(f"variable {var.name} in {literal} is not bound by a "
                                              f"positive atom", var.span)
        elif isinstance(literal, ast.Atom):
            for arg in literal.args:
                if not isinstance(arg, (ast.Variable, ast.Wildcard, ast.Constant)):
                    for var in free_variables(arg):
                        if var.name not in bound:
                            raise UnboundVariable(f"variable {var.name} in the expression {arg} is not bound "
                                                  f"by a positive atom", var.span)
        for agg in _aggregates(literal):
            _check_aggregate(agg, bound, body)


def _expression_subterms(term, patterns: bool):
    """The sub-terms of ``term`` that are computed; with ``patterns`` (records, issue 18) not
    those standing as fields of a record or branch term, which are matched (``_`` matches any)."""
    if patterns and isinstance(term, ast.Wildcard):
        return
    if patterns and isinstance(term, ast.STRUCTURED):
        for arg in term.args:
            if not isinstance(arg, (ast.Variable, ast.Wildcard, ast.Constant)):
                yield from _expression_subterms(arg, patterns)
    else:
        yield from ast.subterms(term)


def _check_no_wildcard_in_expressions(atom: ast.Atom, patterns: bool = False) -> None:
    for arg in atom.args:
        if not isinstance(arg, (ast.Variable, ast.Wildcard, ast.Constant)):
            for node in _expression_subterms(arg, patterns):
                if isinstance(node, ast.Wildcard):
                    raise UnboundVariable(f"the wildcard _ has no value to compute with in {arg} "
                                          f"(argument of {atom.relation}); use a variable",
                                          node.span or atom.span)


def _check_aggregate(agg: ast.Aggregate, outer_bound, body) -> None:
    outer = {v.name for v in aggregate_outer_variables(agg, body)} & set(outer_bound)
    for alternative in dnf(agg.body):
        inner = bound_variables(alternative, outer)
        _check_body_safety(alternative, inner)
        if agg.target is not None:
            for var in free_variables(agg.target):
                if var.name not in inner:
                    raise UnboundVariable(f"variable {var.name} aggregated by {agg.kind} is not bound in "
                                          f"the aggregate body", var.span)


# ---- functors (issue 18): singleton variables under negation

def negated_singletons(ctx: Checked) -> None:
    """``p(x) :- q(x), !r(x, y).``: y occurs once in the rule, under the negation, so it is a
    wildcard (as in Soufflé): ``!r(x, _)``. Its warning is the singleton warning every variable
    that occurs once gets (lints.py)."""
    for i, clause in enumerate(ctx.clauses):
        counts = Counter(v.name for v in ast.variables((clause.head, clause.body)))
        lonely = {name for name, k in counts.items() if k == 1}
        if not lonely or not any(isinstance(lit, ast.Negation) for lit in clause.body):
            continue
        body = tuple(_wildcards(lit, lonely, ctx) if isinstance(lit, ast.Negation) else lit
                     for lit in clause.body)
        ctx.clauses[i] = replace(clause, body=body)
    if plain(ctx.program):
        existential_negations(ctx)


def _wildcards(negation: ast.Negation, lonely: set[str], ctx: Checked) -> ast.Negation:
    args = []
    for arg in negation.atom.args:
        args.append(ast.Wildcard(arg.span) if isinstance(arg, ast.Variable) and arg.name in lonely else arg)
    return ast.Negation(ast.Atom(negation.atom.relation, tuple(args), negation.atom.span), negation.span)


CHECKS = (
    rejections.check_declarations,      # Soufflé's semantic checks (rejections.py)
    declare_types,
    declare_relations,
    check_arity,
    check_undefined,
    check_directives,
    check_wildcard_in_head,
    negated_singletons,
    check_safety,
    rejections.check_recursion,
    rejections.check_aggregate_dependencies,
    unsigned_ranges,                    # x = range(1, 10) where x is an unsigned (issue 18)
    infer_types,
    check_types,
    mixed_constants,                    # a mixed column's int constants as MixedNumbers (mixed.py)
    mark_unsigned,                      # unsigned operations, for the evaluators (issue 18)
    warn_singleton_variables,       # Soufflé's warnings (lints.py), never blocking
    warn_empty_relations,
    check_subtypes,                     # named subtypes as Soufflé checks them (issue 18)
)


# ---------------------------------------------------------------- walking the AST

def _all_atoms(program: ast.Program, heads: bool = True):
    for rule in program.rules:
        if heads:
            yield from rule.heads
        for head in rule.heads:                     # e(count : { q(_) }): q is read (issue 18)
            yield from _aggregate_atoms(head.args)
        yield from _body_atoms(rule.body)


def _body_atoms(body):
    for literal in body:
        if isinstance(literal, ast.Atom):
            yield literal
            yield from _aggregate_atoms(literal.args)
        elif isinstance(literal, ast.Negation):
            yield literal.atom
            yield from _aggregate_atoms(literal.atom.args)      # !q(count : { r() })
        elif isinstance(literal, ast.Disjunction):
            for alt in literal.alternatives:
                yield from _body_atoms(alt)
        elif isinstance(literal, ast.Comparison):
            yield from _aggregate_atoms((literal.left, literal.right))


def _aggregate_atoms(terms):
    for term in terms:
        for node in ast.subterms(term):
            if isinstance(node, ast.Aggregate):
                yield from _body_atoms(node.body)


def _aggregates(literal):
    sides = ()
    if isinstance(literal, ast.Comparison):
        sides = (literal.left, literal.right)
    elif isinstance(literal, ast.Atom):
        sides = literal.args
    for side in sides:
        for node in ast.subterms(side):
            if isinstance(node, ast.Aggregate):
                yield node
