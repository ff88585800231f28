"""The pages of a version 3 maintainer file that are read when first needed: a paged rule's
trace nodes, the sensitivity entries on them, and the sensitivity groups of every paged rule
(``datalog/workspace.md``, *Reading pages*). A record is checked when it is read: a malformed or
out-of-order one is ``workspace_corrupt`` then (that commit rolls back), not when the file opens.
"""

from __future__ import annotations

from array import array
from functools import partial

from maintenance.persistence.records import LINKS, MALFORMED, bucket, malformed, to_tuple
from maintenance.sensitivity import OTHER, SAME, WHOLE
from maintenance.trace import LazyTraceNode, TraceNode

ROW = (1 << 32) - 1          # a handle's row bits (see maintenance.change_oracle)


class _Stored:
    """The pages of a version 3 maintainer file, read when first needed: a paged rule's trace
    nodes (a :class:`LazyTraceNode` reads its record when its children or entries are first
    used) and the sensitivity groups of every paged rule (a group is read when its index first
    uses it, see ``SensitivityIndex.keep_stored``). The last :data:`CACHED` pages decoded are kept.

    Invariants: a trace node and an entry are each made once (``nodes`` by rule position and node
    id, ``entries`` by entry id: its handle), so an entry is one row whichever way -- its node's
    page or its group's page -- it is reached first; a node's parent is made before it (node ids
    are preorder)."""

    CACHED = 64

    def __init__(self, frames, where, state: dict, by_where: list, rows=None):
        self.frames, self.where, self.by_where = frames, where, by_where
        self.rows = rows                             # checks stored rows (restore's ``rows``)
        self.page = state["page"]
        self.groups_first, self.group_pages = state["groups"]["first"], state["groups"]["pages"]
        if not (type(self.page) is int and self.page >= 1 and type(self.groups_first) is int
                and type(self.group_pages) is int and self.group_pages >= 1 and self.groups_first >= 1
                and self.groups_first + self.group_pages <= len(frames)):
            raise ValueError("the page size or the group pages are not those of the file")
        self.rules: dict[int, tuple] = {}            # position -> (rule, first page, nodes)
        self.links: dict[int, int] = {}              # position -> the first page of its node index
        self.nodes: dict[tuple, TraceNode] = {}      # (position, node id) -> its node
        self.entries: dict[int, int] = {}            # entry id -> its handle (Registry)
        self.cache: dict[int, dict] = {}             # frame -> decoded page
        self.alphas_of: dict[int, list] | None = None

    def attach(self, position: int, rule, record: dict) -> None:
        first, nodes, links = record["first"], record["nodes"], record["links"]
        if not (type(first) is int and type(nodes) is int and type(links) is int and nodes >= 1
                and 0 < first and first + -(-nodes // self.page) <= len(self.frames)
                and 0 < links and links + -(-nodes // LINKS) <= len(self.frames)):
            raise ValueError(f"clause {record['clause']}: its pages are not in the file")
        self.rules[position] = (rule, first, nodes)
        self.links[position] = links
        rule.root = self.nodes[position, 0] = LazyTraceNode.shell(None, None, 0, partial(self._load, position, 0))
        rule.intervals += record["entries"]

    # -- pages ------------------------------------------------------------------------------
    def frame(self, frame: int) -> dict:
        """The decoded record of ``frame`` (one of the last :data:`CACHED` decoded, or decoded now)."""
        page = self.cache.get(frame)
        if page is None:
            if len(self.cache) >= self.CACHED:
                del self.cache[next(iter(self.cache))]       # the oldest read
            page = self.cache[frame] = self.frames.record(frame)
        return page

    def _record(self, position: int, node: int) -> list:
        _, first, count = self.rules[position]
        if not 0 <= node < count:
            raise ValueError(f"node {node} of rule {position} is not stored")
        return self.frame(first + node // self.page)["nodes"][node % self.page]

    # -- trace nodes ------------------------------------------------------------------------
    def node(self, position: int, node: int) -> TraceNode:
        """Trace node ``node`` of the rule at ``position``, a shell until its record is needed;
        its ancestors made first, from the node index (``[parent, key]`` of 4,096 nodes a page:
        the 343k entries of one group name 133k nodes, whose full pages are a third of the
        file)."""
        found = self.nodes.get((position, node))
        if found is None:
            count = self.rules[position][2]
            if not 0 < node < count:
                raise ValueError(f"node {node} of rule {position} is not stored")
            parent, key = self.frame(self.links[position] + node // LINKS)["links"][node % LINKS]
            if not (type(parent) is int and 0 <= parent < node):       # preorder: parents first
                raise ValueError(f"node {node} of rule {position} has no parent before it")
            above = self.node(position, parent)
            found = self.nodes[position, node] = LazyTraceNode.shell(
                above, to_tuple(key), above.depth + 1, partial(self._load, position, node))
        return found

    def _load(self, position: int, number: int, node: TraceNode) -> tuple:
        """``node``'s children (shells), leaves and entries from its record, in stored order."""
        try:
            _, _, kids, leaves, stored = self._record(position, number)
            rule = self.rules[position][0]
            children, keys = [], []
            for key, child in kids:
                key = to_tuple(key)
                if keys and not keys[-1] < key:
                    raise ValueError("trace children out of order")
                shell = self.nodes.get((position, child))
                if shell is None:
                    shell = self.nodes[position, child] = LazyTraceNode.shell(
                        node, key, node.depth + 1, partial(self._load, position, child))
                elif shell.parent is not node or shell.key != key:     # made from the node index
                    raise ValueError(f"node {child} of rule {position}: its page and the index differ")
                children.append(shell)
                keys.append(key)
            for key, head in leaves:
                key = to_tuple(key)
                if keys and not keys[-1] < key:
                    raise ValueError("trace children out of order")
                children.append(tuple(head))
                keys.append(key)
            if leaves and self.rows is not None:          # heads become rows of the head relation
                self.rows.check_rows(rule.head_relation, children[len(kids):], self.where,
                                     f"trace node {number} of rule {position}")
            entries, before = array("Q"), None
            for eid, where, alpha, start, end, lo, hi in stored:
                handle = self._entry(rule, eid, where, alpha, start, end, node, lo, hi)
                lo = to_tuple(lo)
                if entries and before is not None and (lo is None or lo < before):
                    raise ValueError("sensitivity entries out of order")
                entries.append(handle)
                before = lo
        except MALFORMED as exc:
            raise malformed(self.where, exc) from None
        return (children or None), (keys or None), (entries or None)

    def _entry(self, rule, eid: int, where: int, alpha, start, end, node, lo, hi) -> int:
        """The handle of stored entry ``eid``, its row made now (on disk: in no group yet) if it
        was not."""
        index = self.by_where[where]
        handle = self.entries.get(eid)
        alpha = tuple(alpha)
        if handle is None:
            start, end, lo, hi = to_tuple(start), to_tuple(end), to_tuple(lo), to_tuple(hi)
            if type(lo) is type(start) and type(hi) is type(end) and lo == start and hi == end:
                kind, region = SAME, None
            elif lo is None and hi is None:
                kind, region = WHOLE, None
            else:
                kind, region = OTHER, (lo, hi)
            row = index.add_stored(alpha, start, end, node, rule.number, kind, region)
            handle = self.entries[eid] = index.number << 32 | row
        elif handle >> 32 != index.number or index.alpha_list[index.alphas[handle & ROW]] != alpha or (
                index.nodes[handle & ROW] is not None and index.nodes[handle & ROW] is not node):
            raise ValueError(f"entry {eid}: its node's page and its group's page differ")
        return handle

    # -- sensitivity groups -----------------------------------------------------------------
    def _rows(self, where: int, alpha: tuple) -> list:
        """The stored rows of group ``(where, alpha)``: [rule position, entry id, node, start,
        end, lo, hi] each."""
        page = self.frame(self.groups_first + bucket(where, alpha, self.group_pages))["groups"]
        for stored_where, stored_alpha, rows in page:
            if stored_where == where and tuple(stored_alpha) == alpha:
                if len({row[1] for row in rows}) != len(rows):
                    raise ValueError(f"an entry id repeats in group {alpha} of index {where}")
                return rows
        return []

    def group(self, where: int, alpha: tuple) -> list[int]:
        """The rows of the live entries of group ``(where, alpha)`` of the paged rules."""
        try:
            index, out = self.by_where[where], []
            for position, eid, node, start, end, lo, hi in self._rows(where, alpha):
                row = self._entry(self.rules[position][0], eid, where, alpha, start, end,
                                  self.node(position, node), lo, hi) & ROW
                if index.nodes[row] is not None:
                    out.append(row)
            return out
        except MALFORMED as exc:
            raise malformed(self.where, exc) from None

    def alphas(self, where: int) -> list[tuple]:
        """Every stored group's ``alpha`` under ``where`` (every group page read once)."""
        if self.alphas_of is None:
            self.alphas_of = {}
            for frame in range(self.groups_first, self.groups_first + self.group_pages):
                for stored_where, alpha, _ in self.frame(frame)["groups"]:
                    self.alphas_of.setdefault(stored_where, []).append(tuple(alpha))
        return self.alphas_of.get(where, [])


class _StoredGroups:
    """One sensitivity index's view of the stored groups (``SensitivityIndex.keep_stored``). It
    holds nothing of its own: every read goes to the one :class:`_Stored`, so that an entry stays
    one object."""

    def __init__(self, stored: _Stored, where: int):
        self.stored, self.where = stored, where

    def rows(self, alpha: tuple) -> list[int]:
        return self.stored.group(self.where, alpha)

    def alphas(self) -> list[tuple]:
        return self.stored.alphas(self.where)
