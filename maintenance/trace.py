"""The recorded trace of one rule's triejoin, as a tree of binding prefixes.

A :class:`TraceNode` at depth ``d`` stands for one binding of the first ``d``
variables of the variable order; the leapfrog join of depth ``d`` ran there.
It keeps

  * ``entries``: the sensitivity entries that join (and the checks after it)
    recorded, as handles (``Registry.handle``: the index and its row) in an
    ``array('Q')``, sorted by their region's start, so a region's old entries
    can be dropped;
  * ``keys`` and ``kids``: for each key of depth ``d`` that matched and passed
    the checks (ascending), the node below it -- or, at the last depth, the
    head tuple the binding produced. Two parallel lists, found by bisection: a
    dict per node took 170 bytes more (most nodes have one or two children).
    Where the children are trace nodes, ``keys`` is None and a child's key is
    its own ``key`` (bisection by it): the list repeated them (join3 at 30k:
    17 of 284 bytes per sensitivity interval). A node read from a workspace
    may keep the list.

The leaves under a region are therefore the region's old satisfying
assignments: the maintenance rule compares them with a fresh evaluation of
the region instead of evaluating the old body again.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right, insort
from operator import attrgetter

from lftj.lazy import loading

SCAN = 64        # a node with at most this many entries finds one to remove by scanning
_KEY = attrgetter("key")


class TraceNode:
    """Children and entries are plain lists and dicts kept sorted by bisection: the trace
    is recorded in key order, so nearly every insert is an append (a SortedDict per node
    cost 2 KB and dominated the memory of the sensitivity indices)."""

    __slots__ = ("parent", "key", "depth", "kids", "keys", "entries", "alive")

    def __init__(self, parent: "TraceNode | None", key, depth: int):
        self.parent, self.key, self.depth = parent, key, depth
        self.kids: list | None = None              # the children (TraceNode | head tuple), by key
        self.keys: list | None = None              # the children's keys, ascending (None: see kids)
        self.entries: array | None = None          # sensitivity entries' handles, by region start
        self.alive = True

    def path(self) -> list:
        """The keys from the root down to this node (its binding prefix)."""
        keys, node = [], self
        while node.parent is not None:
            keys.append(node.key)
            node = node.parent
        return keys[::-1]

    def _find(self, key) -> int:
        """The position of the first child whose key is at least ``key``."""
        keys = self.keys
        return bisect_left(self.kids, key, key=_KEY) if keys is None else bisect_left(keys, key)

    def key_at(self, i: int):
        keys = self.keys
        return self.kids[i].key if keys is None else keys[i]

    def child(self, key):
        kids = self.kids
        if not kids:
            return None
        keys = self.keys
        if keys is None:
            i = bisect_left(kids, key, key=_KEY)
            return kids[i] if i < len(kids) and kids[i].key == key else None
        i = bisect_left(keys, key)
        return kids[i] if i < len(keys) and keys[i] == key else None

    def child_keys(self) -> list:
        """The children's keys, ascending."""
        kids = self.kids
        if not kids:
            return []
        keys = self.keys
        return [child.key for child in kids] if keys is None else keys

    def items(self):
        """(key, child) in key order."""
        kids = self.kids
        if not kids:
            return ()
        keys = self.keys
        return ((child.key, child) for child in kids) if keys is None else zip(keys, kids)

    def descend(self, path) -> "TraceNode | None":
        node = self
        for key in path:
            node = node.child(key)
            if node is None or not isinstance(node, TraceNode):
                return None
        return node

    def add_entry(self, handle: int, region_start) -> None:
        """``region_start(handle)``: the start of its region (as ``start_of``): entries sort by it."""
        entries = self.entries
        if entries is None:
            self.entries = array("Q", (handle,))
        elif not entries or region_start(handle) >= region_start(entries[-1]):
            entries.append(handle)
        else:
            insort(entries, handle, key=region_start)

    def remove_entry(self, handle: int, region_start) -> None:
        entries = self.entries
        if len(entries) <= SCAN:                  # (most nodes: a scan in C beats a bisection by key)
            del entries[entries.index(handle)]
            return
        i = bisect_left(entries, region_start(handle), key=region_start)
        while entries[i] != handle:
            i += 1
        del entries[i]

    def set_child(self, key, value) -> None:
        self.put(key, value)

    def put(self, key, value):
        """Set the child under ``key`` (a trace node's own ``key`` is ``key``); returns the one it
        replaced (None: there was none)."""
        kids = self.kids
        if kids is None:
            self.kids = [value]
            if not isinstance(value, TraceNode):
                self.keys = [key]
            return None
        keys = self.keys
        if not kids or key > (kids[-1].key if keys is None else keys[-1]):    # (recording: appends)
            kids.append(value)
            if keys is not None:
                keys.append(key)
            return None
        i = self._find(key)
        if i < len(kids) and self.key_at(i) == key:
            old, kids[i] = kids[i], value
            return old
        kids.insert(i, value)
        if keys is not None:
            keys.insert(i, key)
        return None

    def pop_child(self, key):
        i = self._find(key)
        if self.keys is not None:
            del self.keys[i]
        return self.kids.pop(i)

    def children_in(self, lo, hi) -> list:
        """(key, child) for the children with ``lo <= key <= hi`` (None: unbounded)."""
        kids = self.kids
        if not kids:
            return []
        keys = self.keys
        if keys is None:
            i = 0 if lo is None else bisect_left(kids, lo, key=_KEY)
            j = len(kids) if hi is None else bisect_right(kids, hi, key=_KEY)
            return [(child.key, child) for child in kids[i:j]]
        i = 0 if lo is None else bisect_left(keys, lo)
        j = len(keys) if hi is None else bisect_right(keys, hi)
        return list(zip(keys[i:j], kids[i:j]))

    def size(self) -> int:
        """Nodes and leaves in this subtree (for stats)."""
        if not self.kids:
            return 1
        return 1 + sum(c.size() if isinstance(c, TraceNode) else 1 for c in self.kids)


_KIDS, _KEYS, _ENTRIES = (TraceNode.__dict__[name] for name in ("kids", "keys", "entries"))


class LazyTraceNode(TraceNode):
    """A trace node whose children, keys and entries are still stored (a workspace's maintainer,
    read page by page): the first read or write of any of them calls ``load(node)`` (kept in the
    kids slot until then), which returns the three, and the node becomes a plain
    :class:`TraceNode` -- no cost on later reads. ``parent``, ``key``, ``depth`` and ``alive`` are
    plain from the start, so a path or a region can be named without reading anything."""

    __slots__ = ()

    @staticmethod
    def shell(parent: "TraceNode | None", key, depth: int, load) -> "LazyTraceNode":
        node = LazyTraceNode.__new__(LazyTraceNode)
        node.parent, node.key, node.depth, node.alive = parent, key, depth, True
        _KIDS.__set__(node, load)
        _KEYS.__set__(node, None)
        _ENTRIES.__set__(node, None)
        return node

    def _load(self) -> None:
        children, keys, entries = _KIDS.__get__(self)(self)
        _KIDS.__set__(self, children)
        _KEYS.__set__(self, keys)
        _ENTRIES.__set__(self, entries)
        self.__class__ = TraceNode

    kids, keys, entries = loading(_KIDS), loading(_KEYS), loading(_ENTRIES)
