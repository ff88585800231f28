"""A leapfrog join that reports the sensitivity interval of every iterator operation.

Veldhuizen, incremental maintenance for LFTJ, §4.1: the trace of a leapfrog
join is sensitive to changes of an iterator's relation in

  * ``[-inf, v]`` when it is opened and lands on ``v`` (here: ``[lo, v]`` when
    the join starts at ``lo``, a seek to the start of a region);
  * ``[s, v]`` when ``seek(s)`` lands on ``v``;
  * ``[u, v]`` when ``next()`` moves from ``u`` to ``v``;

with ``v = +inf`` when the iterator runs off the end. ``leapfrog_recorded``
joins sorted key lists, restricted to keys in ``[lo, hi]`` (``None`` is
infinite), and calls ``record(i, start, end)`` for each operation on list
``i``. The loop follows the paper's example: seek the iterator with the least
key to the greatest key; after a match, advance the first iterator.

>>> a, b = [0, 2, 4, 5, 6], [1, 2, 6, 7]
>>> seen = []
>>> list(leapfrog_recorded([a, b], None, None, lambda i, s, e: seen.append(("AB"[i], s, e))))
[2, 6]
>>> [x[1:] for x in seen if x[0] == "A"]     # None: -inf as a start, +inf as an end
[(None, 0), (1, 2), (2, 4), (6, 6), (6, None)]
>>> [x[1:] for x in seen if x[0] == "B"]
[(None, 1), (2, 2), (4, 6)]
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Callable, Iterator

Record = Callable[[int, object, object], None]   # (list index, start or None, end or None)


def leapfrog_recorded(levels: list[list], lo, hi, record: Record) -> Iterator:
    """Yield the keys in ``[lo, hi]`` common to every sorted list in ``levels``, recording."""
    k = len(levels)
    positions = [0] * k
    current = [None] * k
    for i, keys in enumerate(levels):                       # open / seek(lo)
        pos = bisect_left(keys, lo) if lo is not None else 0
        positions[i] = pos
        current[i] = keys[pos] if pos < len(keys) else None
        record(i, lo, current[i])
        if current[i] is None:
            return
    while True:
        high = max(current)
        if hi is not None and high > hi:
            return
        least = min(range(k), key=current.__getitem__)
        if current[least] == high:                          # every iterator agrees
            yield high
            least, target, pos = 0, high, positions[0] + 1  # next() on the first iterator
        else:
            target = high                                   # seek the least to the greatest
            pos = bisect_left(levels[least], high, positions[least])
        keys = levels[least]
        positions[least] = pos
        current[least] = keys[pos] if pos < len(keys) else None
        record(least, target, current[least])
        if current[least] is None:
            return
