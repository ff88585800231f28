"""IEDyn indexes on a GMR (Idris et al., §5 Definition 7 and "IEDyn"; §4 Fig. 7).

A :class:`GroupIndex` groups the tuples of ``rho[n]`` by the *group variables*
(a hash table: ``y*`` in Fig. 7) and keeps each group sorted lexicographically
on the *sort variables* (the node's variables mentioned by the predicates).
A group is a ``SortedDict`` from sort key to a :class:`Bucket` (tuple -> multiplicity); without
sort variables its only key is ``()`` and a plain dict does.

A :class:`Compatible` answers ``rho[n] ⋈_θ t`` for a tuple ``t`` of another node:
it turns every predicate with one unknown variable into a bound on a sort level
and scans (Theorem 2's scan from the extreme end when the node carries one
inequality; binary searches per level otherwise - Theorem 1's logarithmic delay).
Predicates it cannot turn into bounds are checked on each candidate (residual).

Instrumentation: ``stats.touched`` counts keys and tuples looked at, ``stats.bisects``
counts binary searches; the constant-delay test reads them.
"""

from __future__ import annotations

from bisect import bisect_left
from copy import copy
from dataclasses import dataclass
from operator import itemgetter

from sortedcontainers import SortedDict

from datalog.planning.gjt.query import FLIP, Predicate, shift


class _Top:
    """Greater than every value: ``prefix + (TOP,)`` sorts after every key with that prefix."""

    def __lt__(self, other): return False
    def __le__(self, other): return other is self
    def __gt__(self, other): return other is not self
    def __ge__(self, other): return True


TOP = _Top()


@dataclass
class Stats:
    touched: int = 0
    bisects: int = 0


class Bucket(dict):
    """The tuples of one sort key, with their multiplicities and their sum ``total``."""

    total: int = 0


class GroupIndex:
    """rho[n] by (group vars, sort vars): dict group key -> SortedDict(sort key -> Bucket)."""

    def __init__(self, node_vars, group_vars, sort_vars, stats: Stats):
        position = {v: i for i, v in enumerate(node_vars)}
        self.group_vars, self.sort_vars = tuple(group_vars), tuple(sort_vars)
        self.group_at = tuple(position[v] for v in self.group_vars)
        self.sort_at = tuple(position[v] for v in self.sort_vars)
        self.group_of, self.sort_of = picker(self.group_at), picker(self.sort_at)
        self.groups: dict[tuple, SortedDict] = {}
        self.stats = stats
        self.stamp = 0                  # bumped by every add: ``versions[g]`` is g's last change
        self.versions: dict[tuple, int] = {}

    def add(self, t: tuple, d: int) -> None:
        """rho[n](t) += d, dropping zero multiplicities, empty buckets and empty groups."""
        g, s = self.group_of(t), self.sort_of(t)
        group = self.groups.get(g)
        if group is None:               # no sort variables: one key (), a plain dict does (scan)
            group = self.groups[g] = SortedDict() if self.sort_at else {}
        bucket = group.get(s)
        if bucket is None:
            bucket = group[s] = Bucket()
        m = bucket.get(t, 0) + d
        if m:
            bucket[t] = m
        else:
            del bucket[t]
        bucket.total += d
        self.stamp += 1
        self.versions[g] = self.stamp
        if not bucket:
            del group[s]
            if not group:
                del self.groups[g]
                del self.versions[g]

    def group(self, key: tuple) -> SortedDict | None:
        return self.groups.get(key)

    def frozen(self, gmr: dict) -> "GroupIndex":
        """An index of ``gmr`` (a Δ_n: distinct tuples, non-zero) grouped and sorted like this one,
        never changed afterwards: its groups are :class:`Frozen` (built in one sort), not
        SortedDicts (one cost ~10 µs to create: most of a small Δ index)."""
        other = object.__new__(GroupIndex)
        other.group_vars, other.sort_vars = self.group_vars, self.sort_vars
        other.group_at, other.sort_at, other.stats = self.group_at, self.sort_at, self.stats
        other.group_of, other.sort_of = group_of, sort_of = self.group_of, self.sort_of
        other.stamp, other.versions = 0, {}
        groups: dict = {}
        for t, d in gmr.items():
            g, s = group_of(t), sort_of(t)
            group = groups.get(g)
            if group is None:
                group = groups[g] = {}
            bucket = group.get(s)
            if bucket is None:
                bucket = group[s] = Bucket()
            bucket[t] = d
            bucket.total += d
        other.groups = {g: Frozen(group) for g, group in groups.items()} if self.sort_at else groups
        return other


def picker(positions: tuple[int, ...]):
    """tuple -> the tuple of its values at ``positions``, in C (one position: a slice, since
    itemgetter of one index returns the bare value)."""
    if not positions:
        return lambda t: ()
    if len(positions) == 1:
        return itemgetter(slice(positions[0], positions[0] + 1))
    return itemgetter(*positions)


class Frozen(dict):
    """A dict with its keys sorted once: the part of SortedDict's interface the scans use."""

    def __init__(self, items: dict):
        super().__init__(items)
        self._sorted = sorted(items)

    def keys(self) -> list:
        return self._sorted

    def bisect_left(self, key) -> int:
        return bisect_left(self._sorted, key)


@dataclass
class Level:
    """Bounds on one sort variable: lo/hi (None = open) with strictness, and excluded values."""

    lo: object = None
    lo_strict: bool = False
    hi: object = None
    hi_strict: bool = False
    excluded: tuple = ()

    def tighten(self, op: str, value) -> None:
        if op in ("=", ">", ">=") and (self.lo is None or value > self.lo or (value == self.lo and op == ">")):
            self.lo, self.lo_strict = value, op == ">"
        if op in ("=", "<", "<=") and (self.hi is None or value < self.hi or (value == self.hi and op == "<")):
            self.hi, self.hi_strict = value, op == "<"
        if op == "!=":
            self.excluded += (value,)

    def verdict(self, v) -> str | None:
        """None if v is inside, else 'below', 'above' or 'excluded'."""
        if self.lo is not None and (v < self.lo or (self.lo_strict and v == self.lo)):
            return "below"
        if self.hi is not None and (v > self.hi or (self.hi_strict and v == self.hi)):
            return "above"
        return "excluded" if v in self.excluded else None


class Compatible:
    """Compiled ``index ⋈_preds t`` for tuples t over ``known_vars`` (Definition 7's index use)."""

    def __init__(self, index: GroupIndex, node_vars, preds: tuple[Predicate, ...], known_vars):
        self.index, self.node_vars = index, tuple(node_vars)
        known = {v: i for i, v in enumerate(known_vars)}
        self.group_from = tuple(known[v] for v in index.group_vars)
        self.group_key = picker(self.group_from)          # t -> the key of its group in ``index``
        level_of = {v: j for j, v in enumerate(index.sort_vars)}
        self.bounds, self.checks, self.residual = [], [], []
        for p in preds:
            unknown = [v for v in p.variables() if v not in known]
            if not unknown:
                self.checks.append(p)
            elif len(unknown) == 1 and unknown[0] in level_of:
                self.bounds.append((level_of[unknown[0]], *_bound(p, unknown[0]), p))
            else:
                self.residual.append(p)
        self.known = known
        self.levels = len(index.sort_vars)
        self.ranged = not self.residual and self.levels <= 1 and all(b[1] != "!=" for b in self.bounds)
        # key_range's bounds read from t directly: (op, position of the other variable or None, offset)
        self.range_bounds = tuple((op, None if other is None else known[other], offset)
                                  for _, op, other, offset, _ in self.bounds)

    def over(self, gmr: dict) -> "Compatible":
        """The same lookup over an index of ``gmr`` (a Δ_n) instead of rho[n]."""
        other = copy(self)
        other.index = self.index.frozen(gmr)
        return other

    def _bounded(self, t: tuple):
        """(binding, group key, group, bounds per sort level) for t, or None when no tuple of the
        index can be compatible (a check fails, or t's group is empty)."""
        binding = {v: t[i] for v, i in self.known.items()}
        if not all(p.holds(binding) for p in self.checks):
            return None
        key = self.group_key(t)
        group = self.index.group(key)
        if group is None:
            return None
        levels = [Level() for _ in range(self.levels)]
        for j, op, other, offset, _ in self.bounds:
            levels[j].tighten(op, _value(binding, other, offset))
        return binding, key, group, levels

    def compatible(self, t: tuple):
        """Yield (tuple, multiplicity) of rho[n] compatible with t."""
        found = self._bounded(t)
        if found is None:
            return
        binding, _, group, levels = found
        stats = self.index.stats
        for key in scan(group, levels, stats):
            for s, mult in group[key].items():
                stats.touched += 1
                if self.residual and not self._residual_holds(binding, s):
                    continue
                yield s, mult

    # -- for bulk enumeration (bulk.py) --------------------------------------------------------
    def is_range(self) -> bool:
        """The compatible tuples of any t are one group's sort keys in one range."""
        return self.ranged

    def key_range(self, t: tuple):
        """(group key, lower, upper) of the tuples compatible with t, a bound being (value, strict)
        or None; None when none is (a check fails, no group). Only when :meth:`is_range`.
        What :meth:`_bounded` does, without its binding: this runs once per streamed tuple."""
        if self.checks:
            found = self._bounded(t)
            if found is None:
                return None
            _, key, _, levels = found
            level = levels[0] if levels else Level()
        else:
            key = self.group_key(t)
            if key not in self.index.groups:
                return None
            level = Level()
            for op, at, offset in self.range_bounds:
                level.tighten(op, offset if at is None else shift(t[at], offset))
        return (key, None if level.lo is None else (level.lo, level.lo_strict),
                None if level.hi is None else (level.hi, level.hi_strict))

    def compatible_bucket(self, t: tuple):
        """For an index without predicates: the tuples of rho[n] compatible with t (a Bucket), or None."""
        group = self.index.groups.get(self.group_key(t))
        return None if group is None else group.get(())

    def _residual_holds(self, binding: dict, s: tuple) -> bool:
        full = dict(binding)
        full.update(zip(self.node_vars, s))
        return all(p.holds(full) for p in self.residual)


def _bound(p: Predicate, unknown: str):
    """θ solved for its unknown variable: (op, other variable or None, offset)."""
    if p.left == unknown:
        return p.op, p.right, p.offset                 # u op other + offset
    return FLIP[p.op], p.left, -p.offset if p.offset else 0   # left op u + off  <=>  u flip(op) left - off


def _value(binding: dict, other: str | None, offset):
    return offset if other is None else shift(binding[other], offset)


def scan(group: SortedDict, levels: list[Level], stats: Stats):
    """The sort keys of ``group`` inside ``levels`` (lexicographic), in key order or reverse.

    One level with only a lower bound: scan down from the largest key and stop at the
    first key below (the paper's descending scan); only an upper bound: scan up from the
    smallest.  Otherwise: seek with binary searches, one level at a time.
    """
    if not levels:
        if () in group:
            stats.touched += 1
            yield ()
        return
    if len(levels) == 1 and levels[0].hi is None:
        yield from _scan_down(group, levels[0], stats)
        return
    keys = group.keys()
    i = _bisect(group, _lower((), levels[0]), stats) if levels[0].lo is not None else 0
    while i < len(keys):
        k = keys[i]
        stats.touched += 1
        j, verdict = _first_violation(k, levels)
        if verdict is None:
            yield k
            i += 1
        elif verdict == "below":
            i = _bisect(group, _lower(k[:j], levels[j]), stats)
        elif verdict == "above" and j == 0:
            return
        else:   # above at a deeper level: skip this prefix; excluded: skip this value
            i = _bisect(group, k[:j + (verdict == "excluded")] + (TOP,), stats)


def _scan_down(group: SortedDict, level: Level, stats: Stats):
    for k in reversed(group.keys()):
        stats.touched += 1
        verdict = level.verdict(k[0])
        if verdict == "below":
            return
        if verdict is None:
            yield k


def _first_violation(k: tuple, levels: list[Level]):
    for j, level in enumerate(levels):
        if (verdict := level.verdict(k[j])) is not None:
            return j, verdict
    return None, None


def _lower(prefix: tuple, level: Level) -> tuple:
    return prefix + ((level.lo, TOP) if level.lo_strict else (level.lo,))


def _bisect(group, key: tuple, stats: Stats) -> int:
    stats.bisects += 1
    return group.bisect_left(key)
