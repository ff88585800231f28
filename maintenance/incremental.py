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
     maintained by Backward/Forward (:mod:`maintenance.backward_forward`) or DRed
     (:mod:`maintenance.dred`), chosen per stratum (``recursive_strategy``); a rule routed to the theta-join
     backend feeds the changes of the relations it reads to its T-reduct and takes the
     delta enumeration as the change of the head's counts (:mod:`maintenance.theta_rule`);
  3. each IDB relation's change is applied by tree surgery in turn, so later
     strata see it. A change to a negated relation needs no sign flip here:
     revisiting a region compares the old trace with the new relations.
"""

from __future__ import annotations

from collections import Counter

from datalog.language import ast
from datalog.language.strata import dependencies
from datalog.planning.planner import counts, generates
from maintenance import backward_forward, constrained, dred
from maintenance.aggregate import AggregateView, Unsupported
from maintenance.budget import size_text
from maintenance.change_oracle import Registry, merge
from maintenance.delta import Change, Delta
from maintenance.dred import Tally
from maintenance.rule import RuleMaintainer
from maintenance.surgery import apply_change
from maintenance.theta_rule import ThetaRule
from maintenance.view_relation import ViewRelation
from maintenance.whole_rule import WholeRule


class IncrementalMaintainer:
    """The incremental maintainer of a program (see the module docstring), given the planned
    program and its relations ``db``: ``apply(delta, journal)`` changes the relations and returns
    the change of every relation. It keeps, per rule of a non-recursive stratum, what maintains
    it (``rules``, by clause index), the sensitivity indices (``registry``), the support counts
    of the IDB tuples (``support``) and the aggregate views. Invariant, between transactions: an
    IDB tuple of a non-recursive stratum is in its relation exactly while its support count is
    positive, and each rule's trace is the trace of its triejoin over the current relations.

    ``unstored`` names the heads that need not be stored (maintenance/view_relation.py): the
    owner of ``db`` serves them from the given views in place of their relations.

    ``recursive`` chooses how recursive strata are maintained: ``"auto"`` (B/F wherever
    :func:`backward_forward.supports` the stratum, DRed elsewhere), ``"bf"`` (the same; the name
    says what a test wants), or ``"dred"`` (DRed everywhere: the twin B/F is compared against)."""

    recursive = "auto"

    def __init__(self, program, db, drop_prefix: bool = True, build: bool = True, budget=None):
        """``drop_prefix=False`` keeps the sensitivity indices the paper drops (for tests);
        ``build=False`` evaluates nothing: no rule is built (a stored maintainer is restored into
        it, maintenance/persistence/); ``budget``: a :class:`maintenance.budget.MemoryBudget`
        the rules check as they record (``memory_budget`` naming the rule that does not fit)."""
        self.program, self.db, self.drop_prefix = program, db, drop_prefix
        self.registry = Registry()
        self.registry.budget = budget
        self.support: dict[str, Counter] = {name: Counter() for name in program.idb}
        self.rules: dict[int, object] = {}            # clause index -> RuleMaintainer | WholeRule | ThetaRule
        self.pending: dict[object, list] = {}         # rule -> regions queued by the oracle
        self.changed: set[str] = set()
        self.views: list[AggregateView] = []
        self.variants: dict = {}                      # B/F's and DRed's delta-rule plans
        self.tally = Tally()                          # B/F's or DRed's counts in the last transaction
        self.reached: set[int] = set()                # ids of recursive strata maintained in it
        self.unstored: dict[str, ViewRelation] = {}
        if not build:
            return
        for name, rows in program.facts_of(self.support).items():
            self.support[name].update(rows)
        for stratum in program.strata:
            if stratum.recursive or stratum.constrained:
                continue
            for clause in stratum.clauses:
                if clause.body:
                    self.rules[clause.index] = self._build(clause)
        self.registry.file()
        self.virtualize()

    def virtualize(self) -> None:
        """Heads that need not be stored become ViewRelations (``unstored``): a head no rule reads,
        no ``.input`` loads, derived by one rule only, on the theta-join backend."""
        program = self.program
        read = {rel for c in program.clauses for rel, _, _ in dependencies(c)}
        defining: dict[str, list] = {}
        for clause in program.clauses:
            defining.setdefault(clause.head.relation, []).append(clause)
        for rule in self.rules.values():
            name = rule.clause.head.relation
            if (isinstance(rule, ThetaRule) and rule.can_be_virtual() and len(defining[name]) == 1
                    and name not in read and name not in program.inputs):
                rule.virtual = True
                self.unstored[name] = ViewRelation(name, self.db[name].arity, rule)
                self.support[name].clear()

    @property
    def broken(self) -> bool:
        """A T-reduct failed part way through a batch: its state cannot be undone exactly, so
        this maintainer must be dropped (and built again) after the rollback."""
        return any(getattr(rule, "broken", False) for rule in self.rules.values())

    def _build(self, clause):
        rule = self.construct(clause)
        if isinstance(rule, ThetaRule):
            self.support[clause.head.relation].update(rule.load(self.db))
        elif isinstance(rule, WholeRule):
            counted = getattr(self.program.plans[clause.index], "counted", None)
            if counts(clause) and counted is not None:
                # autoinc(): evaluating again would number afresh; what the run derived is the rule's
                rule.derived = Counter(dict.fromkeys(counted, 1))
            else:
                rule.evaluate(Counter())
            self.support[clause.head.relation].update(rule.derived)
        else:
            out = Counter()
            rule.evaluate(rule.root, None, None, out)
            self.support[clause.head.relation].update(out)
            for relation, order in rule.read_indexes():    # as a restored maintainer has them, though
                self.db[relation].index(order)                # a lookup above failed first
        return rule

    def construct(self, clause, evaluate_views: bool = True):
        """The maintainer of ``clause``, nothing of the rule itself evaluated (a workspace restoring
        its state calls this with ``evaluate_views=False``: aggregate bodies not evaluated either)."""
        plan = self.program.plans[clause.index]
        if counts(clause) or generates(clause):  # autoinc(): fresh numbers; a generated range:
            return WholeRule(clause, plan, self.db)  # levels of no relation to record; the rule again
        if plan.backend is not None and plan.backend.name == "thetajoin":
            return ThetaRule(clause, plan.backend, self.program.schema)
        try:
            views = {k: self._view(f, clause, evaluate_views) for k, f in enumerate(plan.filters) if _has_aggregate(f)}
        except Unsupported:
            return WholeRule(clause, plan, self.db)
        overrides = {k: (view.check(plan.filters[k].filter, plan), view.lookup(plan)) for k, view in views.items()}
        rule = RuleMaintainer(clause, plan, self.db, self.registry, self.drop_prefix, overrides)
        rule.views = list(views.values())
        return rule

    def _view(self, compiled, clause, evaluate: bool = True) -> AggregateView:
        literal = compiled.literal
        agg = literal.left if isinstance(literal.left, ast.Aggregate) else literal.right
        name = f"{agg.kind}@{clause.head.relation}#{len(self.views)}"
        view = AggregateView(agg, clause, self.program.schema, self.db, self.registry,
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
            for stratum in self.program.strata:
                self._maintain(stratum, journal, out)
            return out
        finally:
            self.registry.journal = None

    def _recompute_constrained(self, stratum, journal, out: Delta) -> None:
        """choice-domain / subsumption: the stratum again from scratch when something it reads
        changed (maintenance/constrained.py); its delta goes on like any other."""
        if not any(out.get(name) for name in constrained.reads(stratum)):
            return
        for name, change in constrained.recompute(self.program, self.db, stratum).items():
            previous = out.get(name)
            self._apply_change(name, change, journal, out)
            if previous:                              # an EDB change of the relation itself, then this
                out[name] = constrained.net(previous, change)

    def _apply_change(self, name: str, change: Change, journal, out: Delta) -> None:
        if name in self.unstored:                     # not stored, read by no rule
            if change:
                out[name] = change
            return
        surgeries = apply_change(self.db[name], change, journal)
        out[name] = change
        self.changed.add(name)
        for rule, regions in self.registry.match(name, surgeries).items():
            self.pending.setdefault(rule, []).extend(regions)

    def _maintain(self, stratum, journal, out: Delta) -> None:
        if stratum.constrained:
            self._recompute_constrained(stratum, journal, out)
            return
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
                self._apply_change(clause.head.relation, rule.update_virtual(out, journal),
                                   journal, out)
                continue
            if isinstance(rule, ThetaRule):
                # head :- GCQ body: Δhead = the T-reduct's delta enumeration of this batch
                change.update(rule.update(out, journal))
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
                result.retracted.add(row)
            elif after < 0:
                raise AssertionError(f"negative support count for {name}{row}")
        if result:
            self._apply_change(name, result, journal, out)

    def _maintain_recursive(self, stratum, journal, out: Delta) -> None:
        lower = {name: out[name] for name in out}
        if not any(rel in self.changed for c in stratum.clauses for rel, _, _ in dependencies(c)):
            return
        self.reached.add(id(stratum))
        module = backward_forward if self.recursive_strategy(stratum) == "B/F" else dred
        result = module.maintain_recursive(self.program, self.db, stratum, lower, journal, self.tally, self.variants)
        for name, change in result.items():
            if change:
                relation = self.db[name]
                relation.erase(change.inserted)          # back to the old contents, unjournaled:
                relation.insert(change.retracted)           # apply_change redoes it, with surgeries
                self._apply_change(name, change, journal, out)

    def recursive_strategy(self, stratum) -> str:
        """``"B/F"`` or ``"DRed"`` for a recursive stratum. The rule: B/F wherever it applies (every
        same-stratum relation read by positive atoms over variables, constants and wildcards), since
        it never deletes a tuple that still has a proof; DRed otherwise, or everywhere when
        ``recursive == "dred"``."""
        if self.recursive != "dred" and backward_forward.supports(stratum):
            return "B/F"
        return "DRed"

    # ------------------------------------------------------------ observability
    def stats(self) -> dict:
        """Per rule: the strategy, the work of the last transaction and (``state``) the memory
        of what maintains it (trace and sensitivity entries; a T-reduct's or a whole rule's
        rows: not measured, None)."""
        out, row_bytes = {}, self.registry.row_bytes()
        recursive = {c.index: stratum for stratum in self.program.strata if stratum.recursive
                     for c in stratum.clauses}
        recomputed = {c.index for stratum in self.program.strata if stratum.constrained for c in stratum.clauses}
        for clause in self.program.clauses:
            if clause.index in recomputed and clause.body:
                out[str(clause)] = {"strategy": constrained.STRATEGY, "delta_rules": None, "derived": None}
                continue
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
                                "delta_rules": None, "derived": None,
                                "state": None if isinstance(rule, WholeRule) else
                                size_text(sum(p.state_bytes(row_bytes) for p in parts))}
        return out

    def _dred_stats(self, clause, stratum) -> dict:
        """A clause of a recursive stratum: B/F's rule instances matched (or DRed's delta rules),
        each a triejoin over a small relation, and the heads they gave; no sensitivity index, so no
        iterator operations or regions to report."""
        key = clause.index
        return {"strategy": self.recursive_strategy(stratum), "skipped": id(stratum) not in self.reached,
                "operations": None, "sensitivity_intervals": None, "regions": None,
                "delta_rules": self.tally.rules.get(key, 0), "derived": self.tally.derived.get(key, 0)}


def _theta_stats(rule: ThetaRule) -> dict:
    """operations: the relation changes fed to the T-reduct; sensitivity_intervals: Σ |rho[n]|."""
    return {"strategy": "thetajoin", "skipped": rule.skipped, "operations": rule.operations,
            "sensitivity_intervals": rule.size(), "regions": None, "delta_rules": None, "derived": None}


def _has_aggregate(compiled) -> bool:
    literal = compiled.literal
    if not isinstance(literal, ast.Comparison):
        return False
    return isinstance(literal.left, ast.Aggregate) or isinstance(literal.right, ast.Aggregate)
