"""Kept heights after commits, repaired where they changed instead of recomputed for whole
relations (:meth:`datalog.provenance.heights.Heights.refresh` tries this first, and recomputes
the stale relations when it declines).

A fact's least height is the least fixed point of ``h(f) = min over f's instances of
1 + max h(positive premise)`` (0 for an EDB fact or a fact the program states): a system of
*superior* functions, which Knuth's generalisation of Dijkstra's algorithm solves and
Ramalingam and Reps's DynamicSWSF-FP (J. Algorithms 21, 1996) repairs after a change in time
bound by the facts whose height changes and the instances they take part in, not by what lies
downstream of the change.

1. **Seeds**: the only facts whose *instances* (not their premises' heights) can differ are the
   facts the commits touched (inserted or retracted, IDB) and the heads of an instance, before or
   after, with a touched fact in it: one step of derivation forward through the compiled plans,
   the touched facts read at one positive atom, each other atom read from the relation as it is
   now or from its retracted facts (an old instance may have lost several premises at once).
   A clause that reads a touched relation under a negation, an aggregate or a lookup ``p(_)``
   (its plan checks them against the relations as they are now) seeds every fact of its head
   relation: the affected relation is repaired whole, the others are not touched.
2. **Repair**, DynamicSWSF-FP: ``rhs(f)``, the least offer of ``f``'s instances under the heights
   as they stand, is computed for each seed; a fact whose ``rhs`` differs from its kept height is
   *inconsistent* and queued at ``min(rhs, height)``. The least is taken: if ``rhs`` is lower its
   height drops to it and each instance reading it offers its head a new value; if higher its
   height is released (infinite), its ``rhs`` recomputed, and each head that an instance reading
   it supplied its ``rhs`` (the instance's old offer equals it) recomputes its ``rhs``.

It declines (returns None) when the work (seeds and queue steps) grows past ``share`` of the kept
facts or its time past the level pass's (which is then cheaper: a step reads a fact's instances
tuple at a time, tens to a hundred times a fact's share of the pass), or when a fact the relations hold is left without a
height (a premise outside what was repaired has none: a bug guard, never seen).
"""

from __future__ import annotations

import heapq
import time
from itertools import count

from lftj.relation import Relation

from datalog.evaluation.evaluate import Derivation
from datalog.language.ast import Atom
from datalog.language.strata import dependencies
from datalog.planning.plan import Lookup
from datalog.provenance.instances import Instances

INF = float("inf")


def repair(kept, touched: dict[str, set], retracted: dict[str, set], share: float = 0.05,
           budget: float = 1.0):
    """The new heights (relation -> {row: height}) after commits that touched these facts, or
    None when the stale relations must be recomputed (see the module docstring; their kept
    heights may then be part-way repaired): past ``share`` of the kept facts in steps, or past
    ``budget`` seconds (the caller passes half the level pass's last time: a repair that would
    cost more than recomputing stops there)."""
    limit = max(256, int(share * kept.size()))
    if sum(len(rows) for name, rows in touched.items() if name in kept.idb) > limit:
        return None                          # each touched fact is a step at least
    seeds = _seeds(kept, touched, retracted, limit)
    if seeds is None:
        return None
    try:
        _Repair(kept, limit, time.perf_counter() + budget).run(*seeds, touched)
    except _Unsettled:
        return None
    return kept.heights


class _Unsettled(Exception):
    """Past the work limit, or a fact held gets no height: recompute."""


def _guarded(kept, clause) -> set[str]:
    """Relations the clause reads under a negation or an aggregate, or as a lookup ``p(_)``."""
    out = {name for name, sign, _ in dependencies(clause) if sign == "-"}
    plan = kept.plans[clause.index]
    return out | {f.filter.relation for f in plan.filters if isinstance(f.filter, Lookup)}


def _seeds(kept, touched, retracted, limit) -> tuple[dict[str, set], dict[str, set]] | None:
    """(facts whose least offer is recomputed whole, facts whose offer is recomputed only down
    to their kept height) or None past ``limit``: the touched IDB facts and the heads of every
    fact of a relation a touched relation guards are of the first; the heads of an old instance
    that lost a premise, of the second (a lower offer is an instance's that is new, and a new
    instance reads an inserted fact: :meth:`_Repair.run` offers those)."""
    db, idb = kept.db, kept.idb
    changed = {n for n, rows in touched.items() if rows}
    gone = {n: Relation(n, db[n].arity, rows) for n, rows in retracted.items() if rows}
    whole: dict[str, set] = {n: set(touched[n]) for n in changed & idb}
    lost: dict[str, set] = {}
    for clause in kept.clauses:
        head = clause.head.relation
        if _guarded(kept, clause) & changed:
            # p(x) :- q(x), !r(x).   r changed: every p fact is a seed
            whole.setdefault(head, set()).update(db[head].tuples)
            continue
        plan, found, derive = kept.plans[clause.index], set(), None
        for a, atom in enumerate(plan.atoms):
            if atom.relation not in gone:
                continue
            derive = derive or Derivation(plan, db, kept.intersect)
            for sources in _combinations(plan, a, gone[atom.relation], gone):
                found.update(derive(sources))
        held = db[head].tuples
        lost.setdefault(head, set()).update(row for row in found if row in held)
    if sum(map(len, whole.values())) + sum(map(len, lost.values())) > limit:
        return None
    return whole, lost


def _combinations(plan, a: int, recent: Relation, gone: dict):
    """Sources for deriving with atom ``a`` read from ``recent`` and each other atom whose
    relation lost facts read from the relation or from its retracted facts."""
    others = [b for b, atom in enumerate(plan.atoms) if b != a and atom.relation in gone]
    for mask in range(2 ** len(others)):
        sources = {a: recent}
        for bit, b in enumerate(others):
            if mask >> bit & 1:
                sources[b] = gone[plan.atoms[b].relation]
        yield sources


class _Repair:
    """DynamicSWSF-FP over the kept heights (changed in place): ``rhs`` holds the inconsistent
    facts' least offers; a consistent fact's is its height."""

    def __init__(self, kept, limit: int, deadline: float):
        self.db, self.idb, self.base, self.heights = kept.db, kept.idb, kept.base, kept.heights
        self.limit, self.work, self.deadline = limit, 0, deadline
        self.rules: dict[str, list[Instances]] = {}        # relation -> the evaluators of its rules
        self.readers: dict[str, list] = {}                 # relation -> (evaluator, positive atom reading it)
        for evaluator in kept.evaluators:
            self.rules.setdefault(evaluator.clause.head.relation, []).append(evaluator)
            for literal in evaluator.clause.body:
                if isinstance(literal, Atom):
                    self.readers.setdefault(literal.relation, []).append((evaluator, literal))
        self.rhs: dict[tuple, float] = {}
        self.queue: list = []
        self.sequence = count()
        self.released: set = set()         # facts whose height was released (to check at the end)

    def run(self, whole: dict[str, set], lost: dict[str, set], touched: dict[str, set]) -> None:
        for name, rows in lost.items():
            base = self.base.get(name, ())
            for row in rows:
                if row not in base and row not in whole.get(name, ()):
                    # p(x, z) :- p(x, y), e(y, z).   lost e(1, 2): p(x, 2) may rise
                    fact = (name, row)
                    self._update(fact, self.height(fact))
        for name, rows in whole.items():
            base = self.base.get(name, ())
            for row in rows:
                if row not in base:
                    self._update((name, row))
        for name, rows in touched.items():
            if name in self.idb:
                continue            # a new IDB fact offers once it has a height (_lower)
            held = self.db[name].tuples
            for row in rows:
                if row in held:     # e(2, 3) inserted: p(x, 3) is offered 1 + h(p(x, 2))
                    self._offers((name, row))
        seeds = {**lost, **{n: lost.get(n, set()) | rows for n, rows in whole.items()}}
        while self.queue:
            key, _, fact = heapq.heappop(self.queue)
            rhs = self.rhs.get(fact)
            if rhs is None:
                continue                    # consistent since it was queued
            height = self.height(fact)
            if min(rhs, height) != key:
                continue                    # queued again at another key
            if rhs == height:
                del self.rhs[fact]          # an offer brought it back to its height
                continue
            self._step()
            if rhs < height:
                self._lower(fact, rhs)
            else:
                self._release(fact, height)
        for fact in self.released | {(n, row) for n, rows in seeds.items() for row in rows}:
            name, row = fact
            if (row in self.db[name].tuples and row not in self.heights.get(name, {})
                    and row not in self.base.get(name, ())):
                raise _Unsettled

    def height(self, fact) -> float:
        name, row = fact
        if name not in self.idb or row in self.base.get(name, ()):
            return 0
        return self.heights.get(name, {}).get(row, INF)

    def _step(self) -> None:
        self.work += 1
        if self.work > self.limit or (self.work % 64 == 0 and time.perf_counter() > self.deadline):
            raise _Unsettled

    def _lower(self, fact, rhs: float) -> None:
        """The height drops to ``rhs``; each instance reading the fact offers its head a value."""
        name, row = fact
        self.heights.setdefault(name, {})[row] = rhs
        del self.rhs[fact]
        self._offers(fact)

    def _offers(self, fact) -> None:
        """Each instance reading the fact offers its head its value."""
        least = self.height(fact) + 1                   # no instance reading it offers less
        for head, evaluator, subst in self._readers(fact):
            now = self.rhs.get(head, self.height(head))
            if least >= now:
                continue
            offer = self._offer(evaluator, subst)
            if offer < now:
                self.rhs[head] = offer
                self._queue(head, min(offer, self.height(head)))

    def _release(self, fact, height: float) -> None:
        """The height rises: released, then the fact and each head whose least offer came
        through it recompute their offers."""
        name, row = fact
        self.heights.get(name, {}).pop(row, None)
        self.released.add(fact)
        self._update(fact, self.rhs[fact])     # its own instances may read it: its offer only rises
        for head, evaluator, subst in self._readers(fact):
            now = self.rhs.get(head, self.height(head))
            if height + 1 <= now and self._offer(evaluator, subst, (fact, height)) == now:
                self._update(head, now)         # heights only rose: no offer is below the old

    def _readers(self, fact):
        """(head, evaluator, binding) of each instance that reads ``fact`` at a positive atom."""
        name, row = fact
        for evaluator, atom in self.readers.get(name, ()):
            head = evaluator.clause.head.relation
            held = self.db[head].tuples
            for out, subst in evaluator.using(atom, row):
                if out in held and out not in self.base.get(head, ()):
                    yield (head, out), evaluator, subst

    def _offer(self, evaluator, subst, old=None) -> float:
        """1 + the highest height of the instance's premises (``old``: (fact, the height to
        read for it))."""
        highest = 0
        for premise in evaluator.premise_rows(subst):
            h = old[1] if old is not None and premise == old[0] else self.height(premise)
            if h > highest:
                highest = h
        return highest + 1

    def _update(self, fact, floor: float = 1) -> None:
        """Recompute the fact's least offer (none is below ``floor``); queue it if it differs
        from its height."""
        self._step()
        rhs = self._least_offer(fact, floor)
        height = self.height(fact)
        if rhs == height:
            self.rhs.pop(fact, None)
            return
        self.rhs[fact] = rhs
        self._queue(fact, min(rhs, height))

    def _least_offer(self, fact, floor: float = 1) -> float:
        name, row = fact
        if row not in self.db[name].tuples:
            return INF
        best = INF
        for evaluator in self.rules.get(name, ()):
            for subst in evaluator.of(row):
                offer = self._offer(evaluator, subst)
                if offer < best:
                    best = offer
                    if best <= floor:
                        return best
        return best

    def _queue(self, fact, key: float) -> None:
        heapq.heappush(self.queue, (key, next(self.sequence), fact))
