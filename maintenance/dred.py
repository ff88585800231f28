"""Maintenance of a recursive stratum by DRed: delete, rederive, insert.

DRed (Gupta, Mumick and Subrahmanian, *Maintaining Views Incrementally*, SIGMOD 1993)
keeps a recursive stratum up to date after its lower relations changed.

Where it is used: it is the twin of Backward/Forward (:mod:`maintenance.backward_forward`),
which maintains recursive strata, and takes over from B/F past B/F's budget or where B/F does
not apply (see ``IncrementalMaintainer.recursive_strategy``).
  * Counting (one support count per tuple) does not work under recursion: on a cycle
    ``path(a, a)`` supports itself, so after the edge that closed the cycle is retracted
    its count stays above zero and the tuple is never removed (and a recursive tuple
    can have unboundedly many derivations to count).
  * DRed's every phase is a set-at-a-time semi-naive evaluation of *delta rules*, so
    each runs as one triejoin with one atom reading a small delta relation. Its price,
    overdeletion, is bounded by the derivations that touch deleted tuples; B/F avoids it
    with a search per tuple, which costs more per tuple (README: measured).

Notation. A clause of the stratum is ``H :- A1, ..., An, !N1, ..., !Nm, C`` with
positive atoms ``Ai`` (lower or same-stratum relations), negated atoms ``Nj`` and
aggregates (lower relations only, by stratification) and comparisons/assignments
``C``. For a lower relation ``r``, ``r⁺``/``r⁻`` are its inserted/erased tuples;
``∇p`` is the overdeleted part of a stratum relation ``p``, ``δp`` its last round's.

1. Overdelete, in the OLD state (the changed lower relations are reverted through the
   journal for this phase):
       ∇H :- A1, ..., Ai⁻, ..., An, !N, C.      Ai lower, reading its erased tuples
       ∇H :- A1, ..., An, !N, C, Nj⁺.           Nj gained tuples (!Nj is kept: with a
                                                 wildcard another tuple may match)
       ∇H :- A1, ..., An, !N, C.                C aggregates a changed relation: every
                                                 derivation of the clause (conservative)
   then rounds until nothing new:
       ∇H :- A1, ..., δ∇Ai, ..., An, !N, C.     Ai same-stratum, last round's ∇
   Only tuples present in the old relation count, and facts of the program (clauses
   without a body) are never overdeleted: they hold unconditionally.
2. Remove ``∇`` from the stratum's relations.
3. Rederive, in the NEW state, with the head bound to each candidate:
       R(H) :- ∇H, A1, ..., An, !N, C.          ∇H leads the variable order
4. Insert, in the NEW state: ``δ`` starts as ``R`` plus the new heads of
       ΔH :- A1, ..., Ai⁺, ..., An, !N, C.      Ai lower, reading its inserted tuples
       ΔH :- A1, ..., An, !N, C, Nj⁻.           Nj lost tuples
       ΔH :- A1, ..., An, !N, C.                C aggregates a changed relation
   then rounds until nothing new:
       ΔH :- A1, ..., δAi, ..., An, !N, C.      Ai same-stratum, last round's new tuples

Base rules (no same-stratum atom) take part in the seeds of phases 1 and 4 only.
A delta atom that opens a trie is read through ``derive``'s ``sources``; a delta
literal that is an existence lookup (``r(_)``, ``r(1, 2)``) or is added next to a
negation is an atom over the pseudo relation :data:`DELTA`, planned once per clause.
Every change of the relations goes through the journal, so an error rolls back exactly.
"""

from __future__ import annotations

from collections import ChainMap

from datalog.evaluation.compile import CompiledPlan, compile_plan
from datalog.evaluation.evaluate import derive
from datalog.evaluation.seminaive import Variable, rounds
from datalog.language import ast
from datalog.language.rewrites import Clause
from datalog.language.strata import Stratum, dependencies
from datalog.planning.planner import plan_clause, semijoin_atoms
from lftj.relation import Relation
from maintenance.delta import Change, Delta

SMALL_DELTA = 8         # a delta at most 1/8 of its relation leads the variable order (measured)
DELTA = "@delta"        # the pseudo relation a variant clause's extra atom reads

Rows = dict[str, set]


def maintain_recursive(program, db, stratum: Stratum, delta: Delta, journal, tally: Tally | None = None,
                       variants: dict | None = None) -> Delta:
    """Bring ``stratum``'s relations up to date after ``delta`` (changes of lower strata,
    already in the relations ``db`` of the planned ``program``); return the Change of each
    stratum relation that changed. ``tally`` (if given) counts, per clause, the delta rules
    evaluated and the heads they derived; ``variants`` keeps the delta rules' plans from one call
    to the next (the maintainer's)."""
    tally = tally if tally is not None else Tally()
    ctx = _Context(program, db, variants if variants is not None else {})
    clauses = [c for c in stratum.clauses if c.body]
    lower = {name: change for name, change in delta.items()
             if change and name in _lower_reads(clauses, stratum)}
    if not lower:
        return {}
    return finish(ctx, stratum, clauses, lower, _overdelete(ctx, stratum, clauses, lower, journal, tally),
                  journal, tally)


def finish(ctx, stratum: Stratum, clauses, lower: Delta, overdeleted: Rows, journal, tally) -> Delta:
    """Phases 2-4 after the overdelete: remove ∇, rederive, insert; the stratum's changes."""
    for name, rows in overdeleted.items():
        journal.erase(ctx.db[name], rows)
    rederived = _rederive(ctx, clauses, overdeleted, tally)
    for name, rows in rederived.items():
        journal.insert(ctx.db[name], rows)
    inserted = _insert(ctx, clauses, lower, rederived, journal, tally)
    return _changes(stratum, overdeleted, inserted)


def _lower_reads(clauses, stratum: Stratum) -> set[str]:
    return {rel for c in clauses for rel, _, _ in dependencies(c)} - set(stratum.relations)


def _changes(stratum: Stratum, overdeleted: Rows, inserted: Rows) -> Delta:
    out = {}
    for name in stratum.relations:
        gone, came = overdeleted.get(name, set()), inserted.get(name, set())
        change = Change(came - gone, gone - came)
        if change:
            out[name] = change
    return out


class _Context:
    """What DRed reads: the planned program, its relations, and the cache of delta-rule plans."""

    def __init__(self, program, db, variants: dict):
        self.program, self.db, self.variants = program, db, variants
        self.schema, self.compiled, self.intersect = program.schema, program.plans, program.intersect


class Tally:
    """Per clause (by index): delta rules evaluated and head tuples they derived, for stats()."""

    def __init__(self):
        self.rules: dict[int, int] = {}
        self.derived: dict[int, int] = {}

    def count(self, clause: Clause, rows) -> None:
        key = clause.index
        self.rules[key] = self.rules.get(key, 0) + 1
        self.derived[key] = self.derived.get(key, 0) + len(rows)


# ---------------------------------------------------------------- 1. overdelete

def _overdelete(ctx, stratum: Stratum, clauses, lower: Delta, journal, tally, limit: int | None = None,
                first: Rows | None = None) -> Rows | None:
    """∇ of every stratum relation, evaluated in the old state of the lower relations; None
    (the lower relations restored, nothing else changed) once ∇ holds more than ``limit`` tuples.
    ``first``: the seed delta rules' heads, if the caller has fired them (:func:`first_round`)."""
    _revert(ctx, lower, journal)
    keep = _facts(ctx.program, stratum)
    total: Rows = {name: set() for name in stratum.relations}
    size = [0]

    def fresh(rows, name):
        out = _fresh(ctx, {name: rows}, total, keep)[name]
        size[0] += len(out)
        if limit is not None and size[0] > limit:
            raise _Exceeded
        return out
    variables = {name: Variable(name, ctx.db[name].arity, lambda rows, name=name: fresh(rows, name))
                 for name in stratum.relations}
    try:
        _seed(variables, _seed_heads(ctx, clauses, lower, tally) if first is None else first)
        for _ in rounds(list(variables.values())):
            # ∇H :- A1, ..., δ∇Ai, ..., An, !N, C.
            _derived(variables, _fire(ctx, clauses, tally, _recent(variables)))
    except _Exceeded:
        _restore(ctx, lower, journal)
        return None
    _restore(ctx, lower, journal)
    return {name: rows for name, rows in total.items() if rows}


def first_round(ctx, clauses, lower: Delta, journal, tally) -> Rows:
    """The heads of the seed delta rules (the instances that read a retracted lower tuple or are
    blocked by a gained negated one, or aggregate a changed relation), in the OLD state: the first
    round of :func:`_overdelete`, and B/F's first facts to check."""
    _revert(ctx, lower, journal)
    found = _seed_heads(ctx, clauses, lower, tally)
    _restore(ctx, lower, journal)
    return found


def _seed_heads(ctx, clauses, lower: Delta, tally) -> Rows:
    """∇H :- A1, ..., Ai⁻, ..., An, !N, C.  and  ∇H :- A1, ..., An, !N, C, Nj⁺.  (the lower
    relations in their old state)"""
    return _fire(ctx, clauses, tally, _delta_relations(lower, "retracted"), _delta_relations(lower, "inserted"),
                 set(lower))


class _Exceeded(Exception):
    """∇ grew past the limit the caller set."""


def _seed(variables: dict[str, Variable], found: Rows) -> None:
    """The seed delta rules' heads are the first round's recent tuples."""
    _derived(variables, found)
    for variable in variables.values():
        variable.changed()


def _derived(variables: dict[str, Variable], found: Rows) -> None:
    for name, rows in found.items():
        variables[name].to_add |= rows


def _recent(variables: dict[str, Variable]) -> dict[str, Relation]:
    return {name: v.recent for name, v in variables.items() if v.recent}


def _fresh(ctx, found: Rows, total: Rows, keep: Rows) -> Rows:
    """The heads not overdeleted yet (old tuples only, never facts); added to ``total``."""
    out = {}
    for name, rows in found.items():
        rows = (rows & ctx.db[name].tuples) - total[name] - keep.get(name, set())
        total[name] |= rows
        out[name] = rows
    return out


def _revert(ctx, lower: Delta, journal) -> None:
    """The changed lower relations back to their old contents (through the journal)."""
    for name, change in lower.items():
        journal.erase(ctx.db[name], change.inserted)
        journal.insert(ctx.db[name], change.retracted)


def _restore(ctx, lower: Delta, journal) -> None:
    for name, change in lower.items():
        journal.erase(ctx.db[name], change.retracted)
        journal.insert(ctx.db[name], change.inserted)


def _facts(program, stratum: Stratum) -> Rows:
    """Tuples of the program's facts (clauses without a body) of the stratum's relations."""
    return {name: set(rows) for name, rows in program.facts_of(stratum.relations).items()}


# ---------------------------------------------------------------- 3. rederive

def _rederive(ctx, clauses, overdeleted: Rows, tally) -> Rows:
    """R(H) :- ∇H, A1, ..., An, !N, C.  (the new state; ∇H leads the variable order)"""
    candidates = {name: Relation(DELTA, len(next(iter(rows))), rows) for name, rows in overdeleted.items()}
    out: Rows = {}
    for clause in clauses:
        name = clause.head.relation
        if name in candidates:
            plan = _variant(ctx, (clause.index, "rederive"), lambda: _rederive_plan(ctx, clause))
            rows = _evaluate(ctx, plan, overlay=candidates[name])
            tally.count(clause, rows)
            out.setdefault(name, set()).update(rows & overdeleted[name])
    return {name: rows for name, rows in out.items() if rows}


def _rederive_plan(ctx, clause: Clause) -> CompiledPlan:
    """``h(x, y + 1) :- body.`` becomes ``h(x, _h1) :- body, _h1 = y + 1, @delta(x, _h1).``
    with the variables of ``@delta`` first in the order: one seek per candidate."""
    headed, order = delta_headed(clause, clause.body)
    return compile_plan(plan_clause(headed, ctx.schema, pragma=order))


def delta_headed(clause: Clause, body: tuple) -> tuple[Clause, list[str]]:
    """The clause with ``body``, its head's expressions named (``_h1 = y + 1``) and ``@delta``
    over the head's terms last; and the variables of ``@delta`` (first in a variable order)."""
    args, extra = [], []
    for i, term in enumerate(clause.head.args):
        if not isinstance(term, (ast.Variable, ast.Constant)):
            var = ast.Variable(f"_h{i}", clause.head.span)
            extra.append(ast.Comparison("=", var, term, clause.head.span))
            term = var
        args.append(term)
    head = ast.Atom(clause.head.relation, tuple(args), clause.head.span)
    body = tuple(body) + tuple(extra) + (ast.Atom(DELTA, tuple(args), clause.head.span),)
    order = list(dict.fromkeys(a.name for a in args if isinstance(a, ast.Variable)))
    return Clause(head, body, clause.rule), order


# ---------------------------------------------------------------- 4. insert

def _insert(ctx, clauses, lower: Delta, rederived: Rows, journal, tally) -> Rows:
    """Semi-naive from the rederived tuples and the seeds; returns every tuple added (R too)."""
    inserted, gained = _delta_relations(lower, "inserted"), _delta_relations(lower, "retracted")
    added: Rows = {name: set(rows) for name, rows in rederived.items()}
    variables = {name: Variable(name, ctx.db[name].arity,
                                lambda rows, name=name: _add(ctx, {name: rows}, added, journal).get(name, set()))
                 for name in {c.head.relation for c in clauses}}
    _seed(variables, _fire(ctx, clauses, tally, inserted, gained, set(lower)))
    for name, rows in rederived.items():
        variables[name].recent.insert(rows)          # the rederived tuples are new to the rules too
    for _ in rounds(list(variables.values())):
        # ΔH :- A1, ..., δAi, ..., An, !N, C.
        _derived(variables, _fire(ctx, clauses, tally, _recent(variables)))
    return added


def _add(ctx, found: Rows, added: Rows, journal) -> Rows:
    out = {}
    for name, rows in found.items():
        new = journal.insert(ctx.db[name], rows)
        if new:
            out[name] = set(new)
            added.setdefault(name, set()).update(new)
    return out


# ---------------------------------------------------------------- delta rules

def _fire(ctx, clauses, tally, positive: dict[str, Relation], negated: dict[str, Relation] | None = None,
          aggregated: set[str] = frozenset()) -> Rows:
    """Heads of every delta rule of ``clauses``: a positive atom of relation r reads
    ``positive[r]``; a negation !r(..) is joined with ``negated[r]``; a clause aggregating a
    relation in ``aggregated`` is evaluated whole."""
    out: Rows = {}
    for clause in clauses:
        target = out.setdefault(clause.head.relation, set())
        for plan, sources, overlay in _delta_rules(ctx, clause, positive, negated or {}, aggregated):
            rows = _evaluate(ctx, plan, sources, overlay)
            tally.count(clause, rows)
            target |= rows
    return out


def _delta_rules(ctx, clause: Clause, positive, negated, aggregated):
    """(plan, sources, overlay) of each delta rule of one clause."""
    plan = ctx.compiled[clause.index]
    if aggregated and _aggregate_reads(clause) & aggregated:
        yield plan, None, None                       # H :- A1, ..., An, !N, C.  (whole)
        return
    for a, atom in enumerate(plan.atoms):            # H :- A1, ..., ΔAi, ..., An, !N, C.
        if atom.relation in positive:
            source = positive[atom.relation]
            if len(source) * SMALL_DELTA <= len(ctx.db[atom.relation]):
                variant, i = _delta_first(ctx, plan, a)
                yield variant, {i: source}, None
            else:
                yield plan, {a: source}, None
    semis = semijoin_atoms(clause.body)                 # q(x) after p([x, _]): a lookup too (records)
    for k, literal in enumerate(clause.body):
        if (_is_lookup(literal) or literal in semis) and literal.relation in positive:   # ..., Δr(_), ...
            yield _literal_plan(ctx, clause, k, replace=True), None, positive[literal.relation]
        elif isinstance(literal, ast.Negation) and literal.atom.relation in negated:   # ..., !r(t), Δr(t)
            yield _literal_plan(ctx, clause, k, replace=False), None, negated[literal.atom.relation]


def _delta_first(ctx, plan: CompiledPlan, a: int) -> tuple[CompiledPlan, int]:
    """The clause planned with atom ``a``'s variables first, and that atom's position in the
    new plan: the delta is small, so the triejoin starts from it, not from a full relation.
    (Measured: a big win here; for from-scratch semi-naive rounds, whose deltas are large,
    the same change made Andersen 1.8x slower, so ``datalog.evaluation.fixpoint`` keeps its orders.)"""
    def make():
        atom = plan.atoms[a].atom
        order = list(dict.fromkeys(t.name for t in atom.args if isinstance(t, ast.Variable)))
        if not order or list(plan.variable_order[:len(order)]) == order:
            return plan, a
        variant = compile_plan(plan_clause(plan.clause, ctx.schema, pragma=order))
        rank = sum(1 for p in plan.atoms[:a] if p.atom == atom)          # the same one of equal atoms
        return variant, [i for i, p in enumerate(variant.atoms) if p.atom == atom][rank]
    return _variant(ctx, (plan.index, "delta", a), make)


def _is_lookup(literal) -> bool:
    """An atom with no variable opens no trie level: the plan looks it up (``r(_)``, ``r(1, 2)``)."""
    return isinstance(literal, ast.Atom) and all(isinstance(a, (ast.Constant, ast.Wildcard))
                                                 for a in literal.args)


def _literal_plan(ctx, clause: Clause, k: int, replace: bool) -> CompiledPlan:
    """The clause with literal ``k``'s atom also (or instead, ``replace``) read from DELTA."""
    def make():
        literal = clause.body[k]
        atom = literal.atom if isinstance(literal, ast.Negation) else literal
        extra = ast.Atom(DELTA, atom.args, atom.span)
        body = clause.body[:k] + ((extra,) if replace else (literal, extra)) + clause.body[k + 1:]
        return compile_plan(plan_clause(Clause(clause.head, body, clause.rule), ctx.schema))
    return _variant(ctx, (clause.index, k, replace), make)


def _aggregate_reads(clause: Clause) -> set[str]:
    return {rel for rel, _, node in dependencies(clause) if isinstance(node, ast.Aggregate)}


def _variant(ctx, key: tuple, make):
    """A delta rule's plan, made once per maintainer and key (``key[0]``: its clause's index)."""
    made = ctx.variants.get(key)
    if made is None:
        made = ctx.variants[key] = make()
    return made


def _evaluate(ctx, plan: CompiledPlan, sources=None, overlay: Relation | None = None) -> set:
    """Head tuples of one (delta) rule by leapfrog triejoin; ``overlay`` is read as DELTA."""
    db = ctx.db if overlay is None else ChainMap({DELTA: overlay}, ctx.db)
    return derive(plan, db, sources, ctx.intersect)


def _delta_relations(delta: Delta, side: str) -> dict[str, Relation]:
    return _as_relations({name: getattr(change, side) for name, change in delta.items()})


def _as_relations(rows: Rows) -> dict[str, Relation]:
    """Non-empty row sets as Relations (each builds the trie indexes its readers ask for)."""
    return {name: Relation(name, len(next(iter(r))), r) for name, r in rows.items() if r}
