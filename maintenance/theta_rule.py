"""ThetaRule: a non-recursive clause maintained by the theta-join backend (issue 4, item 5).

The clause's body is a GCQ (:mod:`datalog.planning.backend`); its view is ``maintain(gcq)`` -- a
T-reduct when the rule is free-connex, else the §7 free-connex approximation with the
projection materialized (:class:`maintenance.gjt.ProjectedView`).

* Load (first commit): every tuple of every relation the body reads, one bulk pass of
  Algorithm 2 (no delta kept); the head's support counts start as the multiplicities of
  an enumeration (a head tuple's support from this rule = its multiplicity, the number
  of satisfying assignments that project to it).
* A transaction: the changes of the relations it reads (lower strata have settled, so
  ``out`` holds their final change) are one ``update_batch``; the delta enumeration,
  mapped to head tuples, is the change of the support counts. ``_settle`` turns sign
  changes of the counts into the head relation's change (set semantics).
* A head that no rule reads may be left unstored (:mod:`maintenance.view_relation`): then
  ``update_virtual`` returns the relation's change itself, from the view's multiplicities,
  and no support counts are kept.
* Rollback: the journal holds the inverse batch (the same changes negated), which puts
  every rho and index back. If the update itself failed part way, the inverse is not
  exact: the rollback marks the rule ``broken`` instead, and the whole maintainer is dropped,
  rebuilt from the restored relations at the next commit.
"""

from __future__ import annotations

from collections import Counter
from operator import itemgetter

from datalog.language.types import convert
from maintenance.delta import Change
from maintenance.gjt import TReduct, maintain


class ThetaRule:
    def __init__(self, clause, backend, schema):
        self.clause, self.backend = clause, backend
        self.reads = backend.gcq.relations()
        types = schema[clause.head.relation].types
        self.constants = [convert(value, t) if kind == "const" else None
                          for (kind, value), t in zip(backend.head, types)]
        self.view = maintain(backend.gcq)
        at = {v: i for i, v in enumerate(self.view.output_vars)}
        self.slots = [at[value] if kind == "var" else None for kind, value in backend.head]
        self.operations = self.regions = 0
        self.visited: list = []
        self.skipped = False
        self.virtual = False                # the head is a ViewRelation: no support counts
        self.broken = False                 # a batch failed part way: the maintainer must be rebuilt

    def head(self, t: tuple) -> tuple:
        return tuple(c if s is None else t[s] for s, c in zip(self.slots, self.constants))

    def heads(self, pairs) -> Counter:
        """Σ multiplicity per head tuple of (output tuple, multiplicity) pairs."""
        out: Counter = Counter()
        for t, m in pairs:
            out[self.head(t)] += m
        return out

    def load(self, db) -> Counter:
        """Bulk-load the relations the body reads; returns the head's support counts."""
        changes = [(name, row, 1) for name in self.reads for row in db[name].tuples]
        if isinstance(self.view, TReduct):
            self.view.track_delta = False              # one pass of Algorithm 2, no delta
            self.view.update_batch(changes)
            self.view.track_delta = True
        else:
            self.view.update_batch(changes)
        return self.heads(self.view.enumerate_bulk())

    def update(self, out, journal) -> Counter:
        """ΔHead (support-count changes) for the changes in ``out`` of the relations read."""
        changes = self._changes(out)
        if not changes:
            return Counter()
        self._apply(changes, journal)
        return self.heads(self.view.enumerate_delta_bulk())

    def _changes(self, out) -> list[tuple]:
        """(relation, row, ±1) for every change in ``out`` of a relation the body reads."""
        return [(name, row, sign) for name in self.reads if name in out
                for rows, sign in ((out[name].inserted, 1), (out[name].retracted, -1)) for row in rows]

    def _apply(self, changes, journal) -> None:
        """One update_batch, journaled: the rollback applies the inverse batch (or, when the
        batch itself failed part way, marks the rule broken: the maintainer is rebuilt)."""
        self.skipped, self.operations = False, len(changes)
        view, failed = self.view, []
        inverse = [(name, row, -sign) for name, row, sign in changes]
        journal.record(lambda: setattr(self, "broken", True) if failed else view.update_batch(inverse))
        try:
            view.update_batch(changes)
        except BaseException:
            failed.append(True)
            raise

    def update_virtual(self, out, journal) -> Change:
        """The head relation's change (set semantics) for a head that is not materialized
        (:mod:`maintenance.view_relation`): sign changes read off the view's multiplicities."""
        changes = self._changes(out)
        if not changes:
            return Change()
        self._apply(changes, journal)
        result, change = getattr(self.view, "result", None), Change()
        for t, d in self.view.enumerate_delta_bulk():
            after = (1 if d > 0 else 0) if result is None else result.get(t, 0)
            if after - d <= 0 < after:
                change.inserted.add(self.head(t))
            elif after <= 0 < after - d:
                change.retracted.add(self.head(t))
        return change

    def can_be_virtual(self) -> bool:
        """Multiplicities are cheap to tell: a full query (each is 0 or 1) or the §7 view."""
        return not isinstance(self.view, TReduct) or self.backend.gcq.is_full()

    def head_rows(self):
        """Every head tuple, enumerated from the view (in bulk: maintenance/gjt/bulk.py)."""
        pairs = self.view.enumerate_bulk()
        if len(self.slots) > 1 and None not in self.slots:          # no constant: picked in C
            return map(itemgetter(*self.slots), map(itemgetter(0), pairs))
        return (self.head(t) for t, _ in pairs)

    def count(self) -> int:
        """How many head tuples (for a view that can be virtual: one per output tuple)."""
        return self.view.count() if isinstance(self.view, TReduct) else len(self.view.result)

    def size(self) -> int:
        """Tuples held: Σ |rho[n]| (plus the materialized projection for a ProjectedView)."""
        if isinstance(self.view, TReduct):
            return self.view.size()
        return self.view.reduct.size() + len(self.view.result)
