"""The GYO reduction of :mod:`.gyo`, step for step, in near-linear time (issue 23).

:func:`.gyo.reduce` finds each step by its definition: the first hyperedge of the sorted
hyp(F) with a filter (FLT), else the first with isolated variables (ISO), else the first pair
(e, ℓ) with e ⊑ ℓ (CSE) -- recomputing jev, isol and ext over the whole triplet for every
candidate, about n⁴ for a body of n atoms (81 atoms: 8 s; 300: more than 5 minutes).
:class:`IndexedTriplet` takes the same steps in the same order, enacted on the forest the same
way, so Algorithm 3 builds the same tree; what changes is how the next step is found:

* indexes: per variable the hyperedges holding it (so jev(x) is a count) and the predicates
  touching it; per hyperedge its roots in the forest;
* per hyperedge e its *ear status* -- the step :func:`.gyo.reduce` would take on e: FLT with
  every θ ⊆ e, else ISO with isol(e), else CSE with the first ℓ in sorted order such that
  e ⊑ ℓ -- kept in a heap ordered as the definition scans (FLT < ISO < CSE, then sorted(e));
* after a step, only the statuses the step can have changed are recomputed (:meth:`_affected`).

The conditional subset needs no scan: when neither FLT nor ISO applies to e, every variable of
e is an equijoin variable or sits in a predicate that leaves e, and e ⊑ ℓ iff ℓ ⊇ req(e) :=
jev(e) ∪ {w ∉ e : θ touches a non-jev u ∈ e, w ∈ var(θ)} (a non-jev u is in no other
hyperedge, so u ∉ ℓ and ext(e ∖ ℓ) ⊆ ℓ asks for every such w; req(e) is never empty then).
The candidates ℓ are therefore among the hyperedges holding the rarest variable of req(e).
"""

from __future__ import annotations

import bisect
import heapq

from .query import Predicate
from .tree import Node

FLT, ISO, CSE = 0, 1, 2          # the order in which the definition looks for a step


class IndexedTriplet:
    """A GJF triplet (forest, out, pred) with the indexes that find each next step in time
    proportional to what the previous step changed. Same interface as :class:`.gyo.ForestTriplet`
    for Algorithm 3: ``roots``, ``preds``, ``out`` (``clear_out`` for stage 2), ``reduce``, ``is_empty``."""

    def __init__(self, roots: list[Node], out: frozenset[str], preds: list[Predicate]):
        self.out = frozenset(out)
        self._roots: dict[int, Node] = {}                       # id -> root, in forest order
        self._groups: dict[frozenset, list[Node]] = {}          # label -> its roots, in order
        self._edges_of: dict[str, set[frozenset]] = {}          # x -> non-empty labels holding x
        self._in_order: dict[str, list[tuple]] = {}             # x -> their sorted(label)s, sorted
        self._position = {p: i for i, p in enumerate(dict.fromkeys(preds))}   # alive θ -> order in pred(Q)
        self._vars = {p: p.variables() for p in self._position}
        self._preds_of: dict[str, set[Predicate]] = {}
        for p, variables in self._vars.items():
            for v in variables:
                self._preds_of.setdefault(v, set()).add(p)
        self._key: dict[frozenset, tuple] = {}                  # label -> sorted(label), hyp's order
        self._label: dict[tuple, frozenset] = {}                # and back
        self._status: dict[frozenset, tuple | None] = {}
        self._version: dict[frozenset, int] = {}
        self._heap: list = []
        self._required: dict[frozenset, frozenset] = {}         # req(e) of a label with no FLT/ISO
        self._needs: dict[str, set[frozenset]] = {}             # x -> labels whose req holds x
        self._partner_of: dict[frozenset, set[frozenset]] = {}  # ℓ -> labels whose CSE partner is ℓ
        for root in roots:
            self._add_root(root)
        self._refresh(set(self._groups))

    # ------------------------------------------------------------ the triplet, as read by Algorithm 3
    @property
    def roots(self) -> list[Node]:
        return list(self._roots.values())

    @property
    def preds(self) -> list[Predicate]:
        return sorted(self._position, key=self._position.__getitem__)

    def hyp(self) -> list[frozenset[str]]:
        return sorted((e for e in self._groups if e), key=self._key.__getitem__)

    def is_empty(self) -> bool:
        return not any(self._groups) and not self._position

    def clear_out(self) -> None:
        """Stage 2 reduces the residual: out = ∅ changes jev everywhere."""
        self.out = frozenset()
        self._refresh(set(self._groups))

    def reduce(self) -> IndexedTriplet:
        """Enact the definition's next step until none applies (lines 3-4 and 7-8 of Algorithm 3)."""
        while (step := self._next_step()) is not None:
            kind, e, arg = step
            before = {v: self._jev(v) for v in e | (arg if kind == CSE else frozenset())}
            changed = (self._flt, self._iso, self._cse)[kind](e, arg)
            self._refresh(self._affected(e, before, *changed))
        return self

    # ------------------------------------------------------------ the three enactments (as .gyo's)
    def _iso(self, e, isolated):
        n = self._merge(e)
        self._drop(e)
        added = self._add_root(Node.interior(e - isolated, [n]))
        return [e], added, []

    def _cse(self, e, l):
        gone = e - l
        theta = sorted({p for v in gone for p in self._preds_of.get(v, ())}, key=self._position.__getitem__)
        n, m = self._merge(e), self._merge(l)
        self._drop(e)
        self._add_root(Node.interior(l, [n, m], preds=[tuple(theta), ()]))
        self._remove_preds(theta)
        return [e], [], theta

    def _flt(self, e, theta):
        group = self._take(e)
        self._add_root(Node.interior(e, group, preds=[tuple(theta)] + [()] * (len(group) - 1)))
        self._remove_preds(theta)
        return [], [], theta

    def _merge(self, e) -> Node:
        group = self._take(e)
        return group[0] if len(group) == 1 else Node.interior(e, group)

    # ------------------------------------------------------------ forest and indexes
    def _add_root(self, node: Node) -> list[frozenset]:
        """Put ``node`` in the forest; [its label] if the label is new to hyp(F)."""
        label = frozenset(node.vars)
        self._roots[node.id] = node
        self._groups.setdefault(label, []).append(node)
        if not label or label in self._key:
            return []
        key = self._key[label] = tuple(sorted(label))
        self._label[key] = label
        for v in label:
            self._edges_of.setdefault(v, set()).add(label)
            bisect.insort(self._in_order.setdefault(v, []), key)
        return [label]

    def _take(self, label) -> list[Node]:
        """Take the roots labelled ``label`` out of the forest (to be put back under a new node)."""
        group = self._groups.pop(label)
        for node in group:
            del self._roots[node.id]
        return group

    def _drop(self, label) -> None:
        """``label`` has left hyp(F): out of the indexes, its status forgotten."""
        key = self._key.pop(label)
        del self._label[key]
        for v in label:
            self._edges_of[v].discard(label)
            keys = self._in_order[v]
            del keys[bisect.bisect_left(keys, key)]
        self._forget(label)

    def _remove_preds(self, theta) -> None:
        for p in theta:
            del self._position[p]
            for v in self._vars[p]:
                self._preds_of[v].discard(p)

    def _jev(self, v: str) -> bool:
        return v in self.out or len(self._edges_of.get(v, ())) >= 2

    def _isolated(self, v: str) -> bool:
        return not self._jev(v) and not self._preds_of.get(v)

    # ------------------------------------------------------------ ear statuses
    def _status_of(self, e):
        """The step the definition would take on e: (FLT, e, θs) | (ISO, e, X) | (CSE, e, ℓ) | None."""
        theta = {p for v in e for p in self._preds_of.get(v, ()) if self._vars[p] <= e}
        if theta:
            return FLT, e, sorted(theta, key=self._position.__getitem__)
        isolated = {v for v in e if self._isolated(v)}
        if isolated:
            return ISO, e, isolated
        required = frozenset(v for v in e if self._jev(v)) | frozenset(
            w for u in e if not self._jev(u) for p in self._preds_of.get(u, ()) for w in self._vars[p] if w not in e)
        self._required[e] = required
        for v in required:
            self._needs.setdefault(v, set()).add(e)
        rarest = min(required, key=lambda v: len(self._edges_of.get(v, ())))
        partner = next((l for l in map(self._label.__getitem__, self._in_order.get(rarest, ()))
                        if l != e and required <= l), None)       # the first in hyp's order
        if partner is None:
            return None
        self._partner_of.setdefault(partner, set()).add(e)
        return CSE, e, partner

    def _forget(self, e) -> None:
        """Drop e's status and what it registered in the reverse indexes."""
        status = self._status.pop(e, None)
        self._version[e] = self._version.get(e, 0) + 1
        for v in self._required.pop(e, ()):
            self._needs[v].discard(e)
        if status is not None and status[0] == CSE:
            self._partner_of.get(status[2], set()).discard(e)

    def _refresh(self, labels) -> None:
        for e in labels:
            if e in self._key:
                self._forget(e)
                status = self._status[e] = self._status_of(e)
                if status is not None:
                    heapq.heappush(self._heap, (status[0], self._key[e], self._version[e], e))

    def _next_step(self):
        """The heap's first live status: the step the definition's scan would find first."""
        while self._heap:
            kind, _, version, e = self._heap[0]
            if self._version.get(e) == version and e in self._key:
                return self._status[e]
            heapq.heappop(self._heap)
        return None

    def _affected(self, e, before: dict, removed, added, theta) -> set[frozenset]:
        """The labels whose status the step may have changed: the labels it created; those whose
        CSE partner it removed; those holding a variable whose jev it flipped; those a removed θ
        filtered (θ ⊆ label) or touched at a non-jev variable; those whose req fits a new label."""
        dirty = {e, *added}
        for label in removed:
            dirty |= self._partner_of.pop(label, set())
        for v, was in before.items():
            if self._jev(v) != was:
                dirty |= self._edges_of.get(v, set())
        for p in theta:
            variables = self._vars[p]
            rarest = min(variables, key=lambda v: len(self._edges_of.get(v, ())))
            dirty |= {label for label in self._edges_of.get(rarest, ()) if variables <= label}
            dirty |= {label for v in variables if not self._jev(v) for label in self._edges_of.get(v, ())}
        for label in added:
            for v in label:
                dirty |= {other for other in self._needs.get(v, ()) if self._required[other] <= label}
        return dirty
