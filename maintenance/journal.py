"""Journal: the undo log of one transaction.

Every mutation made while maintaining a transaction goes through the journal,
which records how to undo it. If maintenance fails part way (a division by
zero in a rule, any exception), ``rollback`` undoes the mutations in reverse
order and the engine is exactly as it was before the transaction.

>>> from lftj.relation import Relation
>>> r = Relation("e", 1, [(1,)])
>>> j = Journal()
>>> j.insert(r, [(2,), (1,)]), j.erase(r, [(1,)])
([(2,)], [(1,)])
>>> j.rollback(); sorted(r)
[(1,)]
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Callable


class Journal:
    """``deferring_interrupts()``: Ctrl-C (SIGINT) only sets ``interrupted``; the journal raises
    ``KeyboardInterrupt`` at its next ``record`` -- right after an undo step was appended, so
    every mutation made so far can be undone -- or at ``check_interrupt``. An interrupt that
    landed between a mutation and its record would otherwise escape the rollback."""

    def __init__(self) -> None:
        self.undo: list[Callable[[], None]] = []
        self.interrupted = False
        self.rolling_back = False

    def record(self, undo: Callable[[], None]) -> None:
        self.undo.append(undo)
        if self.interrupted and not self.rolling_back:
            self.check_interrupt()

    def check_interrupt(self) -> None:
        if self.interrupted:
            self.interrupted = False
            raise KeyboardInterrupt

    @contextmanager
    def deferring_interrupts(self):
        def defer(signum, frame):
            self.interrupted = True
        try:
            previous = signal.signal(signal.SIGINT, defer)
        except ValueError:                      # not the main thread: no signal arrives here
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def insert(self, relation, rows) -> list[tuple]:
        """Insert into a Relation (and all its indexes); returns the rows that were new."""
        new = relation.insert(list(rows))
        if new:
            self.record(lambda: relation.erase(new))
        return new

    def erase(self, relation, rows) -> list[tuple]:
        gone = relation.erase(list(rows))
        if gone:
            self.record(lambda: relation.insert(gone))
        return gone

    def set_item(self, mapping: dict, key, value) -> None:
        """``mapping[key] = value``, or delete the key when ``value`` is None."""
        had, old = key in mapping, mapping.get(key)
        if value is None:
            mapping.pop(key, None)
        else:
            mapping[key] = value
        self.record(lambda: mapping.__setitem__(key, old) if had else mapping.pop(key, None))

    def rollback(self) -> None:
        self.rolling_back = True
        while self.undo:
            self.undo.pop()()
