"""Sensitivity indices (§4.1-4.2): where the recorded trace read each trie level.

One :class:`SensitivityIndex` per (relation, index order, level). An entry
says: the trace, at the trie node under ``alpha`` (the atom's keys at the
earlier levels), was sensitive to changes of this level's keys in
``[start, end]``; ``region`` is where to revisit the rule when that happens
(a trace node and a key interval: the paper's ChangeOracle contribution). The
other key variables bound before this level are the trace node's binding.

Entries live in interval trees (the intervaltree package), one per ``alpha``.
Endpoints are encoded so closed intervals over any ordered keys, with
infinite ends, become the package's half-open ones: ``-inf -> (-1,)``,
``v -> (0, v)`` as a start, ``(0, v, 1)`` as an end, ``+inf -> (1,)``. The
tree hashes intervals by their endpoints only, and many entries share them
(every ``[-inf, v]`` of one level), so each end also carries a serial number.

>>> index = SensitivityIndex()
>>> a = index.add((), None, 0, "r1"); b = index.add((), 6, None, "r2"); c = index.add((), 2, 4, "r3")
>>> [e.region for e in index.match((), 8)], [e.region for e in index.match((), 3)]
(['r2'], ['r3'])
>>> index.remove(b); index.match((), 8), len(index)
([], 2)
"""

from __future__ import annotations

from intervaltree import Interval, IntervalTree

NEG, POS = (-1,), (1,)


def start_of(v) -> tuple:
    return NEG if v is None else (0, v)


def end_of(v) -> tuple:
    return POS if v is None else (0, v, 1)


class Entry:
    """One sensitivity interval; ``alive`` turns False when it is matched or dropped."""

    __slots__ = ("index", "alpha", "interval", "region", "owner", "alive")

    def __init__(self, index, alpha, interval, region, owner=None):
        self.index, self.alpha, self.interval, self.region, self.owner = index, alpha, interval, region, owner
        self.alive = True


class SensitivityIndex:
    def __init__(self) -> None:
        self.trees: dict[tuple, IntervalTree] = {}
        self.size = 0
        self.serial = 0

    def __len__(self) -> int:
        return self.size

    def add(self, alpha: tuple, start, end, region, owner=None) -> Entry:
        tree = self.trees.get(alpha)
        if tree is None:
            tree = self.trees[alpha] = IntervalTree()
        entry = Entry(self, alpha, None, region, owner)
        self.serial += 1
        entry.interval = Interval(start_of(start), end_of(end) + (self.serial,), entry)
        tree.add(entry.interval)
        self.size += 1
        return entry

    def remove(self, entry: Entry) -> None:
        if not entry.alive:
            return
        tree = self.trees[entry.alpha]
        tree.remove(entry.interval)
        if not tree:
            del self.trees[entry.alpha]
        entry.alive = False
        self.size -= 1

    def restore(self, entry: Entry) -> None:
        """Undo ``remove`` (rollback)."""
        if entry.alive:
            return
        tree = self.trees.get(entry.alpha)
        if tree is None:
            tree = self.trees[entry.alpha] = IntervalTree()
        tree.add(entry.interval)
        entry.alive = True
        self.size += 1

    def match(self, alpha: tuple, key) -> list[Entry]:
        """The entries under ``alpha`` whose interval holds ``key`` (the caller removes them)."""
        tree = self.trees.get(alpha)
        return [iv.data for iv in tree.at((0, key))] if tree is not None else []

    def intervals(self) -> list[tuple]:
        """Every entry as (alpha, start, end), sorted: for tests and explain."""
        ivs = sorted((alpha, iv.begin, iv.end) for alpha, tree in self.trees.items() for iv in tree)
        return [(alpha, _decode(begin), _decode(end)) for alpha, begin, end in ivs]


def _decode(point):
    return point[1] if point[0] == 0 else ("-inf" if point == NEG else "+inf")
