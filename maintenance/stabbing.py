"""Stabbing queries over many closed intervals: the interval trees of the sensitivity indices.

A :class:`StabbingGroup` holds the sensitivity entries under one ``alpha`` once there are too
many to scan. It answers ``stab(p)``: every live entry whose interval ``[start, end]`` holds the
point ``p``. Endpoints are encoded (:func:`start_of`, :func:`end_of`) so that infinite ends compare like
any other key.

Layout: the logarithmic method of Bentley and Saxe ("Decomposable searching problems I", 1980).
Entries arrive in ``pending``, a list scanned in full; at a query, a pending list grown past
:data:`PENDING` becomes a :class:`Block`, merged with the smaller blocks so that block sizes at
least double from the newest to the oldest (O(log n) blocks, each entry rebuilt O(log n) times).
Recording a trace adds every entry before the first query, and restoring a workspace adds them
all at once (:meth:`StabbingGroup.extend`): one block is built, at the first query of the group,
so a group no change reaches is never built.

A block is a static interval tree: entries sorted by start, and over them an implicit binary
tree (heap order) keeping each subtree's greatest end. The entries holding ``p`` are those among
the first ``bisect_right(starts, p)`` whose end is at least ``p``; a descent visits only subtrees
whose greatest end is at least ``p``, each of which holds an answer: O(log n) per answer. Removing
an entry sets its leaf to :data:`DEAD` and recomputes the maxima above it.

Why not the ``intervaltree`` package, which the indices used before: building its tree compares
``Interval`` objects in Python (5.9M ``__cmp__`` calls for the 343k intervals of one group, 11 s
of a 25 s workspace open at 1M tuples), and every insert updates a ``SortedDict`` of boundaries.
Here sorting is by tuple keys in C and a block is a few flat lists.

>>> class E:
...     def __init__(self, s, e): self.start, self.end, self.slot, self.alive = s, e, None, True
>>> g = StabbingGroup()
>>> es = [E(None, 3), E(2, 5), E(7, None), E(4, 4)]
>>> for e in es: g.add(e)
>>> g.build()                                   # (a query builds once PENDING are waiting)
>>> sorted((e.start, e.end) for e in g.stab((0, 4)))
[(2, 5), (4, 4)]
>>> g.remove(es[1]); [(e.start, e.end) for e in g.stab((0, 4))], len(g)
([(4, 4)], 3)
"""

from __future__ import annotations

from bisect import bisect_right

NEG, POS = (-1,), (1,)
DEAD = (-2,)          # the "greatest end" of a removed entry's leaf: below every point


def start_of(v) -> tuple:
    """A start as a key comparable with any point ``(0, key)``: None (unbounded) is below all."""
    return NEG if v is None else (0, v)


def end_of(v) -> tuple:
    """An end: ``(0, v, 1)`` is above the point ``(0, v)`` and below ``(0, w)`` for ``w > v``."""
    return POS if v is None else (0, v, 1)


PENDING = 64          # entries a query scans unsorted before they are built into a block


class Block:
    """Entries sorted by start, with the greatest end of every subtree of an implicit binary
    tree over them: ``top[1]`` is the root, ``top[i]`` has children ``2i`` and ``2i + 1``, and
    the leaf of entry ``j`` is ``top[width + j]``."""

    __slots__ = ("entries", "starts", "top", "width", "live")

    def __init__(self, entries: list) -> None:
        keyed = sorted([(NEG if e.start is None else (0, e.start), e) for e in entries], key=_first)
        self._index([s for s, _ in keyed], [e for _, e in keyed])
        for j, entry in enumerate(self.entries):
            entry.slot = (self, j)

    def _index(self, starts: list, entries: list, ends: list | None = None) -> None:
        """The tree over ``entries`` sorted by their ``starts``; ``ends``: their encoded ends,
        when the entries are not all made (see :class:`LazyBlock`)."""
        if ends is None:
            ends = [POS if e.end is None else (0, e.end, 1) for e in entries]
        width = 1
        while width < len(entries):
            width *= 2
        top = [DEAD] * width + ends + [DEAD] * (width - len(entries))
        first = width // 2
        while first:                                   # a level at a time, its maxima in C
            top[first:2 * first] = map(max, top[2 * first:4 * first:2], top[2 * first + 1:4 * first:2])
            first //= 2
        self.entries, self.starts, self.top, self.width, self.live = entries, starts, top, width, len(entries)

    def stab(self, point: tuple, out: list) -> None:
        """Append the live entries holding ``point`` to ``out``."""
        entries = self.entries
        out.extend(entries[j] for j in self._held(point))

    def _held(self, point: tuple) -> list[int]:
        """The positions of the live entries holding ``point``."""
        count = bisect_right(self.starts, point)
        if not count:
            return []
        top, width, held = self.top, self.width, []
        stack = [(1, 0, width)]                       # (node, first leaf, leaves under it)
        while stack:
            node, first, span = stack.pop()
            if first >= count or top[node] < point:
                continue
            if node >= width:
                held.append(node - width)
                continue
            half = span // 2
            stack.append((2 * node + 1, first + half, half))
            stack.append((2 * node, first, half))
        return held

    def kill(self, j: int) -> None:
        """Entry ``j`` no longer answers: its leaf is DEAD and the maxima above it are recomputed."""
        top, node = self.top, self.width + j
        top[node] = DEAD
        self.live -= 1
        node //= 2
        while node:
            left, right = top[2 * node], top[2 * node + 1]
            best = left if left >= right else right
            if top[node] == best:
                break
            top[node] = best
            node //= 2

    def alive_entries(self) -> list:
        top, width = self.top, self.width
        return [e for j, e in enumerate(self.entries) if top[width + j] is not DEAD]


class LazyBlock(Block):
    """A block over stored intervals (a workspace's stored sensitivity group) whose entries are
    made when first needed: ``entries[j]`` is None until ``make(j)`` made it -- when a stab
    reaches it, or when the block is merged or rebuilt. Given sorted by start, it is built in
    linear time and with no entry made: a group of 343k entries reads in a fraction of the
    seconds that making every entry and sorting them took. ``entries`` may hold entries made
    already: a live one is placed, a dead one's leaf is DEAD."""

    __slots__ = ("make",)

    def __init__(self, starts: list, ends: list, entries: list, make) -> None:
        self._index(starts, entries, ends)
        self.make = make
        for j, entry in enumerate(entries):
            if entry is None:
                continue
            if entry.alive:
                entry.slot = (self, j)
            else:
                self.kill(j)

    def entry(self, j: int):
        """The entry of leaf ``j``, made now if it was not."""
        entry = self.entries[j]
        if entry is None:
            entry = self.make(j)
            self.place(j, entry)
        return entry

    def place(self, j: int, entry) -> None:
        """``entry``, made elsewhere (reached another way first), is the one of leaf ``j``."""
        self.entries[j] = entry
        entry.slot = (self, j)

    def stab(self, point: tuple, out: list) -> None:
        out.extend(map(self.entry, self._held(point)))

    def alive_entries(self) -> list:
        top, width = self.top, self.width
        return [self.entry(j) for j in range(len(self.entries)) if top[width + j] is not DEAD]


class StabbingGroup:
    """Entries under one ``alpha`` (see the module text). An entry's ``slot`` says where it is:
    the group itself: in its ``pending`` (removed ones stay there, ``alive`` False, until the next
    build); ``(block, j)``: in a block; anything else: in no structure of this group."""

    __slots__ = ("pending", "blocks", "size")

    def __init__(self) -> None:
        self.pending: list = []
        self.blocks: list[Block] = []               # oldest (largest) first
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        for block in self.blocks:
            yield from block.alive_entries()
        yield from (e for e in self.pending if e.alive)

    def add(self, entry) -> None:
        if entry.slot is self:                        # removed, not yet built away: alive again
            entry.alive = True
        else:
            entry.slot = self
            self.pending.append(entry)
        self.size += 1

    def extend(self, entries: list) -> None:
        """Many entries at once (none of them in a group)."""
        for entry in entries:
            entry.slot = self
        self.pending.extend(entries)
        self.size += len(entries)

    def adopt(self, block: Block) -> None:
        """A block built elsewhere (a stored group read as a :class:`LazyBlock`) joins the group."""
        self.blocks.append(block)
        self.blocks.sort(key=lambda b: -len(b.entries))
        self.size += block.live

    def remove(self, entry) -> None:
        """``entry`` (in this group) stops answering; the caller sets ``alive``."""
        slot = entry.slot
        if slot is not self:
            block, j = slot
            block.kill(j)
            entry.slot = None
            if block.live * 2 < len(block.entries) and len(block.entries) > PENDING:
                self._rebuild(block)
        self.size -= 1

    def stab(self, point: tuple) -> list:
        if len(self.pending) > PENDING:
            self.build()
        out: list = []
        for block in self.blocks:
            block.stab(point, out)
        for entry in self.pending:
            if entry.alive and start_of(entry.start) <= point <= end_of(entry.end):
                out.append(entry)
        return out

    def build(self) -> None:
        """The pending entries into a block, merged with every block not at least twice its size."""
        fresh = []
        for entry in self.pending:
            if entry.alive:
                fresh.append(entry)
            else:
                entry.slot = None
        self.pending = []
        while self.blocks and len(self.blocks[-1].entries) < 2 * len(fresh):
            fresh.extend(self.blocks.pop().alive_entries())
        if fresh:
            self.blocks.append(Block(fresh))

    def _rebuild(self, block: Block) -> None:
        """A block more than half dead is built again from its live entries."""
        self.blocks.remove(block)
        live = block.alive_entries()
        if live:
            self.blocks.append(Block(live))
            self.blocks.sort(key=lambda b: -len(b.entries))


def _first(item: tuple):
    return item[0]
