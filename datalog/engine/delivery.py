"""Subscribers' deliveries in commit order: a queue, filled by each commit once it is made, emptied by
the outermost commit once it is finished.

A commit made inside a subscriber's callback (a nested commit) queues its changes behind those of
the commit being delivered, so that every subscriber sees the commits in their order. Every
queued change reaches its subscriber: a callback that raises an ``Exception`` is reported by the
subscription (:class:`~datalog.engine.tables.Subscription`); one that raises ``KeyboardInterrupt``
or ``SystemExit`` is noted in its ``errors`` as well, the other subscribers are still told, and the
exception is raised by the commit once they all were.

>>> class Sub:
...     closed, errors = False, []
...     def __init__(self, name): self.name = name
...     def deliver(self, change, calling): calling(lambda: print(self.name, change))
>>> class Guard:
...     held = []
...     def interruptible(self, call): call()
>>> queue = Deliveries()
>>> queue.add([(Sub("a"), 1), (Sub("b"), 1)])
>>> queue.drain(Guard())
a 1
b 1
"""

from __future__ import annotations

from collections import deque


class Deliveries:
    """(subscription, change) pairs in commit order; ``draining`` while they are delivered."""

    def __init__(self) -> None:
        self.queue: deque = deque()
        self.draining = False

    def add(self, pairs) -> None:
        self.queue.extend(pairs)

    def drain(self, guard) -> None:
        """Deliver every queued change, oldest first, including those that callbacks queue meanwhile
        (a callback's commit is nested: the delivery in progress delivers it). Exceptions other
        than ``Exception`` are held by ``guard`` (``guard.hold``), raised once all are delivered."""
        if self.draining:
            return
        self.draining = True
        try:
            while self.queue:
                subscription, change = self.queue.popleft()
                try:
                    subscription.deliver(change, guard.interruptible)
                except BaseException as exc:          # KeyboardInterrupt, SystemExit: the others are told
                    subscription.errors.append((getattr(change, "commit", None), exc))
                    guard.held.append(exc)
        finally:
            self.draining = False
