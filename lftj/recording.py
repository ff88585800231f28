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

from bisect import bisect_left, bisect_right
from typing import Callable, Iterable, Iterator

from lftj.iterator import LevelIterator
from lftj.leapfrog import leapfrog

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


def leapfrog_recording(levels: Iterable, lo, hi, record: Record) -> Iterator:
    """The leapfrog over :class:`Recording` iterators of the ascending key lists ``levels``
    (taken in turn), each opened at ``lo`` and ending after ``hi``, reporting to ``record``.
    An iterator opened at its end stops the join before the next is opened (the paper: "if
    either iterator is at end, stop"), so the later levels are not taken. The slow twin of
    :func:`leapfrog_recorded`, and the path of every recording but a first one."""
    its = []
    for i, keys in enumerate(levels):
        it = Recording(LevelIterator(keys, lo, hi), record, i, lo)
        if it.at_end():
            return iter(())
        its.append(it)
    return leapfrog(its)


def leapfrog_recorded(levels: list, lo=None, hi=None) -> tuple[list, list, list, list]:
    """The leapfrog (:func:`lftj.leapfrog.leapfrog`) over :class:`Recording` iterators of the
    ascending key lists ``levels``, each opened at ``lo`` and ending after ``hi``, run to its end
    at once: (the keys it yields; the operations the iterators report, in order, as three lists:
    the iterator, the start, the end). An iterator opened at its end stops the join before the
    next is opened. The same keys and operations as that composition, without an object or a
    call per operation: a first recording's hot path (the tests compare the two).

    >>> keys, who, starts, ends = leapfrog_recorded([[0, 2, 4, 5, 6], [1, 2, 6, 7]])
    >>> keys, [(s, e) for w, s, e in zip(who, starts, ends) if w == 1]
    ([2, 6], [(None, 1), (2, 2), (4, 6)])
    """
    who: list[int] = []
    starts: list = []
    ends: list = []
    out: list = []
    positions, current = [], []
    for i, keys in enumerate(levels):                  # open: [lo, v]
        pos = 0 if lo is None else bisect_left(keys, lo)
        landed = keys[pos] if pos < len(keys) else None
        who.append(i), starts.append(lo), ends.append(landed)
        if landed is None or hi is not None and landed > hi:
            return out, who, starts, ends
        positions.append(pos)
        current.append(landed)
    if len(levels) == 1:
        _scan(levels[0], positions[0], hi, out, who, starts, ends)
        return out, who, starts, ends
    if len(levels) == 2:
        _leapfrog2(levels, positions, current, hi, out, who, starts, ends)
        return out, who, starts, ends
    while True:
        high, low = max(current), min(current)
        if low == high:                                 # a match; the first moves on: [v, next]
            out.append(high)
            at = 0
            pos = positions[0] + 1
        else:                                           # the least seeks the greatest: [high, v]
            at = current.index(low)
            pos = bisect_left(levels[at], high, positions[at])
        keys = levels[at]
        landed = keys[pos] if pos < len(keys) else None
        who.append(at), starts.append(high), ends.append(landed)
        if landed is None or hi is not None and landed > hi:
            return out, who, starts, ends
        positions[at], current[at] = pos, landed


def _scan(keys, pos, hi, out, who, starts, ends) -> None:
    """:func:`leapfrog_recorded` of one iterator, opened at ``pos``: every key up to ``hi`` is a
    match and a ``next`` from it to the following key."""
    stop = len(keys) if hi is None else bisect_right(keys, hi, pos)
    taken = keys[pos:stop]
    out.extend(taken)
    who.extend([0] * len(taken))
    starts.extend(taken)
    ends.extend(keys[pos + 1:stop + 1])
    if stop >= len(keys):
        ends.append(None)


def _leapfrog2(levels, positions, current, hi, out, who, starts, ends) -> None:
    """:func:`leapfrog_recorded`'s loop for two iterators (a and b at keys x and y)."""
    a, b = levels
    i, j = positions
    x, y = current
    na, nb = len(a), len(b)
    while True:
        if x == y:
            out.append(x)
            i += 1
            x = a[i] if i < na else None
            who.append(0), starts.append(y), ends.append(x)
            if x is None or hi is not None and x > hi:
                return
        elif x < y:
            i = bisect_left(a, y, i)
            x = a[i] if i < na else None
            who.append(0), starts.append(y), ends.append(x)
            if x is None or hi is not None and x > hi:
                return
        else:
            j = bisect_left(b, x, j)
            y = b[j] if j < nb else None
            who.append(1), starts.append(x), ends.append(y)
            if y is None or hi is not None and y > hi:
                return
