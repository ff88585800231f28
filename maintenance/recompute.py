"""The slow, obviously correct twin of incremental maintenance: evaluate again from scratch.

Apply the EDB delta, empty every IDB relation, evaluate the whole program, and
diff the result against the old contents. Used by the property tests as the
reference, and selectable with ``Engine(..., maintenance="recompute")``.
"""

from __future__ import annotations

from maintenance.delta import Delta, diff


class RecomputeMaintainer:
    def __init__(self, engine):
        self.engine = engine

    def apply(self, delta: Delta, journal) -> Delta:
        engine, idb = self.engine, self.engine.idb
        for name, change in delta.items():
            journal.erase(engine.db[name], change.erased)
            journal.insert(engine.db[name], change.inserted)
        before = {name: set(engine.db[name].tuples) for name in idb}
        for name in idb:
            journal.erase(engine.db[name], before[name])
        engine._load_program_facts(only=idb)
        try:
            engine.evaluate()
        finally:                                  # what evaluation inserted goes into the journal
            for name in idb:
                rows = set(engine.db[name].tuples)
                journal.record(lambda relation=engine.db[name], rows=rows: relation.erase(rows))
        out = dict(delta)
        for name in idb:
            change = diff(before[name], engine.db[name].tuples)
            if change:
                out[name] = change
        return out

    def stats(self) -> dict:
        return {}
