"""The semi-naive loop, once: relations that grow round by round (datafrog's ``Variable``).

In a round every rule reads one atom from the tuples that were new in the last round
(``recent``) and the others from everything known; what it derives goes to ``to_add``. At the
end of the round each variable keeps what ``to_add`` holds beyond what it knew (the next
``recent``, now also known: ``stable``). Evaluation from scratch, distributed rounds on Spark
and DRed's overdelete and insert phases all run this loop; what "known" means is theirs
(``insert``: the relation itself, the overdeleted tuples so far, ...).

``path(x, z) :- path(x, y), edge(y, z).`` over a chain of edges:

>>> edge = {(1, 2), (2, 3), (3, 4)}
>>> path = set(edge)
>>> def insert(rows):
...     new = rows - path
...     path.update(new)
...     return new
>>> variable = Variable("path", 2, insert, recent=path)
>>> for _ in rounds([variable]):
...     variable.to_add |= {(x, z) for x, y in variable.recent for y2, z in edge if y == y2}
>>> sorted(path)
[(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from lftj.relation import Relation


class Variable:
    """One relation computed by semi-naive rounds. ``recent`` (a Relation, so a triejoin can
    read it) holds the tuples new in the last round; ``to_add`` collects this round's
    derivations; ``insert(rows)`` adds rows to the tuples known and returns those that were new.
    Invariant: ``recent`` is known, and no tuple is recent in two rounds."""

    def __init__(self, name: str, arity: int, insert: Callable[[set], Iterable], recent=()):
        self.name, self.arity, self.insert = name, arity, insert
        self.recent = Relation(name, arity, recent)
        self.to_add: set = set()

    def changed(self) -> bool:
        """End the round: the new tuples of ``to_add`` become ``recent``; whether there are any."""
        self.recent = Relation(self.name, self.arity, self.insert(self.to_add))
        self.to_add = set()
        return bool(self.recent)


def rounds(variables: list[Variable], after: Callable[[int], None] | None = None) -> Iterator[int]:
    """Rounds 1, 2, ... while some variable has recent tuples; after each, every variable
    changes (then ``after(number)``, e.g. a progress line)."""
    number, growing = 0, any(v.recent for v in variables)
    while growing:
        number += 1
        yield number
        growing = False
        for v in variables:
            growing = v.changed() or growing
        if after is not None:
            after(number)
