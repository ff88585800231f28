"""WholeRule: a rule whose aggregate cannot be maintained per group, evaluated again in full.

When a relation it reads changed, the rule is evaluated from scratch over the current
relations and the difference from what it derived before is the change of the head's
support counts (each derived tuple counts once).
"""

from __future__ import annotations

from collections import Counter

from datalog.evaluation.evaluate import derive
from datalog.language.strata import dependencies


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
