"""Compiling a RulePlan: its terms become closures over a binding, its filters checks.

A binding is a list indexed by the plan's slots. :func:`compile_plan` gives each atom the
values of its constant levels (``prefix``), each filter a ``make(db)`` that returns its check
``binding -> bool`` over the relations ``db`` (an Assign's check also binds its slot; a
Lookup's reads its index), and the plan its head function ``binding -> tuple``.

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> from datalog.planning.planner import plan_clause
>>> c = check(parse('.decl e(a: number, b: number)\\n.decl p(a: number, s: number)\\np(x, s) :- e(x, y), s = x + y, s > 2.'))
>>> plan = compile_plan(plan_clause(c.clauses[0], c.schema, 0))
>>> b = [1, 2, None]
>>> [f.make({})(b) for f in plan.filters], plan.head(b)
([True, True], (1, 3))
"""

from __future__ import annotations

import operator
from typing import Callable

from datalog.evaluation.aggregates import NO_VALUE, aggregate_value
from datalog.evaluation.expressions import compile_term
from datalog.language import ast, regex
from datalog.language.rewrites import in_range, range_values
from datalog.language.mixed import MIXED
from datalog.language.types import convert
from datalog.evaluation.records import compile_match
from lftj.trie import TrieNode
from datalog.planning.plan import AggregatePlan, Assign, AtomPlan, Compare, Filter, Lookup, RulePlan, Unpack


def _match(pattern: str, text: str) -> bool:
    # match("a.*", s): the whole of s matches the pattern (ECMAScript's dialect, regex.py)
    return regex.matches(pattern, text) is True


def _no_match(pattern: str, text: str) -> bool:
    # !match(p, s): false as well when p is no regular expression, as in Soufflé
    return regex.matches(pattern, text) is False


COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge,
           # contains(sub, s): sub occurs in s
           "match": _match, "contains": lambda sub, text: sub in text,
           "not_match": _no_match, "not_contains": lambda sub, text: sub not in text}


class CompiledAtom:
    """An AtomPlan with ``prefix``: binding -> the key of each constant (or parameter) level.
    (The plan's fields are copied into slots: the triejoin reads them at every run.)"""

    __slots__ = ("plan", "prefix", "relation", "order", "depths", "atom")

    def __init__(self, plan: AtomPlan, prefix: tuple[Callable, ...]):
        self.plan, self.prefix = plan, prefix
        self.relation, self.order, self.depths, self.atom = plan.relation, plan.order, plan.depths, plan.atom


class CompiledFilter:
    """A Filter with ``make``: (relations) -> check(binding) -> bool; a Lookup's ``path``:
    binding -> the key of each looked-up level."""

    __slots__ = ("filter", "make", "path", "depth", "literal")

    def __init__(self, filter_: Filter, make: Callable, path: tuple[Callable, ...] | None = None):
        self.filter, self.make, self.path = filter_, make, path
        self.depth, self.literal = filter_.depth, filter_.literal


class CompiledPlan:
    """A RulePlan with closures: its atoms' prefixes, its filters' checks, its ``head``
    (binding -> head tuple) and ``head_slots`` (the head as slots, when it is just variables
    of columns that need no conversion); and, per depth, the atoms that join there
    (``participants``) and those that repeat a variable bound there (``repeats``). Nothing in
    it changes after compiling."""

    __slots__ = ("plan", "atoms", "filters", "head", "head_slots", "clause", "index", "variable_order", "slots",
                 "needed", "depth", "backend", "participants", "repeats", "generators", "counted")

    def __init__(self, plan: RulePlan, atoms: tuple[CompiledAtom, ...], filters: tuple[CompiledFilter, ...],
                 head: Callable | None, head_slots: list[int] | None):
        self.plan, self.atoms, self.filters, self.head, self.head_slots = plan, atoms, filters, head, head_slots
        self.clause, self.index, self.variable_order = plan.clause, plan.index, plan.variable_order
        self.slots, self.needed, self.depth, self.backend = plan.slots, plan.needed, plan.depth, plan.backend
        self.generators: dict = {}               # depth -> (binding -> trie node of a range's values)
        self.counted: set | None = None          # what an autoinc() rule derived when run (fixpoint.py)
        self.participants: list[list[int]] = [[] for _ in range(plan.depth)]
        self.repeats: list[list[int]] = [[] for _ in range(plan.depth)]
        for a, atom in enumerate(plan.atoms):
            previous = None
            for d in atom.depths:
                (self.repeats if d == previous else self.participants)[d].append(a)
                previous = d


def compile_plan(plan: RulePlan, head: Callable | None = None) -> CompiledPlan:
    """The plan's closures; ``head`` replaces the head function (an aggregate view's)."""
    rule = _rule_name(plan)
    atoms = tuple(CompiledAtom(a, tuple(_prefix_value(t, plan.slots) for t in a.prefix)) for a in plan.atoms)
    filters = tuple(_compile_filter(f, plan, rule) for f in plan.filters)
    generators = {g.depth: _generator(g, plan, rule) for g in plan.generators}
    head_slots = None
    if plan.head is not None:
        if all(isinstance(a, ast.Variable) for a in plan.head.args) and not _converted(plan.head_types):
            head_slots = [plan.slots[a.name] for a in plan.head.args]
        if head is None:
            head = _head_function(plan, rule)
    compiled = CompiledPlan(plan, atoms, filters, head, head_slots)
    compiled.generators = generators
    return compiled


def _generator(g, plan: RulePlan, rule: str):
    """``x = range(lo, hi[, step])`` with variable bounds: binding -> a trie level holding the
    range's values (the triejoin binds x to each, as to the keys of an atom's level)."""
    args = [compile_term(a, plan.slots, rule, g.literal.span) for a in g.args]
    span = g.literal.span

    def level(b):
        node = TrieNode()
        node.children = dict.fromkeys(range_values(*[a(b) for a in args], span=span))
        node._keys = None                     # sorted on first use
        return node
    return level


def _rule_name(plan: RulePlan) -> str:
    return plan.clause.head.relation if plan.clause is not None else "?"


def _prefix_value(term, slots) -> Callable:
    if isinstance(term, ast.Constant):
        value = term.value
        return lambda b: value
    slot = slots[term.name]                       # a parameter, bound before the body
    return lambda b: b[slot]


# ---------------------------------------------------------------- filters

def _compile_filter(f: Filter, plan: RulePlan, rule: str) -> CompiledFilter:
    if isinstance(f, Lookup):
        return _lookup(f, plan, rule)
    if isinstance(f, Unpack):
        return CompiledFilter(f, _unpack(f, plan, rule))
    if isinstance(f, Assign):
        return CompiledFilter(f, _assign(f, plan, rule))
    assert isinstance(f, Compare)
    return CompiledFilter(f, _compare(f, plan, rule))


def _lookup(f: Lookup, plan: RulePlan, rule: str) -> CompiledFilter:
    """``!r(x, _, 3)`` or ``r(1, _)``: the path of the bound columns in r's index (a whole tuple:
    a set membership)."""
    span = f.literal.atom.span if isinstance(f.literal, ast.Negation) else f.literal.span
    path = tuple(compile_term(t, plan.slots, rule, span) for t in f.path)
    slots = [plan.slots[t.name] for t in f.path] if all(isinstance(t, ast.Variable) for t in f.path) else None
    negated = f.negated
    if f.patterns:
        return CompiledFilter(f, _pattern_lookup(f, plan, rule, span, path), path)

    def make(db):
        relation = db[f.relation]
        if len(path) == relation.arity:
            tuples = relation.tuples
            if slots is not None and negated:
                getter = _slot_getter(slots)
                return lambda b: getter(b) not in tuples
            found = lambda b: tuple(g(b) for g in path) in tuples
        else:
            root = relation.index(f.order)
            found = lambda b: root.has_extension([g(b) for g in path])
        return (lambda b: not found(b)) if negated else found
    return CompiledFilter(f, make, path)


def _pattern_lookup(f: Lookup, plan: RulePlan, rule: str, span, path):
    """Records (issue 18): ``!r([x, _])``: no row under the path's node has values matching the
    patterns (the index puts their columns right below the path)."""
    matchers = [compile_match(p, plan.slots, set(), lambda t: compile_term(t, plan.slots, rule, span))
                for p in f.patterns]
    depth = len(matchers)

    def make(db):
        root = db[f.relation].index(f.order)

        def found(b):
            node = root.find([g(b) for g in path])
            return node is not None and any(all(m(v, b) for m, v in zip(matchers, row)) for row in node.rows(depth))
        return (lambda b: not found(b)) if f.negated else found
    return make


def _slot_getter(slots: list[int]):
    if not slots:
        return lambda b: ()
    if len(slots) == 1:
        slot = slots[0]
        return lambda b: (b[slot],)
    return operator.itemgetter(*slots)


def _compare(f: Compare, plan: RulePlan, rule: str):
    for value, generator in ((f.left, f.right), (f.right, f.left)):
        if f.op == "=" and isinstance(generator, ast.Functor) and generator.name == "range":
            return _membership(value, generator, plan, rule, f.literal.span)
    compare = COMPARE[f.op]
    if isinstance(f.left, ast.Variable) and isinstance(f.right, ast.Constant):
        slot, value = plan.slots[f.left.name], f.right.value        # x < 10: read at every binding
        return lambda db: lambda b: compare(b[slot], value)
    left, right = (_value(v, plan, rule, f.literal.span) for v in (f.left, f.right))
    if not any(isinstance(v, AggregatePlan) for v in (f.left, f.right)):
        return lambda db: _holds(compare, left(db), right(db))

    def make(db):
        lf, rf = left(db), right(db)

        def holds(b) -> bool:               # (an aggregate of nothing holds nothing)
            x, y = lf(b), rf(b)
            return x is not NO_VALUE and y is not NO_VALUE and compare(x, y)
        return holds
    return make


def _holds(compare, lf, rf):
    return lambda b: compare(lf(b), rf(b))


def _membership(value, generator: ast.Functor, plan: RulePlan, rule: str, span):
    """``x = range(lo, hi)`` with x bound: whether x is one of the range's values."""
    fn = compile_term(value, plan.slots, rule, span)
    args = [compile_term(a, plan.slots, rule, span) for a in generator.args]

    def make(db):
        return lambda b: in_range(fn(b), *[a(b) for a in args], span=span)
    return make


def _assign(f: Assign, plan: RulePlan, rule: str):
    slot = plan.slots[f.target]
    value = _value(f.value, plan, rule, getattr(f.value, "span", None))

    def make(db):
        fn = value(db)

        def assign(b):
            v = fn(b)
            if v is NO_VALUE:
                return False
            b[slot] = v
            return True
        return assign
    return make


def _unpack(f: Unpack, plan: RulePlan, rule: str):
    """Records (issue 18): ``value = pattern`` matched, binding the pattern's new variables."""
    span = f.literal.span
    source = compile_term(f.value, plan.slots, rule, span)
    match = compile_match(f.pattern, plan.slots, set(f.targets),
                          lambda t: compile_term(t, plan.slots, rule, span))
    return lambda db: lambda b: match(source(b), b)


def _value(value, plan: RulePlan, rule: str, span):
    """(relations) -> (binding -> value): a term, or an aggregate's memoized sub-evaluation."""
    if isinstance(value, AggregatePlan):
        agg = value.aggregate
        bodies = [compile_plan(body) for body in value.bodies]
        targets = [compile_term(agg.target, body.slots, rule, agg.span) if agg.target is not None else None
                   for body in bodies]
        return aggregate_value(value, bodies, targets, [plan.slots[n] for n in value.outer], rule)
    fn = compile_term(value, plan.slots, rule, span)
    return lambda db: fn


# ---------------------------------------------------------------- head

def _converted(types) -> bool:
    """Whether a head of these column types converts its values: an int into a float column, a
    number into a mixed column (:mod:`datalog.language.mixed`)."""
    return "float" in types or MIXED in types


def _head_function(plan: RulePlan, rule: str):
    head, slots, types = plan.head, plan.slots, plan.head_types
    converted = _converted(types)
    if all(isinstance(a, ast.Variable) for a in head.args) and not converted:
        return _slot_getter([slots[a.name] for a in head.args]) if head.args else (lambda b: ())
    fns = [compile_term(t, slots, rule, head.span) for t in head.args]
    if converted:
        return lambda b: tuple(convert(f(b), t) for f, t in zip(fns, types))
    if len(fns) == 1:                       # b(x + 1): no generator for one or two columns
        (f0,) = fns
        return lambda b: (f0(b),)
    if len(fns) == 2:
        f0, f1 = fns
        return lambda b: (f0(b), f1(b))
    return lambda b: tuple(f(b) for f in fns)
