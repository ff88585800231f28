"""Maintained aggregates (§2.3): ``v = kind target : { body }`` as a view per group.

The aggregate's body is itself maintained by a :class:`RuleMaintainer` whose
head is one contribution per satisfying assignment: ``(group, witness, value)``
with ``group`` the outer (group-by) variables, ``witness`` the whole binding
and ``value`` the target. Contributions fold into one accumulator per group:

  * count: the support count itself (§2.3.1);
  * sum of integers: an Abelian group (§2.3.2); sum of floats: an exact
    accumulator, so the value is ``math.fsum`` of the current contributions
    rounded once (§2.3.4); mean: such a sum and a count;
  * min and max: a scan tree over (group, witness) records (§2.3.3).

The rule that reads the aggregate sees it as a relation ``view[group] = v``:
its check records a lookup of the group, and a group whose value changed is a
tree surgery on that relation, so the change oracle sends the reading rule
exactly to the bindings that used the group.
"""

from __future__ import annotations

from collections import Counter

from datalog.evaluation.aggregates import NO_VALUE, settle
from datalog.evaluation.compile import COMPARE, compile_plan
from datalog.evaluation.expressions import compile_term
from datalog.language import ast
from datalog.language.variables import aggregate_outer_variables
from datalog.language.rewrites import dnf, lift_atom_expressions, name_wildcards
from datalog.planning.plan import Assign
from datalog.planning.planner import plan_body, scanned
from maintenance.exact_sum import Count, Mean, Sum
from maintenance.levels import LookupPath
from maintenance.rule import RuleMaintainer
from maintenance.scan_tree import MinMaxAggregate


class Unsupported(Exception):
    """This aggregate cannot be maintained per group; the reading rule is evaluated whole."""


class AggregateView:
    def __init__(self, agg: ast.Aggregate, clause, schema, db, registry, drop_prefix: bool, name: str,
                 evaluate: bool = True):
        """``evaluate=False``: nothing evaluated (a workspace restores the trace and then folds)."""
        alternatives = dnf(agg.body)
        if len(alternatives) != 1:
            raise Unsupported("a disjunction inside the aggregate")
        body = name_wildcards(alternatives[0]) if scanned(alternatives) else alternatives[0]
        self.outer = list(dict.fromkeys(v.name for v in aggregate_outer_variables(
            agg, lift_atom_expressions(clause.body))))
        in_atoms = {t.name for lit in body if isinstance(lit, ast.Atom) for t in lit.args
                    if isinstance(t, ast.Variable)}
        if any(n not in in_atoms for n in self.outer):
            raise Unsupported("a group-by variable used but not bound by an atom inside the aggregate")
        plan = plan_body(body, schema, [], None, clause)
        if any(n not in plan.variable_order for n in self.outer) or any(
                _reads_aggregate(f.literal) for f in plan.filters):
            raise Unsupported("a group-by variable not bound inside the aggregate, or a nested aggregate")
        target = compile_term(agg.target, plan.slots, clause.head.relation, agg.span) if agg.target else None
        groups, depth = [plan.slots[n] for n in self.outer], plan.depth
        # contribution(group, witness, value) :- body.   one per satisfying assignment
        plan = compile_plan(plan, head=lambda b: (tuple(b[s] for s in groups), tuple(b[:depth]),
                                                  target(b) if target else None))
        self.kind, self.name, self.aggregate, self.rule_name = agg.kind, name, agg, clause.head.relation
        self.minmax = MinMaxAggregate(agg.kind) if agg.kind in ("min", "max") else None
        self.accumulators: dict[tuple, object] = {}
        self.rule = RuleMaintainer(clause, plan, db, registry, drop_prefix)
        if evaluate:
            contributions = Counter()
            self.rule.evaluate(self.rule.root, None, None, contributions)
            self.fold(contributions, None)

    # ------------------------------------------------------------ values
    def value(self, group: tuple):
        if self.minmax is not None:
            v = self.minmax.value(group)
            return NO_VALUE if v is None else v
        acc = self.accumulators.get(group)
        if acc is None:
            return 0 if self.kind in ("count", "sum") else NO_VALUE
        v = acc.value()
        if v is not None and self.kind == "sum" and self.aggregate.unsigned:     # of unsigned: modulo 2^64
            v %= 2 ** 64
        return NO_VALUE if v is None else settle(v, self.aggregate, self.rule_name)

    def fold(self, contributions: Counter, journal) -> set:
        """Apply signed contributions; return the groups whose value changed."""
        touched = {group for (group, _, _), n in contributions.items() if n}
        before = {group: self.value(group) for group in touched}
        for (group, witness, value), n in contributions.items():
            for _ in range(abs(n)):
                self._change(group, witness, value, n > 0, journal)
        return {g for g in touched if not _same(self.value(g), before[g])}

    def _change(self, group, witness, value, add: bool, journal) -> None:
        if self.minmax is not None:
            (self.minmax.insert if add else self.minmax.erase)(group, witness, value)
            if journal is not None:
                journal.record(lambda: (self.minmax.erase if add else self.minmax.insert)(group, witness, value))
            return
        acc = self.accumulators.get(group)
        if acc is None:
            acc = self.accumulators[group] = self._accumulator()
            if journal is not None:
                journal.record(lambda: self.accumulators.pop(group, None))
        (acc.add if add else acc.remove)(value)
        if journal is not None:
            journal.record(lambda: (acc.remove if add else acc.add)(value))
        if acc.count == 0:
            del self.accumulators[group]
            if journal is not None:
                journal.record(lambda: self.accumulators.__setitem__(group, acc))

    def _accumulator(self):
        if self.kind == "count":
            return Count()
        return Mean(Sum()) if self.kind == "mean" else Sum()

    # ------------------------------------------------------------ as a relation
    def lookup(self, plan) -> LookupPath:
        """The reading rule looks up its group in the view (a relation ``view[group] = v``)."""
        slots = [plan.slots[n] for n in self.outer]
        return LookupPath(self.name, tuple(range(len(slots))), tuple(lambda b, s=s: b[s] for s in slots))

    def surgeries(self, groups: set) -> dict:
        order = tuple(range(len(self.outer)))
        if not order:
            return {order: [(0, (), ())]} if groups else {}
        return {order: [(len(g) - 1, g[:-1], g[-1]) for g in groups]}

    def check(self, f, plan):
        """The check of the reading rule's filter ``f``: ``v = agg`` assigns, ``x < agg`` compares."""
        literal, slots = f.literal, [plan.slots[n] for n in self.outer]

        def group(b):
            return tuple(b[s] for s in slots)
        agg_left = isinstance(literal.left, ast.Aggregate)
        other = literal.right if agg_left else literal.left
        if isinstance(f, Assign):
            slot = plan.slots[f.target]

            def assign(b):
                v = self.value(group(b))
                if v is NO_VALUE:
                    return False
                b[slot] = v
                return True
            return assign
        fn, compare = compile_term(other, plan.slots, plan.clause.head.relation), COMPARE[literal.op]

        def test(b):
            v = self.value(group(b))
            return v is not NO_VALUE and (compare(v, fn(b)) if agg_left else compare(fn(b), v))
        return test


def _reads_aggregate(literal) -> bool:
    return isinstance(literal, ast.Comparison) and (isinstance(literal.left, ast.Aggregate)
                                                    or isinstance(literal.right, ast.Aggregate))


def _same(a, b) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))
