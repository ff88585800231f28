"""What a rule on the kernel does after its join: assignments, aggregates and the comparisons after them.

The kernel joins positive atoms and tests comparisons of their variables
(:mod:`datalog.evaluation.kernel_plan`). A rule's other filters run in numpy on each batch of the
join's bindings (:mod:`datalog.evaluation.column_steps`), in the order the tuple path runs them
(by depth, then as the plan lists them), each on the bindings that passed the ones before:

  * ``d = d1 + w``: an assignment of integer arithmetic (``+``, ``-``, ``*``, ``/`` and ``%`` as
    C's, unary ``-``) over number or unsigned words, variables and constants; a number result
    beyond the 64-bit range is the tuple path's ``number_out_of_range``, an unsigned one wraps
    modulo 2^64, a division by zero is ``division_by_zero``;
  * ``m = min d : { dist(x, y, d) }``: an aggregate (:class:`KernelAggregate`, one table per
    stratum, :mod:`datalog.evaluation.column_aggregates`);
  * ``d <= 24``: a comparison that reads an assigned variable or an expression;
  * ``!reach(x, y)``: a negation, each binding's key looked up in the relation's rows (a lower
    stratum's, fixed while this one runs);
  * ``hops(x, y, 1)``, ``b(x + 1)``: a constant or an expression in the head, a column of its words.

The filters before the first assignment are the join's (:func:`split`). Anything else after it
(a negation, a functor, division, floats, records) keeps the rule, and its stratum, on the tuple
path, as do 32-bit numbers.

>>> from datalog.engine import Engine
>>> e = Engine.from_source('.decl e(a: number, b: number)  .decl p(a: number, b: number)  p(x, d) :- e(x, y), d = y * 2, d < 9.')
>>> in_join, steps, types = split(e.compiled[0], e.schema)
>>> [(s.slot, s.term[:3], s.op, s.right) for s in steps], types[2]
([(2, ('*', ('slot', 1), ('word', 2)), None, None), (None, ('slot', 2), '<', ('word', 9))], 'number')
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from datalog.language import ast, numbers
from datalog.planning.plan import AggregatePlan, Assign, Compare, Lookup
from datalog.evaluation.kernel_join import (COMPARISONS, EQUALITIES, KernelRule, column_types, comparison,
                                            encode_constant, join_parts)

AGGREGATES = ("count", "sum", "min", "max")   # over a variable of number or unsigned words (count: any)
ARITHMETIC = ("+", "-", "*", "/", "%")


@dataclass(frozen=True)
class KernelAggregate:
    """``v = kind target : { body }`` as the kernel reads it. ``body`` joins the aggregate's body
    with its group variables free (not parameters), first in its variable order, so that its
    bindings come out grouped; its ``head_depths`` are the depths each contribution is read from
    (every depth for count and sum, which count each distinct assignment; the group's and the
    target's for min and max). ``groups`` are the group variables' depths in the rule, ``target``
    the target's depth in the body (None: count), ``type_`` the value's column type; ``aggregate``
    (the ast.Aggregate) and ``rule`` name it in a coded error (a sum beyond the 64-bit range)."""

    kind: str
    body: KernelRule
    groups: tuple[int, ...]
    target: int | None
    type_: str
    aggregate: object = None
    rule: str = "?"


@dataclass(frozen=True)
class KernelStep:
    """One filter after the join: the slot ``slot`` bound to the value of ``term`` (an assignment)
    or of ``aggregate``, or (``slot`` None) the test ``term op right``. A term is ``("slot", s)``,
    ``("word", w)``, ``("neg", term, span)`` or ``(op, left, right, span)``; ``type_`` is the words'
    type (how they compute and compare); ``rule`` and a term's span name a coded error."""

    slot: int | None
    term: tuple | None = None
    op: str | None = None
    right: tuple | None = None
    aggregate: KernelAggregate | None = None
    type_: str = "number"
    rule: str = "?"
    relation: str | None = None           # a negation: the rows of ``relation``'s ``columns``
    columns: tuple[int, ...] = ()         # hold none of the keys ``keys`` (terms) give
    keys: tuple = ()
    first: bool = False                   # placed before any depth (``d = 1 + 2``): run before the join


def split(plan, schema, symbols=None) -> tuple[list, tuple, dict] | None:
    """The plan's filters the join tests (by depth, those before the first the kernel cannot
    test: an assignment, or a comparison of an expression), the steps after it
    (:class:`KernelStep`), and the type of every slot bound; or None when a filter after the join
    is none the steps can run."""
    ordered = sorted(plan.filters, key=lambda f: f.filter.depth)
    types = {}
    for atom in plan.atoms:
        columns = schema[atom.relation].types
        for column, depth in zip(atom.order[len(atom.plan.prefix):], atom.depths):
            types[depth] = columns[column]
    first = next((i for i, f in enumerate(ordered) if isinstance(f.filter, Assign) or
                  (isinstance(f.filter, Compare) and comparison(f.filter, plan.slots, types, symbols) is None) or
                  (isinstance(f.filter, Lookup) and f.filter.negated)),
                 len(ordered))
    rule = plan.clause.head.relation if plan.clause is not None else "?"
    steps = []
    for f in ordered[first:]:
        step = _step(f.filter, plan, schema, symbols, types, rule)
        if step is None:
            return None
        if f.filter.depth < 0:
            step = replace(step, first=True)
        if step.slot is not None:
            types[step.slot] = step.type_
        steps.append(step)
    return ordered[:first], tuple(steps), types


def _step(literal, plan, schema, symbols, types: dict, rule: str) -> KernelStep | None:
    if isinstance(literal, Lookup):
        return _negation(literal, plan, schema, symbols, types, rule)
    if type(literal) is Assign and isinstance(literal.value, AggregatePlan):
        agg = kernel_aggregate(literal, plan, schema, symbols)
        return None if agg is None else KernelStep(plan.slots[literal.target], aggregate=agg, type_=agg.type_, rule=rule)
    if type(literal) is Assign:
        type_ = term_type(literal.value, plan.slots, types)
        type_ = "number" if type_ == "int" else type_          # d = 0: a number (an unsigned d: not here)
        term = _term(literal.value, plan.slots, type_, symbols) if type_ in ("number", "unsigned") else None
        return None if term is None else KernelStep(plan.slots[literal.target], term, type_=type_, rule=rule)
    if not isinstance(literal, Compare) or literal.op not in COMPARISONS or \
            isinstance(literal.left, AggregatePlan) or isinstance(literal.right, AggregatePlan):
        return None
    sides = {term_type(t, plan.slots, types) for t in (literal.left, literal.right)}
    if sides <= {"number", "int"}:
        type_ = "number"
    elif sides <= {"unsigned", "int"}:
        type_ = "unsigned"
    elif sides <= {"symbol", "string"} and "symbol" in sides:
        type_ = "symbol"
    else:
        return None
    if type_ == "symbol" and literal.op not in EQUALITIES:
        return None                               # words are not ordered as the symbols are
    left, right = (_term(t, plan.slots, type_, symbols) for t in (literal.left, literal.right))
    if left is None or right is None:
        return None
    return KernelStep(None, left, literal.op, right, type_=type_, rule=rule)


def _negation(lookup, plan, schema, symbols, types: dict, rule: str) -> KernelStep | None:
    """``!r(x, y + 1, _)`` as a step: the relation's bound columns, and the key terms of their types."""
    if not lookup.negated or lookup.patterns or lookup.relation not in schema:
        return None
    columns = lookup.order[:len(lookup.path)]
    typed = [schema[lookup.relation].types[c] for c in columns]
    arithmetic = {t for t, term in zip(typed, lookup.path) if not isinstance(term, (ast.Variable, ast.Constant))}
    if len(arithmetic) > 1:
        return None                               # the step computes its keys' arithmetic in one type
    keys = []
    for type_, term in zip(typed, lookup.path):
        if type_ not in ("number", "unsigned", "symbol") or \
                term_type(term, plan.slots, types) not in (type_, "string" if type_ == "symbol" else "int"):
            return None
        keys.append(_term(term, plan.slots, type_, symbols))
    if None in keys:
        return None
    return KernelStep(None, type_=arithmetic.pop() if arithmetic else "number", rule=rule, relation=lookup.relation,
                      columns=tuple(columns), keys=tuple(keys))


def head_terms(plan, head_types, types: dict, symbols=None) -> tuple[list, list] | None:
    """``hops(x, y, 1)``, ``b(x + 1)``: the head's slots, each constant or expression given a slot
    of its own past the plan's, and the steps that bind those to its words (last: the tuple path
    makes the head of a binding that passed every filter); None for a term of another type or
    one the steps do not compute."""
    slots, steps, free = [], [], max(plan.slots.values(), default=-1) + 1
    rule = plan.clause.head.relation
    for term, type_ in zip(plan.clause.head.args, head_types):
        if isinstance(term, ast.Variable):
            slots.append(plan.slots[term.name])
            continue
        if isinstance(term, ast.Constant):
            word = encode_constant(term.value, type_, symbols)
            computed = None if word is None else ("word", word)
        else:
            made = term_type(term, plan.slots, types)
            computed = _term(term, plan.slots, type_, symbols) if made in (type_, "int") else None
        if computed is None:
            return None
        slots.append(free)
        steps.append(KernelStep(free, computed, type_=type_, rule=rule))
        free += 1
    return slots, steps


def read_depths(rule) -> list[int]:
    """The depths of the join that the rule's head and steps read, ascending."""
    read = {d for d in rule.head_depths if d < rule.n_vars}
    for step in rule.steps:
        if step.aggregate is not None:
            read.update(step.aggregate.groups)
        for term in (step.term, step.right, *step.keys):
            read.update(slot for slot in _slots(term) if slot < rule.n_vars)
    return sorted(read)


def _slots(term):
    if term is None or term[0] == "word":
        return
    if term[0] == "slot":
        yield term[1]
        return
    for part in term[1:-1]:
        yield from _slots(part)


def term_type(term, slots, types: dict) -> str | None:
    """``number``, ``unsigned`` or ``symbol`` (a variable's, or arithmetic's), ``int`` or ``string``
    (a constant, either type), or None (a term the steps do not compute)."""
    if isinstance(term, ast.Variable):
        return types.get(slots.get(term.name))
    if isinstance(term, ast.Constant):
        value = term.value
        return "int" if type(value) is int else "string" if isinstance(value, str) else None
    if isinstance(term, ast.Negate):
        return "number" if term_type(term.operand, slots, types) in ("number", "int") else None
    if isinstance(term, ast.BinaryOp) and term.op in ARITHMETIC and numbers.WIDTH[0] == 64:
        wanted = "unsigned" if term.unsigned else "number"
        sides = {term_type(t, slots, types) for t in (term.left, term.right)}
        return wanted if sides <= {wanted, "int"} else None
    return None


def _term(term, slots, type_: str, symbols=None) -> tuple | None:
    """The term as a step computes it, its constants as words of ``type_``; None if one fits none."""
    if isinstance(term, ast.Variable):
        return "slot", slots[term.name]
    if isinstance(term, ast.Constant):
        word = encode_constant(term.value, type_, symbols)
        return None if word is None else ("word", word)
    parts = [_term(t, slots, type_, symbols) for t in
             ((term.operand,) if isinstance(term, ast.Negate) else (term.left, term.right))]
    if None in parts:
        return None
    return ("neg", *parts, term.span) if isinstance(term, ast.Negate) else (term.op, *parts, term.span)


def kernel_aggregate(assign, plan, schema, symbols=None) -> KernelAggregate | None:
    """``v = kind target : { body }`` (an Assign of the rule's plan) as the kernel evaluates it, or
    None: more than one alternative, a kind other than count, sum, min and max, a target that is
    not a variable of number or unsigned words, a group variable the body's atoms do not bind, a
    body the kernel cannot join, or 32-bit numbers (whose sums wrap)."""
    from datalog.evaluation.compile import compile_plan      # (only for a rule with an aggregate)
    from datalog.planning.planner import plan_body
    agg = assign.value
    if agg.distinct or agg.aggregate.kind not in AGGREGATES or numbers.WIDTH[0] != 64:
        return None
    kind, target, (body,) = agg.aggregate.kind, agg.aggregate.target, agg.bodies
    if (kind == "count") != (target is None) or (target is not None and not isinstance(target, ast.Variable)):
        return None
    if body.generators or any(g not in plan.slots or plan.slots[g] >= plan.depth for g in agg.outer):
        return None
    literals = tuple(a.atom for a in body.atoms) + tuple(f.literal for f in body.filters)
    bound = {v.name for lit in literals if isinstance(lit, ast.Atom) for v in lit.args if isinstance(v, ast.Variable)}
    if not bound.issuperset(agg.outer):          # a group variable only compared in the body
        return None
    order = plan_body(literals, schema, [], None, plan.clause).variable_order
    # the group's variables first: the body's bindings come out sorted by group
    free = compile_plan(plan_body(literals, schema, [], [*agg.outer, *(v for v in order if v not in agg.outer)],
                                  plan.clause))
    parts = join_parts(free, schema, symbols, free.filters)
    if parts is None:
        return None
    atoms, guards, compares = parts
    typed = column_types(atoms, schema)
    at = None if target is None else free.slots.get(target.name)
    type_ = "number" if kind == "count" else typed.get(at)
    if type_ not in ("number", "unsigned"):
        return None
    n = len(agg.outer)
    read = tuple(range(free.depth)) if kind in ("count", "sum") else (*range(n), at)
    joined = KernelRule("", free.depth, atoms, read, guards, compares)
    return KernelAggregate(kind, joined, tuple(plan.slots[g] for g in agg.outer), at, type_, agg.aggregate,
                           plan.clause.head.relation)
