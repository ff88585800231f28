"""Kept heights after a commit, repaired where the commit can have changed them instead of
recomputed for whole relations (:meth:`datalog.provenance.heights.Heights.refresh` tries this
first, and recomputes the stale relations when it declines).

1. **Suspects**: the facts the commits touched (inserted or retracted, EDB and IDB), and every IDB
   fact with a rule instance, before or after, that has a suspect among its positive premises:
   a closure forward through the compiled plans, each positive atom read from the suspects found
   last, the others from the relations as they are now or from their retracted facts (an old
   instance may have lost several premises at once). A fact outside it keeps its height: its
   least proof touches nothing that changed, and a lower one would need an instance that did.
2. **Heights of the suspects still held**, by Knuth's generalisation of Dijkstra's algorithm
   (height = 1 + max of the premises is superior): each suspect's instances are read head first
   (:class:`~datalog.provenance.instances.Instances`); one whose derived premises are all settled
   offers its height; the least offer settles its fact, which then counts down the instances
   waiting on it.

It declines (returns None) when a touched or suspect relation is read under a negation, an
aggregate or a lookup ``p(_)`` (the instances of a reader could change without a positive
premise changing), or when the suspects grow past ``share`` of the kept facts (the level pass
is then cheaper).
"""

from __future__ import annotations

import heapq

from lftj.relation import Relation

from datalog.evaluation.evaluate import Derivation
from datalog.language.strata import dependencies
from datalog.planning.plan import Lookup
from datalog.provenance.explain import _named_wildcards
from datalog.provenance.instances import Instances


def repair(kept, touched: dict[str, set], retracted: dict[str, set], share: float = 0.02):
    """The new heights (relation -> {row: height}) after commits that touched these facts, or
    None when the stale relations must be recomputed (see the module docstring; their kept
    heights may then be part-way repaired)."""
    guarded = _guarded(kept)
    if guarded & set(touched):
        return None
    limit = max(64, int(share * kept.size()))
    suspects = _suspects(kept, touched, retracted, guarded, limit)
    if suspects is None:
        return None
    heights = kept.heights        # changed in place: on a decline below, the stale relations
    for name, rows in suspects.items():                 # (the suspects' among them) are recomputed
        mine = heights.setdefault(name, {})
        for row in rows:
            mine.pop(row, None)
    try:
        _settle(kept, heights, suspects)
    except _Unsettled:
        return None
    return heights


class _Unsettled(Exception):
    """A premise outside the suspects has no kept height, or a suspect gets none: recompute."""


def _guarded(kept) -> set[str]:
    """Relations some clause reads under a negation or an aggregate, or as a lookup ``p(_)``."""
    out = {name for clause in kept.clauses for name, sign, _ in dependencies(clause) if sign == "-"}
    for clause in kept.clauses:
        plan = kept.plans[clause.index]
        out |= {f.filter.relation for f in plan.filters if isinstance(f.filter, Lookup)}
    return out


def _suspects(kept, touched, retracted, guarded, limit) -> dict[str, set] | None:
    db, idb = kept.db, kept.idb
    gone = {n: Relation(n, db[n].arity, rows) for n, rows in retracted.items() if rows}
    suspects: dict[str, set] = {n: {row for row in rows if row in db[n].tuples or row in retracted.get(n, ())}
                                for n, rows in touched.items() if n in idb}
    frontier = {n: set(rows) for n, rows in touched.items() if rows}
    count = sum(len(r) for r in suspects.values())
    plans = [(c.head.relation, kept.plans[c.index]) for c in kept.clauses]
    derivations: dict = {}
    while frontier:
        if guarded & set(frontier):
            return None
        found: dict[str, set] = {}
        for head, plan in plans:
            for a, atom in enumerate(plan.atoms):
                rows = frontier.get(atom.relation)
                if not rows:
                    continue
                recent = Relation(atom.relation, db[atom.relation].arity, rows)
                for sources in _combinations(plan, a, recent, gone):
                    derive = derivations.get(id(plan))
                    if derive is None:
                        derive = derivations[id(plan)] = Derivation(plan, db, kept.intersect)
                    found.setdefault(head, set()).update(derive(sources))
        frontier = {}
        for name, rows in found.items():
            held = db[name].tuples
            new = {row for row in rows if row in held and row not in suspects.setdefault(name, set())}
            if new:
                suspects[name] |= new
                frontier[name] = new
                count += len(new)
        if count > limit:
            return None
    return suspects


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


def _settle(kept, heights: dict, suspects: dict[str, set]) -> None:
    """Knuth's algorithm over the suspects still held: each offer is 1 + the highest derived
    premise of an instance whose derived premises are settled; the least offer settles."""
    db, base = kept.db, kept.base
    evaluators = _evaluators(kept)
    open_: dict = {}                 # suspect -> instances waiting on it: [count, highest, head]
    offers: list = []                # (height, sequence, fact): rows of some types do not compare
    sequence = iter(range(1 << 62))
    pending = {(n, row) for n, rows in suspects.items() for row in rows
               if row in db[n].tuples and row not in base.get(n, ())}
    for fact in pending:
        relation, row = fact
        for evaluator in evaluators.get(relation, ()):
            for binding in evaluator.of(row):
                waiting, highest = set(), 0
                for p in evaluator.premise_rows(binding):
                    name, prow = p
                    if name not in kept.idb or prow in base.get(name, ()):
                        continue
                    if p in pending:
                        waiting.add(p)
                        continue
                    h = heights.get(name, {}).get(prow)
                    if h is None:
                        raise _Unsettled
                    highest = max(highest, h)
                if not waiting:
                    heapq.heappush(offers, (highest + 1, next(sequence), fact))
                    continue
                entry = [len(waiting), highest, fact]
                for p in waiting:
                    open_.setdefault(p, []).append(entry)
    settled: set = set()
    while offers:
        h, _, fact = heapq.heappop(offers)
        relation, row = fact
        if fact in settled:
            continue
        settled.add(fact)
        heights.setdefault(relation, {})[row] = h
        for entry in open_.pop(fact, ()):
            entry[0] -= 1
            entry[1] = max(entry[1], h)
            if entry[0] == 0:
                heapq.heappush(offers, (entry[1] + 1, next(sequence), entry[2]))
    if pending - settled:
        raise _Unsettled


def _evaluators(kept) -> dict[str, list[Instances]]:
    out: dict[str, list[Instances]] = {}
    for clause in kept.clauses:
        out.setdefault(clause.head.relation, []).append(Instances(kept.db, _named_wildcards(clause)))
    return out
