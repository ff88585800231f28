"""A unary trie iterator that reports the sensitivity interval of each of its operations.

Veldhuizen, incremental maintenance for LFTJ, §4.1: the trace of a leapfrog join is
sensitive to changes of an iterator's relation in

  * ``[-inf, v]`` when it is opened and lands on ``v`` (here: ``[lo, v]`` when the level is
    opened at ``lo``, the start of a change-oracle region);
  * ``[s, v]`` when ``seek(s)`` lands on ``v``;
  * ``[u, v]`` when ``next()`` moves from ``u`` to ``v``;

with ``v = +inf`` when the iterator runs off the end. :class:`Recording` wraps a
:class:`lftj.iterator.LevelIterator` and calls ``record(i, start, end)`` for each operation
(``None`` is infinite; ``i`` names the iterator to the recorder); the leapfrog join itself
is unchanged. The paper's example, ``A(x), B(x)``:

>>> from lftj.iterator import LevelIterator
>>> from lftj.leapfrog import leapfrog
>>> seen = []
>>> its = [Recording(LevelIterator(keys), lambda i, s, e: seen.append(("AB"[i], s, e)), i)
...        for i, keys in enumerate([[0, 2, 4, 5, 6], [1, 2, 6, 7]])]
>>> list(leapfrog(its))
[2, 6]
>>> [x[1:] for x in seen if x[0] == "A"]     # None: -inf as a start, +inf as an end
[(None, 0), (1, 2), (2, 4), (6, 6), (6, None)]
>>> [x[1:] for x in seen if x[0] == "B"]
[(None, 1), (2, 2), (4, 6)]
"""

from __future__ import annotations

from typing import Callable

Record = Callable[[int, object, object], None]   # (iterator, start or None, end or None)


class Recording:
    """``inner`` (a LevelIterator, just opened at ``lo``) with each operation reported; the
    opening is reported on construction."""

    __slots__ = ("inner", "record", "i", "at_end", "key")

    def __init__(self, inner, record: Record, i: int, lo=None):
        self.inner, self.record, self.i = inner, record, i
        self.at_end, self.key = inner.at_end, inner.key     # unchanged: the inner iterator's own
        record(i, lo, inner.landed())

    def next(self) -> None:
        inner = self.inner
        start = inner.key()
        inner.next()
        self.record(self.i, start, inner.landed())

    def seek(self, key) -> None:
        inner = self.inner
        inner.seek(key)
        self.record(self.i, key, inner.landed())
