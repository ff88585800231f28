"""Leapfrog triejoin (Veldhuizen, LFTJ §3.2): a depth-first join over a variable order.

The caller (a planner) describes the join by depths only: depth ``d`` binds the ``d``-th
variable of the variable order. :class:`JoinPlan` says which atoms' trie levels take part at
each depth, and which checks run as soon as the depth's variable is bound. Constants have
already been turned into seeks (the caller passes each atom's trie positioned below its
constant levels), a repeated variable is a seek to the key just bound, and wildcards are
trailing levels never opened.

The loop at each depth is the paper's: intersect the participating levels (a leapfrog join,
:mod:`lftj.leapfrog`), and for each key open every participant, run the checks, and recurse.
Depths at or beyond ``plan.needed`` bind variables the output does not use, so the first
success there ends that level (the paper's short-circuit, §2.2.1).

This is the only triejoin. Evaluation from scratch runs it with the hash intersection and,
at the last depth or a tail of independent depths, hands whole levels to bulk emitters.
Incremental maintenance runs it with a ``trace``: the join's output is itself a trie of
bindings, walked with ``open(key)`` and ``up()``, which the maintainer records as the trace
tree, while its leapfrog runs over recording iterators opened on a change-oracle region.

>>> from lftj.trie import build
>>> edge = build([(1, 2), (2, 3), (3, 1), (2, 4)], (0, 1))
>>> # triangle(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).  order x, y, z;
>>> # atom 0 = edge(x,y) in order (0,1), atom 1 = edge(y,z), atom 2 = edge(z,x) in order (1,0)
>>> redge = build([(1, 2), (2, 3), (3, 1), (2, 4)], (1, 0))
>>> plan = JoinPlan(depth=3, participants=[[0, 2], [0, 1], [1, 2]])
>>> out = []
>>> triejoin(plan, [edge, edge, redge], lambda b: out.append(tuple(b)))
>>> out
[(1, 2, 3), (2, 3, 1), (3, 1, 2)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from lftj.leapfrog import hash_intersect
from lftj.trie import TrieNode

Check = Callable[[list], bool]
_SIZED = (list, set, frozenset, type({}.keys()))


@dataclass
class JoinPlan:
    """A join described by depths. Invariant: ``participants[d]`` and ``repeats[d]`` name atoms
    whose next trie level binds depth ``d`` (a repeat: a level after the one that joined);
    ``checks[d + 1]`` runs once depth ``d`` is bound (``checks[0]`` before any)."""

    depth: int                                  # variables in the variable order
    participants: list[list[int]]               # per depth: atoms whose next level binds it
    repeats: list[list[int]] = field(default_factory=list)   # per depth: atoms seeking the same key again
    checks: list[list[Check]] = field(default_factory=list)  # per depth + 1: checks once bound (index 0: before any)
    needed: int | None = None                   # depths >= needed are existential
    slots: int | None = None                    # binding length (variables + computed values)
    emit_last: Callable | None = None           # optional bulk emit(binding, keys) for the last depth
    emit_product: Callable | None = None        # optional bulk emit(binding, [keys, ...]) for a product tail
    generators: dict = field(default_factory=dict)  # depth -> (binding -> the level that binds it): no atom joins there

    def __post_init__(self) -> None:
        d = self.depth
        self.repeats = self.repeats or [[] for _ in range(d)]
        self.checks = self.checks or [[] for _ in range(d + 1)]
        self.needed = d if self.needed is None else self.needed
        self.slots = d if self.slots is None else self.slots

    @cached_property
    def tail(self) -> int | None:
        """:func:`product_tail` of the plan, found once for all its runs."""
        return product_tail(self)


def triejoin(plan: JoinPlan, roots: list[TrieNode], emit: Callable[[list], object],
             intersect=hash_intersect, binding: list | None = None, bulk_intersect=None) -> None:
    """Call ``emit(binding)`` once per satisfying binding (the list is reused: copy it).

    ``roots[a]`` is atom ``a``'s trie, positioned below its constant levels (None if no tuple
    has those constants). ``binding`` may carry values in slots the checks read (parameters of
    a sub-evaluation)."""
    if any(root is None or not root.children for root in roots):
        return
    binding = binding if binding is not None else [None] * plan.slots
    if not all(check(binding) for check in plan.checks[0]):
        return
    if plan.depth == 0:
        emit(binding)
        return
    Triejoin(plan, list(roots), binding, emit, intersect, bulk_intersect).visit(0)


def product_tail(plan: JoinPlan) -> int | None:
    """The first depth of the longest tail of independent depths, if at least two long.

    A depth is independent when one atom alone binds it (no repeats, no checks) and no other
    tail depth reads that atom: then the tail's bindings are the Cartesian product of those
    atoms' levels, with no join left to do."""
    start, seen = None, set()
    for d in range(plan.depth - 1, -1, -1):
        parts = plan.participants[d]
        if len(parts) != 1 or plan.repeats[d] or plan.checks[d + 1] or parts[0] in seen:
            break
        seen.add(parts[0])
        start = d
    return start if start is not None and start <= plan.depth - 2 else None


class Triejoin:
    """One run of a JoinPlan. ``nodes[a]`` is atom ``a``'s trie iterator, kept as its current
    node: the root below its constants, then the child of each key it joined on. ``trace``
    (optional) is told the join's output trie as it is walked: ``open(key)`` before the depth
    below a key is visited, ``up()`` after, and ``seek(r, key)`` before the lookup of the depth's
    ``r``-th repeated variable; with a trace every key is visited one by one (no bulk emitters)."""

    __slots__ = ("plan", "nodes", "binding", "emit", "intersect", "bulk_intersect", "trace", "last",
                 "bulk", "tail")

    def __init__(self, plan: JoinPlan, nodes: list, binding: list, emit, intersect, bulk_intersect=None,
                 trace=None):
        self.plan, self.nodes, self.binding, self.emit, self.trace = plan, nodes, binding, emit, trace
        self.intersect, self.bulk_intersect = intersect, bulk_intersect or intersect
        self.last = last = plan.depth - 1
        self.bulk = trace is None and not plan.repeats[last] and not plan.checks[last + 1] and \
            (plan.emit_last is not None or plan.needed <= last)
        tail = plan.tail if trace is None else None
        self.tail = tail if tail is not None and (plan.emit_product or plan.needed <= tail) else -1

    def visit(self, d: int) -> bool:
        """Enumerate depth ``d``; True if some binding below succeeded."""
        plan, nodes, binding = self.plan, self.nodes, self.binding
        parts = plan.participants[d]
        parents = [plan.generators[d](binding)] if d in plan.generators else [nodes[a] for a in parts]
        if d == self.tail:
            return self._product(d, parents)
        if d == self.last and self.bulk:
            return self._bulk_last(d, parents)
        repeats, checks = plan.repeats[d], plan.checks[d + 1]
        existential, deepest = d >= plan.needed, d == self.last
        found = False
        for key in self.intersect(parents):             # leapfrog join of this level
            for a, parent in zip(parts, parents):       # open: descend into each participant
                nodes[a] = parent.children[key]
            binding[d] = key
            if repeats and not self._seek_repeats(repeats, key):
                continue
            if checks and not all(check(binding) for check in checks):
                continue
            if deepest:
                self.emit(binding)
            elif self.trace is None:
                if not self.visit(d + 1):
                    continue
            elif not self._traced(d, key):
                continue
            found = True
            if existential:                             # short-circuit: one witness is enough
                break
        for a, parent in zip(parts, parents):           # up: back to this level's parents
            nodes[a] = parent
        return found

    def _traced(self, d: int, key) -> bool:
        """The depth below ``key``, the trace told: ``open(key)``, the visit, ``up()``."""
        trace = self.trace
        trace.open(key)
        below = self.visit(d + 1)
        trace.up()
        return below

    def _bulk_last(self, d: int, parents) -> bool:
        """The last depth without checks: hand all its keys to the emitter at once."""
        if self.plan.needed <= d and len(parents) == 2:   # existential: one common key is enough
            if parents[0].children.keys().isdisjoint(parents[1].children.keys()):
                return False
            self.emit(self.binding)
            return True
        keys = self.bulk_intersect(parents)
        if not isinstance(keys, _SIZED):
            keys = list(keys)                           # a generator (leapfrog) is always truthy
        if not keys:
            return False
        if self.plan.needed <= d:                       # the last variable is existential
            self.emit(self.binding)
        else:
            self.plan.emit_last(self.binding, keys)
        return True

    def _product(self, d: int, parents) -> bool:
        """A product tail: every combination of the tail atoms' keys is a binding."""
        plan = self.plan
        if plan.needed <= d:                           # nothing below is needed: one witness
            self.emit(self.binding)
        else:
            nodes, participants = self.nodes, plan.participants
            levels = [nodes[participants[t][0]].children.keys() for t in range(d, plan.needed)]
            plan.emit_product(self.binding, levels)
        return True

    def _seek_repeats(self, repeats, key) -> bool:
        """A repeated variable: each repeating atom's next level must hold the key just bound."""
        nodes, trace = self.nodes, self.trace
        for r, a in enumerate(repeats):
            if trace is not None:
                trace.seek(r, key)
            node = nodes[a]
            if key not in node.children:
                return False
            nodes[a] = node.children[key]
        return True
