"""SensitivityIndex against a brute-force list of intervals, across the list -> tree switch and
the StabbingGroup's pending list -> block builds, merges and rebuilds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance import sensitivity, stabbing
from maintenance.sensitivity import Entry, SensitivityIndex

ENDS = st.one_of(st.none(), st.integers(0, 30))
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 2), ENDS, ENDS),
    st.tuples(st.just("load"), st.integers(0, 2), st.lists(st.tuples(ENDS, ENDS), max_size=40)),
    st.tuples(st.just("remove"), st.integers(0, 10_000)),
    st.tuples(st.just("restore"), st.integers(0, 10_000)),
    st.tuples(st.just("match"), st.integers(0, 2), st.integers(-1, 31)),
), max_size=300)


def _holds(start, end, key) -> bool:
    return (start is None or start <= key) and (end is None or key <= end)


def _ordered(start, end):
    if start is not None and end is not None and start > end:
        return end, start                                   # a recorded interval is never empty
    return start, end


@settings(max_examples=300, deadline=None)
@given(OPS, st.sampled_from([1, 3, 48]), st.sampled_from([0, 2, 64]))
def test_index_matches_brute_force(ops, small, pending):
    old = sensitivity.SMALL, stabbing.PENDING
    sensitivity.SMALL, stabbing.PENDING = small, pending
    try:
        index, entries = SensitivityIndex(), []
        for op in ops:
            if op[0] == "add":
                _, alpha, start, end = op
                entries.append(index.add((alpha,), *_ordered(start, end), len(entries)))
            elif op[0] == "load":
                _, alpha, intervals = op
                batch = [Entry(index, (alpha,), *_ordered(s, e), len(entries) + i)
                         for i, (s, e) in enumerate(intervals)]
                index.load((alpha,), batch)
                entries.extend(batch)
            elif op[0] in ("remove", "restore") and entries:
                entry = entries[op[1] % len(entries)]
                (index.remove if op[0] == "remove" else index.restore)(entry)
            elif op[0] == "match":
                _, alpha, key = op
                got = sorted(e.region for e in index.match((alpha,), key))
                want = sorted(e.region for e in entries
                              if e.alive and e.alpha == (alpha,) and _holds(e.start, e.end, key))
                assert got == want
        assert len(index) == sum(e.alive for e in entries)
        assert len(index.intervals()) == len(index)
    finally:
        sensitivity.SMALL, stabbing.PENDING = old


class _Disk:
    """Stored groups as ``SensitivityIndex.keep_stored`` reads them, over a plain dict: a group
    of ``blocked`` entries or more as a LazyBlock (with the entries ``made(e)`` says were made
    already, and every dead one), a smaller one as its live entries."""

    def __init__(self, groups: dict, blocked: int, made):
        self.groups, self.blocked, self.made, self.reads = groups, blocked, made, []
        self.placed = {}                                   # entry -> (its block, leaf)

    def reach(self, entry) -> None:
        """``entry`` is used (a workspace makes it as it reads a trace node): in a block, it is
        the one of its leaf."""
        block, j = self.placed.pop(id(entry), (None, None))
        if block is not None and block.entries[j] is None:
            block.place(j, entry)

    def entries(self, alpha):
        self.reads.append(alpha)
        return [e for e in self.groups.get(alpha, []) if e.alive]

    def block(self, alpha):
        group = self.groups.get(alpha, [])
        if not group or len(group) < self.blocked:
            return None
        self.reads.append(alpha)
        ordered = sorted(group, key=lambda e: stabbing.start_of(e.start))
        block = stabbing.LazyBlock([stabbing.start_of(e.start) for e in ordered],
                                   [stabbing.end_of(e.end) for e in ordered],
                                   [e if not e.alive or self.made(e) else None for e in ordered], ordered.__getitem__)
        self.placed.update((id(e), (block, j)) for j, e in enumerate(ordered))
        return block

    def alphas(self):
        return list(self.groups)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), ENDS, ENDS), max_size=60), OPS,
       st.sampled_from([1, 3, 48]), st.sampled_from([0, 2, 64]), st.sampled_from([0, 5, 1000]),
       st.sampled_from([0, 1, 2]))
def test_index_over_stored_groups_matches_brute_force(stored, ops, small, pending, blocked, made):
    """Entries left on disk (a workspace's stored maintainer): adds beside them, drops and
    rollbacks of them before and after their group is read -- whole or as a LazyBlock, with none,
    some or all of its live entries made already -- and matches give what a list of every
    interval gives; a group is read only to match (or list) it."""
    old = sensitivity.SMALL, stabbing.PENDING
    sensitivity.SMALL, stabbing.PENDING = small, pending
    try:
        index, entries, groups = SensitivityIndex(), [], {}
        for i, (alpha, start, end) in enumerate(stored):
            entry = Entry(index, (alpha,), *_ordered(start, end), i)
            entry.slot = sensitivity.ON_DISK
            groups.setdefault((alpha,), []).append(entry)
            entries.append(entry)
        disk, matched = _Disk(groups, blocked, lambda e: e.region % 2 < made), set()
        index.keep_stored(disk, len(entries))
        for op in ops:
            if op[0] == "add":
                _, alpha, start, end = op
                entries.append(index.add((alpha,), *_ordered(start, end), len(entries)))
            elif op[0] in ("remove", "restore") and entries:
                entry = entries[op[1] % len(entries)]
                disk.reach(entry)
                (index.remove if op[0] == "remove" else index.restore)(entry)
            elif op[0] == "match":
                _, alpha, key = op
                matched.add((alpha,))
                got = sorted(e.region for e in index.match((alpha,), key))
                want = sorted(e.region for e in entries
                              if e.alive and e.alpha == (alpha,) and _holds(e.start, e.end, key))
                assert got == want
            assert len(index) == sum(e.alive for e in entries)
        assert len(set(disk.reads)) == len(disk.reads) and set(disk.reads) <= matched
        want = [(e.alpha, "-inf" if e.start is None else e.start, "+inf" if e.end is None else e.end)
                for e in entries if e.alive]
        assert sorted(index.intervals(), key=repr) == sorted(want, key=repr)
    finally:
        sensitivity.SMALL, stabbing.PENDING = old
