"""Which strata the compiled kernel evaluates, and each rule's plan for it as plain numbers.

:func:`kernel_rules` is the one test of eligibility. A stratum runs on the kernel
(:mod:`datalog.evaluation.columnar`) when it has no choice-domain, subsumption or ``.limitsize``,
and every rule of it is a join of positive atoms whose arguments are variables, constants or
wildcards, with comparisons (``=``, ``!=``, ``<``, ...) of their variables with each other and
with constants, and a head of variables of the body, over relations whose columns are all ``number``,
``unsigned`` (64-bit words as they are) or ``symbol`` (their words in the evaluation's
:class:`~datalog.evaluation.symbols.SymbolTable`; ``=`` and ``!=`` only, as words are not
ordered as symbols are). Anything else -- negation, functors and arithmetic, aggregates,
records, floats, mixed columns, autoinc() -- takes the tuple path, unchanged.

A rule's :class:`KernelRule` keeps the planner's variable order (depth ``d`` is the kernel's
variable ``d``). Constants and variables repeated within an atom are filters of the atom's rows,
applied before its trie is built (the kernel joins variables only); wildcards are projected away.
An atom with no variable (``e(1, _)``, a Lookup of the plan) is a guard: the rule derives nothing
unless some row of it matches. Comparisons are tested by the kernel at the depth that binds the later
of their variables (:mod:`lftj.kernel`): a key that fails is passed over before the deeper variables are
bound, as the tuple path filters.

>>> from datalog.engine import Engine
>>> e = Engine.from_source('.decl e(a: number, b: number)  .decl p(a: number, b: number)  p(x, z) :- e(x, y), e(y, z), e(1, x).')
>>> rule = kernel_rule(e.compiled[0], e.schema)
>>> e.compiled[0].variable_order, [(a.columns, a.variables, a.constants) for a in rule.atoms]
(['x', 'y', 'z'], [((0, 1), (0, 1), ()), ((0, 1), (1, 2), ()), ((1,), (0,), ((0, 1),))])
>>> kernel_rule(Engine.from_source('.decl e(a: number)  .decl p(a: number)  p(x) :- e(x), !e(x + 1).').compiled[0], {}) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from datalog.language import ast, numbers
from datalog.planning.plan import AggregatePlan, Assign, Compare, Lookup

WORDS = ("number", "unsigned", "symbol")  # column types the kernel joins as 64-bit words
EQUALITIES = ("=", "!=")                  # the comparisons of symbols' words
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
AGGREGATES = ("count", "sum", "min", "max")   # over a variable of number or unsigned words (count: any)


@dataclass(frozen=True)
class KernelAtom:
    """One positive atom as the kernel reads it: the rows of ``relation`` that have ``constants``
    ((column, value), the value as its int64 word) and equal values in the ``equal`` column pairs,
    projected to ``columns`` (one per variable, in the variable order); ``variables`` are their
    depths, strictly increasing."""

    relation: str
    columns: tuple[int, ...]
    variables: tuple[int, ...]
    constants: tuple[tuple[int, int], ...] = ()
    equal: tuple[tuple[int, int], ...] = ()

    @property
    def key(self) -> tuple:
        """What its rows depend on besides the relation's rows (a cache key of its trie)."""
        return self.relation, self.columns, self.constants, self.equal


@dataclass(frozen=True)
class KernelRule:
    """A rule as the kernel joins it: ``atoms`` over ``n_vars`` variables, the head relation
    ``head`` and the depth of each head column (``head_depths``)."""

    head: str
    n_vars: int
    atoms: tuple[KernelAtom, ...]
    head_depths: tuple[int, ...]
    guards: tuple[KernelAtom, ...] = ()   # atoms with no variable (``e(1, _)``): some row must match
    compares: tuple["KernelCompare", ...] = ()   # filters of the bindings, tested in the join
    aggregates: tuple["KernelAggregate", ...] = ()   # head column n_vars + i: aggregate i's value

    def relations(self) -> set[str]:
        """Every relation the rule reads: its atoms', its guards' and its aggregates' bodies'."""
        return {a.relation for a in self.atoms + self.guards} | \
            {name for agg in self.aggregates for name in agg.body.relations()}


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
class KernelCompare:
    """``x < y`` or ``x != 3`` over a binding: each side a depth (int) or a constant's word
    (``("word", w)``); ``unsigned``: the words compare as unsigned."""

    op: str
    left: object
    right: object
    unsigned: bool = False


def kernel_rules(stratum, plans: list, schema, symbols=None) -> list[KernelRule] | None:
    """The kernel's plans of the stratum's rules (``plans``: their compiled plans), or None when
    the stratum is not eligible (see the module docstring). ``symbols``: the symbol table that
    gives symbol constants their words (without one, a rule with a symbol constant is not eligible)."""
    if stratum.constrained or stratum.limits or not plans or schema is None:
        return None
    rules = [kernel_rule(p, schema, symbols) for p in plans]
    return None if any(r is None for r in rules) else rules


def kernel_rule(plan, schema, symbols=None) -> KernelRule | None:
    """One rule's kernel plan, or None when the kernel cannot evaluate it."""
    if plan.head_slots is None or not plan.head_slots or plan.clause is None:
        return None
    head_types = _words(schema, plan.clause.head.relation)
    assigns = [f.filter for f in plan.filters if isinstance(f.filter, Assign)]
    parts = _join(plan, schema, symbols, [f for f in plan.filters if not isinstance(f.filter, Assign)])
    if head_types is None or parts is None:
        return None
    values = {}                                    # the slot an aggregate binds -> its head column
    aggregates = []
    for assign in assigns:
        made = kernel_aggregate(assign, plan, schema, symbols)
        if made is None or plan.slots[assign.target] in values:
            return None
        values[plan.slots[assign.target]] = plan.depth + len(aggregates)
        aggregates.append(made)
    head = []
    for column, slot in enumerate(plan.head_slots):
        if slot < plan.depth:
            head.append(slot)
        elif slot in values and aggregates[values[slot] - plan.depth].type_ == head_types[column]:
            head.append(values[slot])
        else:
            return None
    atoms, guards, compares = parts
    return KernelRule(plan.clause.head.relation, plan.depth, atoms, tuple(head), guards, compares,
                      tuple(aggregates))


def _join(plan, schema, symbols, filters) -> tuple | None:
    """A plan's atoms, guards and comparisons as the kernel reads them (``filters``: the plan's,
    but for its aggregates' assignments), or None."""
    if plan.generators or plan.plan.params or not plan.atoms:
        return None
    atoms = [kernel_atom(atom, schema, symbols) for atom in plan.atoms]
    if any(a is None for a in atoms):
        return None
    typed = {d: schema[a.relation].types[c] for a in atoms for c, d in zip(a.columns, a.variables)}
    guards = [guard(f.filter, schema, symbols) for f in filters if not isinstance(f.filter, Compare)]
    compares = [comparison(f.filter, plan.slots, typed, symbols) for f in filters if isinstance(f.filter, Compare)]
    if any(g is None for g in guards + compares):
        return None
    return tuple(atoms), tuple(guards), tuple(compares)


def kernel_aggregate(assign, plan, schema, symbols=None) -> KernelAggregate | None:
    """``v = kind target : { body }`` (an Assign of the rule's plan) as the kernel evaluates it, or
    None: more than one alternative, a kind other than count, sum, min and max, a target that is
    not a variable of number or unsigned words, a group variable the body's atoms do not bind, a
    body the kernel cannot join, or 32-bit numbers (whose sums wrap)."""
    from datalog.evaluation.compile import compile_plan      # (only for a rule with an aggregate)
    from datalog.planning.planner import plan_body
    agg = assign.value
    if type(assign) is not Assign or not isinstance(agg, AggregatePlan) or agg.distinct or \
            agg.aggregate.kind not in AGGREGATES or numbers.WIDTH[0] != 64:
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
    parts = _join(free, schema, symbols, free.filters)
    if parts is None:
        return None
    atoms, guards, compares = parts
    typed = {d: schema[a.relation].types[c] for a in atoms for c, d in zip(a.columns, a.variables)}
    at = None if target is None else free.slots.get(target.name)
    type_ = "number" if kind == "count" else typed.get(at)
    if type_ not in ("number", "unsigned"):
        return None
    n = len(agg.outer)
    read = tuple(range(free.depth)) if kind in ("count", "sum") else (*range(n), at)
    joined = KernelRule("", free.depth, atoms, read, guards, compares)
    return KernelAggregate(kind, joined, tuple(plan.slots[g] for g in agg.outer), at, type_, agg.aggregate,
                           plan.clause.head.relation)


def comparison(compare, slots, typed: dict, symbols=None) -> KernelCompare | None:
    """``x < y``, ``x != 3`` (variables of atoms, constants) as a filter of the kernel's bindings, or None."""
    if compare.op not in COMPARISONS:
        return None
    depths = [slots.get(t.name) if isinstance(t, ast.Variable) else None for t in (compare.left, compare.right)]
    types = {typed.get(d) for d in depths if d is not None}
    if len(types) != 1 or None in types:
        return None
    (type_,) = types
    if type_ == "symbol" and compare.op not in EQUALITIES:
        return None                               # words are not ordered as the symbols are
    sides = []
    for term, depth in zip((compare.left, compare.right), depths):
        if depth is not None:
            sides.append(depth)
        elif isinstance(term, ast.Constant) and (word := encode_constant(term.value, type_, symbols)) is not None:
            sides.append(("word", word))
        else:
            return None
    return KernelCompare(compare.op, sides[0], sides[1], type_ == "unsigned")


def guard(lookup, schema, symbols=None) -> KernelAtom | None:
    """``e(1, _)`` (a positive Lookup of constants) as an atom of no variable, or None (any other filter)."""
    if not isinstance(lookup, Lookup) or lookup.negated or lookup.patterns or lookup.depth != -1:
        return None
    types = _words(schema, lookup.relation)
    if types is None or not all(isinstance(t, ast.Constant) for t in lookup.path):
        return None
    constants = [(c, encode_constant(t.value, types[c], symbols)) for c, t in zip(lookup.order, lookup.path)]
    if any(word is None for _, word in constants):
        return None
    return KernelAtom(lookup.relation, (), (), tuple(constants))


def kernel_atom(atom, schema, symbols=None) -> KernelAtom | None:
    """A compiled AtomPlan as the kernel reads it, or None (a term other than a variable, constant or
    wildcard; a column that is no 64-bit word; a constant that fits none)."""
    types = _words(schema, atom.relation)
    if types is None or not all(isinstance(t, (ast.Variable, ast.Constant, ast.Wildcard)) for t in atom.atom.args):
        return None
    prefix = atom.plan.prefix
    n, constants = len(prefix), []
    for column, term in zip(atom.order[:n], prefix):
        if not isinstance(term, ast.Constant) or (word := encode_constant(term.value, types[column], symbols)) is None:
            return None
        constants.append((column, word))
    columns, variables, equal = [], [], []
    for column, depth in zip(atom.order[n:], atom.depths):
        if variables and variables[-1] == depth:       # r(x, x): a repeated variable, filtered
            equal.append((column, columns[-1]))
        else:
            columns.append(column)
            variables.append(depth)
    return KernelAtom(atom.relation, tuple(columns), tuple(variables), tuple(constants), tuple(equal))


def encode_constant(value, type_: str, symbols=None) -> int | None:
    """The int64 word of a constant in a column of ``type_`` (unsigned: two's complement; a symbol:
    its word in ``symbols``), or None."""
    if type_ == "symbol":
        return symbols.word(value) if symbols is not None and isinstance(value, str) else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if type_ == "number" and -2**63 <= value < 2**63:
        return value
    if type_ == "unsigned" and 0 <= value < 2**64:
        return value - 2**64 if value >= 2**63 else value
    return None


def _words(schema, relation: str) -> tuple[str, ...] | None:
    """The relation's column types, when every one is a 64-bit word and it has a column."""
    info = schema.get(relation)
    types = tuple(info.types) if info is not None else ()
    return types if types and all(t in WORDS for t in types) else None
