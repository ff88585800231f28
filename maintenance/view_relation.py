"""ViewRelation: a head maintained by the theta-join backend and not materialized (issue 4, item 5).

A relation that no rule reads, derived by a single rule routed to the theta-join backend
(and by no fact or ``.input``), need not be stored: its rows are enumerated from the
T-reduct (in bulk, maintenance/gjt/bulk.py) whenever ``engine.rows``, ``.output``, ``query``
or ``.printsize`` ask (``query``, and ``ask`` of one atom with comparisons, filter it as it
streams: ``stored`` is False, see datalog/engine/answers.py). :meth:`IncrementalMaintainer.virtualize`
puts one in place of the materialized relation (the engine serves it through ``Engine.adopt``) when the view tells the multiplicity of each head tuple:

* a full query (the head holds every variable of the GCQ: no wildcard, no constant column,
  no projection): each head tuple is one assignment, so its multiplicity is 0 or 1 and a
  delta ``+1`` / ``-1`` is an insert / an erase;
* the §7 approximation (:class:`ProjectedView`), whose projection is materialized anyway:
  the multiplicity after the update is ``result[t]``, before it ``result[t] - delta``.

A free-connex projection (a wildcard, ``r(a, _)``) has no cheap multiplicity look-up in a
T-reduct, so such heads stay materialized with support counts.

>>> from datalog.engine.engine import Engine
>>> e = Engine.from_source('''
...     .decl r(a: number) .decl s(d: number) .decl q(a: number, d: number) .output q
...     q(a, d) :- r(a), s(d), a < d.''')
>>> e.insert("r", [(1,), (4,)]); e.insert("s", [(3,)]); e.run()
>>> sorted(e.commit(inserts={"s": [(7,)]})["q"].inserted)
[(1, 7), (4, 7)]
>>> type(e.db["q"]).__name__, e.rows("q"), len(e.db["q"])
('ViewRelation', [(1, 3), (1, 7), (4, 7)], 3)
"""

from __future__ import annotations

from lftj.relation import Relation
from lftj.trie import build


class ViewRelation(Relation):
    """The rows of a ThetaRule's head, enumerated on demand; nothing stored but the view."""

    __slots__ = ("rule",)
    stored = False

    def __init__(self, name: str, arity: int, rule):
        self.name, self.arity, self.rule = name, arity, rule
        self.indexes = {}

    @property
    def tuples(self) -> set[tuple]:
        return set(self.rule.head_rows())

    def __len__(self) -> int:
        return self.rule.count()

    def __iter__(self):
        return self.rule.head_rows()

    def __contains__(self, row) -> bool:
        return row in self.tuples

    def index(self, order: tuple[int, ...]):
        """A trie built afresh from the enumeration (no rule reads this relation; a REPL query may)."""
        return build(self.tuples, order)

    def insert(self, rows):
        raise TypeError(f"{self.name} is enumerated from its T-reduct and is not stored: it cannot be inserted into")

    def erase(self, rows):
        raise TypeError(f"{self.name} is enumerated from its T-reduct and is not stored: it cannot be erased from")

    def sorted_rows(self) -> list[tuple]:
        return sorted(self.rule.head_rows())
