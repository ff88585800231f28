"""The columnar sensitivity indices (with the change oracle's Registry, the trace nodes' entry
arrays and the Journal's rollback) against their slow twin: a plain list of intervals. Random
adds, removals, matches, commits (rows released and reused) and rollbacks, across the array ->
StabbingGroup switch, the pending -> block builds, merges and rebuilds, and the integer ->
generic encoding switch; and stored groups read when first matched."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance import sensitivity, stabbing
from maintenance.change_oracle import ROW, Registry
from maintenance.journal import Journal
from maintenance.sensitivity import SensitivityIndex
from maintenance.trace import TraceNode
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

KEYS = {"int": st.integers(0, 30), "big": st.integers(0, 30).map(lambda k: k * 10**20),
        "str": st.integers(0, 30).map(lambda k: f"k{k:02d}")}
WHERES = [("r", (0,), 0), ("r", (0,), 1), ("s", (1, 0), 0)]


def _ops(keys):
    ends = st.one_of(st.none(), keys)
    return st.lists(st.one_of(
        st.tuples(st.just("add"), st.integers(0, 2), st.integers(0, 2), ends, ends, st.integers(0, 3),
                  st.one_of(st.none(), keys)),
        st.tuples(st.just("remove"), st.integers(0, 10_000)),
        st.tuples(st.just("match"), st.integers(0, 2), st.integers(0, 2), keys),
        st.tuples(st.just("within"), st.integers(0, 2), ends, ends),
        st.tuples(st.just("commit")),
        st.tuples(st.just("rollback")),
    ), max_size=250)


def _holds(start, end, key) -> bool:
    return (start is None or start <= key) and (end is None or key <= end)


def _inside(region, lo, hi) -> bool:
    """The region ``(start, end)`` lies inside ``[lo, hi]`` (None: unbounded)."""
    start, end = region
    return (lo is None or start is not None and lo <= start) and (hi is None or end is not None and end <= hi)


def _ordered(start, end):
    if start is not None and end is not None and start > end:
        return end, start                                   # a recorded interval is never empty
    return start, end


class _Rule:
    """A stand-in for a RuleMaintainer: what the Registry reads of one."""

    def __init__(self, registry: Registry):
        self.intervals, self.atoms = 0, []
        registry.register(self)


def _region(kind: int, start, end, other):
    """The region (lo, hi) an entry of ``kind`` records: a leapfrog's own interval, the whole
    node (a constant's lookup), or another interval (a filter's lookup)."""
    return {0: (start, end), 1: (None, None), 2: (other, other), 3: (start, end)}[kind]


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(sorted(KEYS)).flatmap(lambda k: st.tuples(st.just(k), _ops(KEYS[k]))),
       st.sampled_from([0, 3, 48]), st.sampled_from([0, 2, 64]), st.booleans())
def test_columnar_index_matches_a_list_of_intervals(case, small, pending, built):
    """After every operation: each index's intervals, each trace node's entries (with their
    regions) and each rule's count of intervals are the twin's; a match gives the twin's regions
    (and removes them); a rollback puts back exactly what the transaction found. ``built``: the
    operations before the first commit run without a journal, as a first recording does (its
    rows are filed in bulk at the first query)."""
    kind_of_keys, ops = case
    old = sensitivity.SMALL, stabbing.PENDING
    sensitivity.SMALL, stabbing.PENDING = small, pending
    try:
        registry = Registry()
        rules = [_Rule(registry), _Rule(registry)]
        root = TraceNode(None, None, 0)
        nodes = [root] + [TraceNode(root, k, 1) for k in range(2)]
        twin: list[dict] = []                       # every entry ever added; "alive" as the twin says
        journal, saved = Journal(), {}
        registry.journal = None if built else journal
        for op in ops:
            if op[0] == "add":
                _, where, alpha, start, end, kind, other = op
                start, end = _ordered(start, end)
                lo, hi = _region(kind, start, end, other)
                node, rule = nodes[len(twin) % 3], rules[len(twin) % 2]
                index = registry.index(WHERES[where])
                registry._add(rule, index, (alpha,), start, end, (node, lo, hi))
                twin.append({"where": where, "alpha": (alpha,), "start": start, "end": end, "node": node,
                             "rule": rule, "region": (lo, hi), "alive": True})
            elif op[0] == "remove":
                live = [e for e in twin if e["alive"]]
                if live:
                    victim = live[op[1] % len(live)]
                    handle = next(h for h in victim["node"].entries if _same(registry, h, victim))
                    registry.remove(handle)
                    victim["alive"] = False
            elif op[0] == "match":
                _, where, alpha, key = op
                relation, order, level = WHERES[where]
                got = registry.match(relation, {order: [(level, (alpha,), key)]})
                held = [e for e in twin if e["alive"] and e["where"] == where and e["alpha"] == (alpha,)
                        and _holds(e["start"], e["end"], key)]
                want = {}
                for e in held:
                    want.setdefault(id(e["rule"]), []).append((id(e["node"]), *e["region"]))
                    e["alive"] = False
                assert {id(r): sorted((id(n), lo, hi) for n, lo, hi in regions) for r, regions in got.items()} \
                    == {r: sorted(v) for r, v in want.items()}
            elif op[0] == "within":
                _, at, lo, hi = op
                _check_within(registry, twin, nodes[at], *_ordered(lo, hi))
            elif op[0] == "commit":
                journal, saved = Journal(), {id(e): e["alive"] for e in twin}
                registry.journal = journal           # (releases the rows removed before)
            elif op[0] == "rollback" and registry.journal is None:      # (no transaction yet)
                journal, saved = Journal(), {id(e): e["alive"] for e in twin}
                registry.journal = journal
            elif op[0] == "rollback":
                registry.journal = None
                journal.rollback()
                for e in twin:
                    e["alive"] = saved.get(id(e), False)
                journal = Journal()
                registry.journal = journal
            _check(registry, twin, nodes, rules)
    finally:
        sensitivity.SMALL, stabbing.PENDING = old


def _same(registry: Registry, handle: int, e: dict) -> bool:
    entry, index = registry.entry(handle), registry.numbered[handle >> 32]
    return registry.rules[index.owners[handle & ROW]] is e["rule"] and (entry.alpha, entry.start, entry.end, entry.region[1:]) == (e["alpha"], e["start"], e["end"], e["region"]) \
        and registry.numbered[handle >> 32] is registry.indexes[WHERES[e["where"]]]


def _check(registry: Registry, twin: list, nodes: list, rules: list) -> None:
    live = [e for e in twin if e["alive"]]
    for where, name in enumerate(WHERES):
        index = registry.indexes.get(name)
        mine = [e for e in live if e["where"] == where]
        if index is None:
            assert not mine
            continue
        want = [(e["alpha"], "-inf" if e["start"] is None else e["start"], "+inf" if e["end"] is None else e["end"])
                for e in mine]
        assert index.intervals() == sorted(want, key=_interval_key)
        assert all(list(g) == sorted(g) for g in index.trees.values() if type(g) is array)   # (found by bisection)
        assert len(index) == len(mine)
    for node in nodes:
        got = sorted(repr((type(registry.numbered[h >> 32]).__name__, registry.entry(h)[:3], registry.entry(h).region[1:]))
                     for h in node.entries or ())
        want = sorted(repr(("SensitivityIndex", (e["alpha"], e["start"], e["end"]), e["region"]))
                      for e in live if e["node"] is node)
        assert got == want
        starts = [registry.region_start(h) for h in node.entries or ()]
        assert starts == sorted(starts)                  # a node's entries by region start
        assert all(registry.entry(h).region[0] is node for h in node.entries or ())
        regions = sorted({e["region"] for e in live if e["node"] is node}, key=repr)[:4] + [(None, None)]
        for lo, hi in regions:                           # (what RuleMaintainer.drop reads)
            _check_within(registry, twin, node, lo, hi)
    for rule in rules:
        assert rule.intervals == sum(1 for e in live if e["rule"] is rule)


def _check_within(registry: Registry, twin: list, node, lo, hi) -> None:
    """``within``: the node's live entries whose region lies inside [lo, hi] (a revisited
    region's old entries: RuleMaintainer.drop), in the node's order."""
    got = [registry.entry(h) for h in registry.within(node, lo, hi)]
    want = [e for e in twin if e["alive"] and e["node"] is node and _inside(e["region"], lo, hi)]
    assert sorted(repr((g.alpha, g.start, g.end, g.region[1:])) for g in got) \
        == sorted(repr((e["alpha"], e["start"], e["end"], e["region"])) for e in want)


def _interval_key(interval):
    alpha, start, end = interval
    return alpha, stabbing.start_of(None if start == "-inf" else start), stabbing.end_of(None if end == "+inf" else end)


# ---------------------------------------------------------------- stored groups

class _Disk:
    """Stored groups over a plain dict, as a workspace's ``_Stored`` gives them: a stored entry's
    row is made (``add_stored``) when its trace node is read (``reach``) or its group is."""

    def __init__(self, index: SensitivityIndex, groups: dict):
        self.index, self.groups, self.made, self.reads = index, groups, {}, []

    def reach(self, sid: int) -> int:
        row = self.made.get(sid)
        if row is None:
            alpha, start, end = self.groups_by_id()[sid]
            row = self.made[sid] = self.index.add_stored(alpha, start, end, "n", 0, 0)
        return row

    def groups_by_id(self) -> dict:
        return {sid: (alpha, s, e) for alpha, rows in self.groups.items() for sid, s, e in rows}

    def rows(self, alpha):
        self.reads.append(alpha)
        out = []
        for sid, _, _ in self.groups.get(alpha, []):
            row = self.reach(sid)
            if self.index.nodes[row] is not None:
                out.append(row)
        return out

    def alphas(self):
        return list(self.groups)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 30)),
                          st.one_of(st.none(), st.integers(0, 30))), max_size=60),
       st.lists(st.one_of(
           st.tuples(st.just("add"), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 30)),
                     st.one_of(st.none(), st.integers(0, 30))),
           st.tuples(st.just("remove"), st.integers(0, 10_000)),
           st.tuples(st.just("restore"), st.integers(0, 10_000)),
           st.tuples(st.just("match"), st.integers(0, 2), st.integers(-1, 31))), max_size=200),
       st.sampled_from([0, 3, 48]), st.sampled_from([0, 2, 64]))
def test_index_over_stored_groups_matches_a_list_of_intervals(stored, ops, small, pending):
    """Entries left on disk (a workspace's stored maintainer): adds beside them, removals and
    restores of them before and after their group is read, and matches give what a list of
    every interval gives; a group is read only to match (or list) it, once."""
    old = sensitivity.SMALL, stabbing.PENDING
    sensitivity.SMALL, stabbing.PENDING = small, pending
    try:
        index = SensitivityIndex()
        groups, twin = {}, []                         # twin: [alpha, start, end, alive, row or sid]
        for sid, (alpha, start, end) in enumerate(stored):
            start, end = _ordered(start, end)
            groups.setdefault((alpha,), []).append((sid, start, end))
            twin.append([(alpha,), start, end, True, ("disk", sid)])
        disk, matched = _Disk(index, groups), set()
        index.keep_stored(disk, len(twin))
        removed: dict = {}
        for op in ops:
            if op[0] == "add":
                _, alpha, start, end = op
                start, end = _ordered(start, end)
                twin.append([(alpha,), start, end, True, ("row", index.add((alpha,), start, end, "n", 0))])
            elif op[0] in ("remove", "restore") and twin:
                e = twin[op[1] % len(twin)]
                row = disk.reach(e[4][1]) if e[4][0] == "disk" else e[4][1]
                if op[0] == "remove" and e[3]:
                    removed[row] = index.remove(row)
                    e[3] = False
                elif op[0] == "restore" and not e[3] and row in removed:
                    index.restore(row, removed.pop(row))
                    e[3] = True
            elif op[0] == "match":
                _, alpha, key = op
                matched.add((alpha,))
                got = sorted(((index.start(r), index.end(r)) for r in index.match((alpha,), key)), key=repr)
                want = sorted(((e[1], e[2]) for e in twin if e[3] and e[0] == (alpha,) and _holds(e[1], e[2], key)),
                              key=repr)
                assert got == want
            assert len(index) == sum(e[3] for e in twin)
        assert len(set(disk.reads)) == len(disk.reads) and set(disk.reads) <= matched
        want = [(e[0], "-inf" if e[1] is None else e[1], "+inf" if e[2] is None else e[2]) for e in twin if e[3]]
        assert index.intervals() == sorted(want, key=_interval_key)
        assert all(list(g) == sorted(g) for g in index.trees.values() if type(g) is array)   # (found by bisection)
    finally:
        sensitivity.SMALL, stabbing.PENDING = old


def test_a_handle_names_its_index_and_row():
    registry = Registry()
    index = registry.index(("r", (0,), 0))
    other = registry.index(("r", (0,), 1))
    rule, node = _Rule(registry), TraceNode(None, None, 0)
    registry.record(rule, index, (), 1, 2, node)
    handle = registry.record(rule, other, (), 3, 4, node)
    assert registry.numbered[handle >> 32] is other and other.start(handle & ROW) == 3
