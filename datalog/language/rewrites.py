"""Rewrites: rules into the clauses later stages take, and the body rewrites of the planner.

:func:`rewrite` applies :data:`REWRITES` in order to the program's rules; each maps a list of
rules to an equivalent list, and the result has one head and a conjunctive body per rule:
a :class:`Clause` each. ``a(x), b(x) :- c(x), (d(x) ; e(x)).`` becomes four clauses:

>>> from datalog.language.parser import parse
>>> for c in rewrite(parse('a(x), b(x) :- c(x), (d(x) ; e(x)).')):
...     print(c)
a(x) :- c(x), d(x).
b(x) :- c(x), d(x).
a(x) :- c(x), e(x).
b(x) :- c(x), e(x).

The planner rewrites one clause body before planning it:

* :func:`lift_atom_expressions` -- atoms hold only variables, constants and ``_``, and an
  aggregate is a whole side of a comparison, so that every atom is a trie index and every
  aggregate a value to compute;
* :func:`name_wildcards` -- in an aggregate body Soufflé scans tuple by tuple, every wildcard
  is a variable of its own, so each tuple counts.

>>> body = parse('p(y) :- r(x + 1, y), n = count : { e(x, _) } + 1.').rules[0].body
>>> print(", ".join(map(str, lift_atom_expressions(body))))
r(_e0, y), n = (_e1 + 1), _e0 = (x + 1), _e1 = count : { e(x, _) }
>>> print(", ".join(map(str, name_wildcards(parse('q(1) :- e(x, _), f(_).').rules[0].body))))
e(x, _w0), f(_w1)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import product

from datalog.language import ast
from datalog.language.variables import substituted
from datalog.language.errors import Unsupported


@dataclass(frozen=True)
class Clause:
    """One head and a conjunctive body (atoms, negations, comparisons; no disjunction);
    ``rule`` keeps the source rule's span and pragmas; ``index`` is the clause's position among
    the program's clauses (what plans, maintainers and stored state are keyed by; None for a
    clause made for a delta rule)."""

    head: ast.Atom
    body: tuple[ast.Literal, ...]
    rule: ast.Rule
    index: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


def split_disjunctions(rules: list[ast.Rule]) -> list[ast.Rule]:
    """A rule whose body holds ``;`` becomes one rule per alternative of its disjunctive
    normal form (aggregate bodies are alternatives of their own, see :func:`dnf`)."""
    return [ast.Rule(rule.heads, body, rule.span, rule.pragma, rule.plan) for rule in rules for body in dnf(rule.body)]


def split_heads(rules: list[ast.Rule]) -> list[ast.Rule]:
    """``a(x), b(x) :- body.`` becomes ``a(x) :- body.`` and ``b(x) :- body.``"""
    return [ast.Rule((head,), rule.body, rule.span, rule.pragma, rule.plan) for rule in rules for head in rule.heads]


# ---- functors (issue 18): range as the facts of a hidden relation

RANGE_LIMIT = 10_000_000     # values of one range: beyond it, the range is unsupported


def expand_ranges(rules: list[ast.Rule]) -> list[ast.Rule]:
    """``x = range(1, 10)`` binds x to 1, ..., 9 (Soufflé's multi-valued functor): it becomes
    the atom ``_range_1_10_1(x)`` of a relation whose facts are the range's values, added once.
    A range with variable bounds (``x = range(0, n)``) stays: the planner generates its values
    (planning/planner.py). A range that is not the value of an assignment is ``unsupported``."""
    facts: dict[str, list[ast.Rule]] = {}
    out = [replace(rule, body=_expand_body(rule.body, facts)) for rule in rules]
    for rule in out:
        allowed = {id(side) for lit in _terms(rule.body) if isinstance(lit, ast.Comparison) and lit.op == "="
                   for side, other in ((lit.left, lit.right), (lit.right, lit.left))
                   if isinstance(other, ast.Variable)}
        for node in _terms((rule.heads, rule.body)):
            if isinstance(node, ast.Functor) and node.name == "range" and id(node) not in allowed:
                raise Unsupported(f"range({', '.join(map(str, node.args))}) here: range is supported as the "
                                  f"value of an assignment (x = range(1, 10))", node.span)
    return out + [fact for group in facts.values() for fact in group]


def _expand_body(body: tuple, facts) -> tuple:
    out = []
    for literal in body:
        if isinstance(literal, ast.Comparison) and literal.op == "=":
            for var, expr in ((literal.left, literal.right), (literal.right, literal.left)):
                if isinstance(var, ast.Variable) and _constant_range(expr):
                    literal = ast.Atom(_range_relation(expr, facts), (var,), literal.span)
                    break
        elif isinstance(literal, ast.Disjunction):
            literal = ast.Disjunction(tuple(_expand_body(alt, facts) for alt in literal.alternatives), literal.span)
        out.append(_expand_aggregates(literal, facts))
    return tuple(out)


def _expand_aggregates(literal, facts):
    if isinstance(literal, ast.Comparison):
        return ast.Comparison(literal.op, _expand_term(literal.left, facts), _expand_term(literal.right, facts),
                              literal.span)
    return literal


def _expand_term(term, facts):
    if isinstance(term, ast.Aggregate):
        return replace(term, body=_expand_body(term.body, facts))
    if isinstance(term, ast.BinaryOp):
        return replace(term, left=_expand_term(term.left, facts), right=_expand_term(term.right, facts))
    return term


def _constant_range(term) -> bool:
    return isinstance(term, ast.Functor) and term.name == "range" and 2 <= len(term.args) <= 3 and \
        all(_constant(a) is not None for a in term.args)


_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def _constant(term):
    """The number a bound of range spells with constants (``2 * 10 - 1``), else None."""
    if isinstance(term, ast.Constant):
        return None if isinstance(term.value, str) else term.value
    if isinstance(term, ast.Negate):
        value = _constant(term.operand)
        return None if value is None else -value
    if isinstance(term, ast.BinaryOp) and term.op in _FOLD:
        left, right = _constant(term.left), _constant(term.right)
        return None if left is None or right is None else _FOLD[term.op](left, right)
    return None


INTERNAL_PREFIX = "_range_"          # the relations rewrites make (a range's values): not the user's


def is_internal(name: str) -> bool:
    """Whether relation ``name`` was made by a rewrite (``_range_0_3000``, the values of
    ``range(0, 3000)``), not written by the user: listings leave it out unless asked for it."""
    return name.startswith(INTERNAL_PREFIX)


def visible(names) -> list[str]:
    """The relation names a listing shows: those not :func:`is_internal`."""
    return [name for name in names if not is_internal(name)]


def _range_relation(term: ast.Functor, facts) -> str:
    values = [_constant(a) for a in term.args]
    # Soufflé's URANGE: bounds with an unsigned literal make unsigned values (their own relation)
    unsigned = any(isinstance(n, ast.Constant) and n.unsigned for a in term.args for n in ast.subterms(a))
    if any(isinstance(v, float) for v in values):
        values, unsigned = [float(v) for v in values], False
    elif unsigned:
        values = [v % 2 ** 64 for v in values]
    name = INTERNAL_PREFIX + "u" * unsigned + "_".join(repr(v).replace("-", "m").replace(".", "p").replace("+", "")
                                                 for v in values)
    if name not in facts:
        facts[name] = [ast.Rule((ast.Atom(name, (ast.Constant(v, unsigned=unsigned),), term.span),), (), term.span)
                       for v in range_values(*values, span=term.span)]
    return name


def range_values(lo, hi, step=None, span=None) -> list:
    """Soufflé's range: from lo up to (or down to) hi, hi excluded, by step (by 1 or -1 as
    hi is above or below lo); a step of 0 gives lo alone unless lo = hi."""
    if step is None:
        step = 1 if lo <= hi else -1
        step = float(step) if isinstance(lo, float) else step
    if step == 0:
        return [lo] if lo != hi else []
    count = (hi - lo) / step
    if count > RANGE_LIMIT:
        raise Unsupported(f"range({lo}, {hi}, {step}) has more than {RANGE_LIMIT} values", span)
    out, x = [], lo
    while (x < hi) if step > 0 else (hi < x):
        out.append(x)
        x += step
    return out


def in_range(value, lo, hi, step=None, span=None) -> bool:
    """Whether ``value`` is one of ``range(lo, hi[, step])`` (x = range(...) with x bound)."""
    if all(isinstance(v, int) for v in (value, lo, hi)) and (step is None or isinstance(step, int)):
        step = (1 if lo <= hi else -1) if step is None else step
        if step == 0:
            return value == lo != hi
        inside = lo <= value < hi if step > 0 else hi < value <= lo
        return inside and (value - lo) % step == 0
    return value in range_values(lo, hi, step, span)


def _terms(node):
    """Every term and literal under ``node``, aggregate bodies included."""
    yield node
    if isinstance(node, tuple):
        children = node
    elif isinstance(node, ast.Rule):
        children = (node.heads, node.body)
    elif isinstance(node, (ast.Atom, ast.Functor)):
        children = node.args
    elif isinstance(node, (ast.Comparison, ast.BinaryOp)):
        children = (node.left, node.right)
    elif isinstance(node, ast.Negate):
        children = (node.operand,)
    elif isinstance(node, ast.Negation):
        children = (node.atom,)
    elif isinstance(node, ast.Disjunction):
        children = node.alternatives
    elif isinstance(node, ast.Aggregate):
        children = (node.target, node.body)
    else:
        children = ()
    for child in children:
        yield from _terms(child)


def _lift_aggregates(term, fresh):
    """``term`` with each aggregate in it (through arithmetic and functor arguments) replaced by
    ``fresh(aggregate)``, the variable an added assignment binds to it."""
    if isinstance(term, ast.Aggregate):
        return fresh(term)
    if isinstance(term, ast.BinaryOp):
        return replace(term, left=_lift_aggregates(term.left, fresh), right=_lift_aggregates(term.right, fresh))
    if isinstance(term, ast.Negate):
        return replace(term, operand=_lift_aggregates(term.operand, fresh))
    if isinstance(term, ast.Functor):
        return replace(term, args=tuple(_lift_aggregates(a, fresh) for a in term.args))
    return term


def lift_head_aggregates(rules: list[ast.Rule]) -> list[ast.Rule]:
    """``e(2, count : { r(_) } + 1).`` is ``e(2, _h0 + 1) :- _h0 = count : { r(_) }.``: Soufflé
    takes an aggregate in a head as the value of an assignment in the body."""
    out = []
    for rule in rules:
        extra: list = []

        def fresh(term) -> ast.Variable:
            var = ast.Variable(f"_h{len(extra)}", term.span)
            extra.append(ast.Comparison("=", var, term, term.span))
            return var
        heads = tuple(ast.Atom(h.relation, tuple(_lift_aggregates(a, fresh) for a in h.args), h.span)
                      for h in rule.heads)
        out.append(replace(rule, heads=heads, body=rule.body + tuple(extra)) if extra else rule)
    return out


def witnesses(rules: list[ast.Rule]) -> list[ast.Rule]:
    """Soufflé's witnesses: in ``longest(x, y, l) :- l = max m : length(x, y, m).`` x and y occur
    in the head and, in the body, only inside the min/max aggregate: they are bound to the tuples
    that reach the extremum. The aggregate keeps its variables to itself (renamed ``_w_...``) and
    the body gains its copy: ``l = max _w_m : length(_w_x, _w_y, _w_m), length(x, y, m), l = m``.
    (Every tuple that reaches it is a witness; on a tie Soufflé reports one of them.)"""
    return [_with_witnesses(rule) for rule in rules]


def _with_witnesses(rule: ast.Rule) -> ast.Rule:
    head = {v.name for h in rule.heads for v in ast.variables(h)}
    body = list(rule.body)
    for i, literal in enumerate(rule.body):
        found = _extremum(literal)
        if found is None:
            continue
        var, agg = found
        outside = {v.name for j, lit in enumerate(rule.body) if j != i for v in _outside_aggregates(lit)}
        inner = {v.name for v in ast.variables((agg.target, agg.body))}
        if not (inner & head) - outside - {var.name}:
            continue
        rename = {n: f"_w_{n}" for n in inner - outside}
        local = replace(agg, target=_renamed(agg.target, rename), body=_renamed(agg.body, rename))
        body[i] = ast.Comparison("=", var, local, literal.span)
        body += [*agg.body, ast.Comparison("=", var, agg.target, literal.span)]
    return replace(rule, body=tuple(body))


def _extremum(literal):
    """(v, aggregate) of ``v = min|max ... : {...}`` (either way round), else None."""
    if not isinstance(literal, ast.Comparison) or literal.op != "=":
        return None
    for var, agg in ((literal.left, literal.right), (literal.right, literal.left)):
        if isinstance(var, (ast.Variable, ast.Wildcard)) and isinstance(agg, ast.Aggregate) and \
                agg.kind in ("min", "max") and agg.target is not None:
            # `_ = min x + y : {...}`: the value is dropped, the witnesses kept
            return (var if isinstance(var, ast.Variable) else ast.Variable("_w_value", var.span)), agg
    return None


def _outside_aggregates(node) -> list[ast.Variable]:
    """The variables of a literal outside any aggregate."""
    if isinstance(node, ast.Aggregate):
        return []
    if isinstance(node, ast.Variable):
        return [node]
    children = {ast.Atom: lambda n: n.args, ast.Functor: lambda n: n.args, ast.Negation: lambda n: (n.atom,),
                ast.Comparison: lambda n: (n.left, n.right), ast.BinaryOp: lambda n: (n.left, n.right),
                ast.Negate: lambda n: (n.operand,), ast.RecordTerm: lambda n: n.args,
                ast.BranchTerm: lambda n: n.args, ast.Cast: lambda n: (n.term,),
                ast.Disjunction: lambda n: [lit for alt in n.alternatives for lit in alt]}.get(type(node))
    return [v for child in (children(node) if children else ()) for v in _outside_aggregates(child)]


def _renamed(node, rename: dict):
    """``node`` with its variables renamed (aggregate bodies included), spans kept."""
    return substituted(node, lambda v: ast.Variable(rename.get(v.name, v.name), v.span))


REWRITES = (
    lift_head_aggregates,
    expand_ranges,
    split_disjunctions,
    split_heads,
    witnesses,
)


def rewrite(program: ast.Program) -> list[Clause]:
    """The program's rules (facts included) as clauses, :data:`REWRITES` applied in order."""
    rules = list(program.rules)
    for step in REWRITES:
        rules = step(rules)
    return [Clause(rule.heads[0], rule.body, rule, i) for i, rule in enumerate(rules)]


def dnf(body: tuple) -> list[tuple]:
    """The alternatives of a body: each a tuple of literals without Disjunction."""
    options = []
    for literal in body:
        if isinstance(literal, ast.Disjunction):
            options.append([alt for a in literal.alternatives for alt in dnf(a)])
        else:
            options.append([(literal,)])
    return [tuple(lit for part in combo for lit in part) for combo in product(*options)]

_ATOM_ARGS = (ast.Variable, ast.Constant, ast.Wildcard)


def lift_atom_expressions(body: tuple) -> tuple:
    """``r(x + 1, y)`` becomes ``r(_e0, y), _e0 = x + 1``; ``n = count : {..} + 1`` becomes
    ``n = _e0 + 1, _e0 = count : {..}`` (an aggregate alone on its side stays); ``!q(count : {..})``
    becomes ``!q(_e0), _e0 = count : {..}``."""
    extra, counter = [], iter(range(10**9))

    def fresh(term) -> ast.Variable:
        var = ast.Variable(f"_e{next(counter)}", term.span)
        extra.append(ast.Comparison("=", var, term, term.span))
        return var

    def side(term):
        return term if isinstance(term, ast.Aggregate) else _lift_aggregates(term, fresh)

    out = []
    for literal in body:
        if isinstance(literal, ast.Atom) and not all(isinstance(a, _ATOM_ARGS) for a in literal.args):
            args = tuple(a if isinstance(a, _ATOM_ARGS) else fresh(_lift_aggregates(a, fresh)) for a in literal.args)
            literal = ast.Atom(literal.relation, args, literal.span)
        elif isinstance(literal, ast.Comparison):
            literal = ast.Comparison(literal.op, side(literal.left), side(literal.right), literal.span)
        elif isinstance(literal, ast.Negation) and any(isinstance(node, ast.Aggregate) for a in literal.atom.args
                                                       for node in ast.subterms(a)):
            # !q(count : { r() }) becomes !q(_e0), _e0 = count : { r() }
            atom = literal.atom
            literal = ast.Negation(ast.Atom(atom.relation, tuple(_lift_aggregates(a, fresh) for a in atom.args),
                                            atom.span), literal.span)
        out.append(literal)
    return tuple(out + extra)


def name_wildcards(body: tuple) -> tuple:
    """Every wildcard of the body's atoms becomes a variable of its own (``_w0``, ``_w1``, ...)."""
    counter = iter(range(10**9))

    def rename(atom: ast.Atom) -> ast.Atom:
        args = tuple(ast.Variable(f"_w{next(counter)}", a.span) if isinstance(a, ast.Wildcard) else a
                     for a in atom.args)
        return ast.Atom(atom.relation, args, atom.span)
    return tuple(rename(lit) if isinstance(lit, ast.Atom) else lit for lit in body)
