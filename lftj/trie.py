"""A hash trie with sorted levels: the storage that trie iterators walk.

A relation's index in one column order is a tree of :class:`TrieNode`. The
node at depth ``d`` under the prefix ``(k0, ..., k(d-1))`` maps each key at
that level to its child. ``keys`` lists those keys in ascending order (sorted
lazily after inserts), so a node supports both the ordered operations of the
trie iterator (``seek`` by bisection, ``next``) and constant-time membership.

Invariants:
  * a node exists only if at least one tuple passes through it (no empty nodes
    except a relation's empty root);
  * ``keys`` is sorted and holds exactly the keys of ``children``;
  * leaf children are ``None``.

``_keys`` is the sorted list, None (sort at the next read), or -- for a large level that
incremental maintenance edits in place -- another sorted container with a
``window(lo, hi)`` method (:class:`maintenance.surgery.ChunkedKeys`). ``keys`` always gives a
list (flattening such a container once); :meth:`TrieNode.window` reads a bounded range of
keys, or the whole level as the container itself, without flattening.

>>> root = TrieNode()
>>> for t in [(1, 2), (1, 3), (0, 5)]:
...     root.insert(t)
True
True
True
>>> root.keys, root.children[1].keys
([0, 1], [2, 3])
>>> root.insert((1, 2))
False
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import groupby, repeat
from operator import itemgetter

from lftj.lazy import loading


class TrieNode:
    __slots__ = ("children", "_keys")

    def __init__(self) -> None:
        self.children: dict = {}
        self._keys: list | None = []

    @property
    def keys(self) -> list:
        keys = self._keys
        if type(keys) is not list:
            keys = self._keys = sorted(self.children) if keys is None else list(keys)
        return keys

    def window(self, lo, hi) -> list:
        """Sorted keys enough for a leapfrog over ``[lo, hi]`` (None: unbounded): every key in
        the range and the first key past ``hi``. A list is given whole (bisection finds the
        range); a container keeps its shape and gives just those keys, or itself (a sorted
        sequence: ``len`` and indexing) for the whole level -- flattening it there cost a copy of
        the level, and the next edit made the container again (join3 at 1M: 10-15 ms of a
        100-tuple batch)."""
        keys = self._keys
        if type(keys) is list or keys is None:
            return self.keys
        if lo is None and hi is None:
            return keys
        return keys.window(lo, hi)

    def __len__(self) -> int:
        return len(self.children)

    def insert(self, row: tuple) -> bool:
        """Add ``row`` (already in this trie's column order); False if present."""
        node, last = self, len(row) - 1
        for depth, key in enumerate(row):
            children = node.children
            if depth == last:
                if key in children:
                    return False
                children[key] = None
                node._keys = None
                return True
            child = children.get(key)
            if child is None:
                child = children[key] = TrieNode()
                node._keys = None
            node = child
        return False  # a zero-arity row is never stored in a trie

    def erase(self, row: tuple) -> bool:
        """Remove ``row``; prune nodes left empty. False if absent."""
        path, node = [], self
        for key in row[:-1]:
            child = node.children.get(key)
            if child is None:
                return False
            path.append((node, key))
            node = child
        if not row or row[-1] not in node.children:
            return False
        del node.children[row[-1]]
        node._keys = None
        while not node.children and path:
            node, key = path.pop()
            del node.children[key]
            node._keys = None
        return True

    def find(self, prefix) -> "TrieNode | None":
        """The node under ``prefix``, or None if no tuple starts with it."""
        node = self
        for key in prefix:
            if node is None:
                return None
            node = node.children.get(key)
            if node is None:
                return None
        return node

    def contains_prefix(self, prefix) -> bool:
        node = self
        for key in prefix:
            if node is None or key not in node.children:
                return False
            node = node.children[key]
        return True

    def has_extension(self, prefix) -> bool:
        """Some stored row starts with ``prefix`` and goes on below it (``prefix`` shorter than the rows)."""
        node = self
        for key in prefix:
            node = node.children.get(key)
            if node is None:
                return False
        return bool(node.children)

    def rows(self, depth: int):
        """Every stored row, ascending; ``depth`` is the trie's arity."""
        if depth == 1:
            for key in self.keys:
                yield (key,)
            return
        for key in self.keys:
            for rest in self.children[key].rows(depth - 1):
                yield (key, *rest)


def sorted_rows(root: TrieNode, arity: int) -> list[tuple]:
    """Every row of the trie ``root`` (of ``arity`` levels), ascending. A node's sorted keys
    are used if it has them and computed without being kept if not: reading every row must not
    leave a key list on every node.

    >>> sorted_rows(build([(2, 1), (1, 3), (1, 2)], (0, 1)), 2)
    [(1, 2), (1, 3), (2, 1)]
    """
    keys = root._keys if root._keys is not None else sorted(root.children)
    if arity == 1:
        return [(key,) for key in keys]
    out: list[tuple] = []
    children = root.children
    if arity == 2:
        for key in keys:
            node = children[key]
            out.extend(zip(repeat(key), node._keys if node._keys is not None else sorted(node.children)))
        return out
    for key in keys:
        out.extend((key, *rest) for rest in sorted_rows(children[key], arity - 1))
    return out


def build(rows, order: tuple[int, ...], grouped: bool = False) -> TrieNode:
    """A trie over ``rows`` with columns permuted by ``order``.

    Equivalent to inserting each permuted row, but grouped level by level
    (the common arities 1 and 2 without per-row function calls). ``grouped``: the rows
    come with equal first keys together (``order`` being the identity), so pairs are grouped
    by ``itertools.groupby`` (30% faster); any order still gives the same trie."""
    root = TrieNode()
    identity = order == tuple(range(len(order)))
    if len(order) == 1:
        root.children = dict.fromkeys(row[0] for row in rows)
    elif len(order) == 2 and grouped and identity:
        root.children = _grouped_pairs(rows)
    elif len(order) == 2:
        root.children = _group_pairs(rows, swap=not identity)
    else:
        for row in rows if identity else (tuple(row[i] for i in order) for row in rows):
            root.insert(row)
    root._keys = None
    return root


def _group_pairs(rows, swap: bool) -> dict:
    groups: dict = {}
    get = groups.get
    if swap:
        for b, a in rows:
            group = get(a)
            if group is None:
                groups[a] = [b]
            else:
                group.append(b)
    else:
        for a, b in rows:
            group = get(a)
            if group is None:
                groups[a] = [b]
            else:
                group.append(b)
    return {a: _leaf_parent(bs) for a, bs in groups.items()}


def _grouped_pairs(rows) -> dict:
    out: dict = {}
    new, second = TrieNode.__new__, itemgetter(1)
    for key, group in groupby(rows, itemgetter(0)):
        node = out.get(key)
        if node is None:
            node = out[key] = new(TrieNode)
            node.children = dict.fromkeys(map(second, group))
            node._keys = None
        else:                                     # the key seen before: not grouped after all
            node.children.update(dict.fromkeys(map(second, group)))
    return out


def _leaf_parent(keys: list) -> TrieNode:
    node = TrieNode.__new__(TrieNode)
    node.children = dict.fromkeys(keys)
    node._keys = None
    return node


_CHILDREN, _KEYS = TrieNode.__dict__["children"], TrieNode.__dict__["_keys"]


def lazy(rows: list, order: tuple[int, ...], grouped: bool = False) -> TrieNode:
    """The same trie as ``build(rows, order)``, each node built from its run of rows when first
    read (:class:`LazyTrieNode`). ``rows`` is kept as it is (give a list nothing else changes),
    or a function giving that list, called when the root is first read; ``grouped``: it is
    already sorted by every column of ``order`` but the last (for two columns in the identity
    order: by the first), else the root sorts a copy when first read.

    >>> root = lazy([(2, 1), (1, 3), (1, 2)], (0, 1))
    >>> type(root).__name__, root.keys, type(root).__name__, type(root.children[1]).__name__
    ('LazyTrieNode', [1, 2], 'TrieNode', 'LazyTrieNode')
    >>> sorted_rows(root, 2), type(root.children[1]).__name__
    ([(1, 2), (1, 3), (2, 1)], 'TrieNode')
    """
    node = LazyTrieNode.__new__(LazyTrieNode)
    _CHILDREN.__set__(node, (rows, 0, None, order, 0, grouped))
    _KEYS.__set__(node, None)
    return node


class LazyTrieNode(TrieNode):
    """A trie node not built yet: its children slot holds (rows, lo, hi, order, depth, grouped),
    the run ``rows[lo:hi]`` of the rows under it, sorted by ``order``'s columns before ``depth``
    and (but at the last level) by the one at ``depth``. The first read or write of ``children``
    or ``_keys`` builds its level -- the children of an inner level as further lazy nodes, over
    their own runs -- and the node becomes a plain :class:`TrieNode`: no cost on later reads.
    A workspace opening for writing indexes its relations so, so that only the paths a commit
    reaches are built."""

    __slots__ = ()

    def _load(self) -> None:
        rows, lo, hi, order, depth, grouped = _CHILDREN.__get__(self)
        if hi is None:                                     # the root: all the rows
            rows = rows() if callable(rows) else rows
            hi = len(rows)
        if depth == len(order) - 1:
            children, keys = dict.fromkeys(map(itemgetter(order[-1]), rows[lo:hi])), None
        else:
            children, keys = _level(rows[lo:hi], order, depth, grouped)
        _CHILDREN.__set__(self, children)
        _KEYS.__set__(self, keys)
        self.__class__ = TrieNode

    children, _keys = loading(_CHILDREN), loading(_KEYS)


def _level(run: list, order: tuple, depth: int, grouped: bool) -> tuple[dict, list | None]:
    """The children (lazy, each over its part of ``run``) and sorted keys of an inner level over
    ``run``. Sorted by the level's columns unless ``grouped`` says it is (checked at the root:
    a hint from a file may be wrong; below, the parent sorted it); values that do not sort (a
    NaN among floats) are grouped by hashing, as ``build`` does, with the keys left to sort
    later."""
    values = list(map(itemgetter(order[depth]), run))
    if not grouped or (depth == 0 and values != sorted(values)):
        run.sort(key=itemgetter(*order[depth:-1]))
        values = list(map(itemgetter(order[depth]), run))
    if values and type(values[0]) is float and any(v != v for v in values):
        return _hashed(run, order, depth), None
    # every loop in C (a Python loop per key cost 0.8 s for a 133k-key root): the keys in order,
    # where each one's run ends, the nodes, their (run, start, stop, ...) slots
    keys = list(dict.fromkeys(values))
    stops = list(map(bisect_right, repeat(values), keys))
    nodes = list(map(LazyTrieNode.__new__, repeat(LazyTrieNode, len(keys))))
    specs = zip(repeat(run), [0] + stops[:-1], stops, repeat(order), repeat(depth + 1), repeat(True))
    any(map(_CHILDREN.__set__, nodes, specs))            # (a lazy node's _keys is set when built)
    return dict(zip(keys, nodes)), keys


def _hashed(run: list, order: tuple, depth: int) -> dict:
    groups: dict = {}
    for row in run:
        groups.setdefault(row[order[depth]], []).append(row)
    children = {}
    for key, part in groups.items():
        child = children[key] = LazyTrieNode.__new__(LazyTrieNode)
        _CHILDREN.__set__(child, (part, 0, len(part), order, depth + 1, False))
    return children
