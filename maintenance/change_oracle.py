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

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict

from maintenance.sensitivity import HIGH, LOW, NEG, OTHER, POS, SAME, WHOLE, SensitivityIndex, end_of, start_of
from maintenance.trace import TraceNode

ROW = (1 << 32) - 1          # a handle's row bits; the bits above are its index's number
SCAN = 16                   # a node with at most this many entries is scanned from its first by ``within``


class Registry:
    """Every sensitivity index, by (relation, order, level) and by number. An entry is named
    across indexes by its handle, ``index number << 32 | row`` (what trace nodes keep). Rows
    removed in a transaction are released (reused) when the next transaction starts: until
    then the transaction's journal may restore them."""

    def __init__(self) -> None:
        self.indexes: dict[tuple, SensitivityIndex] = {}
        self.numbered: list[SensitivityIndex] = []
        self.rules: list = []                      # owner number -> rule (RuleMaintainer)
        self.direct: dict[tuple, list] = defaultdict(list)     # (relation, order, level) -> rules
        self._journal = None
        self.retired: list[int] = []               # handles removed since the last release
        self.budget = None                         # a MemoryBudget the rules check as they record
        self._hints: dict[int, tuple] = {}         # depth -> (node, position, region start) of its last record

    @property
    def journal(self):
        return self._journal

    @journal.setter
    def journal(self, journal) -> None:
        if journal is not None:
            self.release()
        self._journal = journal

    def release(self) -> None:
        """Rows removed by finished transactions (committed or rolled back) are reused."""
        numbered = self.numbered
        for handle in self.retired:
            numbered[handle >> 32].release(handle & ROW)
        self.retired = []

    def file(self) -> None:
        """Every index's rows appended since its last query into their groups, in bulk (the end of
        a build: a query would otherwise file them)."""
        for index in self.numbered:
            index.file()

    def index(self, where: tuple) -> SensitivityIndex:
        index = self.indexes.get(where)
        if index is None:
            index = self.indexes[where] = SensitivityIndex(len(self.numbered))
            self.numbered.append(index)
        return index

    # ------------------------------------------------------------ recording
    def register(self, rule) -> None:
        rule.number = len(self.rules)
        self.rules.append(rule)
        for levels in rule.atoms:
            var_levels = [j for j, (kind, _) in enumerate(levels.kinds) if kind in ("var", "repeat")]
            for i, j in enumerate(var_levels):
                if levels.dropped[i]:
                    self.direct[(levels.relation, levels.order, j)].append(rule)

    def add(self, rule, levels, j: int, alpha, start, end, region) -> None:
        self._add(rule, self.index((levels.relation, levels.order, j)), alpha, start, end, region)

    def add_lookup(self, rule, lookup, level: int, alpha, start, end, region) -> None:
        self._add(rule, self.index((lookup.relation, lookup.order, level)), alpha, start, end, region)

    def _add(self, rule, index, alpha, start, end, region) -> None:
        node, lo, hi = region
        if type(lo) is type(start) and type(hi) is type(end) and lo == start and hi == end:
            self.record_same(rule, index, index.alpha_id(alpha), start, end, node)
        elif lo is None and hi is None:
            self.record(rule, index, alpha, start, end, node, WHOLE)
        else:
            self.record(rule, index, alpha, start, end, node, OTHER, (lo, hi))

    def record(self, rule, index, alpha, start, end, node, kind: int = SAME, region=None, aid=None) -> int:
        """A sensitivity entry of ``rule`` in ``index`` whose region is ``node`` with the entry's
        own interval (SAME), the whole node (WHOLE) or ``region`` (OTHER); ``aid``: ``alpha``'s
        id in ``index`` when the caller knows it."""
        row = index.add(alpha, start, end, node, rule.number, kind, region, aid)
        if self._journal is not None:
            index.file_now(row)
        handle = index.number << 32 | row
        lo = start if kind == SAME else None if kind == WHOLE else region[0]
        self._place(node, handle, NEG if lo is None else (0, lo))
        rule.intervals += 1
        if self._journal is not None:
            self._journal.record(lambda: self._unrecord(handle))
        return handle

    def record_same(self, rule, index, aid: int, start, end, node) -> int:
        """``record`` of an entry whose region is its own interval at ``node`` (what a leapfrog
        records), ``aid`` its alpha's id: recording's hot path. A row of integer keys appended
        to the columns here (no row to reuse: a first recording), else ``record``."""
        if index.free or not (index.integral and (start is None or type(start) is int and LOW < start < HIGH)
                              and (end is None or type(end) is int and LOW < end < HIGH)):
            return self.record(rule, index, None, start, end, node, aid=aid)
        row = len(index.nodes)                  # (SensitivityIndex.add and _append, inlined)
        index.starts.append(LOW if start is None else start)
        index.ends.append(HIGH if end is None else end)
        index.alphas.append(aid)
        index.nodes.append(node)
        index.owners.append(rule.number)
        index.kinds.append(SAME)
        index.inbulk.append(0)
        index.size += 1
        handle = index.number << 32 | row
        self._place(node, handle, NEG if start is None else (0, start))
        rule.intervals += 1
        if self._journal is not None:
            index.file_now(row)
            self._journal.record(lambda: self._unrecord(handle))
        return handle

    def record_run(self, rule, node: TraceNode, targets: list, who: list, starts: list, ends: list) -> bool:
        """:meth:`record_same` of each of a leapfrog's operations in order (``who``: the
        participant of each; ``targets[i]``: participant ``i``'s (index, alpha id), None where its
        index is dropped; :func:`lftj.recording.leapfrog_recorded`) at ``node``, which has no
        entry yet: a first recording. The rows are appended to the columns in one loop, and the
        node's entries are their handles in the order of the operations, which is their starts'
        order (a leapfrog's starts never go back). False, with nothing recorded, when a row must go
        another way (inside a transaction, a free row to reuse, a key that is no machine integer).
        (Appending each participant's rows as one run of arrays measured no faster: most runs are
        a few rows.)"""
        if self._journal is not None or node.entries:
            return False
        for target in targets:
            if target is not None and (target[0].free or not target[0].integral):
                return False
        low, high, same = LOW, HIGH, SAME
        for values in (starts, ends):
            for value in values:
                if value is not None and not (type(value) is int and low < value < high):
                    return False
        entries, owner = array("Q"), rule.number
        for w, start, end in zip(who, starts, ends):            # (SensitivityIndex._append, inlined)
            target = targets[w]
            if target is None:
                continue
            index, aid = target
            nodes = index.nodes
            entries.append(index.number << 32 | len(nodes))
            index.starts.append(low if start is None else start)
            index.ends.append(high if end is None else end)
            index.alphas.append(aid)
            nodes.append(node)
            index.owners.append(owner)
            index.kinds.append(same)
            index.inbulk.append(0)
            index.size += 1
        if entries:
            node.entries = entries
            rule.intervals += len(entries)
        self._hints.pop(node.depth, None)
        return True

    def _place(self, node: TraceNode, handle: int, key: tuple) -> None:
        """``handle`` into ``node.entries`` (sorted by region start; ``key`` is its own), right
        after the entry recorded last at the node's depth when it belongs there: a leapfrog records
        in key order, so a build appends and a revisited region inserts its entries one after
        another where its old ones were -- compared with the two keys around the place, kept from
        the last time, instead of a bisection by keys read from the columns. Any removal or restore
        forgets the places (``_hints``: depth -> node, position, its key, the next one's or None)."""
        entries, hints, depth = node.entries, self._hints, node.depth
        hint = hints.get(depth)
        if not entries:
            if entries is None:
                node.entries = array("Q", (handle,))
            else:
                entries.append(handle)
            hints[depth] = (node, 0, key, None)
        elif hint is not None and hint[0] is node and key >= hint[2] and (hint[3] is None or key < hint[3]):
            pos = hint[1] + 1
            entries.insert(pos, handle)
            hints[depth] = (node, pos, key, hint[3])
        else:
            pos = bisect_right(entries, key, key=self.region_start)
            entries.insert(pos, handle)
            hints[depth] = (node, pos, key, self.region_start(entries[pos + 1]) if pos + 1 < len(entries) else None)

    def _unrecord(self, handle: int) -> None:
        self._hints.clear()
        index = self.numbered[handle >> 32]
        row = handle & ROW
        node = index.remove(row)
        node.remove_entry(handle, self.region_start)
        self.rules[index.owners[row]].intervals -= 1
        self.retired.append(handle)
        return node

    def remove(self, handle: int) -> None:
        """Drop a matched or revisited entry (no-op if already gone)."""
        index = self.numbered[handle >> 32]
        if index.nodes[handle & ROW] is None:
            return
        node = self._unrecord(handle)
        if self._journal is not None:
            self._journal.record(lambda: self._rerecord(handle, node))

    def _rerecord(self, handle: int, node) -> None:
        self._hints.clear()
        index = self.numbered[handle >> 32]
        row = handle & ROW
        index.restore(row, node)
        node.add_entry(handle, self.region_start)
        self.rules[index.owners[row]].intervals += 1

    def region_start(self, handle: int) -> tuple:
        index, row = self.numbered[handle >> 32], handle & ROW
        if index.integral and not index.kinds[row] & 0x3F:          # SAME, integers: the common case
            start = index.starts[row]
            return NEG if start == LOW else (0, start)
        return index.region_start(row)

    def region_end(self, handle: int) -> tuple:
        index, row = self.numbered[handle >> 32], handle & ROW
        if index.integral and not index.kinds[row] & 0x3F:          # SAME, integers: the common case
            end = index.ends[row]
            return POS if end == HIGH else (0, end, 1)
        return end_of(index.region(row)[1])

    def within(self, node: TraceNode, lo, hi) -> list:
        """The handles of ``node``'s entries whose region lies inside ``[lo, hi]`` (None:
        unbounded), in order: from the first whose region starts at ``lo`` on (a bisection where
        the node has many entries, else a scan from the first), while they start inside. A
        leapfrog's entry of integer keys is compared in its columns' encoding, without tuples."""
        entries = node.entries
        if not entries:
            return []
        start, end = start_of(lo), end_of(hi)
        first = bisect_left(entries, start, key=self.region_start) if len(entries) > SCAN else 0
        small = (lo is None or type(lo) is int and LOW < lo < HIGH) and (
            hi is None or type(hi) is int and LOW < hi < HIGH)
        low, high = (LOW if lo is None else lo, HIGH if hi is None else hi) if small else (None, None)
        numbered, out = self.numbered, []
        for k in range(first, len(entries)):
            handle = entries[k]
            index, row = numbered[handle >> 32], handle & ROW
            if small and index.integral and not index.kinds[row] & 0x3F:   # SAME, integers
                begin = index.starts[row]
                if begin < low:
                    continue
                if begin > high:
                    break
                if index.ends[row] <= high:
                    out.append(handle)
                continue
            begin = self.region_start(handle)
            if begin < start:
                continue
            if begin >= end:
                break
            if self.region_end(handle) <= end:
                out.append(handle)
        return out

    def entry(self, handle: int):
        """The entry of ``handle`` as values (tests, explain)."""
        return self.numbered[handle >> 32].entry(handle & ROW)

    def set_child(self, node: TraceNode, key, child) -> None:
        old = node.put(key, child)
        if self._journal is not None:
            self._journal.record(lambda: node.pop_child(key) if old is None else node.put(key, old))

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

    def nbytes(self) -> int:
        """The memory of the indices' columns and groups."""
        return sum(index.nbytes() for index in self.indexes.values())

    def row_bytes(self) -> float:
        """The memory of the indices per live row (an entry's share of columns and groups)."""
        return self.nbytes() / max(1, self.size())

    # ------------------------------------------------------------ matching
    def match(self, relation: str, surgeries: dict) -> dict:
        """Regions to revisit, per rule, for the surgeries ``{order: [(level, alpha, key)]}``."""
        regions: dict = defaultdict(list)
        for order, ops in surgeries.items():
            for level, alpha, key in ops:
                index = self.indexes.get((relation, order, level))
                if index is not None:
                    base = index.number << 32
                    for row in index.match(alpha, key):
                        lo, hi = index.region(row)
                        regions[self.rules[index.owners[row]]].append((index.nodes[row], lo, hi))
                        self.remove(base | row)
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
