"""Relation: a set of distinct tuples with one trie index per column order in use.

Invariants: ``tuples`` holds each row once; every index in ``indexes`` holds
exactly the rows of ``tuples`` with columns permuted by its order. Indexes are
built on first request and kept up to date by ``insert`` and ``erase``.

``presorted`` may hold the same rows as a list ordered by their first column (a workspace
reads them so from its snapshot) until the rows change. An index in the identity order is then
built from it, so that the root's keys arrive in order and sorting them later is one linear
pass (timsort on a sorted run) instead of a sort of the whole level: 3 s at 6.3M root keys.
The list is a speed hint only; in any other order it gives the same trie.

``version`` counts the changes of the rows (``insert`` and ``erase`` count; code that changes
``tuples`` in place must count too): what a reader computed from the rows, such as an Arrow
copy, is still theirs while the relation and its version are the same. ``words`` is one such:
the rows as a sorted 2-D int64 array, which the columnar evaluator leaves on a relation of
numbers it derived (:meth:`keep_words`); while the version is the same, :meth:`sorted_rows` and
the output writer read it instead of sorting the tuples.

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

from lftj.lazy import loading
from lftj.trie import TrieNode, build, lazy, sorted_rows as trie_rows


class Relation:
    """Distinct tuples of one arity, with a trie index per column order in use. Invariant:
    every index holds exactly ``tuples`` in its column order (see the module docstring)."""

    __slots__ = ("name", "arity", "tuples", "indexes", "presorted", "version", "words")
    stored = True                       # its rows are held here (not so a view enumerated on demand)

    def __init__(self, name: str, arity: int, rows=()):
        self.name, self.arity = name, arity
        self.tuples: set[tuple] = set(rows)
        self.indexes: dict[tuple[int, ...], TrieNode] = {}
        self.presorted: list[tuple] | None = None      # the rows by first column, while unchanged
        self.version = 0                                # changes of the rows so far
        self.words = None                               # (version, the rows as sorted int64 words)

    def keep_words(self, words) -> None:
        """``words``: the rows as they are now, a sorted distinct 2-D int64 array of plain ints
        (a relation of ``number`` columns), kept while the rows do not change."""
        self.words = (self.version, words)

    def can_hold(self) -> bool:
        """Whether :meth:`hold` may be called: a plain relation with no index (there is nothing
        to keep up to date)."""
        return type(self) is Relation and not self.indexes

    def hold(self, source) -> None:
        """Let the rows be ``source``'s from now on, read when first used (a :class:`LazyRelation`'s
        source: ``rows()``, ``count``, ``by_first``): what the columnar evaluator derived, so that
        a relation only written out is never turned into tuples. Only if :meth:`can_hold`."""
        if not self.can_hold():
            raise ValueError(f"{self.name}: only a plain relation with no index can hold rows unread")
        self.version += 1
        self.__class__ = LazyRelation
        _TUPLES.__set__(self, source)
        _PRESORTED.__set__(self, None)

    def held(self):
        """The source whose rows this relation holds unread (:meth:`hold`), or None."""
        return None

    def current_words(self):
        """The array :meth:`keep_words` kept, if the rows have not changed since; else None (and
        an array kept before a change is let go)."""
        kept = getattr(self, "words", None)     # (a subclass that holds no rows may not set it)
        if kept is not None and kept[0] != self.version:
            self.words = kept = None
        return kept[1] if kept is not None else None

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
            rows, grouped = self.tuples, False
            if self.presorted is not None and order == tuple(range(len(order))):
                rows, grouped, self.presorted = self.presorted, True, None
            node = self.indexes[order] = build(rows, order, grouped)
        return node

    def lazy_index(self, order: tuple[int, ...]) -> TrieNode:
        """The index in ``order`` (as ``index``), each trie node built from its rows when first
        read (:func:`lftj.trie.lazy`): a workspace opening for writing, whose next commits read a
        few paths of each index. Built over a copy of the rows as they are now (or the
        ``presorted`` list, which the index then owns)."""
        node = self.indexes.get(order)
        if node is None:
            grouped = self.presorted is not None and _by_first(order)
            rows = self.presorted if grouped else list(self.tuples)
            if grouped:
                self.presorted = None
            node = self.indexes[order] = lazy(rows, order, grouped)
        return node

    def insert(self, rows) -> list[tuple]:
        """Add rows; return those that were new (in the order given, unless ``rows`` is a set)."""
        tuples, self.presorted = self.tuples, None
        if isinstance(rows, (set, frozenset)):
            new = rows - tuples
            tuples |= new
        else:
            new = []
            for row in rows:
                if row not in tuples:
                    tuples.add(row)
                    new.append(row)
        if new:
            self.version += 1
        if new and self.indexes:
            for order, root in self.indexes.items():
                identity = order == tuple(range(len(order)))
                for row in new:
                    root.insert(row if identity else tuple(row[i] for i in order))
        return new

    def add(self, row: tuple) -> bool:
        """Add one row; whether it was new (``insert`` of one row, without its lists: the
        worklist adds its derivations one at a time)."""
        tuples = self.tuples
        if row in tuples:
            return False
        tuples.add(row)
        self.presorted = None
        self.version += 1
        if self.indexes:
            for order, root in self.indexes.items():
                root.insert(row if order == tuple(range(len(order))) else tuple(row[i] for i in order))
        return True

    def add_all(self, rows) -> None:
        """Add rows, not telling which were new: with no index to keep up to date (a bulk load
        before evaluation), one set update in C instead of a test and an add per row (half the
        time at 1M rows)."""
        if self.indexes:
            self.insert(rows)
            return
        before, self.presorted = len(self.tuples), None
        self.tuples.update(rows)
        self.version += len(self.tuples) != before

    def erase(self, rows) -> list[tuple]:
        gone = [row for row in rows if row in self.tuples]
        self.presorted = None
        self.version += bool(gone)
        for row in gone:
            self.tuples.discard(row)
        for order, root in self.indexes.items():
            for row in gone:
                root.erase(tuple(row[i] for i in order))
        return gone

    def stored_rows(self) -> list[tuple]:
        """The rows for a workspace snapshot, by ascending first column when there is an index in
        the identity order to build again from them at the next open (``presorted``; a sort on
        the first column costs 0.6 us a row against 3 s saved per 6.3M root keys); otherwise in
        set order."""
        rows = list(self.tuples)
        if self.stores_by_first():
            rows.sort(key=itemgetter(0))
        return rows

    def stores_by_first(self) -> bool:
        """Whether ``stored_rows`` gives the rows by first column."""
        return bool(self.arity) and self.indexes.get(tuple(range(self.arity))) is not None

    def sorted_rows(self) -> list[tuple]:
        """The rows in ascending order: read off the identity-order index when there is one
        (:func:`lftj.trie.sorted_rows`), otherwise grouped by the first column, whose keys sort
        as plain values, then each group by its second column: 2-3x faster than comparing
        tuples (the sort was a third of transitive closure at 2.5M rows)."""
        words = self.current_words()
        if words is not None:                   # sorted already: a column at a time, zipped
            return list(zip(*(words[:, c].tolist() for c in range(self.arity))))
        if self.arity and self.indexes.get(tuple(range(self.arity))) is not None:
            return trie_rows(self.indexes[tuple(range(self.arity))], self.arity)
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


def _by_first(order: tuple[int, ...]) -> bool:
    """Rows by their first column are grouped for a trie in ``order`` (see ``lftj.trie.lazy``)."""
    return order == tuple(range(len(order))) and len(order) <= 2


_TUPLES, _PRESORTED = Relation.__dict__["tuples"], Relation.__dict__["presorted"]


class LazyRelation(Relation):
    """A relation whose rows are still in a source (a workspace's snapshot, or the words the
    columnar evaluator derived: :meth:`Relation.hold`): ``source.rows()`` (the rows as a list,
    by first column when ``source.by_first``; the same list every call) is read the
    first time ``tuples`` or ``presorted`` is used, and the relation becomes a plain
    :class:`Relation`. Its size is known without reading it, and a lazy index is made over
    ``source.rows`` without reading them either, so a writer's commit reads only the relations
    it changes and the trie nodes it reaches."""

    __slots__ = ()

    def __init__(self, name: str, arity: int, source):
        self.name, self.arity, self.indexes, self.version, self.words = name, arity, {}, 0, None
        _TUPLES.__set__(self, source)
        _PRESORTED.__set__(self, None)

    def held(self):
        return _TUPLES.__get__(self)

    def sorted_rows(self) -> list[tuple]:
        """The rows in ascending order: the source's own list where it gives them so
        (``source.ordered``), without making the set of them."""
        source = _TUPLES.__get__(self)
        if self.current_words() is None and getattr(source, "ordered", False):
            return list(source.rows())
        return Relation.sorted_rows(self)

    def _load(self) -> None:
        source = _TUPLES.__get__(self)
        rows = source.rows()
        _TUPLES.__set__(self, set(rows))
        _PRESORTED.__set__(self, rows if source.by_first else None)
        self.__class__ = Relation

    def __len__(self) -> int:
        return _TUPLES.__get__(self).count

    def lazy_index(self, order: tuple[int, ...]) -> TrieNode:
        node = self.indexes.get(order)
        if node is None:
            source = _TUPLES.__get__(self)
            node = self.indexes[order] = lazy(source.rows, order, source.by_first and _by_first(order))
        return node

    tuples, presorted = loading(_TUPLES), loading(_PRESORTED)
