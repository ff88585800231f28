"""IncrementalMaintainer: the paper's maintenance, stratum by stratum.

On the first commit every non-recursive rule is evaluated once by the
recording triejoin (:class:`RuleMaintainer`), which fills the sensitivity
indices and the support counts of the heads. Then, for each transaction:

  1. each changed relation is updated by tree surgery (:mod:`maintenance.surgery`);
     its surgeries are matched against the sensitivity indices at once
     (:class:`Registry`), queueing regions on the rules that read it;
  2. strata run in order: a non-recursive rule revisits its merged regions --
     old leaves out, fresh evaluation in -- and the head's support counts take
     the difference (§2.2: a tuple is in the relation while its count is > 0);
     a rule with an aggregate is evaluated again whole when one of its
     relations changed (see README: partial); a recursive stratum is
     maintained by DRed (:mod:`maintenance.dred`); a rule routed to the theta-join
     backend feeds the changes of the relations it reads to its T-reduct and takes the
     delta enumeration as the change of the head's counts (:mod:`maintenance.theta_rule`);
  3. each IDB relation's change is applied by tree surgery in turn, so later
     strata see it. A change to a negated relation needs no sign flip here:
     revisiting a region compares the old trace with the new relations.
"""

from __future__ import annotations

from collections import Counter

from datalog.evaluation.evaluate import derive
from datalog.language import ast
from datalog.language.strata import dependencies
from lftj.relation import Relation
from maintenance.aggregate import AggregateView, Unsupported
from maintenance.change_oracle import Registry, merge
from maintenance.delta import Change, Delta
from maintenance.dred import Tally, maintain_recursive
from maintenance.rule import RuleMaintainer
from maintenance.surgery import apply_change
from maintenance.theta_rule import ThetaRule
from maintenance.view_relation import ViewRelation


class IncrementalMaintainer:
    def __init__(self, engine, drop_prefix: bool = True):
        """``drop_prefix=False`` keeps the sensitivity indices the paper drops (for tests)."""
        self.engine, self.drop_prefix = engine, drop_prefix
        self.registry = Registry()
        self.support: dict[str, Counter] = {name: Counter() for name in engine.idb}
        self.rules: dict[int, object] = {}            # clause index -> RuleMaintainer | WholeRule | ThetaRule
        self.pending: dict[object, list] = {}         # rule -> regions queued by the oracle
        self.changed: set[str] = set()
        self.views: list[AggregateView] = []
        self.tally = Tally()                          # DRed's counts in the last transaction
        self.reached: set[int] = set()                # ids of recursive strata DRed ran on
        _materialize_views(engine)
        for clause in engine.checked.clauses:
            if not clause.body:
                if clause.head.relation in self.support:
                    self.support[clause.head.relation][self._fact(clause)] += 1
        for stratum in engine.checked.strata:
            if stratum.recursive:
                continue
            for clause in stratum.clauses:
                if clause.body:
                    self.rules[clause.index] = self._build(clause)
        self._virtualize()

    def _virtualize(self) -> None:
        """Heads that need not be stored become ViewRelations (see maintenance/view_relation.py)."""
        engine, read = self.engine, {rel for c in self.engine.checked.clauses for rel, _, _ in dependencies(c)}
        inputs = {d.relation for d in engine.checked.directives("input")}
        defining: dict[str, list] = {}
        for clause in engine.checked.clauses:
            defining.setdefault(clause.head.relation, []).append(clause)
        for rule in self.rules.values():
            name = rule.clause.head.relation
            if (isinstance(rule, ThetaRule) and rule.can_be_virtual() and len(defining[name]) == 1
                    and name not in read and name not in inputs):
                rule.virtual = True
                engine.db[name] = ViewRelation(name, engine.db[name].arity, rule)
                self.support[name].clear()

    def _fact(self, clause) -> tuple:
        engine = self.engine
        from datalog.evaluation.expressions import compile_term
        name = clause.head.relation
        row = tuple(compile_term(t, {}, name, clause.head.span)([]) for t in clause.head.args)
        return engine._typed(name, row, clause.head.span)

    def _build(self, clause):
        rule = self.construct(clause)
        if isinstance(rule, ThetaRule):
            self.support[clause.head.relation].update(rule.load(self.engine.db))
        elif isinstance(rule, WholeRule):
            rule.evaluate(Counter())
            self.support[clause.head.relation].update(rule.derived)
        else:
            out = Counter()
            rule.evaluate(rule.root, None, None, out)
            self.support[clause.head.relation].update(out)
        return rule

    def construct(self, clause, evaluate_views: bool = True):
        """The maintainer of ``clause``, nothing of the rule itself evaluated (a workspace restoring
        its state calls this with ``evaluate_views=False``: aggregate bodies not evaluated either)."""
        engine, plan = self.engine, self.engine.compiled[clause.index]
        if plan.backend is not None and plan.backend.name == "thetajoin":
            return ThetaRule(clause, plan.backend, engine.schema)
        try:
            views = {k: self._view(f, clause, evaluate_views) for k, f in enumerate(plan.filters) if _has_aggregate(f)}
        except Unsupported:
            return WholeRule(clause, plan, engine.db)
        overrides = {k: (view.check(plan.filters[k].filter, plan), view.lookup(plan)) for k, view in views.items()}
        rule = RuleMaintainer(clause, plan, engine.db, self.registry, self.drop_prefix, overrides)
        rule.views = list(views.values())
        return rule

    def _view(self, compiled, clause, evaluate: bool = True) -> AggregateView:
        literal = compiled.literal
        agg = literal.left if isinstance(literal.left, ast.Aggregate) else literal.right
        name = f"{agg.kind}@{clause.head.relation}#{len(self.views)}"
        view = AggregateView(agg, clause, self.engine.schema, self.engine.db, self.registry,
                             self.drop_prefix, name, evaluate)
        self.views.append(view)
        return view

    # ------------------------------------------------------------ a transaction
    def apply(self, delta: Delta, journal) -> Delta:
        self.registry.journal = journal
        self.pending, self.changed = {}, set()
        self.tally, self.reached = Tally(), set()
        for rule in self.rules.values():
            for one in [rule] + [view.rule for view in getattr(rule, "views", ())]:
                one.operations, one.regions, one.skipped, one.visited = 0, 0, True, []
        try:
            out: Delta = {}
            for name, change in delta.items():
                self._apply_change(name, change, journal, out)
            for stratum in self.engine.checked.strata:
                self._maintain(stratum, journal, out)
            return out
        finally:
            self.registry.journal = None

    def _apply_change(self, name: str, change: Change, journal, out: Delta) -> None:
        if isinstance(self.engine.db[name], ViewRelation):   # not stored, read by no rule
            if change:
                out[name] = change
            return
        surgeries = apply_change(self.engine.db[name], change, journal)
        out[name] = change
        self.changed.add(name)
        for rule, regions in self.registry.match(name, surgeries).items():
            self.pending.setdefault(rule, []).extend(regions)

    def _maintain(self, stratum, journal, out: Delta) -> None:
        clauses = [c for c in stratum.clauses if c.body]
        if not clauses:
            return
        if stratum.recursive:
            self._maintain_recursive(stratum, journal, out)
            return
        counts: dict[str, Counter] = {}
        for clause in clauses:
            rule = self.rules[clause.index]
            change = counts.setdefault(clause.head.relation, Counter())
            if isinstance(rule, ThetaRule) and rule.virtual:
                # head :- GCQ body, not stored: Δhead = the sign changes of the delta enumeration
                self._apply_change(clause.head.relation, rule.update_virtual(out, journal, self.engine),
                                   journal, out)
                continue
            if isinstance(rule, ThetaRule):
                # head :- GCQ body: Δhead = the T-reduct's delta enumeration of this batch
                change.update(rule.update(out, journal, self.engine))
                continue
            if isinstance(rule, WholeRule):
                if rule.reads & self.changed:
                    rule.skipped = False
                    rule.evaluate(change, journal)
                continue
            for view in rule.views:
                self._update_view(view, journal)
            regions = self.pending.pop(rule, None)
            if regions:
                rule.skipped = False
                self._revisit(rule, regions, change)
        for name, change in counts.items():
            self._settle(name, change, journal, out)

    def _revisit(self, rule: RuleMaintainer, regions: list, change: Counter) -> None:
        """deltaF :- (Body ... Body')(region), ChangeOracle(region): old leaves out, new ones in."""
        for node, lo, hi in merge([rule.widen(region) for region in regions]):
            if not node.alive:
                continue                      # inside a region revisited already
            rule.regions += 1
            rule.visited.append((tuple(node.path()), lo, hi))
            old, new = Counter(), Counter()
            rule.drop(node, lo, hi, old)
            rule.evaluate(node, lo, hi, new)
            change.update(new)
            change.subtract(old)

    def _update_view(self, view: AggregateView, journal) -> None:
        """The aggregate body's regions first; groups whose value changed are surgeries on the view."""
        regions = self.pending.pop(view.rule, None)
        if not regions:
            return
        view.rule.skipped = False
        contributions = Counter()
        self._revisit(view.rule, regions, contributions)
        groups = view.fold(contributions, journal)
        for rule, more in self.registry.match(view.name, view.surgeries(groups)).items():
            self.pending.setdefault(rule, []).extend(more)

    def _settle(self, name: str, change: Counter, journal, out: Delta) -> None:
        """Support counts take the change; tuples whose count leaves or reaches 0 change the relation."""
        support, result = self.support[name], Change()
        for row, diff in change.items():
            if diff == 0:
                continue
            before = support.get(row, 0)
            after = before + diff
            journal.set_item(support, row, after or None)
            if before == 0 and after > 0:
                result.inserted.add(row)
            elif before > 0 and after == 0:
                result.erased.add(row)
            elif after < 0:
                raise AssertionError(f"negative support count for {name}{row}")
        if result:
            self._apply_change(name, result, journal, out)

    def _maintain_recursive(self, stratum, journal, out: Delta) -> None:
        lower = {name: out[name] for name in out}
        if not any(rel in self.changed for c in stratum.clauses for rel, _, _ in dependencies(c)):
            return
        self.reached.add(id(stratum))
        result = maintain_recursive(self.engine, stratum, lower, journal, self.tally)
        for name, change in result.items():
            if change:
                relation = self.engine.db[name]
                relation.erase(change.inserted)          # back to the old contents, unjournaled:
                relation.insert(change.erased)           # apply_change redoes it, with surgeries
                self._apply_change(name, change, journal, out)

    # ------------------------------------------------------------ observability
    def stats(self) -> dict:
        out = {}
        recursive = {c.index: stratum for stratum in self.engine.checked.strata if stratum.recursive
                     for c in stratum.clauses}
        for clause in self.engine.checked.clauses:
            if clause.index in recursive and clause.body:
                out[str(clause)] = self._dred_stats(clause, recursive[clause.index])
                continue
            rule = self.rules.get(clause.index)
            if rule is None:
                continue
            if isinstance(rule, ThetaRule):
                out[str(clause)] = _theta_stats(rule)
                continue
            parts = [rule] + [view.rule for view in getattr(rule, "views", ())]
            out[str(clause)] = {"strategy": "whole rule" if isinstance(rule, WholeRule) else "oracle",
                                "skipped": all(p.skipped for p in parts),
                                "operations": sum(p.operations for p in parts),
                                "sensitivity_intervals": sum(p.intervals for p in parts),
                                "regions": sum(p.regions for p in parts),
                                "delta_rules": None, "derived": None}
        return out

    def _dred_stats(self, clause, stratum) -> dict:
        """A clause of a recursive stratum: DRed's delta rules, each a whole triejoin over a
        delta relation; no sensitivity index, so no iterator operations or regions to report."""
        key = clause.index
        return {"strategy": "DRed", "skipped": id(stratum) not in self.reached,
                "operations": None, "sensitivity_intervals": None, "regions": None,
                "delta_rules": self.tally.rules.get(key, 0), "derived": self.tally.derived.get(key, 0)}


class WholeRule:
    """A rule with an aggregate: evaluated again in full when a relation it reads changed."""

    def __init__(self, clause, plan, db):
        self.clause, self.plan, self.db = clause, plan, db
        self.reads = {rel for rel, _, _ in dependencies(clause)}
        self.derived: Counter = Counter()
        self.operations = self.regions = self.intervals = 0
        self.visited: list = []
        self.skipped = False

    def evaluate(self, change: Counter, journal=None) -> None:
        new = derive(self.plan, self.db)
        derived = Counter(dict.fromkeys(new, 1))
        self.operations += len(new)
        self.regions += 1
        change.update(derived)
        change.subtract(self.derived)
        if journal is not None:
            old = self.derived
            journal.record(lambda: setattr(self, "derived", old))
        self.derived = derived


def _materialize_views(engine) -> None:
    """A new maintainer (after ``extend``) starts from stored relations: the old views are still
    current, so their rows are the relations' rows."""
    for name, relation in list(engine.db.items()):
        if isinstance(relation, ViewRelation):
            engine.db[name] = Relation(name, relation.arity, relation.tuples)


def _theta_stats(rule: ThetaRule) -> dict:
    """operations: the relation changes fed to the T-reduct; sensitivity_intervals: Σ |rho[n]|."""
    return {"strategy": "thetajoin", "skipped": rule.skipped, "operations": rule.operations,
            "sensitivity_intervals": rule.size(), "regions": None, "delta_rules": None, "derived": None}


def _has_aggregate(compiled) -> bool:
    literal = compiled.literal
    if not isinstance(literal, ast.Comparison):
        return False
    return isinstance(literal.left, ast.Aggregate) or isinstance(literal.right, ast.Aggregate)
