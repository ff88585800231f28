"""Distributed evaluation: every stratum's rules as leapfrog triejoins inside Spark partitions.

``evaluate_on_spark(engine, spark)`` leaves in ``engine.db`` exactly what ``engine.evaluate()``
leaves, computing every rule on Spark executors (this module never imports pyspark: it is handed a
session and uses its RDD methods).

* **A rule.** Let v1 be the first variable of the rule's LFTJ variable order. Every join atom
  holding v1 is keyed on its (first) v1 column and hash-partitioned; every other relation the rule
  reads (atoms without v1, lookups such as ``r(1, _)``, negations, aggregate bodies) is
  broadcast whole. Each partition runs :func:`datalog.evaluation.evaluate.derive` with its own rows as those
  atoms' sources: a binding fixes v1, so every row it joins lies in v1's partition and each answer
  is found in one partition only. A rule with no variable at all (``t(n) :- n = count : {...}.``)
  runs once, in the partition of a marker record.
* **Recursive strata** run semi-naive rounds as ``datalog.evaluation.fixpoint`` does: each recursive atom
  position of each rule reads the previous round's new tuples (``recent``), the other atoms the
  full relations, and a rule whose looked-up relation grew is evaluated in full. A round is
  one job: the partitioned joins of all these variants, then ``distinct``; the driver, which holds
  the known tuples in ``engine.db``, subtracts them and keeps the rest as the next ``recent``.
* **Batching** (every job costs 0.2-0.6 s, shared/design/SPARK_NOTES.md): strata are grouped in
  levels (one above the highest stratum they read). The strata of a level cannot see each other's
  relations, so they share their jobs: round 0 evaluates their non-recursive rules and the base
  rules of their recursive strata, each later round the variants of the recursive strata that
  still grow. A program costs one job per level plus one per semi-naive round of its deepest
  recursion in each level.

One job: ``parallelize`` the rows of every partitioned source once, as ``(source id, row)``;
``flatMap`` each row to ``(row[c], ((variant, atom), row))`` for every atom reading that source
(``c`` its v1 column) -- so one shuffle, ``partitionBy(P)``, co-locates all of them;
``mapPartitions`` runs LFTJ per variant; ``distinct``; ``collect``. Relations stay on the driver
between jobs (they must end in ``engine.db``), so each round ships again the full relations it
joins: cheap for the programs here, O(size x rounds) for large recursions.

A run-time error in a rule (``division_by_zero``, ``invalid_conversion``) comes back as a record
and is raised on the driver with its code, message and span.

Exceptions: none. Every kind of rule runs on Spark (aggregates read their bodies' relations from
the broadcast), and every program in ``programs/`` evaluates there with the in-process results.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

from datalog.language import ast
from datalog.language.errors import DatalogError, Unsupported
from datalog.evaluation.compile import compile_plan
from datalog.evaluation.evaluate import derive
from datalog.evaluation.seminaive import Variable, rounds
from datalog.planning.plan import AtomPlan, Lookup, RulePlan
from lftj.relation import Relation
from datalog.language.strata import Stratum, dependencies
from datalog.language.display import plural

Progress = Callable[[str], None]
Source = tuple[str, bool]               # (relation, delta?): the full relation or its ``recent`` tuples


def evaluate_on_spark(engine, spark, partitions: int | None = None, progress: Progress | None = None) -> None:
    """Evaluate every stratum of ``engine`` (inputs loaded: ``engine.load_inputs()``) on ``spark``,
    ``partitions`` hash partitions per job (default: the context's parallelism), and leave the
    results in ``engine.db`` as ``engine.evaluate()`` would."""
    partitions = partitions or spark.sparkContext.defaultParallelism
    for stratum in engine.checked.strata:       # their fixpoint keeps or removes rows one by one
        if stratum.constrained:
            raise Unsupported(f"choice-domain and subsumption ({', '.join(stratum.relations)}) are not "
                              f"evaluated on Spark; run without --spark", None)
    numbers = {id(s): n for n, s in enumerate(engine.checked.strata, 1)}
    levels = _levels(engine.checked.strata)
    for level, strata in enumerate(levels, 1):
        if progress:
            progress(f"level {level}/{len(levels)} on Spark, strata {', '.join(str(numbers[id(s)]) for s in strata)}"
                     f" of {len(numbers)}: {', '.join(r for s in strata for r in s.relations)}")
        _evaluate_level(engine, spark, strata, partitions, progress)


def run_on_spark(engine, progress: Progress | None = None) -> None:
    """``engine.run()``, every stratum evaluated on Spark: the inputs loaded, then
    :func:`evaluate_on_spark` on the engine's session; the engine counts as evaluated."""
    engine.load_inputs(progress)
    evaluate_on_spark(engine, engine.spark_session(), progress=progress)
    engine._evaluated = True


# ---------------------------------------------------------------- scheduling

def _levels(strata: list[Stratum]) -> list[list[Stratum]]:
    """Strata with rules, by level: 0 reads only EDB, level k reads some stratum of level k - 1."""
    level_of: dict[str, int] = {}
    levels: list[list[Stratum]] = []
    for stratum in strata:
        clauses = [c for c in stratum.clauses if c.body]
        if not clauses:
            continue
        reads = {r for c in clauses for r, _, _ in dependencies(c)} - set(stratum.relations)
        level = 1 + max((level_of[r] for r in reads if r in level_of), default=-1)
        level_of.update(dict.fromkeys(stratum.relations, level))
        levels.extend([] for _ in range(level + 1 - len(levels)))
        levels[level].append(stratum)
    return levels


def _evaluate_level(engine, spark, strata: list[Stratum], partitions: int, progress) -> None:
    """Round 0: every non-recursive rule and every base rule; then semi-naive rounds."""
    recursions = [_Recursion(engine, s) for s in strata if s.recursive]
    first = [_variant(engine.plans[c.index]) for s in strata if not s.recursive for c in s.clauses if c.body]
    first += [_variant(plan) for r in recursions for plan in r.base]
    for name, rows in _job(engine, spark, first, {}, partitions).items():
        engine.db[name].insert(rows)
    members = [n for r in recursions for n in r.members]
    variables = {n: Variable(n, engine.db[n].arity, engine.db[n].insert, recent=engine.db[n].tuples)
                 for n in members}

    def report(number: int) -> None:
        if progress:
            progress(f"  iteration {number}: {plural(sum(len(engine.db[n]) for n in members), 'tuple')}")
    for _ in rounds(list(variables.values()), report):
        recent = {n: v.recent.tuples for n, v in variables.items()}
        # path(x, z) :- path(x, y), edge(y, z).   path read from its recent tuples: every such
        # variant of every recursive rule of the level in one job
        for name, rows in _job(engine, spark, [v for r in recursions for v in r.variants(recent)], recent,
                               partitions).items():
            variables[name].to_add |= rows


class _Recursion:
    """A recursive stratum's rules, split as ``datalog.evaluation.fixpoint`` splits them: base rules (no atom
    or lookup of the stratum) and the others, with their recursive atom positions and lookups."""

    def __init__(self, engine, stratum: Stratum):
        self.members = list(stratum.relations)
        self.base: list[RulePlan] = []
        self.rules: list[tuple[RulePlan, list[int], set[str]]] = []
        for clause in (c for c in stratum.clauses if c.body):
            plan = engine.plans[clause.index]
            atoms = [a for a, atom in enumerate(plan.atoms) if atom.relation in self.members]
            lookups = {f.relation for f in plan.filters
                      if isinstance(f, Lookup) and not f.negated and f.relation in self.members}
            if atoms or lookups:
                self.rules.append((plan, atoms, lookups))
            else:
                self.base.append(plan)

    def variants(self, recent: dict[str, set]) -> list["Variant"]:
        # path(x, z) :- path(x, y), edge(y, z).   path reads recent, edge the full relation;
        # q(x) :- e(x), p(_).   with p growing: evaluated in full
        out = []
        for plan, atoms, lookups in self.rules:
            if any(recent[r] for r in lookups):
                out.append(_variant(plan))
                continue
            out.extend(_variant(plan, a) for a in atoms if recent[plan.atoms[a].relation])
        return out


# ---------------------------------------------------------------- variants

@dataclass
class Variant:
    """One rule evaluated in a job: per join atom the source it reads and the column holding the
    first variable, on which it is partitioned (None: read whole from the broadcast)."""

    plan: RulePlan
    head: str
    sources: list[Source]
    keys: list[int | None]
    broadcast: frozenset[Source]


def _variant(plan: RulePlan, delta_at: int | None = None) -> Variant:
    # t(x, y, z) :- e(x, y), e(y, z), e(z, x), !bad(x).   order x, y, z: e(x, y) keyed on column 0,
    # e(z, x) on column 1, e(y, z) and bad broadcast
    first = plan.variable_order[0] if plan.variable_order else None
    sources = [(atom.relation, a == delta_at) for a, atom in enumerate(plan.atoms)]
    keys = [_column(atom, first) for atom in plan.atoms]
    broadcast = {(r, False) for r, _, node in dependencies(plan.clause) if not isinstance(node, ast.Atom)}
    broadcast |= {(f.relation, False) for f in plan.filters if isinstance(f, Lookup) and not f.negated}
    broadcast |= {s for s, key in zip(sources, keys) if key is None}
    shipped = replace(plan, backend=None)             # the maintenance backend is not needed here
    return Variant(shipped, plan.clause.head.relation, sources, keys, frozenset(broadcast))


def _column(atom: AtomPlan, variable: str | None) -> int | None:
    for column, arg in enumerate(atom.atom.args):
        if isinstance(arg, ast.Variable) and arg.name == variable:
            return column
    return None


# ---------------------------------------------------------------- one Spark job

def _job(engine, spark, variants: list[Variant], recent: dict[str, set], partitions: int) -> dict[str, set]:
    """Evaluate ``variants`` in one job; the derived head rows by relation (deduplicated)."""
    if not variants:
        return {}
    sc = spark.sparkContext

    def rows(source: Source):
        name, delta = source
        return recent[name] if delta else engine.db[name].tuples
    shipped = sorted({s for v in variants for s, key in zip(v.sources, v.keys) if key is not None})
    readers = _readers(variants, shipped)
    records = [(i, row) for i, source in enumerate(shipped) for row in rows(source)]
    records += [(None, v) for v, variant in enumerate(variants) if not variant.plan.atoms]
    tables = sc.broadcast({s: list(rows(s)) for v in variants for s in v.broadcast})
    arities = {name: engine.db[name].arity for v in variants for name, _ in v.sources + list(v.broadcast)}
    evaluate = partial(_evaluate_partition, variants, tables, arities, engine.intersect)
    try:
        pairs = (sc.parallelize(records, partitions).flatMap(partial(_keyed, readers))
                 .partitionBy(partitions).mapPartitions(evaluate).distinct(partitions).collect())
    finally:
        tables.destroy()
    return _grouped(pairs)


def _readers(variants: list[Variant], shipped: list[Source]) -> list[list[tuple]]:
    """Per shipped source: the ``((variant, atom), column)`` of every partitioned atom reading it."""
    ids = {s: i for i, s in enumerate(shipped)}
    readers: list[list[tuple]] = [[] for _ in shipped]
    for v, variant in enumerate(variants):
        for a, (source, key) in enumerate(zip(variant.sources, variant.keys)):
            if key is not None:
                readers[ids[source]].append(((v, a), key))
    return readers


def _grouped(pairs) -> dict[str, set]:
    out: dict[str, set] = defaultdict(set)
    for name, row in pairs:
        if name is None:                              # an error record: (code, message, span)
            raise _error(*row)
        out[name].add(row)
    return out


def _error(code: str, message: str, span) -> DatalogError:
    classes, seen = [DatalogError], []
    while classes:
        cls = classes.pop()
        seen.append(cls)
        classes.extend(cls.__subclasses__())
    cls = next((c for c in seen if c.code == code), DatalogError)
    return cls(message, span)


# ---------------------------------------------------------------- on the executors

def _keyed(readers, record):
    """``(source id, row)`` -> ``(row[c], ((variant, atom), row))`` for every atom reading the
    source; a marker ``(None, variant)`` -> one record of a variant without atoms."""
    source, row = record
    if source is None:
        return [(row, ((row, None), ()))]
    return [(row[column], (tag, row)) for tag, column in readers[source]]


def _evaluate_partition(variants: list[Variant], tables, arities, intersect, items):
    """LFTJ of every variant over this partition's rows; yields ``(head relation, row)``."""
    rows: dict[tuple, list] = defaultdict(list)
    for _, (tag, row) in items:
        rows[tag].append(row)
    db = _Broadcast(tables.value, arities)
    try:
        for v, variant in enumerate(variants):
            sources = _partition_sources(v, variant, rows, db)
            if sources is not None:
                head = variant.head
                yield from ((head, row) for row in derive(compile_plan(variant.plan), db, sources, intersect))
    except DatalogError as exc:
        yield None, (exc.code, exc.message, exc.span)


def _partition_sources(v: int, variant: Variant, rows, db: "_Broadcast") -> dict[int, Relation] | None:
    """The relation each atom reads in this partition, or None when the variant has no answer here
    (an atom keyed on the first variable has no row in the partition)."""
    if not variant.plan.atoms:
        return {} if (v, None) in rows else None
    sources = {}
    for a, ((name, delta), key) in enumerate(zip(variant.sources, variant.keys)):
        if key is not None:
            here = rows.get((v, a))
            if not here:
                return None
            sources[a] = Relation(name, db.arities[name], here)
        elif delta:
            sources[a] = db[(name, True)]
    return sources


class _Broadcast(dict):
    """The broadcast relations of a partition, built on first use: ``db[name]`` the full relation,
    ``db[(name, True)]`` its recent tuples. A name not broadcast is an empty relation: ``run_plan``
    looks up ``db[atom.relation]`` even for an atom whose source it is given."""

    def __init__(self, tables: dict[Source, list], arities: dict[str, int]):
        super().__init__()
        self.tables, self.arities = tables, arities

    def __missing__(self, key):
        name, delta = key if isinstance(key, tuple) else (key, False)
        relation = self[key] = Relation(name, self.arities[name], self.tables.get((name, delta), ()))
        return relation


__all__ = ["evaluate_on_spark", "run_on_spark"]
