"""The recorded trace of one rule's triejoin, as a tree of binding prefixes.

A :class:`TraceNode` at depth ``d`` stands for one binding of the first ``d``
variables of the variable order; the leapfrog join of depth ``d`` ran there.
It keeps

  * ``entries``: the sensitivity entries that join (and the checks after it)
    recorded, sorted by start, so a region's old entries can be dropped;
  * ``children``: for each key of depth ``d`` that matched and passed the
    checks, the node below it -- or, at the last depth, the head tuple the
    binding produced.

The leaves under a region are therefore the region's old satisfying
assignments: the maintenance rule compares them with a fresh evaluation of
the region instead of evaluating the old body again.
"""

from __future__ import annotations

from sortedcontainers import SortedDict, SortedKeyList

from maintenance.sensitivity import end_of, start_of


def _entry_start(entry):
    """Entries sort by the start of their region in this node's key space."""
    return start_of(entry.region[1])


class TraceNode:
    __slots__ = ("parent", "key", "depth", "children", "entries", "alive")

    def __init__(self, parent: "TraceNode | None", key, depth: int):
        self.parent, self.key, self.depth = parent, key, depth
        self.children: SortedDict | None = None
        self.entries: SortedKeyList | None = None
        self.alive = True

    def path(self) -> list:
        """The keys from the root down to this node (its binding prefix)."""
        keys, node = [], self
        while node.parent is not None:
            keys.append(node.key)
            node = node.parent
        return keys[::-1]

    def child(self, key):
        return self.children.get(key) if self.children is not None else None

    def descend(self, path) -> "TraceNode | None":
        node = self
        for key in path:
            node = node.child(key)
            if node is None or not isinstance(node, TraceNode):
                return None
        return node

    def add_entry(self, entry) -> None:
        if self.entries is None:
            self.entries = SortedKeyList(key=_entry_start)
        self.entries.add(entry)

    def set_child(self, key, value) -> None:
        if self.children is None:
            self.children = SortedDict()
        self.children[key] = value

    def children_in(self, lo, hi) -> list:
        """(key, child) for the children with ``lo <= key <= hi`` (None: unbounded)."""
        if not self.children:
            return []
        return [(k, self.children[k]) for k in self.children.irange(lo, hi)]

    def entries_within(self, start, end) -> list:
        """Entries whose region lies inside the encoded range [start, end)."""
        if not self.entries:
            return []
        return [e for e in self.entries.irange_key(start, end, inclusive=(True, False))
                if end_of(e.region[2]) <= end]

    def size(self) -> int:
        """Nodes and leaves in this subtree (for stats)."""
        if not self.children:
            return 1
        return 1 + sum(c.size() if isinstance(c, TraceNode) else 1 for c in self.children.values())
