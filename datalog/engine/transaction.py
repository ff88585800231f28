"""Transactions: changes of EDB relations requested in order and applied together.

``with engine.transaction() as tx: tx.insert(r, rows); tx.retract(r, rows)``: each row is
admitted (arity, types) as it is requested; on leaving the block the changes are applied as
one commit (:meth:`datalog.engine.Engine.apply`) and ``tx.delta`` holds every relation's
change. If the block or the commit raises, nothing changed.
"""

from __future__ import annotations

from datalog.engine import tables
from datalog.engine.memory import paused_gc
from datalog.language.errors import NotEdb
from maintenance.delta import Delta


class Transaction:
    """Requests collected in order (the last one of a row wins); maintained together when the
    ``with`` block ends."""

    def __init__(self, engine):
        self.engine = engine
        self.pending: dict[str, dict[tuple, int]] = {}
        self.delta: Delta = {}

    def insert(self, name: str, rows) -> None:
        """Request inserting ``rows``: tuples, or a table (as ``Engine.insert`` takes)."""
        self._request(name, rows, +1)

    def retract(self, name: str, rows) -> None:
        """Request retracting ``rows``: tuples, or a table (as ``Engine.insert`` takes)."""
        self._request(name, rows, -1)

    def _request(self, name: str, rows, sign: int) -> None:
        engine = self.engine
        engine.stored_relation(name)
        if name in engine.idb:
            raise NotEdb(f"{name} is derived by rules; a transaction changes only EDB relations "
                         f"(inputs and facts)", engine.schema[name].span)
        admitted = tables.admitted(engine, name, rows, self.pending.get(name, ()))   # all checked first
        self.pending.setdefault(name, {}).update(dict.fromkeys(admitted, sign))

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        if kind is None:
            self.delta = self.engine.apply(self.pending)
        return False


def change_edb(engine, name: str, rows, sign: int) -> None:
    """``Engine.insert`` (``sign`` +1) or ``retract`` (-1): once evaluated a commit; before, the rows
    added to (removed from) the relation; a derived relation is ``not_edb``."""
    with engine.guard.serial():
        relation = engine.stored_relation(name)
        if name in engine.idb:
            raise NotEdb(f"{name} is derived by rules; only EDB relations (inputs and facts) take "
                         f"inserts and retracts", engine.schema[name].span)
        if engine.evaluated:
            engine.commit(**{"inserts" if sign > 0 else "retracts": {name: rows}})
            return
        with paused_gc():                                   # bulk: see datalog.engine.memory
            admitted = tables.admitted(engine, name, rows)
            if sign > 0:
                relation.add_all(admitted)
            else:
                relation.erase(list(set(admitted) & relation.tuples))
