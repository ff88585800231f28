"""The slow, obviously correct twin of incremental maintenance: evaluate again from scratch.

Apply the EDB delta, empty every IDB relation, evaluate the whole program, and diff the
result against the old contents. Used by the property tests as the reference, and
selectable with ``Engine(..., maintenance="recompute")``.
"""

from __future__ import annotations

from datalog.evaluation import fixpoint
from maintenance.delta import Delta, diff


class RecomputeMaintainer:
    """Maintenance by evaluating everything again: given the planned program and its relations."""

    def __init__(self, program, db):
        self.program, self.db = program, db

    def apply(self, delta: Delta, journal) -> Delta:
        program, db, idb = self.program, self.db, self.program.idb
        for name, change in delta.items():
            journal.erase(db[name], change.retracted)
            journal.insert(db[name], change.inserted)
        before = {name: set(db[name].tuples) for name in idb}
        for name in idb:
            journal.erase(db[name], before[name])
        for name, rows in program.facts_of(idb).items():
            db[name].insert(rows)
        try:
            fixpoint.evaluate(program.strata, program.plans, db, program.intersect)
        finally:                                  # what evaluation inserted goes into the journal
            for name in idb:
                rows = set(db[name].tuples)
                journal.record(lambda relation=db[name], rows=rows: relation.erase(rows))
        out = dict(delta)
        for name in idb:
            change = diff(before[name], db[name].tuples)
            if change:
                out[name] = change
        return out

    def stats(self) -> dict:
        return {}
