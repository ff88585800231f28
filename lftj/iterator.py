"""The trie iterator of leapfrog triejoin (Veldhuizen, LFTJ §3): the contract, stated once.

A trie iterator walks one trie level by level. At each level it sits on one key of the
current node:

  ``open()``   descend to the first key of the child of the current key;
  ``up()``     return to the parent level;
  ``next()``   move to the next key at this level (may reach the end);
  ``seek(k)``  move to the least key >= k at this level (may reach the end);
  ``key()``    the current key;  ``at_end()``  past the last key.

Contract (checked by cheap asserts):
  * ``key``, ``next``, ``seek`` and ``open`` require ``not at_end()``;
  * after ``seek(k)``, ``at_end() or key() >= k``; seeks only move forward;
  * ``open`` requires a level below the current one (``depth < arity - 1``).

The leapfrog join (:mod:`lftj.leapfrog`) uses only the unary part -- ``key``, ``next``,
``seek``, ``at_end`` -- of the iterators of one level. :class:`LevelIterator` is that part over
one trie node's sorted keys; the triejoin (:mod:`lftj.triejoin`) keeps the rest of each atom's
trie iterator as its current node (``open``: the child of the key every participant agreed on;
``up``: back to the parent). Wrappers keep the contract: :class:`lftj.recording.Recording`
reports what each operation depended on, and a level opened at ``lo`` and ending after ``hi``
is a region of the change oracle.

Every operation is O(log n) by bisection on the node's sorted keys.

>>> from lftj.trie import build
>>> it = TrieIterator(build([(1, 2), (1, 5), (3, 4)], (0, 1)), arity=2)
>>> it.open(); it.key()
1
>>> it.open(); it.seek(3); it.key()
5
>>> it.next(); it.at_end()
True
>>> it.up(); it.next(); it.key()
3
"""

from __future__ import annotations

from bisect import bisect_left

from lftj.trie import TrieNode


class TrieIterator:
    """A trie iterator over a whole trie (the contract above, every operation checked)."""

    __slots__ = ("arity", "_nodes", "_positions", "_keys")

    def __init__(self, root: TrieNode, arity: int):
        self.arity = arity
        self._nodes: list[TrieNode] = [root]   # node whose keys this level walks
        self._positions: list[int] = []        # position per opened level
        self._keys: list[list] = []            # the sorted keys per opened level

    @property
    def depth(self) -> int:
        """-1 before the first ``open``; the current level afterwards."""
        return len(self._positions) - 1

    def open(self) -> None:
        depth = self.depth
        assert depth < self.arity - 1, "open below the last level"
        if depth >= 0:
            assert not self.at_end(), "open at end"
            self._nodes.append(self._nodes[-1].children[self.key()])
        self._keys.append(self._nodes[-1].keys)
        self._positions.append(0)

    def up(self) -> None:
        assert self.depth >= 0, "up above the root"
        self._positions.pop()
        self._keys.pop()
        if len(self._nodes) > 1:
            self._nodes.pop()

    def at_end(self) -> bool:
        return self._positions[-1] >= len(self._keys[-1])

    def key(self):
        assert not self.at_end(), "key at end"
        return self._keys[-1][self._positions[-1]]

    def next(self) -> None:
        assert not self.at_end(), "next at end"
        self._positions[-1] += 1

    def seek(self, key) -> None:
        assert not self.at_end(), "seek at end"
        keys, pos = self._keys[-1], self._positions[-1]
        self._positions[-1] = bisect_left(keys, key, pos)

    def position(self) -> int:
        """The index of the current key in its level."""
        return self._positions[-1]

    def level_keys(self) -> list:
        return self._keys[-1]


class LevelIterator:
    """One trie level as a unary trie iterator: ``keys`` (ascending) opened at the first key
    ``>= lo`` and ending after ``hi`` (None: unbounded), so that a leapfrog over such levels
    stays inside the key interval ``[lo, hi]`` -- the region the change oracle names.
    ``landed()`` is the key at the position even past ``hi`` (None past the last key): what the
    last operation found, which a recording wrapper reports. (The leapfrog's inner loop runs on
    these: the contract's asserts are in the tests' checking wrapper, not here.)

    >>> it = LevelIterator([1, 3, 5, 7], lo=2, hi=5)
    >>> it.key(), it.seek(4), it.key(), it.next(), it.at_end(), it.landed()
    (3, None, 5, None, True, 7)
    """

    __slots__ = ("keys", "pos", "hi")

    def __init__(self, keys, lo=None, hi=None):
        self.keys, self.hi = keys, hi
        self.pos = 0 if lo is None else bisect_left(keys, lo)

    def at_end(self) -> bool:
        pos, keys = self.pos, self.keys
        return pos >= len(keys) or (self.hi is not None and keys[pos] > self.hi)

    def key(self):
        return self.keys[self.pos]

    def next(self) -> None:
        self.pos += 1

    def seek(self, key) -> None:
        self.pos = bisect_left(self.keys, key, self.pos)

    def landed(self):
        keys, pos = self.keys, self.pos
        return keys[pos] if pos < len(keys) else None
