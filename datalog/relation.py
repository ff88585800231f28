"""Relation: a set of distinct tuples with one trie index per column order in use.

Invariants: ``tuples`` holds each row once; every index in ``indexes`` holds
exactly the rows of ``tuples`` with columns permuted by its order. Indexes are
built on first request and kept up to date by ``insert`` and ``erase``.

>>> r = Relation("edge", 2)
>>> r.insert([(1, 2), (2, 3), (1, 2)])
[(1, 2), (2, 3)]
>>> r.index((1, 0)).keys
[2, 3]
>>> sorted(r)
[(1, 2), (2, 3)]
"""

from __future__ import annotations

from operator import itemgetter

from lftj.trie import TrieNode, build


class Relation:
    __slots__ = ("name", "arity", "tuples", "indexes")

    def __init__(self, name: str, arity: int, rows=()):
        self.name, self.arity = name, arity
        self.tuples: set[tuple] = set(rows)
        self.indexes: dict[tuple[int, ...], TrieNode] = {}

    def __len__(self) -> int:
        return len(self.tuples)

    def __iter__(self):
        return iter(self.tuples)

    def __contains__(self, row) -> bool:
        return row in self.tuples

    def index(self, order: tuple[int, ...]) -> TrieNode:
        """The trie of this relation in column order ``order`` (a permutation of a column prefix)."""
        node = self.indexes.get(order)
        if node is None:
            node = self.indexes[order] = build(self.tuples, order)
        return node

    def insert(self, rows) -> list[tuple]:
        """Add rows; return those that were new (in the order given, unless ``rows`` is a set)."""
        tuples = self.tuples
        if isinstance(rows, (set, frozenset)):
            new = rows - tuples
            tuples |= new
        else:
            new = []
            for row in rows:
                if row not in tuples:
                    tuples.add(row)
                    new.append(row)
        if new and self.indexes:
            for order, root in self.indexes.items():
                identity = order == tuple(range(len(order)))
                for row in new:
                    root.insert(row if identity else tuple(row[i] for i in order))
        return new

    def erase(self, rows) -> list[tuple]:
        gone = [row for row in rows if row in self.tuples]
        for row in gone:
            self.tuples.discard(row)
        for order, root in self.indexes.items():
            for row in gone:
                root.erase(tuple(row[i] for i in order))
        return gone

    def sorted_rows(self) -> list[tuple]:
        """The rows in ascending order. Grouped by the first column, whose keys sort as plain
        values, then each group by its second column: 2-3x faster than comparing tuples
        (the sort was a third of transitive closure at 2.5M rows)."""
        if self.arity < 2 or len(self.tuples) < 64:
            return sorted(self.tuples)
        groups: dict = {}
        for row in self.tuples:
            group = groups.get(row[0])
            if group is None:
                groups[row[0]] = [row]
            else:
                group.append(row)
        out: list[tuple] = []
        rest = itemgetter(1) if self.arity == 2 else itemgetter(slice(1, None))
        for key in sorted(groups):
            group = groups[key]
            group.sort(key=rest)
            out.extend(group)
        return out
