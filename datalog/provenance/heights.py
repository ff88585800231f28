"""Kept heights (``--provenance``): every IDB fact's least proof height, so that ``why`` finds a
proof by local lookups instead of a search.

Heights are Soufflé's: an EDB fact (or a fact the program states) has height 0; a rule instance
has one more than the highest of its positive body facts; a fact has the least height of its
instances. They are computed by **semi-naive rounds over heights**, one round a level, over the
whole program at once (heights cross strata: a fact of an upper stratum may be lower than one of
its own stratum's facts it does not need):

    known_0  = the EDB relations, the program's facts of IDB relations    (height 0)
    level_k  = { head of an instance whose positive atoms read known_{k-1}, one of them
                 level_{k-1} } ∩ the relations as evaluated  −  known_{k-1}
    known_k  = known_{k-1} ∪ level_k

The instances are the compiled plans' (leapfrog triejoin, as evaluation runs them), each
positive atom of an IDB relation read from ``known`` or ``level`` (``sources``), negated atoms
and aggregates from the evaluated relations (they are of lower strata: complete, and they add
nothing to a height). A fact first reached at level k has least height k: an instance of height
< k would have put it in an earlier level.

After a commit, the heights of the relations it changed and of every relation downstream of
them are stale. The commit itself repairs them where it changed them (:mod:`repair`: Ramalingam
and Reps's dynamic form of Knuth's algorithm, work bound by the facts whose height changes): one
commit's repair is small, where a thousand commits' repair at once reaches past what a repair
takes on (13% of Andersen's facts change height over 1,000 single-tuple commits). When the repair
declines (too many facts touched, or past half the level pass's last time), the heights stay
stale and the first question after recomputes the stale relations by the level pass (the other
relations' facts are released into ``known`` at their kept levels).

>>> from datalog.engine.engine import Engine
>>> e = Engine.from_source("e(1,2). e(2,3). e(3,4). p(x,y) :- e(x,y). p(x,z) :- p(x,y), e(y,z).",
...                        provenance=True)
>>> e.run()
>>> [e.heights.of("p", (1, n)) for n in (2, 3, 4)]
[1, 2, 3]
"""

from __future__ import annotations

import time

from lftj.relation import Relation

from datalog.evaluation.evaluate import Derivation
from datalog.language.errors import InternalError
from datalog.language.strata import dependencies
from datalog.planning.plan import Lookup
from datalog.provenance.explain import _named_wildcards
from datalog.provenance.instances import Instances
from datalog.provenance.repair import repair


REPAIR_LIMIT = 100_000      # facts touched since the heights were last brought up to date (by a commit's
                            # repair or a question) past which, and past the kept facts' number, they are
                            # recomputed


class Heights:
    """relation -> {row: least height} of the IDB relations of ``db`` as evaluated; stale
    relations (``dirty``) are brought up to date on the next :meth:`of` or :meth:`refresh`."""

    def __init__(self, clauses, plans: dict, db: dict, base: dict[str, set], intersect: str = "hash"):
        self.clauses = [c for c in clauses if c.body]
        self.plans, self.db, self.base, self.intersect = plans, db, base, intersect
        self.idb = {c.head.relation for c in self.clauses}
        self.heights: dict[str, dict[tuple, int]] = {}
        self.dirty: set[str] = set(self.idb)
        self.downstream = _downstream(self.clauses)
        # each clause's rule instances, read by a repair and a proof (made once: a repair runs each commit)
        self.evaluators = [Instances(db, _named_wildcards(c)) for c in self.clauses]
        self.touched: dict[str, set] | None = None     # facts the commits since the last refresh
        self.retracted: dict[str, set] = {}             # touched, and those they retracted (None: unknown)
        self.recomputed = 0            # level passes made (tests and the benchmark read them)
        self.repaired = 0              # repairs made (:mod:`repair`)
        self.declined = 0              # repairs declined (the level pass ran or is to run instead)
        self.pass_seconds = 0.0        # the last level pass's time: a repair's budget

    def changed(self, delta: dict) -> None:
        """A commit changed the relations of ``delta`` (relation -> Change): their heights and
        those downstream are stale; the facts it touched are noted for :func:`repair.repair`."""
        if not self.dirty:
            self.touched, self.retracted = {}, {}
        for name, change in delta.items():
            self.dirty |= self.downstream.get(name, set()) & self.idb
            if self.touched is not None:
                self.touched.setdefault(name, set()).update(change.inserted, change.retracted)
                self.retracted.setdefault(name, set()).update(change.retracted)
        if self.touched is not None and sum(map(len, self.touched.values())) > max(REPAIR_LIMIT, self.size()):
            self.touched, self.retracted = None, {}      # too many to follow: recompute
        if self.heights and self.touched is not None:
            self.refresh(recompute=False)                # maintained at the commit, where it is small

    def invalidate(self) -> None:
        """Everything is stale (the program or the relations were replaced)."""
        self.dirty, self.touched, self.retracted = set(self.idb), None, {}

    def of(self, relation: str, row: tuple) -> int | None:
        """The least height of a fact the relation holds (None: not held)."""
        if relation not in self.idb:
            return 0 if row in self.db[relation] else None
        if row in self.base.get(relation, ()):
            return 0
        if self.dirty:
            self.refresh()
        return self.heights[relation].get(row)

    def refresh(self, recompute: bool = True) -> None:
        """Bring the stale relations' heights up to date: a repair of what the commits reached
        (:func:`repair.repair`), else a semi-naive pass over their levels (``recompute=False``: a
        declined repair leaves them stale for the next question instead)."""
        if not self.dirty:
            return
        touched, retracted = self.touched, self.retracted
        stale, self.dirty, self.touched, self.retracted = self.dirty, set(), None, {}
        if touched and self.heights:
            try:
                repaired = repair(self, touched, retracted, budget=max(1.0, self.pass_seconds / 2))
            except BaseException:             # stopped part-way (Ctrl-C): the next question recomputes
                self.dirty, self.touched, self.retracted = stale | self.dirty, None, {}
                raise
            if repaired is not None:
                self.heights = repaired
                self.repaired += 1
                return
            self.declined += 1
        if not recompute:
            self.dirty = stale                # touched is None: the next question recomputes
            return
        started = time.perf_counter()
        try:
            fixed = {n: h for n, h in self.heights.items() if n not in stale}
            self.heights = {**fixed, **_levels(self, stale, fixed)}
            self.pass_seconds = time.perf_counter() - started
        except BaseException:
            self.dirty = stale | self.dirty
            raise
        self.recomputed += 1
        if self.recomputed == 1:
            self._prepare()

    def _prepare(self) -> None:
        """Build, with the first heights, the trie indexes through which a question reads a
        fact's instances and a repair the instances that read a fact: kept up to date by the
        commits from then on, as they would be once a first question had built them."""
        for evaluator in self.evaluators:
            evaluator.prepare()

    def size(self) -> int:
        return sum(len(h) for h in self.heights.values())


def _levels(kept: Heights, stale: set[str], fixed: dict) -> dict[str, dict[tuple, int]]:
    """The heights of the ``stale`` relations by semi-naive rounds over levels; the facts of the
    other IDB relations enter at their ``fixed`` heights."""
    db, idb = kept.db, kept.idb
    out = {n: {} for n in stale}
    known = {n: Relation(n, db[n].arity, db[n].tuples & set(kept.base.get(n, ()))) for n in idb}
    level = {n: Relation(n, db[n].arity, known[n].tuples) for n in idb}
    waiting = _by_level(fixed)                       # level -> {relation: rows} of the fixed heights
    steps = [_Step(c, kept.plans[c.index], db, known, kept.intersect) for c in kept.clauses
             if c.head.relation in stale]
    k = 0
    while True:
        k += 1
        for name, rows in waiting.pop(k - 1, {}).items():     # fixed facts of height k - 1
            level[name] = Relation(name, db[name].arity, known[name].insert(rows))
        derived: dict[str, set] = {n: set() for n in stale}
        for step in steps:
            derived[step.head].update(step.derive(k, level))
        grown = False
        for name, rows in derived.items():
            held, mine = db[name].tuples, out[name]
            new = [row for row in rows if row in held and row not in known[name].tuples]
            for row in new:
                mine[row] = k
            level[name] = Relation(name, db[name].arity, known[name].insert(new))
            grown = grown or bool(new)
        for name in idb - stale:
            level[name] = Relation(name, db[name].arity)
        if not grown and not waiting:
            return out


class _Step:
    """One clause's derivations at a level: once with each positive IDB atom read from the last
    level (the others from ``known``), or whole when a positive lookup ``p(_)`` of an IDB
    relation grew."""

    def __init__(self, clause, plan, db, known, intersect):
        self.head = clause.head.relation
        self.atoms = [(a, atom.relation) for a, atom in enumerate(plan.atoms) if atom.relation in known]
        self.lookups = {f.filter.relation for f in plan.filters if isinstance(f.filter, Lookup)
                        and not f.filter.negated and f.filter.relation in known}
        negated = {f.filter.relation for f in plan.filters if isinstance(f.filter, Lookup) and f.filter.negated}
        if self.lookups & negated:
            raise InternalError(f"kept heights: {clause} both tests and negates {sorted(self.lookups & negated)}")
        self.derivation = Derivation(plan, db, intersect)
        # r(1, _) reads what is known; negations and aggregates (of r too) the evaluated relations
        reads = {**db, **{n: known[n] for n in self.lookups}}
        checks = self.derivation.joined.checks
        for depth in range(len(checks)):
            checks[depth] = []
        for f in plan.filters:
            positive = isinstance(f.filter, Lookup) and not f.filter.negated
            checks[f.depth + 1].append(f.make(reads if positive else db))
        self.known = known

    def derive(self, k: int, level: dict) -> list:
        out: list = []
        base = {a: self.known[n] for a, n in self.atoms}
        if k == 1 or any(level[n] for n in self.lookups):
            out.extend(self.derivation(base))
            return out
        for a, name in self.atoms:
            if level[name]:
                # path(x, z) :- path(x, y), edge(y, z).   path read from the facts of height k - 1
                out.extend(self.derivation({**base, a: level[name]}))
        return out


def _by_level(fixed: dict[str, dict[tuple, int]]) -> dict[int, dict[str, list]]:
    out: dict[int, dict[str, list]] = {}
    for name, heights in fixed.items():
        for row, h in heights.items():
            out.setdefault(h, {}).setdefault(name, []).append(row)
    return out


def _downstream(clauses) -> dict[str, set[str]]:
    """relation -> itself and every IDB relation whose rules read it, directly or not (through
    positive, negated and aggregated atoms alike: an instance may come or go with any of them)."""
    readers: dict[str, set[str]] = {}
    for clause in clauses:
        for name, _, _ in dependencies(clause):
            readers.setdefault(name, set()).add(clause.head.relation)
    out: dict[str, set[str]] = {}
    for start in set(readers) | {c.head.relation for c in clauses}:
        seen, todo = {start}, [start]
        while todo:
            for reader in readers.get(todo.pop(), ()):
                if reader not in seen:
                    seen.add(reader)
                    todo.append(reader)
        out[start] = seen
    return out
