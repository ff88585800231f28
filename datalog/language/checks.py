"""Checks that run before anything is evaluated: one function per check, in order.

Each check reads and fills a :class:`Checked` context and raises a
:class:`DatalogError` with the span of the offending node. A program that
passes every check in :data:`CHECKS` is evaluated; one that fails any is not.

>>> from datalog.language.parser import parse
>>> checked = check(parse('.decl e(a: number, b: number)\\np(x, y) :- e(x, y).'))
>>> [s.relations for s in checked.strata], checked.schema["p"].types
([('e',), ('p',)], ['number', 'number'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.language import ast
from datalog.language.errors import (ArityMismatch, DatalogError, RedefinedRelation, TypeMismatch, UnboundVariable,
                            UndefinedRelation, UnknownDirective, UnsafeNegation, WildcardInHead, AggregateInHead)
from datalog.language.rewrites import Clause, dnf, rewrite
from datalog.language.types import AUTO, RelationInfo, compatible, resolve_type, value_type
from datalog.language.strata import Stratum, stratify


@dataclass
class Checked:
    program: ast.Program
    aliases: dict[str, str] = field(default_factory=dict)
    schema: dict[str, RelationInfo] = field(default_factory=dict)
    clauses: list[Clause] = field(default_factory=list)
    strata: list[Stratum] = field(default_factory=list)

    def directives(self, kind: str) -> list[ast.Directive]:
        return [d for d in self.program.directives if d.kind == kind]


def check(program: ast.Program, known: dict[str, RelationInfo] | None = None) -> Checked:
    ctx = Checked(program, schema=dict(known or {}))
    for step in CHECKS:
        step(ctx)
    return ctx


# ---------------------------------------------------------------- declarations

def declare_types(ctx: Checked) -> None:
    for decl in ctx.program.type_declarations:
        ctx.aliases[decl.name] = decl.base
    for decl in ctx.program.type_declarations:
        resolve_type(decl.name, ctx.aliases, decl.span)


def declare_relations(ctx: Checked) -> None:
    for decl in ctx.program.declarations:
        if decl.relation in ctx.schema and ctx.schema[decl.relation].declared:
            raise RedefinedRelation(f"relation {decl.relation} is declared twice", decl.span)
        types = [resolve_type(c.type, ctx.aliases, c.span) for c in decl.columns]
        ctx.schema[decl.relation] = RelationInfo(decl.relation, decl.arity, types, True, decl.span,
                                                 [c.name for c in decl.columns])


def split_clauses(ctx: Checked) -> None:
    ctx.clauses = rewrite(ctx.program)


def check_arity(ctx: Checked) -> None:
    """Every use of a relation has the declared arity (or the arity of its first use)."""
    for atom in _all_atoms(ctx.program):
        info = ctx.schema.get(atom.relation)
        if info is None:
            ctx.schema[atom.relation] = RelationInfo(atom.relation, len(atom.args), [None] * len(atom.args),
                                                     False, atom.span)
        elif info.arity != len(atom.args):
            where = "declared" if info.declared else "first used"
            raise ArityMismatch(f"{atom.relation} is {where} with arity {info.arity} but used here with "
                                f"{len(atom.args)} argument{'s' * (len(atom.args) != 1)}", atom.span)


def check_undefined(ctx: Checked) -> None:
    """A relation read by a rule or a directive must be declared, given facts, derived or input."""
    defined = {c.head.relation for c in ctx.clauses}
    defined |= {d.relation for d in ctx.directives("input")}
    defined |= {name for name, info in ctx.schema.items() if info.declared}
    for atom in _all_atoms(ctx.program, heads=False):
        if atom.relation not in defined:
            raise UndefinedRelation(f"undefined relation {atom.relation}/{len(atom.args)}: it has no "
                                    f".decl, facts, rules or .input", atom.span)
    for directive in ctx.program.directives:
        if directive.relation not in ctx.schema:          # no .decl and no use: arity unknown
            raise UndefinedRelation(f"undefined relation {directive.relation} in .{directive.kind}",
                                    directive.span)


def check_directives(ctx: Checked) -> None:
    known = {"input": {"io", "filename", "delimiter", "headers", "rfc4180", "table", "path",
                       "format", "query", "columns"},
             "output": {"io", "filename", "delimiter", "headers", "table", "path", "format", "mode",
                        "attributenames"},
             "printsize": set()}
    for directive in ctx.program.directives:
        for key, value in directive.params:
            if key.lower() not in known[directive.kind]:
                raise UnknownDirective(f"unknown parameter {key} for .{directive.kind} {directive.relation}",
                                       directive.span)
        io = directive.io
        if io not in ("file", "stdout", "stdin", "spark"):
            raise UnknownDirective(f"unknown IO={io} for {directive.relation} (use file, stdout or spark)",
                                   directive.span)
        if io == "spark":
            check_spark_directive(directive)


SPARK_FORMATS, SPARK_MODES = ("parquet", "orc", "json", "csv"), ("overwrite", "merge")


def check_spark_directive(directive: ast.Directive) -> None:
    """``IO=spark``: an input names one of ``table``/``path``/``query``, an output one of
    ``table``/``path``; ``format`` and ``mode`` take the values Spark is asked for."""
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


def bound_variables(body, outer: frozenset | set = frozenset()) -> set[str]:
    """Variables a conjunctive body binds: positive atom arguments, then ``v = expr`` assignments."""
    bound = set(outer)
    for literal in body:
        if isinstance(literal, ast.Atom):
            bound |= {a.name for a in literal.args if isinstance(a, ast.Variable)}
    changed = True
    while changed:
        changed = False
        for literal in body:
            target = assignment_target(literal, bound, body)
            if target is not None:
                bound.add(target)
                changed = True
    return bound


def assignment_target(literal, bound, body) -> str | None:
    """The variable ``v`` if ``literal`` is ``v = expr`` (either side) binding a new variable."""
    if not isinstance(literal, ast.Comparison) or literal.op != "=":
        return None
    for var, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if isinstance(var, ast.Variable) and var.name not in bound and _computable(expr, bound, body):
            return var.name
    return None


def _computable(expr, bound, body) -> bool:
    if isinstance(expr, ast.Aggregate):
        return all(v.name in bound for v in aggregate_outer_variables(expr, body))
    if any(isinstance(t, ast.Wildcard) for t in ast.subterms(expr)):
        return False
    return all(v.name in bound for v in _free_variables(expr))


def aggregate_outer_variables(agg: ast.Aggregate, body) -> list[ast.Variable]:
    """Variables of an aggregate that also occur in the clause body outside it: its group-by."""
    outside = {v.name for lit in body for v in _variables_outside(lit, agg)}
    return [v for v in ast.variables(agg.body) + ast.variables(agg.target) if v.name in outside]


def _variables_outside(node, agg):
    if node is agg:
        return []
    if isinstance(node, ast.Comparison):
        return _variables_outside(node.left, agg) + _variables_outside(node.right, agg)
    if isinstance(node, ast.Aggregate):
        return ast.variables(node)
    if isinstance(node, (ast.Atom, ast.Functor)):
        return [v for a in node.args for v in _variables_outside(a, agg)]
    if isinstance(node, ast.BinaryOp):
        return _variables_outside(node.left, agg) + _variables_outside(node.right, agg)
    if isinstance(node, ast.Negate):
        return _variables_outside(node.operand, agg)
    return ast.variables(node)


def _check_body_safety(body, bound) -> None:
    for literal in body:
        if isinstance(literal, (ast.Atom, ast.Negation)):
            _check_no_wildcard_in_expressions(literal if isinstance(literal, ast.Atom) else literal.atom)
        if isinstance(literal, ast.Negation):
            for arg in literal.atom.args:
                for var in _free_variables(arg):
                    if var.name not in bound:
                        raise UnsafeNegation(f"variable {var.name} occurs only under negation in "
                                             f"!{literal.atom.relation}(...); bind it with a positive atom",
                                             var.span)
        elif isinstance(literal, ast.Comparison):
            # the side that is a lone variable last: in `q = q1 * q3` blame q3, not q
            for side in sorted((literal.left, literal.right), key=lambda t: isinstance(t, ast.Variable)):
                for node in ast.subterms(side):
                    if isinstance(node, ast.Wildcard):
                        raise UnboundVariable("the wildcard _ cannot be compared", node.span or literal.span)
                for var in _free_variables(side):
                    if var.name not in bound:
                        raise UnboundVariable(f"variable {var.name} in {literal} is not bound by a "
                                              f"positive atom", var.span)
        elif isinstance(literal, ast.Atom):
            for arg in literal.args:
                if not isinstance(arg, (ast.Variable, ast.Wildcard, ast.Constant)):
                    for var in _free_variables(arg):
                        if var.name not in bound:
                            raise UnboundVariable(f"variable {var.name} in the expression {arg} is not bound "
                                                  f"by a positive atom", var.span)
        for agg in _aggregates(literal):
            _check_aggregate(agg, bound, body)


def _check_no_wildcard_in_expressions(atom: ast.Atom) -> None:
    for arg in atom.args:
        if not isinstance(arg, (ast.Variable, ast.Wildcard, ast.Constant)):
            for node in ast.subterms(arg):
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
            for var in _free_variables(agg.target):
                if var.name not in inner:
                    raise UnboundVariable(f"variable {var.name} aggregated by {agg.kind} is not bound in "
                                          f"the aggregate body", var.span)


# ---------------------------------------------------------------- types

def infer_types(ctx: Checked) -> None:
    """Column types of undeclared relations, from facts, heads and uses; unknown ones are auto."""
    for _ in range(1 + sum(info.arity for info in ctx.schema.values())):
        if not any([_infer_clause(ctx, clause) for clause in ctx.clauses]):
            break
    for info in ctx.schema.values():
        info.types = [t or AUTO for t in info.types]


def _infer_clause(ctx: Checked, clause: Clause) -> bool:
    changed = False
    env = _atom_types(ctx, clause.body, {}, lenient=True)
    for atom in _positive_atoms(clause.body) + [clause.head]:
        info = ctx.schema[atom.relation]
        for i, arg in enumerate(atom.args):
            if info.types[i] is None:
                t = _type_of(ctx, arg, env, lenient=True)
                if t not in (None, AUTO):
                    info.types[i] = t
                    changed = True
    return changed


def settle_types(ctx: Checked, settled: dict[str, list[str]]) -> None:
    """Loaded values fixed some ``auto`` columns (``settled``): infer and check again with them.
    All or nothing: on a type error every column type is as it was."""
    saved = {name: list(info.types) for name, info in ctx.schema.items()}
    try:
        for info in ctx.schema.values():
            info.types = settled.get(info.name) or [None if t == AUTO else t for t in info.types]
        infer_types(ctx)
        check_types(ctx)
    except DatalogError:
        for name, types in saved.items():
            ctx.schema[name].types = types
        raise


def check_types(ctx: Checked) -> None:
    for clause in ctx.clauses:
        env = _atom_types(ctx, clause.body, {}, lenient=False)
        _check_literals(ctx, clause.body, env)
        info = ctx.schema[clause.head.relation]
        for column, arg in zip(info.types, clause.head.args):
            _expect(ctx, arg, column, env, f"column of {info}")


def _atom_types(ctx, body, env, lenient) -> dict[str, str]:
    env = dict(env)
    for atom in _positive_atoms(body):
        info = ctx.schema[atom.relation]
        for column, arg in zip(info.types, atom.args):
            if isinstance(arg, ast.Variable) and column not in (None, AUTO):
                previous = env.get(arg.name)
                if previous is not None and not compatible(previous, column) and not lenient:
                    raise TypeMismatch(f"variable {arg.name} is a {previous} elsewhere but a {column} in "
                                       f"{info}", arg.span)
                if previous is None or previous == "number":
                    env[arg.name] = column
    for _ in range(len(body) + 1):
        for literal in body:
            target = assignment_target(literal, set(env), body)
            if target is not None:
                expr = literal.right if isinstance(literal.left, ast.Variable) and \
                    literal.left.name == target else literal.left
                t = _type_of(ctx, expr, env, lenient)
                if t is not None:
                    env[target] = t
    return env


def _check_literals(ctx, body, env) -> None:
    for literal in body:
        if isinstance(literal, ast.Comparison):
            left, right = (_type_of(ctx, s, env, False) for s in (literal.left, literal.right))
            if left and right and not compatible(left, right):
                raise TypeMismatch(f"cannot compare a {left} with a {right} in {literal}", literal.span)
            if literal.op not in ("=", "!=") and "symbol" in (left, right) and False:
                pass
        atoms = [literal.atom] if isinstance(literal, ast.Negation) else \
            [literal] if isinstance(literal, ast.Atom) else []
        for atom in atoms:
            info = ctx.schema[atom.relation]
            for column, arg in zip(info.types, atom.args):
                _expect(ctx, arg, column, env, f"column of {info}")


def _expect(ctx, term, column, env, what) -> None:
    t = _type_of(ctx, term, env, False)
    if t and column and not compatible(t, column):
        raise TypeMismatch(f"{term} is a {t} but the {what} is a {column}", getattr(term, "span", None))


_FUNCTORS = {  # name: (argument types or None for "same as result", result type)
    "cat": ("symbol", "symbol"), "strlen": ("symbol", "number"), "to_number": ("symbol", "number"),
    "to_string": ("numeric", "symbol"), "to_float": ("numeric", "float"),
}
_ARITY = {"strlen": (1, 1), "to_number": (1, 1), "to_string": (1, 1), "to_float": (1, 1),
          "substr": (3, 3), "cat": (1, 99), "min": (1, 99), "max": (1, 99)}


def _type_of(ctx, term, env, lenient) -> str | None:
    """The type of a term, or None if not yet known; raises TypeMismatch on misuse."""
    if isinstance(term, ast.Constant):
        return value_type(term.value)
    if isinstance(term, ast.Variable):
        return env.get(term.name)
    if isinstance(term, ast.Wildcard):
        return None
    if isinstance(term, ast.Negate):
        return _numeric(ctx, [term.operand], env, lenient, term)
    if isinstance(term, ast.BinaryOp):
        return _numeric(ctx, [term.left, term.right], env, lenient, term)
    if isinstance(term, ast.Functor):
        return _functor_type(ctx, term, env, lenient)
    if isinstance(term, ast.Aggregate):
        return _aggregate_type(ctx, term, env, lenient)
    return None


def _numeric(ctx, operands, env, lenient, term) -> str | None:
    types = [_type_of(ctx, o, env, lenient) for o in operands]
    if "symbol" in types and not lenient:
        raise TypeMismatch(f"arithmetic on a symbol in {term}; use cat() to join symbols", term.span)
    if "float" in types:
        return "float"
    return "number" if all(types) else None


def _functor_type(ctx, term: ast.Functor, env, lenient) -> str | None:
    low, high = _ARITY[term.name]
    if not low <= len(term.args) <= high and not lenient:
        raise TypeMismatch(f"{term.name} takes {low if low == high else f'{low} or more'} arguments, "
                           f"got {len(term.args)}", term.span)
    types = [_type_of(ctx, a, env, lenient) for a in term.args]
    if term.name in ("min", "max"):
        known = [t for t in types if t]
        if not lenient and any(not compatible(known[0], t) for t in known):
            raise TypeMismatch(f"{term.name} of mixed types in {term}", term.span)
        return "float" if "float" in known else (known[0] if known and len(known) == len(types) else None)
    if term.name == "substr":
        expected = ["symbol", "number", "number"]
        result = "symbol"
    else:
        arg, result = _FUNCTORS[term.name]
        expected = [arg] * len(types)
    for want, got, node in zip(expected, types, term.args):
        ok = got is None or (want == "numeric" and got != "symbol") or compatible(want, got)
        if not ok and not lenient:
            raise TypeMismatch(f"{term.name} expects a {'number' if want == 'numeric' else want} here, "
                               f"got a {got}", getattr(node, "span", None) or term.span)
    return result


def _aggregate_type(ctx, agg: ast.Aggregate, env, lenient) -> str | None:
    target_type = None
    for alternative in dnf(agg.body):
        inner = _atom_types(ctx, alternative, env, lenient)
        if not lenient:
            _check_literals(ctx, alternative, inner)
        if agg.target is not None:
            target_type = _type_of(ctx, agg.target, inner, lenient) or target_type
    if agg.kind == "count":
        return "number"
    if agg.kind == "mean":
        return "float"
    if agg.kind == "sum" and target_type == "symbol" and not lenient:
        raise TypeMismatch(f"sum of a symbol in {agg}", agg.span)
    return target_type


# ---------------------------------------------------------------- strata

def stratify_program(ctx: Checked) -> None:
    ctx.strata = stratify(ctx.clauses, ctx.schema)


CHECKS = (
    declare_types,
    declare_relations,
    split_clauses,
    check_arity,
    check_undefined,
    check_directives,
    check_wildcard_in_head,
    check_safety,
    infer_types,
    check_types,
    stratify_program,
)


# ---------------------------------------------------------------- walking the AST

def _all_atoms(program: ast.Program, heads: bool = True):
    for rule in program.rules:
        if heads:
            yield from rule.heads
        yield from _body_atoms(rule.body)


def _body_atoms(body):
    for literal in body:
        if isinstance(literal, ast.Atom):
            yield literal
            yield from _aggregate_atoms(literal.args)
        elif isinstance(literal, ast.Negation):
            yield literal.atom
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


def _positive_atoms(body) -> list[ast.Atom]:
    return [lit for lit in body if isinstance(lit, ast.Atom)]


def _free_variables(term) -> list[ast.Variable]:
    """Variables of a term outside any aggregate body (an aggregate's group-by variables excepted)."""
    return [t for t in ast.subterms(term) if isinstance(t, ast.Variable)]


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
