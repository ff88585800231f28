"""Which strata the compiled kernel evaluates, and each rule's plan for it as plain numbers.

:func:`kernel_rules` is the one test of eligibility. A stratum runs on the kernel
(:mod:`datalog.evaluation.columnar`) when it has no choice-domain, subsumption or ``.limitsize``,
and every rule of it is a join of positive atoms whose arguments are variables, constants or
wildcards, with comparisons (``=``, ``!=``, ``<``, ...) of their variables with each other and
with constants, and a head of variables of the body, over relations whose columns are all ``number``,
``unsigned`` (64-bit words as they are) or ``symbol`` (their words in the evaluation's
:class:`~datalog.evaluation.symbols.SymbolTable`; ``=`` and ``!=`` only, as words are not
ordered as symbols are). After the join, on its batches, the rule may assign integer
arithmetic (``d = d1 + w``), aggregates (``m = min d : { dist(x, y, d) }``) and compare them
(:mod:`datalog.evaluation.kernel_steps`). Anything else -- negation, other functors and
operators, an expression in the head, records, floats, mixed columns, autoinc() -- takes the
tuple path, unchanged.

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

from datalog.evaluation.kernel_join import KernelRule, join_parts, words_of
from datalog.evaluation.kernel_steps import head_terms, split


def kernel_rules(stratum, plans: list, schema, symbols=None) -> list[KernelRule] | None:
    """The kernel's plans of the stratum's rules (``plans``: their compiled plans), or None when
    the stratum is not eligible (see the module docstring). ``symbols``: the symbol table that
    gives symbol constants their words (without one, a rule with a symbol constant is not eligible)."""
    if stratum.constrained or stratum.limits or not plans or schema is None:
        return None
    rules = [kernel_rule(p, schema, symbols) for p in plans]
    return None if any(r is None for r in rules) else rules


def kernel_rule(plan, schema, symbols=None) -> KernelRule | None:
    """One rule's kernel plan, or None when the kernel cannot evaluate it: its join, and what
    runs after it on the join's batches (:mod:`datalog.evaluation.kernel_steps`)."""
    if plan.clause is None or not plan.clause.head.args:
        return None
    head_types = words_of(schema, plan.clause.head.relation)
    made = None if head_types is None else split(plan, schema, symbols)
    head = None if made is None else head_terms(plan, head_types, made[2], symbols)
    if head is None:
        return None
    (in_join, steps, types), (head_slots, computed) = made, head
    for step in computed:
        types[step.slot] = step.type_
    parts = join_parts(plan, schema, symbols, in_join)
    if parts is None or any(slot >= plan.depth and types.get(slot) != t for slot, t in zip(head_slots, head_types)):
        return None
    atoms, guards, compares = parts
    return KernelRule(plan.clause.head.relation, plan.depth, atoms, tuple(head_slots), guards, compares,
                      steps + tuple(computed))
