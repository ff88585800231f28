"""Delta: what a transaction changed, per relation.

A :class:`Change` holds the tuples a relation gained (``inserted``) and lost
(``retracted``); the two sets are disjoint and a tuple is never both. A
:class:`Delta` maps relation names to their changes; relations that did not
change are absent. ``pending_changes`` turns a transaction's ordered requests
into a delta against the current contents: inserting a present tuple or
retracting an absent one is a no-op, and for the same tuple the last request
wins.

>>> from lftj.relation import Relation
>>> db = {"e": Relation("e", 1, [(1,), (2,)])}
>>> pending = {"e": {(1,): -1, (3,): +1, (2,): +1}}
>>> pending_changes(pending, db)
{'e': Change(inserted={(3,)}, retracted={(1,)})}
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field


@dataclass
class Change:
    """What a transaction did to one relation. Invariant: ``inserted`` and ``retracted`` are
    disjoint (no tuple is both); applying a change and then its ``negated()`` is the identity."""

    inserted: set = field(default_factory=set)
    retracted: set = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.inserted or self.retracted)

    @property
    def erased(self) -> set:
        """Deprecated: the old name of ``retracted``."""
        warnings.warn("Change.erased is deprecated: read Change.retracted", DeprecationWarning, stacklevel=2)
        return self.retracted

    def negated(self) -> "Change":
        return Change(set(self.retracted), set(self.inserted))


Delta = dict   # relation name -> Change


def pending_changes(pending: dict[str, dict[tuple, int]], db) -> Delta:
    """The delta of requests ``{relation: {row: +1 | -1}}`` (last request per row) against ``db``."""
    delta: Delta = {}
    for name, requests in pending.items():
        tuples = db[name].tuples
        change = Change({row for row, sign in requests.items() if sign > 0 and row not in tuples},
                        {row for row, sign in requests.items() if sign < 0 and row in tuples})
        if change:
            delta[name] = change
    return delta


def diff(old: set, new: set) -> Change:
    return Change(new - old, old - new)
