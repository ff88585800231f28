"""Sensitivity indices (§4.1-4.2): where the recorded trace read each trie level.

One :class:`SensitivityIndex` per (relation, index order, level). An entry says: the trace, at
the trie node under ``alpha`` (the atom's keys at the earlier levels), was sensitive to changes
of this level's keys in ``[start, end]``; its region is where to revisit the rule when that
happens (a trace node and a key interval: the paper's ChangeOracle contribution). The other key
variables bound before this level are the trace node's binding.

Columnar: an entry is a row number of the index's columns, not an object --

  * ``starts``, ``ends``: the interval, encoded: while every key of the level is an integer in
    ``(LOW, HIGH)`` an ``array('q')`` with an unbounded start as ``LOW`` and an unbounded end as
    ``HIGH`` (``integral``); after the first other key, lists of ``start_of``/``end_of`` tuples;
  * ``alphas``: the interned ``alpha`` (``alpha_list[id]``; one tuple per distinct alpha);
  * ``nodes``: the trace node of the region (None: the row is dead or free);
  * ``owners``: the rule (``Registry.rules`` position), ``kinds``: the region's interval --
    :data:`SAME` as the entry's (what a leapfrog records), :data:`WHOLE` (the whole node: a
    constant's lookup), or :data:`OTHER` (kept in the ``regions`` dict: a filter's lookup).

About 31 bytes a row, plus 4 in its group (8 in a block) and 8 in its trace node's ``entries``;
the object per entry this replaces, with its region and alpha tuples, took 208. A row freed
after its transaction (``release``) is reused by the next ``add``.

Rows under one ``alpha`` are few in most traces (a trie node's keys met by one leapfrog), so a
group starts as an ``array('I')`` of rows scanned in full by a match, kept ascending: a removed
row is found by bisection (``array.remove`` makes an int object per element it passes, 3.5 us
for 40 rows, where a list of entries compared identities); past :data:`SMALL` rows it becomes a
:class:`maintenance.stabbing.StabbingGroup` (static interval trees built in bulk, see there).
The first filing of a first recording's rows puts every small group into one array, ``bulk``,
sorted by alpha id (``bulk_at``: where each id's rows start), instead of an array and a dict slot
per group; rows added later go to groups in ``trees`` beside it (see :meth:`_file_bulk`).

A workspace's stored maintainer leaves the rows on disk (``keep_stored``): a group is read when
a change is matched against it. Adding a row to a group, or removing one, does not read it. A
stored row made before its group is read (its trace node was read) is :data:`ON_DISK` until the
group is read; a removed one is left out then.

>>> index = SensitivityIndex()
>>> a = index.add((), None, 0, "n1", 0); b = index.add((), 6, None, "n2", 0); c = index.add((), 2, 4, "n3", 0)
>>> [index.nodes[r] for r in index.match((), 8)], [index.nodes[r] for r in index.match((), 3)]
(['n2'], ['n3'])
>>> index.remove(b); index.match((), 8), len(index)
'n2'
([], 2)
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from itertools import groupby
from typing import NamedTuple

from maintenance.stabbing import HIGH, LOW, NEG, POS, StabbingGroup, end_of, start_of

__all__ = ["LOW", "HIGH", "NEG", "POS", "end_of", "start_of", "SensitivityIndex", "Entry"]

SMALL = 256      # rows under one alpha kept in an array; more go to a StabbingGroup
SAME, WHOLE, OTHER = 0, 1, 2    # the region's interval: the entry's, the node's, in ``regions``
ON_DISK = 0x80   # kind flag: a stored row no group holds yet (its group is not read)
STORED = 0x40    # kind flag: a row read from a workspace (never reused: the file names it)
FREE = 0x3F      # the kind of a released row


class Entry(NamedTuple):
    """One row as values (tests, explain): ``region`` is (node, lo, hi)."""

    alpha: tuple
    start: object
    end: object
    region: tuple
    alive: bool


class SensitivityIndex:
    """The sensitivity intervals recorded at one (relation, index order, level), grouped by
    ``alpha``. Invariants: a row means "the trace read this range of this trie level under
    these earlier keys"; it is in its group (or still on disk, see ``keep_stored``) exactly while
    its node is set; ``size`` counts the live rows; a matched row is removed, and the
    maintenance rule records afresh what its revisited region reads."""

    def __init__(self, number: int = 0) -> None:
        self.number = number                 # its position in the Registry (a handle's high bits)
        self.integral = True
        self.starts: array | list = array("q")
        self.ends: array | list = array("q")
        self.alphas = array("I")
        self.nodes: list = []
        self.owners = array("H")
        self.kinds = bytearray()
        self.regions: dict[int, tuple] = {}  # row -> (lo, hi) of an OTHER region
        self.alpha_ids: dict[tuple, int] = {}
        self.alpha_list: list[tuple] = []
        self.trees: dict[int, array | StabbingGroup] = {}     # alpha id -> its rows (not in bulk)
        self.bulk = array("I")               # the first filing's small groups, rows by alpha id
        self.bulk_at = array("I")            # alpha id -> its first position in ``bulk`` (and id + 1)
        self.inbulk = bytearray()            # row -> 1 while ``bulk`` lists it (not freed since)
        self.free = array("I")
        self.filed = 0                       # rows from here on are not in their groups yet
        self.size = 0
        self.stored = None                   # rows not yet in ``trees`` (see ``keep_stored``)
        self.fetched: set = set()            # the alpha ids whose stored rows are in ``trees``

    def __len__(self) -> int:
        return self.size

    # ------------------------------------------------------------ encoding
    def _interval(self, start, end) -> tuple:
        """``[start, end]`` as the columns hold it (switching them to tuples if need be)."""
        if self.integral:
            if (start is None or type(start) is int and LOW < start < HIGH) and (
                    end is None or type(end) is int and LOW < end < HIGH):
                return (LOW if start is None else start), (HIGH if end is None else end)
            self._generic()
        return (NEG if start is None else (0, start)), (POS if end is None else (0, end, 1))

    def point(self, key):
        """``key`` as the columns compare it."""
        if self.integral:
            if type(key) is int and LOW < key < HIGH:
                return key
            self._generic()
        return (0, key)

    def _generic(self) -> None:
        """A key that is not a machine integer arrived: every column becomes tuples."""
        self.integral = False
        self.starts = [NEG if s == LOW else (0, s) for s in self.starts]
        self.ends = [POS if e == HIGH else (0, e, 1) for e in self.ends]
        for group in self.trees.values():
            if type(group) is StabbingGroup:
                group.rebuild(self)

    def start(self, row: int):
        s = self.starts[row]
        return (None if s == LOW else s) if self.integral else (None if s == NEG else s[1])

    def end(self, row: int):
        e = self.ends[row]
        return (None if e == HIGH else e) if self.integral else (None if e == POS else e[1])

    def region(self, row: int) -> tuple:
        """(lo, hi): the region's interval of the node."""
        kind = self.kinds[row] & 0x3F
        if kind == SAME:
            return self.start(row), self.end(row)
        if kind == WHOLE:
            return None, None
        return self.regions[row]

    def region_start(self, row: int) -> tuple:
        """The region's start, encoded as ``start_of`` (a trace node sorts its entries by it)."""
        kind = self.kinds[row] & 0x3F
        if kind == SAME:
            s = self.starts[row]
            return (NEG if s == LOW else (0, s)) if self.integral else s
        if kind == WHOLE:
            return NEG
        return start_of(self.regions[row][0])

    def entry(self, row: int) -> Entry:
        node = self.nodes[row]
        return Entry(self.alpha_list[self.alphas[row]], self.start(row), self.end(row),
                     (node, *self.region(row)), node is not None)

    def alpha_id(self, alpha: tuple) -> int:
        aid = self.alpha_ids.get(alpha)
        if aid is None:
            aid = self.alpha_ids[alpha] = len(self.alpha_list)
            self.alpha_list.append(alpha)
        return aid

    # ------------------------------------------------------------ rows
    def add(self, alpha: tuple, start, end, node, owner: int, kind: int = SAME, region=None, aid=None) -> int:
        """A new live row; ``region``: (lo, hi) of an OTHER one; ``aid``: ``alpha``'s id, if the
        caller has it. A row appended past ``filed`` is filed in its group with the others at the
        next query (:meth:`_file`, in bulk: recording a trace appends millions before any query); a
        reused row at once."""
        if self.integral and (start is None or type(start) is int and LOW < start < HIGH) and (
                end is None or type(end) is int and LOW < end < HIGH):
            s, e = (LOW if start is None else start), (HIGH if end is None else end)
        else:
            s, e = self._interval(start, end)
        if aid is None:
            aid = self.alpha_ids.get(alpha)
            if aid is None:
                aid = self.alpha_id(alpha)
        self.size += 1
        if self.free:
            return self._reuse(s, e, aid, node, owner, kind, region)
        return self._append(s, e, aid, node, owner, kind, region)

    def _append(self, s, e, aid, node, owner, kind, region) -> int:
        """A new row at the end of the columns."""
        row = len(self.nodes)
        self.starts.append(s)
        self.ends.append(e)
        self.alphas.append(aid)
        self.nodes.append(node)
        self.owners.append(owner)
        self.kinds.append(kind)
        self.inbulk.append(0)
        if kind & 0x3F == OTHER:                    # (a stored row's kind carries flags)
            self.regions[row] = region
        return row

    def _reuse(self, s, e, aid, node, owner, kind, region) -> int:
        row = self.free.pop()
        self.starts[row], self.ends[row], self.alphas[row] = s, e, aid
        self.nodes[row], self.owners[row], self.kinds[row] = node, owner, kind
        if kind & 0x3F == OTHER:
            self.regions[row] = region
        if row < self.filed:
            self._file_row(row, aid)
        return row

    def file_now(self, row: int) -> None:
        """The row just appended into its group at once when no other waits (a transaction's row:
        filing it at the next query would cost a sort and a grouping for a handful of rows)."""
        if row == self.filed:
            self.filed = row + 1
            self._insert(row)

    def _row(self, alpha, start, end, node, owner, kind, region) -> int:
        """A row in no group (a stored one)."""
        (s, e), aid = self._interval(start, end), self.alpha_id(alpha)
        return self._append(s, e, aid, node, owner, kind, region)

    def file(self) -> None:
        self._file()

    def _file(self) -> None:
        """The live rows appended since the last query (not stored ones) into their groups: sorted
        by alpha, each group's run added at once."""
        start, end = self.filed, len(self.nodes)
        if start == end:
            return
        nodes, kinds, alphas, trees = self.nodes, self.kinds, self.alphas, self.trees
        rows = [r for r in range(start, end) if nodes[r] is not None and not kinds[r] & ON_DISK]
        rows.sort(key=alphas.__getitem__)
        if start == 0 and not trees and self.stored is None:
            self._file_bulk(rows)
            return
        for aid, run in groupby(rows, alphas.__getitem__):
            group = trees.get(aid)
            if group is None:
                group = trees[aid] = array("I", run)
            elif type(group) is array:
                run = array("I", run)
                if group and run and run[0] < group[-1]:      # (rows appended since are all past
                    run.extend(group)                         # the filed ones: not expected)
                    group = trees[aid] = array("I", sorted(run))
                else:
                    group.extend(run)
            else:
                group.extend(array("I", run))
                continue
            if len(group) > SMALL:
                trees[aid] = _grouped(group)
        self.filed = end

    def _file_bulk(self, rows: list) -> None:
        """The first filing (a first recording's rows, sorted by alpha id): the groups of at most
        :data:`SMALL` rows go into ``bulk``, one array for all of them, instead of an array each
        (64 bytes a group and its dict slot, where join3's groups hold 2-6 rows: 28 of 270 bytes
        per interval); larger groups become stabbing groups. A row of ``bulk`` is matched while its
        node is set and ``inbulk`` holds it (``release`` clears it: a reused row is filed anew)."""
        alphas, trees, inbulk = self.alphas, self.trees, self.inbulk
        bulk, at = array("I"), array("I", bytes(4 * (len(self.alpha_list) + 1)))
        for aid, run in groupby(rows, alphas.__getitem__):
            run = array("I", run)
            if len(run) > SMALL:
                trees[aid] = _grouped(run)
                continue
            at[aid] = len(bulk)
            bulk.extend(run)
            for r in run:
                inbulk[r] = 1
            at[aid + 1] = len(bulk)
        for aid in range(1, len(at)):               # an id with no small group: empty, at its end
            if at[aid] < at[aid - 1]:
                at[aid] = at[aid - 1]
        self.bulk, self.bulk_at = bulk, at
        self.filed = len(self.nodes)

    def _bulk_rows(self, aid: int):
        """The rows ``bulk`` lists under ``aid`` (live or not: see ``inbulk`` and ``nodes``)."""
        at = self.bulk_at
        if aid + 1 >= len(at):
            return ()
        return self.bulk[at[aid]:at[aid + 1]]

    def _insert(self, row: int) -> None:
        self._file_row(row, self.alphas[row])

    def _file_row(self, row: int, aid: int) -> None:
        """The row into the group of its alpha id (a sorted array while small, then grouped)."""
        group = self.trees.get(aid)                     # (stored rows may still be on disk)
        if group is None:
            self.trees[aid] = group = array("I", (row,))
        elif type(group) is array:
            insort(group, row)
        else:
            group.add(row)
            return
        if len(group) > SMALL:
            self.trees[aid] = _grouped(group + self._unbulk(aid))

    def _unbulk(self, aid: int) -> array:
        """The live rows ``bulk`` lists under ``aid``, which it lists no more (they join a group)."""
        nodes, inbulk, out = self.nodes, self.inbulk, array("I")
        for r in self._bulk_rows(aid):
            if inbulk[r] and self.alphas[r] == aid:
                inbulk[r] = 0
                if nodes[r] is not None:
                    out.append(r)
        return out

    def remove(self, row: int):
        """The row stops answering; returns its node (for ``restore``), None if it was dead."""
        node = self.nodes[row]
        if node is None:
            return None
        if row < self.filed and not self.kinds[row] & ON_DISK and not self.inbulk[row]:
            aid = self.alphas[row]                      # (on disk, not filed yet or in bulk: left out)
            group = self.trees[aid]
            if type(group) is array:
                del group[bisect_left(group, row)]
            else:
                group.remove(row, self)
            if not group:
                del self.trees[aid]
        self.nodes[row] = None
        self.size -= 1
        return node

    def restore(self, row: int, node) -> None:
        """Undo ``remove`` (rollback)."""
        if self.nodes[row] is not None:
            return
        self.nodes[row] = node
        if row >= self.filed or self.inbulk[row] or self.kinds[row] & ON_DISK and self.alphas[row] not in self.fetched:
            pass                                        # filed at the next query, in bulk, or still on disk
        else:
            self.kinds[row] &= ~ON_DISK & 0xFF
            self._insert(row)
        self.size += 1

    def release(self, row: int) -> None:
        """A dead row no transaction can restore any more is reused by a later ``add``."""
        kind = self.kinds[row]
        if self.nodes[row] is None and kind != FREE and not kind & STORED:
            self.kinds[row] = FREE
            self.inbulk[row] = 0
            self.regions.pop(row, None)
            self.free.append(row)

    # ------------------------------------------------------------ stored rows
    def keep_stored(self, stored, count: int) -> None:
        """``count`` more rows are on disk (a workspace's stored maintainer): ``stored.rows(
        alpha)`` gives the live ones under ``alpha`` (rows of this index, made by
        :meth:`add_stored` if they were not made before), called the first time a change is
        matched under ``alpha`` (or every row is listed); ``stored.alphas()`` names every stored
        group."""
        self.stored = stored
        self.size += count

    def add_stored(self, alpha: tuple, start, end, node, owner: int, kind: int, region=None) -> int:
        """A row read from a workspace, counted by ``keep_stored``, in no group until its group
        is read (``ON_DISK``)."""
        return self._row(alpha, start, end, node, owner, kind | STORED | ON_DISK, region)

    def _group(self, alpha: tuple):
        """The group under ``alpha``, the rows appended since the last query filed and its stored
        rows read first if they are not yet. (Reading a group appends its rows not made before,
        each ON_DISK until filed here: none is left for :meth:`_file`.)"""
        self._file()
        aid = self.alpha_ids.get(alpha)
        if self.stored is not None:
            if aid is None:
                aid = self.alpha_id(alpha)
            if aid not in self.fetched:
                rows = self.stored.rows(alpha)          # (a read that fails changes nothing here:
                for row in rows:                        # the next use reads the group again)
                    self.kinds[row] &= ~ON_DISK & 0xFF
                    self._insert(row)
                self.fetched.add(aid)
                self.filed = len(self.nodes)
        return self.trees.get(aid)

    # ------------------------------------------------------------ queries
    def match(self, alpha: tuple, key) -> list[int]:
        """The rows under ``alpha`` whose interval holds ``key`` (the caller removes them)."""
        group = self._group(alpha)
        aid = self.alpha_ids.get(alpha) if self.bulk else None
        listed = self._bulk_rows(aid) if aid is not None else ()
        if group is None and not listed:
            return []
        point = self.point(key)
        starts, ends = self.starts, self.ends
        if listed:
            nodes, inbulk = self.nodes, self.inbulk
            out = [r for r in listed if starts[r] <= point <= ends[r] and inbulk[r] and nodes[r] is not None]
        else:
            out = []
        if group is None:
            return out
        if type(group) is array:
            return out + [r for r in group if starts[r] <= point <= ends[r]]
        return out + group.stab(point, self)

    def rows(self) -> list[int]:
        """Every live row (every stored group is read)."""
        self._file()
        if self.stored is not None:
            for alpha in self.stored.alphas():
                self._group(alpha)
        nodes, inbulk = self.nodes, self.inbulk
        listed = [r for r in self.bulk if inbulk[r] and nodes[r] is not None]
        return listed + [r for group in self.trees.values() for r in (group if type(group) is array else group.rows())]

    def intervals(self) -> list[tuple]:
        """Every entry as (alpha, start, end), sorted: for tests and explain."""
        out = sorted((self.alpha_list[self.alphas[r]], self._start_key(r), self._end_key(r)) for r in self.rows())
        return [(alpha, _decode(begin), _decode(end)) for alpha, begin, end in out]

    def _start_key(self, row):
        return start_of(self.start(row))

    def _end_key(self, row):
        return end_of(self.end(row))

    def nbytes(self) -> int:
        """The memory of the columns and groups (the trace nodes' share not counted)."""
        columns = sum(_bytes(c) for c in (self.starts, self.ends, self.alphas, self.owners, self.free))
        columns += len(self.kinds) + len(self.inbulk) + _bytes(self.bulk) + _bytes(self.bulk_at) + 8 * len(self.nodes) + 100 * (len(self.regions) + len(self.alpha_list))
        groups = 0
        for group in self.trees.values():
            if type(group) is array:
                groups += 64 + _bytes(group)
            else:
                groups += 64 + _bytes(group.pending) + sum(
                    _bytes(b.rows) + _bytes(b.starts) + len(b.dead) + _bytes(b.top) for b in group.blocks)
        return columns + groups + 100 * len(self.trees)


def _bytes(column) -> int:
    return column.itemsize * len(column) if type(column) is array else 8 * len(column)


def _grouped(rows) -> StabbingGroup:
    group = StabbingGroup()
    group.extend(rows)
    return group


def _decode(point):
    return point[1] if point[0] == 0 else ("-inf" if point == NEG else "+inf")
