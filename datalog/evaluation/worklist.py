"""Tuple at a time: a recursive stratum of linear rules, evaluated from a worklist.

A rule is linear in its stratum when at most one of its atoms reads a relation of the stratum
(``b(x + 1) :- a(x), x < 10.``, ``path(x, z) :- path(x, y), edge(y, z).``). Each of its
derivations then uses exactly one tuple of the stratum; its other atoms read lower strata,
complete before it. So every tuple of the stratum, taken once from a worklist, is pushed through
the rules whose stratum atom it fills -- that atom given, its variables bound from the tuple
(:func:`datalog.planning.planner.plan_delta`) -- and what they derive that is new joins the
worklist. That is semi-naive's fixpoint (each tuple read once, as ``recent``) without the fixed
cost of a round (its relations, tries and join plans: ~10 us, the whole cost of a chain of thin
rounds such as a counter of a million steps).

Adaptive: when more than ``BATCH`` tuples of a relation wait, they are read at once as a
semi-naive round reads its ``recent`` tuples (the compiled plan's triejoin, whole trie levels
emitted in bulk), cheaper per tuple than one at a time.

Used from scratch only (:func:`datalog.evaluation.fixpoint.fixpoint`; maintenance keeps its own
loops), and only where nothing acts per round or per binding: no choice-domain, subsumption,
``.limitsize``, autoinc(), range with variable bounds, ``.plan`` or ``// @order``; every stratum
atom is opened (no lookup such as ``p(_)``) and holds variables, constants and wildcards only.
Elsewhere :func:`linear` says None and the semi-naive loop runs.
"""

from __future__ import annotations

from typing import Callable

from lftj.relation import Relation
from lftj.triejoin import triejoin

from datalog.evaluation.compile import compile_plan
from datalog.evaluation.evaluate import BULK_INTERSECT, INTERSECT, Derivation, join_plan
from datalog.language import ast
from datalog.planning.order import pragma_order
from datalog.evaluation.scan import RowReader
from datalog.planning.plan import Assign, Lookup
from datalog.planning.planner import counts, generates, plan_delta
from datalog.language.display import plural

BATCH = 32              # more tuples of a relation waiting than this: read as one round
MASK = (1 << 12) - 1    # a progress line every 4,096 tuples taken


def linear(stratum, plans: list) -> list[tuple] | None:
    """The rules of a recursive stratum, each with the position of its stratum atom (None: a
    base rule), when the worklist evaluates the stratum; None when it does not."""
    members = set(stratum.relations)
    if not stratum.recursive or stratum.constrained or stratum.limits:
        return None
    out = []
    for plan in plans:
        clause = plan.clause
        if counts(clause) or generates(clause) or pragma_order(clause) is not None or \
                any(isinstance(f.filter, Lookup) and f.filter.relation in members for f in plan.filters):
            return None
        positions = [a for a, atom in enumerate(plan.atoms) if atom.relation in members]
        if len(positions) > 1 or (positions and plan_delta(plan.plan, positions[0]) is None):
            return None
        out.append((plan, positions[0] if positions else None))
    return out


class Firing:
    """A rule with its stratum atom given: ``step(row)`` adds to the head relation the head
    tuples of the rule's bindings in which the atom holds ``row`` (read from the delta plan, the
    row's values its parameters) and puts those that are new on ``waiting``, the head's
    worklist."""

    def __init__(self, plan, position: int, db, intersect: str, waiting: list):
        atom = plan.atoms[position].atom
        delta = compile_plan(plan_delta(plan.plan, position))
        self.relation, self.target = atom.relation, db[plan.clause.head.relation]
        self.size, self.head, self.plan, self.db = len(delta.slots), delta.head, delta, db
        self.waiting = waiting
        reader = self.reader = RowReader(atom, delta.slots)
        self.params = reader.params
        self.fits = reader.fits if reader.constants or reader.same else None
        self.add = _adder(self.target, waiting)
        self.sink: list = []
        head, append = delta.head, self.sink.append
        self.emit = lambda b: append(head(b))
        self.joined = join_plan(delta, db, self.sink.extend)
        self.intersect, self.bulk = INTERSECT[intersect], BULK_INTERSECT[intersect]
        self.roots = [(db[a.relation].index(a.order), a.prefix) for a in delta.atoms]
        if _independent(delta, set(reader.names)):
            self.step = self._fixed()
        elif delta.depth == 0:
            self.step = self._checked()
        else:
            self.step = self._joined

    def _joined(self, row) -> None:
        """The delta plan's triejoin, its atoms positioned at the row's values."""
        if self.fits is not None and not self.fits(row):
            return
        binding = [None] * self.size
        for slot, c in self.params:
            binding[slot] = row[c]
        sink, add = self.sink, self.add
        triejoin(self.joined, self._positioned(binding), self.emit, self.intersect, binding, self.bulk)
        for derived in sink:
            add(derived)
        sink.clear()

    def _positioned(self, binding: list) -> list:
        """The delta plan's atoms' tries, each below its constants and parameters."""
        roots = []
        for node, prefix in self.roots:
            for value in prefix:
                if node is None:
                    break
                node = node.children.get(value(binding))
            roots.append(node)
        return roots

    def _checked(self) -> Callable[[tuple], None]:
        """The body without the atom has no atom left: its filters, read on the row's values
        (``b(x + 1) :- a(x), x < 10.`` given a(x): x < 10)."""
        fits, params, head, size, add = self.fits, self.params, self.head, self.size, self.add
        checks = self.joined.checks[0]
        if self.reader.is_binding(size) and not any(isinstance(f.filter, Assign) for f in self.plan.filters):
            check = checks[0] if len(checks) == 1 else None

            def step_on_row(row) -> None:           # the row is the binding
                if check is not None:
                    if check(row):
                        add(head(row))
                elif all(test(row) for test in checks):
                    add(head(row))
            return step_on_row

        def step(row) -> None:
            if fits is not None and not fits(row):
                return
            binding = [None] * size
            for slot, c in params:
                binding[slot] = row[c]
            for check in checks:
                if not check(binding):
                    return
            add(head(binding))
        return step

    def _fixed(self) -> Callable[[tuple], None]:
        """The body without the atom reads none of its variables: its bindings, found once,
        are the same for every row (``a(x) :- b(x), c(y), d(y).`` given b(x): c ∩ d has a
        witness or not); the row only fills the head."""
        bindings: list[list] = []                       # (a plan without bulk emitters: bindings)
        binding = [None] * self.size
        triejoin(join_plan(self.plan, self.db), self._positioned(binding),
                 lambda b: bindings.append(list(b)), self.intersect, binding)
        fits, params, head, add = self.fits, self.params, self.head, self.add
        if len(bindings) == 1 and len(params) == 1:
            (binding,), ((slot, c),) = bindings, params

            def step_one(row) -> None:              # a(x) :- b(x), c(y), d(y).   one witness
                if fits is None or fits(row):
                    binding[slot] = row[c]
                    add(head(binding))
            return step_one

        def step(row) -> None:
            if fits is not None and not fits(row):
                return
            for binding in bindings:
                for slot, c in params:
                    binding[slot] = row[c]
                add(head(binding))
        return step


def _adder(target: Relation, waiting: list) -> Callable[[tuple], None]:
    """``add(row)``: the row into ``target`` and, when new, onto ``waiting``. While the target
    has no index to keep (as in a run from scratch) its set is written directly; :func:`saturate`
    counts the change in its ``version`` at the end."""
    if target.indexes:
        def add_indexed(row) -> None:
            if target.add(row):
                waiting.append(row)
        return add_indexed
    seen, push = target.tuples, waiting.append

    def add(row) -> None:
        if row not in seen:
            seen.add(row)
            push(row)
    return add


def _independent(delta, params) -> bool:
    """Whether no atom prefix, filter or generator of the delta plan reads a parameter."""
    read = {v.name for a in delta.atoms for v in ast.variables(a.plan.prefix)}
    read |= {v.name for f in delta.filters for v in ast.variables(f.literal)}
    return not delta.generators and read.isdisjoint(params)


def saturate(rules: list[tuple], members, db, intersect: str = "hash",
             progress: Callable[[str], None] | None = None, batch: int | None = None) -> None:
    """Push every tuple of ``members`` (those there now and those derived) through the
    ``rules`` (:func:`linear`'s) whose stratum atom it fills, until none is new."""
    batch = BATCH if batch is None else batch
    pending = {n: list(db[n].tuples) for n in members}
    sizes = {n: len(db[n]) for n in members}
    firings, rounds = _prepared(rules, members, db, intersect, pending)
    queues = [(name, rows, _each([firing.step for firing in firings[name]])) for name, rows in pending.items()]
    taken, moved = 0, True
    while moved:
        moved = False
        for name, rows, step in queues:
            if not rows:
                continue
            moved, pop = True, rows.pop
            while rows:
                if len(rows) > batch:
                    # path(x, z) :- path(x, y), edge(y, z).   many path tuples waiting: one round
                    taken += len(rows)
                    recent = Relation(name, db[name].arity, rows)
                    rows.clear()                # (before the round: it may add to rows)
                    _round(recent, rounds[name], pending)
                    _report(progress, taken, members, db)
                    continue
                # b(x + 1) :- a(x), x < 10.   one a tuple: its x bound, the rest of the body read
                step(pop())
                taken += 1
                if not taken & MASK:
                    _report(progress, taken, members, db)
    for n in members:                           # the rows the Firings wrote directly (_adder)
        if len(db[n]) != sizes[n]:
            db[n].version += 1
            db[n].presorted = None


def _each(steps: list[Callable]) -> Callable[[tuple], None]:
    """One call that runs every step on a row (the step itself when there is one)."""
    if len(steps) == 1:
        return steps[0]

    def every(row) -> None:
        for step in steps:
            step(row)
    return every


def _prepared(rules: list[tuple], members, db, intersect: str, pending: dict) -> tuple[dict, dict]:
    """By relation of the stratum, the Firings of the rules whose stratum atom reads it (one tuple
    at a time) and their Derivations with that atom's position (a round of many); each Firing
    puts what it derives on the pending list of its head's relation."""
    firings: dict[str, list[Firing]] = {n: [] for n in members}
    rounds: dict[str, list[tuple]] = {n: [] for n in members}
    for plan, position in rules:
        if position is not None:
            firing = Firing(plan, position, db, intersect, pending[plan.clause.head.relation])
            firings[firing.relation].append(firing)
            rounds[firing.relation].append((Derivation(plan, db, intersect), position, firing.target))
    return firings, rounds


def _round(recent: Relation, rules: list[tuple], pending: dict) -> None:
    """The rules read ``recent`` as a semi-naive round reads it; their new tuples wait."""
    for derived, position, target in rules:
        pending[target.name].extend(target.insert(derived({position: recent})))


def _report(progress, taken: int, members, db) -> None:
    """A progress line (long runs print it; a caller may stop a run that keeps growing)."""
    if progress is not None:
        progress(f"  worklist: {plural(taken, 'tuple')} taken, {sum(len(db[n]) for n in members)} known")
