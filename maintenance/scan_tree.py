"""Scan trees (§3.1): the ⊕-sum of any key interval of a changing, ordered set of records.

A scan tree stores records ``key -> value`` in key order in a balanced binary
tree whose every node also holds the ⊕-sum of its subtree, for an associative
operator ⊕ given at construction (min, max, +, string concatenation, ...).
``scan(lo, hi)`` is the ⊕-sum, in key order, of the values with
``lo <= key <= hi``, taken from the O(log n) subtrees that cover the interval;
inserting or removing a record recomputes the sums on one root path, O(log n).

:class:`MinMaxAggregate` is the semigroup aggregation of §2.3.3 built on it.

The max-sales example of §3.1, with keys ``(region, store)``; ``BOTTOM`` and
``TOP`` are the paper's -∞ and +∞ inside key tuples:

>>> sales = ScanTree(max)
>>> for region, store, tot in [(1, 1, 1000.0), (1, 4, 8000.0), (2, 6, 2900.0),
...                            (2, 13, 9000.0), (3, 14, 325.0)]:
...     sales.insert((region, store), tot)
>>> sales.scan((2, BOTTOM), (2, TOP))
9000.0
>>> sales.remove((2, 13))
9000.0
>>> sales.scan((2, BOTTOM), (2, TOP))
2900.0
>>> sales.scan((4, BOTTOM), (9, TOP)) is None
True
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterator


class _Extreme:
    """BOTTOM or TOP: below or above every other value, for the open ends of key tuples."""

    __slots__ = ("_above",)

    def __init__(self, above: bool):
        self._above = above

    def __lt__(self, other) -> bool:
        return self is not other and not self._above

    def __le__(self, other) -> bool:
        return self is other or not self._above

    def __gt__(self, other) -> bool:
        return self is not other and self._above

    def __ge__(self, other) -> bool:
        return self is other or self._above

    def __repr__(self) -> str:
        return "TOP" if self._above else "BOTTOM"


BOTTOM, TOP = _Extreme(False), _Extreme(True)


class _Node:
    __slots__ = ("key", "value", "priority", "left", "right", "total")

    def __init__(self, key, value, priority: float):
        self.key, self.value, self.priority = key, value, priority
        self.left = self.right = None
        self.total = value          # ⊕ of the subtree, kept by ScanTree._pull


def _total(node: _Node | None):
    return None if node is None else node.total


class ScanTree:
    """Records ``key -> value`` in key order, each subtree annotated with its ⊕-sum.

    The tree is a treap: a binary search tree on keys that is also a heap on
    random priorities, so its expected height is O(log n).

    Invariants (``check`` asserts them):
      * in-order keys strictly increase;
      * a node's priority is at least its children's;
      * ``node.total == total(left) ⊕ node.value ⊕ total(right)``.

    Preconditions: keys are totally ordered (no nan inside them); ⊕ is
    associative (it need not be commutative: sums are taken in key order);
    values are never None, which stands for the ⊕-sum of nothing.

    >>> t = ScanTree(lambda a, b: a + b)
    >>> for key, word in [(3, "c"), (1, "a"), (2, "b"), (5, "e")]:
    ...     t.insert(key, word)
    >>> t.scan(1, 3), t.scan(2, 9), t.scan(4, 4)
    ('abc', 'bce', None)
    """

    def __init__(self, op: Callable[[Any, Any], Any], seed: int = 0):
        self._op = op
        self._root: _Node | None = None
        self._len = 0
        self._priorities = random.Random(seed)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[tuple]:
        """The records ``(key, value)`` in key order."""
        stack, node = [], self._root
        while stack or node is not None:
            while node is not None:
                stack.append(node)
                node = node.left
            node = stack.pop()
            yield node.key, node.value
            node = node.right

    def get(self, key, default=None):
        node = self._root
        while node is not None and node.key != key:
            node = node.left if key < node.key else node.right
        return default if node is None else node.value

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def insert(self, key, value) -> None:
        """Add the record ``key -> value``, replacing the value of an existing key. O(log n)."""
        if key in self:
            self.remove(key)
        self._root = self._insert(self._root, _Node(key, value, self._priorities.random()))
        self._len += 1

    def remove(self, key):
        """Remove the record with this key and return its value (KeyError if none). O(log n)."""
        self._root, value = self._remove(self._root, key)
        self._len -= 1
        return value

    def scan(self, lo, hi):
        """⊕ of the values with ``lo <= key <= hi``; None if there are none. O(log n)."""
        node = self._root     # descend to the top node inside [lo, hi]; below it the paths split
        while node is not None and not lo <= node.key <= hi:
            node = node.left if hi < node.key else node.right
        if node is None:
            return None
        right = self._plus(node.value, self._prefix(node.right, hi))
        return self._plus(self._suffix(node.left, lo), right)

    def _suffix(self, node: _Node | None, lo):
        """⊕ of the values >= lo below node; each turn left on the path covers a subtree."""
        total = None
        while node is not None:
            if node.key < lo:
                node = node.right
            else:
                total = self._plus(self._plus(node.value, _total(node.right)), total)
                node = node.left
        return total

    def _prefix(self, node: _Node | None, hi):
        """⊕ of the values <= hi below node; each turn right on the path covers a subtree."""
        total = None
        while node is not None:
            if hi < node.key:
                node = node.left
            else:
                total = self._plus(total, self._plus(_total(node.left), node.value))
                node = node.right
        return total

    def _plus(self, a, b):
        """a ⊕ b, with None as the identity."""
        if a is None:
            return b
        return a if b is None else self._op(a, b)

    def _pull(self, node: _Node) -> _Node:
        """Recompute node's subtree sum from its children's."""
        node.total = self._plus(self._plus(_total(node.left), node.value), _total(node.right))
        return node

    def _insert(self, node: _Node | None, new: _Node) -> _Node:
        if node is None:
            return new
        if new.priority > node.priority:     # new becomes this subtree's root
            new.left, new.right = self._split(node, new.key)
            return self._pull(new)
        if new.key < node.key:
            node.left = self._insert(node.left, new)
        else:
            node.right = self._insert(node.right, new)
        return self._pull(node)

    def _remove(self, node: _Node | None, key) -> tuple:
        if node is None:
            raise KeyError(key)
        if key == node.key:
            return self._merge(node.left, node.right), node.value
        if key < node.key:
            node.left, value = self._remove(node.left, key)
        else:
            node.right, value = self._remove(node.right, key)
        return self._pull(node), value

    def _split(self, node: _Node | None, key) -> tuple:
        """The subtrees of keys < key and > key (key itself is absent)."""
        if node is None:
            return None, None
        if node.key < key:
            node.right, right = self._split(node.right, key)
            return self._pull(node), right
        left, node.left = self._split(node.left, key)
        return left, self._pull(node)

    def _merge(self, left: _Node | None, right: _Node | None) -> _Node | None:
        """One tree of two, every key of ``left`` below every key of ``right``."""
        if left is None or right is None:
            return right if left is None else left
        if left.priority > right.priority:
            left.right = self._merge(left.right, right)
            return self._pull(left)
        right.left = self._merge(left, right.left)
        return self._pull(right)

    def height(self) -> int:
        """The number of nodes on the longest root path (expected O(log n))."""
        def walk(node):
            return 0 if node is None else 1 + max(walk(node.left), walk(node.right))
        return walk(self._root)

    def check(self) -> None:
        """Assert the invariants of the class docstring. O(n), for tests."""
        def walk(node, lo, hi):
            if node is None:
                return
            assert lo < node.key < hi, f"key {node.key!r} out of order"
            for child in (node.left, node.right):
                assert child is None or child.priority <= node.priority, "heap order broken"
            walk(node.left, lo, node.key)
            walk(node.right, node.key, hi)
            expected = self._plus(self._plus(_total(node.left), node.value), _total(node.right))
            assert node.total == expected, f"stale sum at key {node.key!r}"
        walk(self._root, BOTTOM, TOP)
        assert self._len == sum(1 for _ in self)


class MinMaxAggregate:
    """min or max per group, kept under insert and erase of contributions (§2.3.3).

    ``A[x] = ms <- agg<<ms = max(s)>> D[x, y, z] = s.`` Each satisfying
    assignment of the body is one contribution: group ``(x,)``, witness
    ``(y, z)``, value ``s``. It is stored as the record ``((x,), (y, z)) -> s``
    of a max scan tree (the paper's ``A_max-scan[x, y, z] = s``), and
    ``A[x] = Scan(A_max-scan, [x, -∞], [x, +∞])``.

    Invariants: a witness contributes at most one value to a group (the value
    is a function of the body's assignment); ``count(group)`` is the number of
    witnesses of the group, and a group with none has no value. Values are
    totally ordered (no nan: min and max of nan depend on the order).

    >>> best = MinMaxAggregate("max")
    >>> best.insert((2,), (6,), 2900.0); best.insert((2,), (7,), 9000.0)
    >>> best.insert((2,), (8,), 9000.0)
    >>> best.erase((2,), (7,), 9000.0)
    >>> best.value((2,)), best.count((2,))
    (9000.0, 2)
    >>> best.erase((2,), (8,), 9000.0); best.erase((2,), (6,), 2900.0)
    >>> best.value((2,)), best.count((2,))
    (None, 0)
    """

    def __init__(self, kind: str):
        if kind not in ("min", "max"):
            raise ValueError(f"unknown semigroup aggregate {kind}: expected min or max")
        self._tree = ScanTree(min if kind == "min" else max)
        self._support: dict = {}        # group -> number of witnesses

    def insert(self, group: tuple, witness: tuple, value) -> None:
        if (group, witness) in self._tree:
            raise ValueError(f"witness {witness!r} already contributes to group {group!r}")
        self._tree.insert((group, witness), value)
        self._support[group] = self._support.get(group, 0) + 1

    def erase(self, group: tuple, witness: tuple, value) -> None:
        if self._tree.get((group, witness)) != value:
            raise KeyError(f"no contribution {value!r} of witness {witness!r} to group {group!r}")
        self._tree.remove((group, witness))
        self._support[group] -= 1
        if not self._support[group]:
            del self._support[group]

    def value(self, group: tuple):
        """The min or max of the group's values, None if it has none. O(log n)."""
        return self._tree.scan((group, BOTTOM), (group, TOP))

    def count(self, group: tuple) -> int:
        return self._support.get(group, 0)
