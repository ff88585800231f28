"""Sensitivity indices (§4.1-4.2): where the recorded trace read each trie level.

One :class:`SensitivityIndex` per (relation, index order, level). An entry
says: the trace, at the trie node under ``alpha`` (the atom's keys at the
earlier levels), was sensitive to changes of this level's keys in
``[start, end]``; ``region`` is where to revisit the rule when that happens
(a trace node and a key interval: the paper's ChangeOracle contribution). The
other key variables bound before this level are the trace node's binding.

Entries under one ``alpha`` are few in most traces (a trie node's keys met by
one leapfrog), so a group starts as a plain list scanned in full; past
:data:`SMALL` entries it becomes a :class:`maintenance.stabbing.StabbingGroup`,
static interval trees built in bulk (see there).

A workspace's stored maintainer leaves the entries on disk (``keep_stored``): a group is read
when a change is matched against it. Adding an entry to a group, or removing one, does not
read it: an added entry waits in ``trees`` beside the stored ones, a removed stored entry is
marked dead (its ``slot`` is :data:`ON_DISK` while no group holds it) and left out when the
group is read. So a commit that records new sensitivity under ``alpha``, or drops old, costs
nothing more for a group of 300,000 entries than for one of three. A large stored group is
read as a :class:`maintenance.stabbing.LazyBlock`: its intervals indexed as stored, each entry
made when a match first reaches it.

>>> index = SensitivityIndex()
>>> a = index.add((), None, 0, "r1"); b = index.add((), 6, None, "r2"); c = index.add((), 2, 4, "r3")
>>> [e.region for e in index.match((), 8)], [e.region for e in index.match((), 3)]
(['r2'], ['r3'])
>>> index.remove(b); index.match((), 8), len(index)
([], 2)
"""

from __future__ import annotations

from maintenance.stabbing import NEG, StabbingGroup, end_of, start_of

SMALL = 256      # entries under one alpha kept in a list; more go to a StabbingGroup
ON_DISK = "on disk"   # the ``slot`` of a stored entry no group holds (see the module text)


class Entry:
    """One sensitivity interval ``[start, end]`` (None: infinite); ``alive`` turns False when it
    is matched or dropped; ``slot`` is where its group keeps it (see StabbingGroup)."""

    __slots__ = ("index", "alpha", "start", "end", "slot", "region", "owner", "alive")

    def __init__(self, index, alpha, start, end, region, owner=None):
        self.index, self.alpha, self.start, self.end = index, alpha, start, end
        self.region, self.owner = region, owner
        self.slot = None
        self.alive = True

    def holds(self, key) -> bool:
        return (self.start is None or self.start <= key) and (self.end is None or key <= self.end)


class SensitivityIndex:
    """The sensitivity intervals recorded at one (relation, index order, level), grouped by
    ``alpha``. Invariants: an entry means "the trace read this range of this trie level under
    these earlier keys"; it is in its group (or still on disk, see ``keep_stored``) exactly while
    ``alive``; ``size`` counts the live entries; a matched entry is removed, and the maintenance
    rule records afresh what its revisited region reads."""

    def __init__(self) -> None:
        self.trees: dict[tuple, list | StabbingGroup] = {}     # alpha -> its entries
        self.size = 0
        self.stored = None           # entries not yet in ``trees`` (see ``keep_stored``)
        self.fetched: set = set()    # the alphas whose stored entries are in ``trees``

    def __len__(self) -> int:
        return self.size

    def keep_stored(self, stored, count: int) -> None:
        """``count`` more entries are on disk (a workspace's stored maintainer): ``stored.entries(
        alpha)`` gives the live ones under ``alpha``, each the same object as wherever else it is
        read and, until a group holds it, with ``slot`` :data:`ON_DISK`. It is called the first
        time a change is matched under ``alpha`` (or every entry is listed) -- so a group no
        change reaches is never read; ``stored.alphas()`` names every stored group;
        ``stored.block(alpha)`` gives a large group as a LazyBlock instead (None: read
        ``entries``)."""
        self.stored = stored
        self.size += count

    def _group(self, alpha: tuple):
        """The group under ``alpha``, its stored entries read first if they are not yet."""
        if self.stored is not None and alpha not in self.fetched:
            block = self.stored.block(alpha)            # (a read that fails changes nothing here:
            if block is not None:                       # the next use reads the group again)
                self._adopt(alpha, block)
            else:
                entries = self.stored.entries(alpha)
                if entries:
                    self.load(alpha, entries)
                    self.size -= len(entries)           # counted by keep_stored already
            self.fetched.add(alpha)
        return self.trees.get(alpha)

    def _adopt(self, alpha: tuple, block) -> None:
        """A stored group read as a block joins the entries added beside it (counted already)."""
        group = self.trees.get(alpha)
        if type(group) is not StabbingGroup:
            group, added = StabbingGroup(), group or []
            group.extend(added)
            self.trees[alpha] = group
        group.adopt(block)

    def add(self, alpha: tuple, start, end, region, owner=None) -> Entry:
        entry = Entry(self, alpha, start, end, region, owner)
        self._insert(entry)
        self.size += 1
        return entry

    def _insert(self, entry: Entry) -> None:
        group = self.trees.get(entry.alpha)              # (stored entries may still be on disk)
        if group is None:
            entry.slot = None
            self.trees[entry.alpha] = [entry]
        elif type(group) is list:
            entry.slot = None
            group.append(entry)
            if len(group) > SMALL:
                self.trees[entry.alpha] = _grouped(group)
        else:
            group.add(entry)

    def remove(self, entry: Entry) -> None:
        if not entry.alive:
            return
        if entry.slot is not ON_DISK:                   # (on disk: left out when it is read)
            group = self.trees[entry.alpha]
            group.remove(entry)
            if not group:
                del self.trees[entry.alpha]
        entry.alive = False
        self.size -= 1

    def load(self, alpha: tuple, entries: list[Entry]) -> None:
        """Add many entries of one ``alpha`` at once (a workspace restoring a stored maintainer):
        the group they would form one by one."""
        if not entries:
            return
        group = self.trees.get(alpha)
        if type(group) is StabbingGroup:
            group.extend(entries)
        else:
            for entry in entries:
                entry.slot = None
            items = (group or []) + entries
            self.trees[alpha] = items if len(items) <= SMALL else _grouped(items)
        self.size += len(entries)

    def restore(self, entry: Entry) -> None:
        """Undo ``remove`` (rollback)."""
        if entry.alive:
            return
        if entry.slot is ON_DISK and entry.alpha not in self.fetched:
            entry.alive = True                          # still on disk: read with its group
        else:
            self._insert(entry)
            entry.alive = True
        self.size += 1

    def match(self, alpha: tuple, key) -> list[Entry]:
        """The entries under ``alpha`` whose interval holds ``key`` (the caller removes them)."""
        group = self._group(alpha)
        if group is None:
            return []
        if type(group) is list:
            return [entry for entry in group if entry.holds(key)]
        return group.stab((0, key))

    def intervals(self) -> list[tuple]:
        """Every entry as (alpha, start, end), sorted: for tests and explain (every stored group
        is read)."""
        if self.stored is not None:
            for alpha in self.stored.alphas():
                self._group(alpha)
        entries = [e for group in self.trees.values() for e in group]
        out = sorted((e.alpha, start_of(e.start), end_of(e.end)) for e in entries)
        return [(alpha, _decode(begin), _decode(end)) for alpha, begin, end in out]


def _grouped(entries: list[Entry]) -> StabbingGroup:
    group = StabbingGroup()
    group.extend(entries)
    return group


def _decode(point):
    return point[1] if point[0] == 0 else ("-inf" if point == NEG else "+inf")
