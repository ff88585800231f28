"""The change oracle (§4.2.2): tree surgeries matched against sensitivity indices.

:class:`Registry` owns every sensitivity index of the program, one per
(relation, index order, level), and the list of rules whose index was dropped
at a level because the atom's columns there are a prefix of the variable
order. ``match`` takes the surgeries of a changed relation and returns, per
rule, the regions to revisit -- the paper's

    G_co,z(x, y, [z1, z2]) :- deltaG^2(x, z, D), z in [z1, z2], G_sens,z(x, [z1, z2], y).

removing each matched entry. ``merge`` turns a rule's regions into disjoint
intervals per trace node. Every mutation (entries, trace children) goes
through the current transaction's journal.
"""

from __future__ import annotations

from collections import defaultdict

from maintenance.sensitivity import SensitivityIndex, end_of, start_of
from maintenance.trace import TraceNode


class Registry:
    def __init__(self) -> None:
        self.indexes: dict[tuple, SensitivityIndex] = {}
        self.direct: dict[tuple, list] = defaultdict(list)     # (relation, order, level) -> rules
        self.journal = None

    # ------------------------------------------------------------ recording
    def register(self, rule) -> None:
        for levels in rule.atoms:
            var_levels = [j for j, (kind, _) in enumerate(levels.kinds) if kind in ("var", "repeat")]
            for i, j in enumerate(var_levels):
                if levels.dropped[i]:
                    self.direct[(levels.relation, levels.order, j)].append(rule)

    def add(self, rule, levels, j: int, alpha, start, end, region) -> None:
        self._add(rule, (levels.relation, levels.order, j), alpha, start, end, region)

    def add_lookup(self, rule, lookup, level: int, alpha, start, end, region) -> None:
        self._add(rule, (lookup.relation, lookup.order, level), alpha, start, end, region)

    def _add(self, rule, where, alpha, start, end, region) -> None:
        index = self.indexes.get(where)
        if index is None:
            index = self.indexes[where] = SensitivityIndex()
        entry = index.add(alpha, start, end, region, rule)
        region[0].add_entry(entry)
        rule.intervals += 1
        if self.journal is not None:
            self.journal.record(lambda: self._unrecord(entry))

    def _unrecord(self, entry) -> None:
        entry.index.remove(entry)
        entry.region[0].remove_entry(entry)
        entry.owner.intervals -= 1

    def remove(self, entry) -> None:
        """Drop a matched or revisited entry (no-op if already gone)."""
        if not entry.alive:
            return
        self._unrecord(entry)
        if self.journal is not None:
            self.journal.record(lambda: self._rerecord(entry))

    def _rerecord(self, entry) -> None:
        entry.index.restore(entry)
        entry.region[0].add_entry(entry)
        entry.owner.intervals += 1

    def set_child(self, node: TraceNode, key, child) -> None:
        had = node.children is not None and key in node.children
        old = node.children[key] if had else None
        node.set_child(key, child)
        if self.journal is not None:
            self.journal.record(lambda: node.set_child(key, old) if had else node.pop_child(key))

    def del_child(self, node: TraceNode, key) -> None:
        old = node.pop_child(key)
        if self.journal is not None:
            self.journal.record(lambda: node.set_child(key, old))

    def detach(self, node: TraceNode) -> None:
        node.alive = False
        if self.journal is not None:
            self.journal.record(lambda: setattr(node, "alive", True))

    def size(self) -> int:
        return sum(len(index) for index in self.indexes.values())

    # ------------------------------------------------------------ matching
    def match(self, relation: str, surgeries: dict) -> dict:
        """Regions to revisit, per rule, for the surgeries ``{order: [(level, alpha, key)]}``."""
        regions: dict = defaultdict(list)
        for order, ops in surgeries.items():
            for level, alpha, key in ops:
                index = self.indexes.get((relation, order, level))
                if index is not None:
                    for entry in index.match(alpha, key):
                        regions[entry.owner].append(entry.region)
                        self.remove(entry)
                for rule in self.direct.get((relation, order, level), ()):
                    node = rule.root.descend(alpha)
                    if node is not None:
                        regions[rule].append((node, key, key))
        return regions


def merge(regions: list) -> list:
    """Disjoint (node, lo, hi) regions, shallow nodes first; overlapping intervals of a node merge."""
    by_node: dict = defaultdict(list)
    for node, lo, hi in regions:
        by_node[id(node)].append((node, lo, hi))
    out = []
    for items in by_node.values():
        items.sort(key=lambda r: start_of(r[1]))
        node, lo, hi = items[0]
        for _, lo2, hi2 in items[1:]:
            if start_of(lo2) <= end_of(hi):
                if end_of(hi2) > end_of(hi):
                    hi = hi2
            else:
                out.append((node, lo, hi))
                lo, hi = lo2, hi2
        out.append((node, lo, hi))
    out.sort(key=lambda r: r[0].depth)
    return out
