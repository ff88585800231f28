"""Stabbing queries over many closed intervals: the interval trees of the sensitivity indices.

A :class:`StabbingGroup` holds the sensitivity entries under one ``alpha`` once there are too
many to scan. It answers ``stab(p)``: every live entry whose interval ``[start, end]`` holds the
point ``p``. An entry is an integer, its row in the columns of its
:class:`maintenance.sensitivity.SensitivityIndex` (``starts``, ``ends``: the encoded ends, see
:func:`start_of`, :func:`end_of` and the index's integer encoding), so a group holds machine
integers, not objects.

Layout: the logarithmic method of Bentley and Saxe ("Decomposable searching problems I", 1980).
Entries arrive in ``pending``, an array scanned in full; at a query, a pending array grown past
:data:`PENDING` becomes a :class:`Block`, merged with the smaller blocks so that block sizes at
least double from the newest to the oldest (O(log n) blocks, each entry rebuilt O(log n) times).
Recording a trace adds every entry before the first query, and restoring a workspace adds them
all at once: one block is built, at the first query of the group, so a group no change reaches
is never built.

A block is a static interval tree: entries sorted by (start, row), and over chunks of
:data:`CHUNK` of them an implicit binary tree (heap order) keeping each subtree's greatest end.
The entries holding ``p`` are those among the first ``bisect_right(starts, p)`` whose end is at
least ``p``; a descent visits only subtrees whose greatest end is at least ``p``, and scans the
chunks it reaches. Removing an entry marks its leaf dead and recomputes the maxima above it.
Per entry a block keeps its row (4 bytes), a copy of its start (8 bytes for integer keys) and a
dead flag (1 byte); the tree is one value per chunk.

Why not the ``intervaltree`` package, which the indices used before: building its tree compares
``Interval`` objects in Python (5.9M ``__cmp__`` calls for the 343k intervals of one group, 11 s
of a 25 s workspace open at 1M tuples), and every insert updates a ``SortedDict`` of boundaries.

>>> from array import array
>>> class Columns:                              # (what a SensitivityIndex gives a group)
...     integral, starts, ends = True, array("q", [LOW, 2, 7, 4]), array("q", [3, 5, HIGH, 4])
>>> g = StabbingGroup()
>>> for row in range(4): g.add(row)
>>> g.build(Columns)                            # (a query builds once PENDING are waiting)
>>> sorted(g.stab(4, Columns))
[1, 3]
>>> g.remove(1, Columns); g.stab(4, Columns), len(g)
([3], 3)
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

NEG, POS = (-1,), (1,)
DEAD = (-2,)          # the "greatest end" of a dead chunk (generic keys): below every point
LOW, HIGH = -(1 << 63), (1 << 63) - 1   # an unbounded start / end of integer keys (see sensitivity)


def start_of(v) -> tuple:
    """A start as a key comparable with any point ``(0, key)``: None (unbounded) is below all."""
    return NEG if v is None else (0, v)


def end_of(v) -> tuple:
    """An end: ``(0, v, 1)`` is above the point ``(0, v)`` and below ``(0, w)`` for ``w > v``."""
    return POS if v is None else (0, v, 1)


PENDING = 64          # entries a query scans unsorted before they are built into a block
CHUNK = 16            # leaves under one value of a block's tree of greatest ends


class Block:
    """Rows sorted by (start, row), ``starts`` their starts, ``dead`` a flag per leaf, and the
    greatest end of every subtree of an implicit binary tree over the chunks: ``top[1]`` is the
    root, ``top[i]`` has children ``2i`` and ``2i + 1``, chunk ``c`` is ``top[width + c]``."""

    __slots__ = ("rows", "starts", "dead", "top", "width", "live")

    def __init__(self, rows, columns) -> None:
        order = sorted(rows)
        starts_of = columns.starts
        order.sort(key=starts_of.__getitem__)
        self.rows = array("I", order)
        starts = [starts_of[r] for r in order]
        self.starts = array("q", starts) if columns.integral else starts
        self.dead = bytearray(len(order))
        self.live = len(order)
        chunks = -(-len(order) // CHUNK)
        width = 1
        while width < chunks:
            width *= 2
        bottom = LOW if columns.integral else DEAD
        ends = columns.ends
        leaves = [max([ends[r] for r in order[c:c + CHUNK]]) for c in range(0, len(order), CHUNK)]
        top = [bottom] * width + leaves + [bottom] * (width - chunks)
        first = width // 2
        while first:                                   # a level at a time, its maxima in C
            top[first:2 * first] = map(max, top[2 * first:4 * first:2], top[2 * first + 1:4 * first:2])
            first //= 2
        self.top = array("q", top) if columns.integral else top
        self.width = width

    def __len__(self) -> int:
        return len(self.rows)

    def stab(self, point, columns, out: list) -> None:
        """Append the live rows holding ``point`` to ``out``."""
        count = bisect_right(self.starts, point)
        if not count:
            return
        top, width, rows, dead, ends = self.top, self.width, self.rows, self.dead, columns.ends
        stack = [(1, 0, width)]                       # (node, first chunk, chunks under it)
        while stack:
            node, first, span = stack.pop()
            if first * CHUNK >= count or top[node] < point:
                continue
            if node >= width:
                for j in range(first * CHUNK, min(count, first * CHUNK + CHUNK)):
                    if not dead[j] and ends[rows[j]] >= point:
                        out.append(rows[j])
                continue
            half = span // 2
            stack.append((2 * node + 1, first + half, half))
            stack.append((2 * node, first, half))

    def find(self, row: int, columns) -> int:
        """The live leaf of ``row`` (-1: none here)."""
        rows, starts, dead, start = self.rows, self.starts, self.dead, columns.starts[row]
        j = bisect_left(starts, start)
        j = bisect_left(rows, row, j, bisect_right(starts, start, j))
        while j < len(rows) and rows[j] == row and starts[j] == start:
            if not dead[j]:
                return j
            j += 1
        return -1

    def kill(self, j: int, columns) -> None:
        """Leaf ``j`` no longer answers: its chunk's greatest end and those above are recomputed."""
        self.dead[j] = 1
        self.live -= 1
        rows, dead, ends, top = self.rows, self.dead, columns.ends, self.top
        c = j // CHUNK
        live = [ends[rows[i]] for i in range(c * CHUNK, min(len(rows), c * CHUNK + CHUNK)) if not dead[i]]
        best = max(live) if live else (LOW if columns.integral else DEAD)
        node = self.width + c
        top[node] = best
        node //= 2
        while node:
            left, right = top[2 * node], top[2 * node + 1]
            best = left if left >= right else right
            if top[node] == best:
                break
            top[node] = best
            node //= 2

    def alive_rows(self) -> list:
        dead = self.dead
        return [r for j, r in enumerate(self.rows) if not dead[j]]


class StabbingGroup:
    """Rows under one ``alpha`` (see the module text): ``pending`` (unsorted; a row in ``gone``
    was removed: left out at the next build, as a group only dropped from is never built) and
    ``blocks``, oldest (largest) first. ``columns`` (the index) is passed to each call."""

    __slots__ = ("pending", "gone", "blocks", "size")

    def __init__(self) -> None:
        self.pending = array("I")
        self.gone: set[int] = set()
        self.blocks: list[Block] = []
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def rows(self) -> list:
        out = [r for block in self.blocks for r in block.alive_rows()]
        gone = self.gone
        out.extend(r for r in self.pending if r not in gone)
        return out

    def add(self, row: int) -> None:
        if row in self.gone:                         # removed, not yet built away: live again
            self.gone.discard(row)
        else:
            self.pending.append(row)
        self.size += 1

    def extend(self, rows) -> None:
        self.pending.extend(rows)
        self.size += len(rows)

    def remove(self, row: int, columns) -> None:
        """``row`` (live in this group) stops answering: its leaf is killed, or (pending) it is
        left out at the next build."""
        self.size -= 1
        for block in self.blocks:
            j = block.find(row, columns)
            if j >= 0:
                block.kill(j, columns)
                if block.live * 2 < len(block) and len(block) > PENDING:
                    self._rebuild(block, columns)
                return
        self.gone.add(row)

    def stab(self, point, columns) -> list:
        if len(self.pending) > PENDING:
            self.build(columns)
        out: list = []
        for block in self.blocks:
            block.stab(point, columns, out)
        starts, ends, gone = columns.starts, columns.ends, self.gone
        out.extend(r for r in self.pending if starts[r] <= point <= ends[r] and r not in gone)
        return out

    def build(self, columns) -> None:
        """The pending rows into a block, merged with every block not at least twice its size."""
        gone = self.gone
        fresh = [r for r in self.pending if r not in gone] if gone else list(self.pending)
        self.pending, self.gone = array("I"), set()
        while self.blocks and len(self.blocks[-1]) < 2 * len(fresh):
            fresh.extend(self.blocks.pop().alive_rows())
        if fresh:
            self.blocks.append(Block(fresh, columns))

    def rebuild(self, columns) -> None:
        """Every block built again (the index changed its encoding of keys)."""
        live = self.rows()
        self.blocks, self.pending, self.gone = [], array("I", live), set()

    def _rebuild(self, block: Block, columns) -> None:
        """A block more than half dead is built again from its live rows."""
        self.blocks.remove(block)
        live = block.alive_rows()
        if live:
            self.blocks.append(Block(live, columns))
            self.blocks.sort(key=lambda b: -len(b))
