"""Delta rules with support counts, evaluated in Spark: the maintenance step of a Spark-resident
workspace (:mod:`datalog.spark.resident_workspace`).

Every stored relation is a DataFrame of its tuples (``c0, c1, ...``) with ``__n``, the tuple's
**support count**: for a relation of a non-recursive stratum, the number of its derivations --
1 for being a program fact or an input row, plus, per rule, the number of assignments of the
rule's body (a wildcard counted as a variable of its own) that derive it, the body's relations
read as *sets*. For a relation of a recursive stratum (where derivations can be cyclic) and for
a Spark source, ``__n`` is 1. A relation's **delta** is the change of its *presence*: its tuples
with ``__d`` +1 (inserted) or -1 (retracted).

**A non-recursive rule** ``h :- F1, ..., Fn`` (each ``Fi`` a positive atom or a negation, read as
an indicator 1/0, a negation as ``1 - [the atom holds]``) has the count delta, exactly::

    Δ count(h) = Σ_i  F1' × ... × F(i-1)'  ×  ΔFi  ×  F(i+1) × ... × Fn

(primes: the new version; the product telescopes), a term only for each ``Fi`` whose relation
changed. For a positive atom ``ΔFi`` is its relation's delta (``__d`` carried through the joins of
:meth:`Resident.rule`); for a negation it is the *opposite* of the change of presence of the
atom's projection on the variables bound there (``!r(x, _)`` changes when the first ``x``-row
comes or the last one goes). Comparisons, bindings and the head are as in evaluation. The
head's count delta is the sum of ``__d`` per head tuple over all terms of all its rules; the new
count is the old plus it (a negative count would be a bug and is reported as one), and the
relation's delta is where the count crosses zero. Deletions are exact: no over-deletion.

**A rule with an aggregate** whose body (or aggregate) reads a changed relation is evaluated
over the old and the new versions and its count delta is the difference (new ``+1``, old
``-1``), for the **groups the change touches** (:meth:`Maintainer._touched_groups`): the
grouping values of the changed tuples, when every changed atom holds every grouping variable
and an atom outside the aggregate does (it is read only for those values). Otherwise (a
changed atom without a grouping variable, an aggregate without one, two aggregates in a rule)
the rule is recomputed whole.

**A recursive stratum** one of whose rules reads a changed relation is maintained by **DRed**
(:meth:`Maintainer._dred`): over-delete (semi-naive rounds of the derivations through a
retracted tuple, everything read old), re-derive the over-deleted tuples that keep a
derivation, insert (the derivations through an inserted tuple), then semi-naive rounds
(:meth:`Resident._rounds`, checkpointed) from those; its tuples' ``__n`` stays 1 (no counts
through recursion). The re-derivation evaluates each rule once over the whole new state
(then keeps the heads that were over-deleted): one round's cost, not proportional to the
change. A recursive stratum with an aggregate in a rule is **recomputed** in Spark instead
(semi-naive rounds over the new relations below it) and diffed with its old version.

Nothing here brings a relation's rows to the driver: each new version and delta is written to
Parquet by Spark and read back (which also cuts the plans' lineage), and the driver keeps counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from datalog.language import ast
from datalog.language.errors import InternalError
from datalog.spark.resident import BROADCAST_ROWS, Resident, _aggregates, _col, _Known, _reads, _union
from datalog.spark.session import Observed, guard
from datalog.spark.tables import uri
from datalog.spark.versions import (COUNT, SIGN, Stored, bounding, bounds_in, compacts, layered, present,
                                    schema, typed, widened)

try:                                            # the optional extra
    from pyspark.sql import functions as F
except ImportError:                             # pragma: no cover - depends on the installation
    pass


@dataclass
class Changed:
    """One relation's change in a refresh: its new version and its delta (c0.., __d)."""

    new: Stored
    delta: object
    inserted: int
    retracted: int


Directory = Callable[[str], Path]     # where a relation's new version is written


class Maintainer(Resident):
    """Brings the stored relations ``old`` (name -> Stored) to the program's new state, given
    the deltas of the Spark sources, stratum by stratum; the new versions are written under
    ``directory(name)``."""

    def __init__(self, engine, spark, old: dict, static: dict, directory: Directory, checkpoint_every: int = 25,
                 progress=None):
        super().__init__(engine, spark, checkpoint_every, progress, join="binary")   # counts: see _build
        self.old, self.static, self.directory = old, static, directory
        self.new: dict[str, Stored] = dict(old)
        self.changes: dict[str, Changed] = {}
        self.negations: dict[int, str] = {}     # id(negated atom) -> old | new | delta, in a delta term
        self.sign: int | None = None            # DRed: only the negations' changes of this sign
        self.kinds: dict[str, str] = {}         # relation -> how its stratum was maintained
        self.written: set[str] = set()          # relations with a new version (counts or rows changed)

    # ------------------------------------------------------------ versions
    def _sets(self, version: str) -> tuple[dict, dict]:
        stored = self.old if version == "old" else self.new
        return {n: s.tuples() for n, s in stored.items()}, {n: s.size for n, s in stored.items()}

    def _use(self, version: str) -> None:
        self.frames, self.sizes = self._sets(version)

    def _version(self, name: str, version: str) -> _Known:
        stored = (self.old if version == "old" else self.new).get(name)
        if stored is None:
            return _Known(self.empty(name), 0)
        return _Known(stored.tuples(), stored.size)

    # ------------------------------------------------------------ a refresh
    def maintain(self, sources: dict, distinct: set = frozenset()) -> None:
        """``sources``: relation -> its delta (c0.., __d) as read from the source (``distinct``:
        the relations whose delta names each row once)."""
        for name, delta in sources.items():
            self._apply(name, delta.select(*self._columns(name), SIGN), "source" if name in distinct else "repeated")
        for number, stratum in enumerate(self.engine.checked.strata, 1):
            rules = [c for c in stratum.clauses if c.body]
            if not rules or not any(_reads(c, set(self.changes)) for c in rules):
                continue
            if stratum.recursive and any(_aggregates(c.body) for c in rules):
                self._recompute(number, stratum, rules)
            elif stratum.recursive:
                self._dred(number, stratum, rules)
            else:
                for name in stratum.relations:
                    self._plain(name, [c for c in rules if c.head.relation == name])

    def _columns(self, name: str) -> list[str]:
        return [f"c{i}" for i in range(self.engine.schema[name].arity)]

    def _plain(self, name: str, rules) -> None:
        """``name``'s count delta: the sum of its rules' delta terms."""
        terms = [t for t in (self.rule_delta(c) for c in rules) if t is not None]
        if terms:
            counts = _union(terms).groupBy(*self._columns(name)).agg(F.sum(SIGN).alias(SIGN))
            self._apply(name, counts.where(F.col(SIGN) != 0), "counted")

    def rule_delta(self, clause):
        """The count delta of ``clause``'s head (c0.., __d, a head tuple possibly repeated), None
        when the rule reads no changed relation."""
        if not _reads(clause, set(self.changes)):
            return None
        if _aggregates(clause.body):
            touched = self._touched_groups(clause)
            if touched is None:
                self.kinds[clause.head.relation] = "aggregate rule recomputed"
                return self.recomputed(clause)
            self.kinds.setdefault(clause.head.relation, "aggregate rule recomputed for the touched groups")
            return self.recomputed(clause, touched)
        factors = [k for k, lit in enumerate(clause.body) if isinstance(lit, (ast.Atom, ast.Negation))]
        terms = [self._term(clause, factors, k) for k in factors if _relation(clause.body[k]) in self.changes]
        return _union(terms)

    def _term(self, clause, factors: list[int], k: int, delta: _Known | None = None,
              versions: tuple[str, str] = ("new", "old"), sign: int | None = None):
        """F1' ... F(k-1)'  ΔFk  F(k+1) ... Fn: the factors before ``k`` read ``versions[0]``
        (new), after it ``versions[1]`` (old); factor ``k`` reads ``delta`` (default: its
        relation's change), a negation's change only where it is ``sign`` if given."""
        deltas: dict[int, _Known] = {}
        self.negations, self.sign = {}, sign
        for j in factors:
            lit = clause.body[j]
            version = versions[0] if j < k else versions[1]
            if isinstance(lit, ast.Atom):
                if j == k and delta is not None:
                    deltas[j] = delta
                elif j == k:
                    change = self.changes[lit.relation]
                    deltas[j] = _Known(change.delta, change.inserted + change.retracted)
                else:
                    deltas[j] = self._version(lit.relation, version)
            else:
                self.negations[id(lit.atom)] = "delta" if j == k else version
        self._use("new")           # (nothing reads self.frames here but an aggregate, which never comes)
        try:
            return self.rule(clause, deltas)
        finally:
            self.negations, self.sign = {}, None

    def recomputed(self, clause, touched: tuple | None = None):
        """The rule over the new versions (+1 a derivation) and the old (-1); with ``touched``
        (:meth:`_touched_groups`), only for the groups the change touched."""
        parts = []
        for version, sign in (("new", 1), ("old", -1)):
            self._use(version)
            deltas = {}
            if touched is not None:
                k, keys = touched
                rows = self._version(clause.body[k].relation, version)
                deltas[k] = _Known(rows.frame.join(keys, list(keys.columns), "left_semi"), rows.size)
            parts.append(self.rule(clause, deltas).withColumn(SIGN, F.lit(sign)))
        return _union(parts)

    def _touched_groups(self, clause) -> tuple | None:
        """For a rule with one aggregate: (a positive atom of the body, outside the aggregate,
        holding every grouping variable; the grouping values the change touched, in that
        atom's columns), or None when they cannot be told (then the rule is recomputed whole).

            deg(x, n) :- edge(x, _), n = count : { edge(x, _) }.   Δedge(3, 7): only x = 3

        A group's head tuples read only atoms holding its grouping values, if every changed
        atom (outside the aggregate or in it, positive or negated) holds every grouping
        variable: the groups of no changed tuple derive what they derived."""
        steps, _ = self.planned(clause)
        groups = [s.group for s in steps if s.kind == "aggregate"]
        if len(groups) != 1 or len(_aggregates(clause.body)) != 1 or not groups[0]:
            return None
        group = list(groups[0])
        anchor = next((k for k, lit in enumerate(clause.body) if isinstance(lit, ast.Atom)
                       and set(group) <= ast.first_positions(lit).keys()), None)
        changed = [n for n in ast.walk(clause.body) if isinstance(n, ast.Atom) and n.relation in self.changes]
        if anchor is None or any(not set(group) <= ast.first_positions(a).keys() for a in changed):
            return None
        at = ast.first_positions(clause.body[anchor])
        projected = []
        for atom in changed:
            where = ast.first_positions(atom)
            projected.append(self.changes[atom.relation].delta.select(
                *[F.col(f"c{where[v]}").alias(f"c{at[v]}") for v in group]))
        keys = _union(projected).distinct()
        return anchor, (F.broadcast(keys) if sum(self.changes[a.relation].inserted + self.changes[a.relation].retracted
                                                 for a in changed) <= BROADCAST_ROWS else keys)

    def _anti(self, frame, atom: ast.Atom, bound: set):
        mode = self.negations.get(id(atom))
        if mode == "delta":
            return self._negated_delta(frame, atom, bound)
        if mode is None:
            return super()._anti(frame, atom, bound)
        saved = self.frames, self.sizes
        self._use(mode)
        try:
            return super()._anti(frame, atom, bound)
        finally:
            self.frames, self.sizes = saved

    def _negated_delta(self, frame, atom: ast.Atom, bound: set):
        """Join ``frame`` with the change of ``!atom``: -1 where the projection of the atom's
        relation on the bound variables gained a tuple, +1 where it lost one."""
        probe = ast.Atom(atom.relation, tuple(a if not (isinstance(a, ast.Variable) and a.name not in bound)
                                              else ast.Wildcard() for a in atom.args))
        change = self.changes[atom.relation]
        touched, names = self._atom(probe, _Known(change.delta, change.inserted + change.retracted))
        now, _ = self._atom(probe, self._version(atom.relation, "new"))
        was, _ = self._atom(probe, self._version(atom.relation, "old"))
        keys = [_col(n) for n in sorted(names)]
        if not keys:                                    # !r(_, 1): all or nothing
            def exists(part, marker):
                return part.agg((F.count(F.lit(1)) > 0).cast("int").alias(marker))
            flip = exists(now, "__now").crossJoin(exists(was, "__was"))
            flip = flip.select((F.col("__was") - F.col("__now")).alias(SIGN)).where(F.col(SIGN) != 0)
            if self.sign is not None:
                flip = flip.where(F.col(SIGN) == self.sign)
            return frame.crossJoin(flip)
        touched = touched.select(*keys).distinct()
        if change.inserted + change.retracted <= BROADCAST_ROWS:
            touched = F.broadcast(touched)
        marked = touched
        for part, marker in ((now, "__now"), (was, "__was")):
            hits = part.join(touched, keys, "left_semi").select(*keys).distinct().withColumn(marker, F.lit(1))
            marked = marked.join(hits, keys, "left")
        flip = marked.select(*keys, (F.coalesce(F.col("__was"), F.lit(0)) - F.coalesce(F.col("__now"), F.lit(0)))
                             .alias(SIGN)).where(F.col(SIGN) != 0)
        if self.sign is not None:
            flip = flip.where(F.col(SIGN) == self.sign)
        return frame.join(flip, keys, "inner")

    def _recompute(self, number: int, stratum, rules) -> None:
        """The stratum evaluated again over the new versions below it; its delta by difference."""
        self._use("new")
        for name in stratum.relations:              # its program facts and input files only
            if name in self.static:
                self.frames[name], self.sizes[name] = self.static[name].tuples(), self.static[name].size
            else:
                self.frames.pop(name, None)
                self.sizes.pop(name, None)
        self._recursive(number, stratum, rules)
        for name in stratum.relations:
            self.kinds[name] = "recursive stratum recomputed"
            columns = self._columns(name)
            new = self.frames[name].select(*columns).withColumn(SIGN, F.lit(1))
            old = self._version(name, "old").frame.select(*columns).withColumn(SIGN, F.lit(-1))
            counts = new.unionByName(old).groupBy(*columns).agg(F.sum(SIGN).alias(SIGN)).where(F.col(SIGN) != 0)
            self._apply(name, counts, "recomputed")

    def _dred(self, number: int, stratum, rules) -> None:
        """Delete and re-derive (Gupta, Mumick, Subrahmanian 1993) on DataFrames: the tuples of
        the stratum with a derivation through a retracted tuple, closed under the recursive
        rules (over-deletion, everything read old); those of them still derivable without
        them, and the derivations through an inserted tuple (every factor new, the stratum's
        relations without the over-deleted tuples), are the first ``recent`` of semi-naive
        rounds (:meth:`Resident._rounds`). The stratum's delta: what the rounds added that was
        not there, and what was over-deleted and not added back."""
        members = set(stratum.relations)
        recursive = [c for c in rules if _reads(c, members)]
        gone = self._over_delete(stratum, rules, recursive)
        kept = {}
        for name in stratum.relations:              # R' = R minus the over-deleted
            old = self._version(name, "old")
            rows = old.frame.join(gone[name].frame, self._columns(name), "left_anti") if gone[name].size else old.frame
            kept[name] = rows.localCheckpoint(eager=True)
            self.new[name] = Stored(kept[name].withColumn(COUNT, F.lit(1).cast("long")),
                                    old.size - gone[name].size)
        seeds = {name: [] for name in stratum.relations}
        for clause in rules:                        # derivations through an inserted tuple
            for k in self._changed_factors(clause):
                seeds[clause.head.relation].append(self._signed_term(clause, k, 1, ("new", "new")))
        self._use("new")
        for clause in rules:                        # the over-deleted that are still derivable
            name = clause.head.relation
            if gone[name].size:
                seeds[name].append(self.rule(clause, {}).join(gone[name].frame, self._columns(name), "left_semi"))
        for name in stratum.relations:
            if name in self.static and gone[name].size:
                seeds[name].append(self.static[name].tuples().join(gone[name].frame, self._columns(name), "left_semi"))
        self._use("new")
        recent = {}
        for name in stratum.relations:
            fresh = self.empty(name)
            if seeds[name]:
                fresh = _union([f.select(*self._columns(name)) for f in seeds[name]]).distinct()
                fresh = fresh.join(kept[name], self._columns(name), "left_anti")
            fresh = fresh.localCheckpoint(eager=True)
            recent[name] = _Known(fresh, fresh.count())
            self.frames[name] = kept[name].unionByName(fresh)
            self.sizes[name] = self.new[name].size + recent[name].size
        added = {name: [recent[name].frame] for name in stratum.relations}
        self._rounds(number, stratum, recursive, recent, added)
        for name in stratum.relations:
            self.kinds[name] = "DRed"
            columns = self._columns(name)
            back = _union(added[name]).select(*columns)
            inserted = back.join(self._version(name, "old").frame, columns, "left_anti").withColumn(SIGN, F.lit(1))
            deleted = gone[name].frame.join(back, columns, "left_anti").withColumn(SIGN, F.lit(-1))
            self.new[name] = self.old[name]         # the new version unless _apply writes one
            self._apply(name, inserted.unionByName(deleted), "recomputed")

    def _changed_factors(self, clause) -> list[int]:
        return [k for k, lit in enumerate(clause.body)
                if isinstance(lit, (ast.Atom, ast.Negation)) and _relation(lit) in self.changes]

    def _signed_term(self, clause, k: int, sign: int, versions: tuple[str, str]):
        """The rule with factor ``k`` reading only its relation's change of ``sign`` (an atom:
        its tuples inserted (+1) or retracted (-1); a negation: where it became true (+1) or
        false (-1)), the others ``versions``."""
        factors = [j for j, lit in enumerate(clause.body) if isinstance(lit, (ast.Atom, ast.Negation))]
        lit = clause.body[k]
        if isinstance(lit, ast.Negation):
            return self._term(clause, factors, k, versions=versions, sign=sign).drop(SIGN)
        change = self.changes[lit.relation]
        delta = _Known(change.delta.where(F.col(SIGN) == sign),
                       change.inserted if sign > 0 else change.retracted)
        return self._term(clause, factors, k, delta, versions).drop(SIGN)

    def _over_delete(self, stratum, rules, recursive) -> dict[str, _Known]:
        """Per relation of the stratum, its tuples with a derivation (in the old state) through
        a retracted tuple or a negation that became false, closed under the recursive rules."""
        members = set(stratum.relations)
        seeds = {name: [] for name in stratum.relations}
        for clause in rules:
            for k in self._changed_factors(clause):
                seeds[clause.head.relation].append(self._signed_term(clause, k, -1, ("old", "old")))
        gone = {name: _Known(self.empty(name), 0) for name in stratum.relations}
        recent = dict(gone)
        fresh_of = seeds
        while True:
            found = {}
            for name in stratum.relations:
                columns = self._columns(name)
                if not fresh_of[name]:
                    found[name] = _Known(self.empty(name), 0)
                    continue
                fresh = _union([f.select(*columns) for f in fresh_of[name]]).distinct()
                fresh = fresh.join(self._version(name, "old").frame, columns, "left_semi")
                if gone[name].size:
                    fresh = fresh.join(gone[name].frame, columns, "left_anti")
                fresh = fresh.localCheckpoint(eager=True)
                found[name] = _Known(fresh, fresh.count())
            if not any(k.size for k in found.values()):
                return gone
            for name, known in found.items():
                if known.size:
                    size = gone[name].size + known.size
                    gone[name] = _Known(self.compacted(gone[name].frame.unionByName(known.frame), size), size)
            recent = found
            fresh_of = {name: [] for name in stratum.relations}
            for clause in recursive:                # through a tuple over-deleted in the last round
                factors = [j for j, lit in enumerate(clause.body) if isinstance(lit, (ast.Atom, ast.Negation))]
                for k in factors:
                    lit = clause.body[k]
                    if isinstance(lit, ast.Atom) and lit.relation in members and recent[lit.relation].size:
                        fresh_of[clause.head.relation].append(
                            self._term(clause, factors, k, recent[lit.relation], ("old", "old")))

    # ------------------------------------------------------------ applying a count delta
    def _apply(self, name: str, counts, how: str) -> None:
        """Add the count delta ``counts`` (c0.., __d) to ``name``'s stored counts: write its
        delta (the new counts of the tuples whose count changed, and where a count crosses
        zero) and, if there is one, its new version: the old one with the delta as a layer
        (:func:`layered`), or written whole when its layers grow past :func:`compacts`."""
        where = self.directory(name)
        columns = self._columns(name)
        old = self.old.get(name)
        old_rows = old.rows if old is not None else self.empty(name).withColumn(COUNT, F.lit(0).cast("long"))
        if how != "counted":                            # a source's or a recomputed stratum's presence
            # a source's delta that may repeat a row (an appended file's), a recomputed one: once each
            once = counts if how == "source" else counts.dropDuplicates(columns)
            moved = once.withColumn(COUNT, F.when(F.col(SIGN) > 0, 1).otherwise(0).cast("long"))
        else:
            observed = Observed(counts, F.count(F.lit(1)).alias("n"))
            counts = guard(lambda: observed.frame.localCheckpoint(eager=True), f"maintaining {name}")
            size = observed.values(f"counting {name}")["n"]
            if not size:
                return                                  # no count changed
            before = present(old_rows, counts.select(*columns), columns, size)
            joined = counts.join(F.broadcast(before) if size <= BROADCAST_ROWS else before, columns, "left")
            was = F.coalesce(F.col(COUNT), F.lit(0))
            moved = joined.select(*columns, (was + F.col(SIGN)).alias(COUNT),
                                  (F.when((was == 0) & (was + F.col(SIGN) > 0), 1)
                                   .when((was > 0) & (was + F.col(SIGN) <= 0), -1)
                                   .otherwise(0)).alias(SIGN))
        path = uri(where / "delta")
        types = self.engine.schema[name].types
        # the summary is counted while the delta is written (no job of its own)
        observed = Observed(typed(moved, types, COUNT, SIGN), F.count(F.when(F.col(SIGN) > 0, 1)).alias("ins"),
                            F.count(F.when(F.col(SIGN) < 0, 1)).alias("ret"),
                            F.count(F.when(F.col(COUNT) < 0, 1)).alias("bad"), F.count(F.lit(1)).alias("all"),
                            *bounding(columns, F.col(SIGN) > 0))
        guard(lambda: observed.frame.write.mode("overwrite").parquet(path), f"writing {where}")
        summary = observed.values(f"counting {name}")
        written = self.spark.read.schema(schema(types, COUNT, SIGN)).parquet(path)
        if summary["bad"]:
            raise InternalError(f"a support count of {name} went below zero in a refresh (a bug: the workspace "
                                f"is left as before)")
        if not summary["all"] or (how != "counted" and not (summary["ins"] or summary["ret"])):
            return                                      # no count changed
        size = (old.size if old else 0) + summary["ins"] - summary["ret"]
        layers = old.layers if old is not None else ()
        bounds = widened(old.bounds, bounds_in(summary, columns)) if old is not None and old.bounds is not None \
            else None
        if old is None or not old.base or compacts(layers, summary["all"], size):
            rows = old_rows.join(written.select(*columns, F.col(COUNT).alias("__new")), columns, "full_outer")
            rows = rows.select(*columns, F.coalesce(F.col("__new"), F.col(COUNT)).alias(COUNT)).where(F.col(COUNT) > 0)
            path = uri(where / "rows")
            guard(lambda: typed(rows, types, COUNT).write.mode("overwrite").parquet(path), f"writing {where}")
            self.new[name] = Stored(self.spark.read.schema(schema(types, COUNT)).parquet(path), size, where.name,
                                    bounds=bounds, typed=True)
        else:
            self.new[name] = Stored(layered(old_rows, written, columns), size, old.base,
                                    layers + ((where.name, summary["all"]),), bounds, old.typed)
        self.written.add(name)
        if summary["ins"] or summary["ret"]:
            delta = written.where(F.col(SIGN) != 0).select(*columns, SIGN)
            self.changes[name] = Changed(self.new[name], delta, summary["ins"], summary["ret"])


def _relation(literal) -> str:
    return literal.relation if isinstance(literal, ast.Atom) else literal.atom.relation


def count_rules(resident: Resident, name: str, static, rules):
    """A relation's rows with their support counts from scratch (c0.., __n): 1 for a static row
    plus one per derivation of each rule, over the relations in ``resident.frames``."""
    columns = [f"c{i}" for i in range(resident.engine.schema[name].arity)]
    parts = [resident.rule(c, {}) for c in rules]
    if static is not None:
        parts.insert(0, static.select(*columns))
    if not parts:
        return resident.empty(name).withColumn(COUNT, F.lit(0).cast("long")).where(F.lit(False))
    return _union(parts).groupBy(*columns).agg(F.count(F.lit(1)).alias(COUNT))


def explain_lines(engine) -> list[str]:
    """What ``explain --engine spark`` says of a Spark-resident workspace's refresh, per stratum."""
    lines = ["refresh of a Spark-resident workspace (datalog init --engine spark):"]
    for number, stratum in enumerate(engine.checked.strata, 1):
        rules = [c for c in stratum.clauses if c.body]
        if not rules:
            continue
        if stratum.recursive and any(_aggregates(c.body) for c in rules):
            how = "recomputed in Spark (semi-naive rounds) when a relation it reads changed (a rule has an aggregate)"
        elif stratum.recursive:
            how = "DRed in Spark: over-delete, re-derive, insert by semi-naive rounds (checkpointed)"
        else:
            how = "delta rules with support counts (exact deletions)"
            with_aggregates = sum(1 for c in rules if _aggregates(c.body))
            if with_aggregates:
                how += (f"; {with_aggregates} rule(s) with an aggregate recomputed over the old and new versions "
                        f"of the groups a change touches (whole if a changed atom lacks a grouping variable)")
        lines.append(f"  stratum {number} ({', '.join(stratum.relations)}): {how}")
    return lines


__all__ = ["explain_lines", "Maintainer", "Stored", "Changed", "count_rules", "COUNT", "SIGN"]
