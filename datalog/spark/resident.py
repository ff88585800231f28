"""Spark-resident evaluation: every relation a DataFrame from the sources to the sinks.

``datalog run prog.dl --engine spark`` runs here when every stratum can be translated
(:func:`choices`); otherwise the whole program goes to :mod:`datalog.spark.distributed` (which
keeps the relations on the driver) and the command says why. The driver holds plans, the
program's own facts and one count per relation and per semi-naive round, never a derived
relation's rows (except while writing a file output, one bounded chunk at a time).

**A rule** becomes DataFrame operations, Spark choosing the physical joins (the binary join plan):

* positive atoms are joined on their shared variables (inner joins, a cross join only when an
  atom shares none), an atom's constants are filters on its columns and a variable repeated in
  it an equality between them; an atom whose relation is known (counted) to be small is
  broadcast;
* comparisons ``= != < <= > >=`` between terms of one type, and ``v = expr`` bindings, are
  column expressions; arithmetic only ``+ - *`` and unary minus on ``number`` with the session in
  ANSI mode, where a long overflows exactly when the engine's result leaves the 64-bit range:
  that is the engine's ``number_out_of_range`` (``/`` and ``%``, float arithmetic, which makes NaN
  silently where the engine stops, and every functor are not translated);
* a negation is a ``left_anti`` join on the bound variables (no column is ever null; the
  session's broadcast threshold is off, SPARK_NOTES.md); a variable seen once in the rule is a
  wildcard there, as in Soufflé;
* ``v = count|sum|min|max : { body }`` is a ``groupBy`` on the variables the aggregate shares
  with the rest of the rule, joined back (a left join with 0 for count and sum of nothing, an
  inner join for min and max, which have no value then). Soufflé's choice of what is counted
  is kept: a one-atom body counts its tuples, a larger one its distinct local assignments.
  ``sum`` is exact: over ``number`` only, summed as ``decimal(38, 0)`` and cast back (out of
  range: ``number_out_of_range``); ``mean`` and sums of floats (the engine sums those exactly,
  Spark's double sum does not) are not translated;
* the head: its terms as expressions, cast to the relation's types, ``distinct``.

Or the atoms are joined worst-case optimally (:mod:`datalog.spark.wcoj`: a HyperCube shuffle,
then leapfrog triejoin per cell in ``mapInArrow``) and the rest of the rule applied to the
bindings as above: ``join="auto"`` (``--spark-join``) takes it for a cyclic body whose largest
pairwise join is estimated at over ``wcoj.RATIO`` times its inputs.

**A recursive stratum** runs semi-naive rounds: each rule once per recursive atom, that atom
reading the previous round's new tuples (``recent``), the others the full relations; ``recent``
of the next round = the union of the derivations minus the known tuples (``subtract``: EXCEPT
DISTINCT). ``recent`` is cut from its lineage by ``localCheckpoint`` every round (materialized by
the round's one count, which ends the loop at 0) and the full relation every
``checkpoint_every`` rounds (every round while it is small), so the plans stay small however
many rounds run; a checkpoint of the full relation also brings its partitions, one more set
per round's union, back to a few (:meth:`Resident.compacted`).

**Inputs**: Spark sources as DataFrames (checked for NULL and NaN by one query each); ``.input``
files are parsed on the driver by the engine's own reader (exact: its number, float and
escaping rules) and parallelized through Arrow -- an input file is read on the driver, a
derived relation never is. **Outputs**: Spark sinks written from the DataFrame; ``.output``
text files (and ``-D -``) streamed from the sorted DataFrame (``repartitionByRange`` into parts
of at most ``CHUNK_ROWS`` rows, ``toLocalIterator``), formatted by the engine's writer so they
are byte-identical; other file kinds (SQLite, JSON, compressed) are built from the collected
relation.

**Not translated** (the program falls back): choice-domain and subsumption, nullary
relations, columns of types other than number, float and symbol (or still ``auto``),
functors, records and ADTs, ``/ % ^`` and bit operations, float arithmetic, ``mean``, sums of
floats, nested aggregates, disjunctions in aggregate bodies, ``--number-width 32``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

from datalog.language import ast, numbers
from datalog.language.errors import DatalogError, DivisionByZero, NumberOutOfRange, TypeMismatch
from datalog.sources import files
from datalog.spark import tables as spark_io
from datalog.spark import wcoj
from datalog.spark.session import first_line, guard
from datalog.language.display import plural

try:                                            # the optional extra
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError:                             # pragma: no cover - depends on the installation
    pass

Progress = Callable[[str], None]
FILE_IO = ("file", "stdout", "sqlite", "json", "jsonfile")     # as datalog.engine.outputs writes them
TYPES = ("number", "float", "symbol")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
ARITHMETIC = ("+", "-", "*", "/", "%")
BROADCAST_ROWS = 20_000          # a relation counted at most this many rows is broadcast in joins
# A join of a few rows (a delta) with a large relation filters the relation's scan by the few
# rows' values (:meth:`Resident._narrowed`) when these hold: the few at most PROBE_KEYS rows,
# the relation at least PROBE_ROWS
PROBE_KEYS = 1_000
PROBE_ROWS = 200_000
CHUNK_ROWS = 100_000             # a file output is streamed to the driver in parts of about this size


class NotResident(Exception):
    """A construct the resident evaluator does not translate (the reason is the message)."""


# ---------------------------------------------------------------- routing

@dataclass
class Choice:
    number: int
    relations: tuple[str, ...]
    reason: str | None               # None: resident


def choices(engine) -> list[Choice]:
    """Per stratum whether it runs resident, and if not why."""
    out = []
    for number, stratum in enumerate(engine.checked.strata, 1):
        try:
            _check_stratum(engine, stratum)
            reason = None
        except NotResident as exc:
            reason = str(exc)
        out.append(Choice(number, tuple(stratum.relations), reason))
    return out


def explain_lines(engine, join: str = "auto") -> list[str]:
    """What ``explain --engine spark`` adds: the evaluator of each stratum and of the program,
    and the rules whose bodies are joined worst-case optimally."""
    picked = choices(engine)
    lines = ["on Spark (--engine spark):"]
    for c, stratum in zip(picked, engine.checked.strata):
        how = "resident (DataFrames, Spark's joins)" if c.reason is None else f"not resident: {c.reason}"
        lines.append(f"  stratum {c.number} ({', '.join(c.relations)}): {how}")
        if c.reason is None:
            how = "joined worst-case optimally (HyperCube shuffle, triejoin per cell)" + (
                "" if join == "wcoj" else f" if its largest pairwise join is estimated above {wcoj.RATIO}x "
                                          f"its inputs, else by Spark's joins")
            lines += [f"    {clause}  {how}" for clause in stratum.clauses
                      if _joins_worst_case_optimally(clause, stratum, join)]
    blocked = [c for c in picked if c.reason is not None]
    lines.append("  program: " + ("resident" if not blocked else
                                  f"falls back to the distributed evaluator (relations on the driver) "
                                  f"because of stratum {', '.join(str(c.number) for c in blocked)}"))
    return lines


def _joins_worst_case_optimally(clause, stratum, join: str) -> bool:
    """Whether the rule's atoms go through :func:`wcoj.hypercube_join` (as ``Resident._body``
    decides: a rule of a recursive stratum reading the stratum is joined from its delta)."""
    atoms = [lit for lit in clause.body if isinstance(lit, ast.Atom)]
    delta = stratum.recursive and _reads(clause, set(stratum.relations))
    return wcoj.candidate(join, [_atom_variables(a) for a in atoms], delta)


def _check_stratum(engine, stratum) -> None:
    if numbers.WIDTH[0] != 64:
        raise NotResident("--number-width 32 (Spark's longs do not wrap at 32 bits)")
    if stratum.constrained:
        raise NotResident("choice-domain or subsumption")
    for name in stratum.relations:
        info = engine.schema[name]
        if info.arity == 0:
            raise NotResident(f"{name} is nullary")
        bad = [t for t in info.types if t not in TYPES]
        if bad:
            raise NotResident(f"{name} has a column of type {bad[0]}")
    for clause in stratum.clauses:
        if clause.body:
            _RuleShape(engine, clause).check()


# ---------------------------------------------------------------- terms and literals (no Spark)

def _variables(node) -> set[str]:
    return {v.name for v in ast.variables(node)}


def _aggregates(node):
    return [n for n in ast.walk(node) if isinstance(n, ast.Aggregate)]


def _constant_type(value) -> str:
    if isinstance(value, bool):
        raise NotResident(f"the constant {value!r}")
    return {int: "number", float: "float", str: "symbol"}.get(type(value)) or _refuse(f"the constant {value!r}")


def _refuse(what: str):
    raise NotResident(what)


class _RuleShape:
    """The static check of one clause: the order its literals are applied in and the types of
    its variables, without Spark. :class:`_Translator` follows the same order."""

    def __init__(self, engine, clause):
        self.engine, self.clause = engine, clause

    def check(self) -> None:
        _plan(self.engine.schema, self.clause.head, self.clause.body, {}, _visible(self.clause))


def _visible(clause) -> set[str]:
    """Variables that occur outside every aggregate (head and the other literals), without the
    ``v`` of ``v = aggregate``: what an aggregate groups on when it mentions them."""
    seen: set[str] = set()
    for lit in clause.body:
        if isinstance(lit, ast.Comparison) and (isinstance(lit.left, ast.Aggregate) or isinstance(lit.right, ast.Aggregate)):
            continue
        if not _aggregates(lit):
            seen |= _variables(lit)
    return seen


@dataclass
class Step:
    kind: str                 # atom, filter, bind, negation, aggregate
    literal: object
    var: str | None = None    # bind / aggregate: the variable bound (None: compared)
    expr: object = None       # bind: the expression; aggregate: the Aggregate
    group: tuple = ()         # aggregate: the variables it groups on


def _singletons(head, body) -> set[str]:
    counts: dict[str, int] = {}
    for v in ast.variables((head, body)):
        counts[v.name] = counts.get(v.name, 0) + 1
    return {n for n, k in counts.items() if k == 1}


def _plan(schema, head, body, outer: dict, visible: set[str]):
    """The steps of a body (atoms first, joined greedily on shared variables; then filters,
    bindings, aggregates and negations as soon as their variables are bound) and the types of
    its variables. ``outer``: the variables bound before, with their types (none for a rule,
    the grouping variables for an aggregate's body). Raises NotResident."""
    types: dict[str, str] = dict(outer)
    steps: list[Step] = []
    atoms = [lit for lit in body if isinstance(lit, ast.Atom)]
    rest = [lit for lit in body if not isinstance(lit, ast.Atom)]
    for lit in rest:
        if not isinstance(lit, (ast.Negation, ast.Comparison)):
            raise NotResident(f"the literal {lit}")
    singles = _singletons(head, body) if head is not None else set()
    for atom in atoms:
        _atom_types(schema, atom, types)
        steps.append(Step("atom", atom))
    bound = set(outer) | set(types)
    pending = list(rest)
    while pending:
        for lit in pending:
            step = _ready(schema, lit, bound, types, singles, visible)
            if step is not None:
                steps.append(step)
                pending.remove(lit)
                if step.var is not None:
                    bound.add(step.var)
                break
        else:
            raise NotResident(f"no order binds the variables of {', '.join(map(str, pending))}")
    if head is not None:
        for arg in head.args:
            if not isinstance(arg, ast.Wildcard):
                _term_type(arg, types)
    return steps, types


def _atom_types(schema, atom: ast.Atom, types: dict) -> None:
    info = schema.get(atom.relation)
    if info is None or info.arity == 0:
        raise NotResident(f"the atom {atom}")
    for arg, type_ in zip(atom.args, info.types):
        if type_ not in TYPES:
            raise NotResident(f"{atom.relation} has a column of type {type_}")
        if isinstance(arg, ast.Variable):
            if types.setdefault(arg.name, type_) != type_:
                raise NotResident(f"{arg.name} holds both {types[arg.name]} and {type_}")
        elif isinstance(arg, ast.Constant):
            if _constant_type(arg.value) != type_:
                raise NotResident(f"the constant {arg} in a {type_} column")
        elif not isinstance(arg, ast.Wildcard):
            raise NotResident(f"the term {arg} in an atom")


def _term_type(term, types: dict) -> str:
    """The type of a translatable term whose variables are typed; NotResident otherwise."""
    if isinstance(term, ast.Variable):
        if term.name not in types:
            raise NotResident(f"{term.name} is not bound")
        return types[term.name]
    if isinstance(term, ast.Constant):
        return _constant_type(term.value)
    if isinstance(term, ast.BinaryOp) and term.op in ARITHMETIC:
        if _term_type(term.left, types) == _term_type(term.right, types) == "number":
            return "number"
        raise NotResident(f"{term} (only number arithmetic is translated)")
    if isinstance(term, ast.Negate) and _term_type(term.operand, types) == "number":
        return "number"
    raise NotResident(f"the term {term}")


def _computable(term, bound) -> bool:
    return not _aggregates(term) and _variables(term) <= bound and not any(
        isinstance(n, ast.Wildcard) for n in ast.walk(term))


def _ready(schema, lit, bound: set, types: dict, singles: set, visible: set) -> Step | None:
    if isinstance(lit, ast.Negation):
        atom = lit.atom
        if not all(isinstance(a, ast.Wildcard) or (isinstance(a, ast.Variable) and (a.name in bound or a.name in singles))
                   or isinstance(a, ast.Constant) for a in atom.args):
            if any(not isinstance(a, (ast.Wildcard, ast.Variable, ast.Constant)) for a in atom.args):
                raise NotResident(f"the negation {lit}")
            return None
        local: dict[str, str] = {}
        probe = ast.Atom(atom.relation, tuple(a if not (isinstance(a, ast.Variable) and a.name not in bound)
                                              else ast.Wildcard() for a in atom.args))
        _atom_types(schema, probe, local)
        for name, type_ in local.items():
            if types.get(name) != type_:
                raise NotResident(f"{name} is compared across types in {lit}")
        return Step("negation", lit)
    if lit.op not in COMPARISONS:
        raise NotResident(f"the comparison {lit}")
    for agg, other in ((lit.right, lit.left), (lit.left, lit.right)):
        if isinstance(agg, ast.Aggregate):
            if lit.op != "=" or not isinstance(other, ast.Variable):
                raise NotResident(f"the aggregate in {lit}")
            group = tuple(sorted(_variables(agg) & visible))
            if not set(group) <= bound:
                return None
            _aggregate_type(schema, agg, frozenset(group), types, visible, other.name)
            return Step("aggregate", lit, None if other.name in bound else other.name, agg, group)
    if _computable(lit.left, bound) and _computable(lit.right, bound):
        if _term_type(lit.left, types) != _term_type(lit.right, types):
            raise NotResident(f"{lit} compares values of two types")
        return Step("filter", lit)
    if lit.op == "=":
        for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
            if isinstance(var, ast.Variable) and var.name not in bound and _computable(expr, bound):
                types[var.name] = _term_type(expr, types)
                return Step("bind", lit, var.name, expr)
    if any(not isinstance(n, (ast.Variable, ast.Constant, ast.BinaryOp, ast.Negate)) for n in ast.walk((lit.left, lit.right))):
        raise NotResident(f"the comparison {lit}")
    return None


def _aggregate_type(schema, agg, group: frozenset, types: dict, visible, var: str) -> None:
    if agg.kind not in ("count", "sum", "min", "max"):
        raise NotResident(f"the aggregate {agg.kind}")
    if _aggregates(agg.body):
        raise NotResident("a nested aggregate")
    _steps, body_types = _plan(schema, None, agg.body, {n: types[n] for n in group}, visible)
    if agg.kind == "count":
        result = "number"
    else:
        if not isinstance(agg.target, ast.Variable) and not isinstance(agg.target, (ast.Constant, ast.BinaryOp, ast.Negate)):
            raise NotResident(f"the aggregate target {agg.target}")
        result = _term_type(agg.target, body_types)
        if agg.kind == "sum" and result != "number":
            raise NotResident("a sum of floats (the engine sums them exactly)")
    if types.setdefault(var, result) != result:
        raise NotResident(f"{var} compared with an aggregate of another type")


# ---------------------------------------------------------------- the evaluator

def _col(name: str) -> str:
    return "v_" + re.sub(r"[^0-9A-Za-z_]", lambda m: f"_{ord(m.group()):x}_", name)


def column_names(info) -> list[str]:
    """A relation's column names as its sink gets them (as datalog.engine.outputs names them)."""
    names = list(info.column_names) if len(info.column_names) == info.arity else []
    return names if len(set(names)) == len(names) and names else [f"c{i}" for i in range(info.arity)]


def _spark_type(type_: str):
    return {"number": T.LongType(), "float": T.DoubleType()}.get(type_, T.StringType())


@dataclass
class _Known:
    frame: object
    size: int


def unfit(types: list[str]):
    """Whether a row (c0, c1, ...) holds what no Datalog relation can: a NULL, or a float NaN."""
    bad = F.lit(False)
    for i, t in enumerate(types):
        bad = bad | F.col(f"c{i}").isNull()
        if t == "float":
            bad = bad | F.isnan(F.col(f"c{i}"))
    return bad


def refuse_unfit(directive) -> None:
    raise TypeMismatch(f"the Spark source of {directive.relation} has NULL or NaN values, which Datalog "
                       f"relations cannot hold", directive.span)


@dataclass
class Resident:
    """Evaluates ``engine``'s program on ``spark`` keeping every relation a DataFrame
    (``frames``) with its row count (``sizes``)."""

    engine: object
    spark: object
    checkpoint_every: int = 25
    progress: Progress | None = None
    join: str = "auto"                  # how bodies are joined (wcoj.JOINS)
    cells: int | None = None            # HyperCube cells (None: spark.sql.shuffle.partitions, at least 4)
    frames: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    rounds: dict = field(default_factory=dict)      # recursive stratum number -> semi-naive rounds
    joins: list = field(default_factory=list)       # (atoms, HyperCube?, estimate, inputs) per choice by estimate
    plans: dict = field(default_factory=dict)       # id(clause) -> (clause, its (steps, types)): kept, so the id is not reused

    # ------------------------------------------------------------ frames
    def empty(self, name: str):
        info = self.engine.schema[name]
        schema = T.StructType([T.StructField(f"c{i}", _spark_type(t), False) for i, t in enumerate(info.types)])
        return self.spark.createDataFrame([], schema)

    def _typed(self, name: str, frame):
        info = self.engine.schema[name]
        return frame.select(*[F.col(f"c{i}").cast(_spark_type(t)).alias(f"c{i}") for i, t in enumerate(info.types)])

    def _keep(self, name: str, frame, size: int | None = None) -> None:
        frame = frame.localCheckpoint(eager=True)
        self.frames[name] = frame
        self.sizes[name] = frame.count() if size is None else size

    def read(self, name: str):
        return self.frames.get(name) if name in self.frames else self.empty(name)

    # ------------------------------------------------------------ inputs
    def load(self) -> None:
        engine = self.engine
        spark_ins = [d for d in engine.checked.directives("input") if d.io in ("spark", "delta")]
        file_ins = [d for d in engine.checked.directives("input") if d.io in ("file", "sqlite", "jsonfile", "stdin")]
        parts: dict[str, list] = {}
        for directive in file_ins:                  # the engine's own reader: exact parsing
            name, info = directive.relation, engine.schema[directive.relation]
            if directive.io == "stdin":
                rows = files.read_stdin(directive, info.types)
            else:
                path = files.input_path(directive, engine.facts_dir, engine.allow_paths)
                rows = files.read_input(directive, path, info.types, info.column_names)
            if rows:
                parts.setdefault(name, []).append(self._parallel(name, rows))
        for name, relation in engine.db.items():    # the program's facts
            if len(relation) and name in engine.schema and engine.schema[name].arity:
                parts.setdefault(name, []).append(self._parallel(name, relation.tuples))
        for directive in spark_ins:
            name = directive.relation
            info = engine.schema[name]
            frame = self.source(directive)
            frame = frame.toDF(*[f"c{i}" for i in range(info.arity)])
            self._check_source(directive, frame, info.types)
            parts.setdefault(name, []).append(frame)
        for name, frames in parts.items():
            union = frames[0]
            for other in frames[1:]:
                union = union.unionByName(other)
            self._keep(name, self._typed(name, union).distinct())

    def source(self, directive):
        """A Spark source's rows (a resident workspace reads its staged snapshot instead)."""
        info = self.engine.schema[directive.relation]
        return spark_io.source_frame(self.spark, directive, info.types, column_names(info), self.engine.facts_dir,
                                     self.engine.allow_paths)

    def _parallel(self, name: str, rows):
        info = self.engine.schema[name]
        return spark_io.frame_of(self.spark, rows, [f"c{i}" for i in range(info.arity)], list(info.types))

    def _check_source(self, directive, frame, types) -> None:
        if guard(lambda: frame.where(unfit(types)).limit(1).count(), f"reading {directive.relation}"):
            refuse_unfit(directive)

    # ------------------------------------------------------------ evaluation
    def run(self) -> None:
        self.spark.conf.set("spark.sql.ansi.enabled", "true")       # long overflow is an error
        # Catalyst's constraint inference over a Union of a self-joined checkpoint can fail
        # ("key not found" in Union.rewriteConstraints, found by the random-program test); the
        # constraints it infers are no use to these plans
        self.spark.conf.set("spark.sql.constraintPropagation.enabled", "false")
        blocked = [c for c in choices(self.engine) if c.reason is not None]
        if blocked:
            raise NotResident(f"stratum {blocked[0].number}: {blocked[0].reason}")
        try:
            self.load()
            strata = self.engine.checked.strata
            for number, stratum in enumerate(strata, 1):
                rules = [c for c in stratum.clauses if c.body]
                if not rules:
                    continue
                started = time.perf_counter()
                if stratum.recursive:
                    self._recursive(number, stratum, rules)
                else:
                    self._plain(stratum, rules)
                if self.progress:
                    self.progress(f"stratum {number}/{len(strata)} resident on Spark: "
                                  f"{', '.join(f'{r} {self.sizes.get(r, 0)}' for r in stratum.relations)} "
                                  f"({time.perf_counter() - started:.1f} s)")
        except DatalogError:
            raise
        except Exception as exc:
            raise _engine_error(exc) from None

    def _plain(self, stratum, rules) -> None:
        by_head: dict[str, list] = {}
        for clause in rules:
            by_head.setdefault(clause.head.relation, []).append(self.rule(clause, {}))
        for name in stratum.relations:
            frames = by_head.get(name, [])
            if name in self.frames:
                frames = [self.frames[name], *frames]
            if frames:
                self._keep(name, _union(frames).distinct())

    def _recursive(self, number: int, stratum, rules) -> None:
        members = set(stratum.relations)
        base = [c for c in rules if not _reads(c, members)]
        recursive = [c for c in rules if _reads(c, members)]
        recent: dict[str, _Known] = {}
        for name in stratum.relations:
            frames = [self.rule(c, {}) for c in base if c.head.relation == name]
            if name in self.frames:
                frames.insert(0, self.frames[name])
            if frames:
                self._keep(name, _union(frames).distinct())
            else:
                self.frames[name], self.sizes[name] = self.empty(name), 0
            recent[name] = _Known(self.frames[name], self.sizes[name])
        self._rounds(number, stratum, recursive, recent)

    def _rounds(self, number: int, stratum, recursive, recent: dict, added: dict | None = None) -> None:
        """Semi-naive rounds of the ``recursive`` rules from ``recent`` (the tuples of each
        relation of the stratum not yet joined, already in ``self.frames``) to the fixpoint;
        ``added``: if given, gets each relation's new tuples of every round (name -> frames)."""
        members = set(stratum.relations)
        rounds = 0
        while any(k.size for k in recent.values()):
            rounds += 1
            derived: dict[str, list] = {}
            for clause in recursive:
                positions = [i for i, lit in enumerate(clause.body)
                             if isinstance(lit, ast.Atom) and lit.relation in members and recent[lit.relation].size]
                for i in positions:
                    derived.setdefault(clause.head.relation, []).append(self.rule(clause, {i: recent[clause.body[i].relation]}))
            new: dict[str, _Known] = {}
            for name in stratum.relations:
                if name not in derived:
                    new[name] = _Known(self.empty(name), 0)
                    continue
                fresh = _union(derived[name])
                if self.sizes[name] <= BROADCAST_ROWS:   # known small: an anti join against its broadcast
                    known = F.broadcast(self.frames[name])  # (measured 0.25 s a round against 0.55 s)
                    fresh = fresh.distinct().join(known, on=list(known.columns), how="left_anti")
                else:                                   # EXCEPT DISTINCT: the new tuples once each
                    fresh = fresh.subtract(self.frames[name])
                fresh = fresh.localCheckpoint(eager=False)
                new[name] = _Known(fresh, fresh.count())          # materializes the checkpoint
            for name, known in new.items():
                if known.size:
                    if added is not None:
                        added.setdefault(name, []).append(known.frame)
                    full = self.frames[name].unionByName(known.frame)
                    size = self.sizes[name] + known.size
                    if size <= BROADCAST_ROWS or rounds % self.checkpoint_every == 0:
                        full = self.compacted(full, size, eager=size > BROADCAST_ROWS)
                    self.frames[name], self.sizes[name] = full, size
            recent = new
            if self.progress and rounds % 50 == 0:
                self.progress(f"  stratum {number} round {rounds}: "
                              f"{plural(sum(self.sizes[n] for n in stratum.relations), 'tuple')}")
        self.rounds[number] = rounds
        for name in stratum.relations:                  # a short lineage for the strata above
            self.frames[name] = self.compacted(self.frames[name], self.sizes[name])

    def compacted(self, frame, size: int, eager: bool = True):
        """``frame``, a union of checkpoints holding ``size`` rows, checkpointed in fewer
        partitions: one if it has at most :data:`BROADCAST_ROWS` rows (a narrow ``coalesce``),
        else ``spark.sql.shuffle.partitions`` if the union has over twice as many (a shuffle).
        Each round's union adds the round's partitions, and a checkpoint keeps them: without
        this, every scan of a relation has a task per round run (a 1,000-round chain took 4 s
        a round at its end, 0.9 s at its start; now 0.5 s throughout)."""
        if size <= BROADCAST_ROWS:
            frame = frame.coalesce(1)
        else:
            target = int(self.spark.conf.get("spark.sql.shuffle.partitions"))
            if frame.rdd.getNumPartitions() > 2 * target:
                frame = frame.repartition(target)
        return frame.localCheckpoint(eager=eager)

    # ------------------------------------------------------------ one rule
    def rule(self, clause, deltas: dict[int, _Known]):
        """The head rows ``clause`` derives (a DataFrame with columns c0..., duplicates possible),
        atom ``i`` of its body reading ``deltas[i]`` instead of its full relation."""
        steps, types = self.planned(clause)
        indexed = {id(lit): i for i, lit in enumerate(clause.body)}
        frame = self._body(steps, types, None, set(), _singletons(clause.head, clause.body),
                           lambda atom: deltas.get(indexed.get(id(atom))))
        info = self.engine.schema[clause.head.relation]
        return frame.select(*[self._expr(arg, types).cast(_spark_type(t)).alias(f"c{i}")
                              for i, (arg, t) in enumerate(zip(clause.head.args, info.types))],
                            *[c for c in frame.columns if c.startswith("__")])

    def planned(self, clause) -> tuple:
        """``clause``'s (steps, types) by :func:`_plan`, made once per clause."""
        if id(clause) not in self.plans:
            self.plans[id(clause)] = (clause, _plan(self.engine.schema, clause.head, clause.body, {}, _visible(clause)))
        return self.plans[id(clause)][1]

    def _body(self, steps, types, frame, bound: set, singles: set, delta_of):
        atoms = [s.literal for s in steps if s.kind == "atom"]
        if frame is None and not atoms:
            frame = self.spark.range(1).select()
        # the delta atom first (of several given, the smallest: a delta rule's change), then
        # atoms sharing variables with what is joined
        atoms.sort(key=lambda a: (delta_of(a) is None, delta_of(a).size if delta_of(a) is not None else 0))
        todo = list(atoms)
        parts = self._worst_case_optimal(atoms, delta_of) if frame is None else None
        if parts is not None:
            frame, todo = self._hypercube(parts, atoms, types), []
            bound |= {n for a in atoms for n in _atom_variables(a)}
        few = None                      # the first atom's rows while nothing else is joined, if few
        while todo:
            pick = next((a for a in todo if frame is None or _variables(a) & bound), todo[0])
            todo.remove(pick)
            part, names = self._atom(pick, delta_of(pick))
            shared = sorted(names & bound)
            if frame is None:
                frame = part
                few = part if self._known_size(pick, delta_of(pick)) <= PROBE_KEYS else None
            elif shared:
                if few is not None and self._known_size(pick, delta_of(pick)) >= PROBE_ROWS:
                    part = self._narrowed(part, few, [_col(n) for n in shared])
                frame = frame.join(part, on=[_col(n) for n in shared], how="inner")
                few = None
            else:
                frame = frame.crossJoin(part)
                few = None
            bound |= names
        for step in steps:
            if step.kind == "filter":
                frame = frame.where(self._condition(step.literal, types))
            elif step.kind == "bind":
                frame = frame.withColumn(_col(step.var), self._expr(step.expr, types))
                bound.add(step.var)
            elif step.kind == "negation":
                frame = self._anti(frame, step.literal.atom, bound)
            elif step.kind == "aggregate":
                frame = self._aggregate(frame, step, types, singles)
                if step.var is not None:
                    bound.add(step.var)
        return frame

    def _known_size(self, atom: ast.Atom, delta: "_Known | None") -> int:
        return delta.size if delta is not None else self.sizes.get(atom.relation, 0)

    def _narrowed(self, part, few, columns: list[str]):
        """``part`` (a large relation's rows) where each of ``columns`` holds a value ``few`` (at
        most :data:`PROBE_KEYS` rows) has there: the values are brought to the driver (one job
        on the few rows) and filter the relation's scan, a superset of the rows the join keeps.
        At 10M rows, 2 cores: a broadcast join of two rows with the relation takes 2.0-2.7 s,
        with the filter in the scan 0.4-0.5 s."""
        rows = guard(lambda: few.select(*columns).distinct().limit(PROBE_KEYS + 1).collect(), "joining")
        if len(rows) > PROBE_KEYS:
            return part
        if not rows:
            return part.where(F.lit(False))
        for i, column in enumerate(columns):
            values = {row[i] for row in rows}
            if not any(isinstance(v, float) for v in values):     # a join matches 0.0 with -0.0, isin not
                part = part.where(F.col(column).isin(sorted(values)))
        return part

    def _worst_case_optimal(self, atoms, delta_of) -> list | None:
        """The atoms' parts (DataFrame, its variable columns) when they are joined by
        :func:`wcoj.hypercube_join` (:func:`wcoj.chosen`), else None; a choice by estimate is
        told to ``progress`` and kept in ``joins``."""
        names = [_atom_variables(a) for a in atoms]
        if not wcoj.candidate(self.join, names, any(delta_of(a) is not None for a in atoms)):
            return None
        parts = []
        for atom in atoms:
            frame, found = self._atom(atom, delta_of(atom))
            parts.append((frame, [_col(n) for n in sorted(found)]))
        inputs = sum(self.sizes.get(a.relation, 0) for a in atoms)
        picked, value = wcoj.chosen(self.join, inputs, lambda: wcoj.pairwise_estimate(parts))
        if value is not None:
            body = ", ".join(map(str, atoms))
            self.joins.append((body, picked, value, inputs))
            if self.progress:
                self.progress(f"  {body}: {'HyperCube + triejoin' if picked else 'Spark joins'} "
                              f"(largest pairwise join ~{value} rows, inputs {inputs})")
        return parts if picked else None

    def _hypercube(self, parts: list, atoms, types: dict):
        """The atoms' bindings joined worst-case optimally (:mod:`datalog.spark.wcoj`) from
        their ``parts``."""
        columns = {_col(n): _spark_type(types[n]) for a in atoms for n in _atom_variables(a)}
        cells = self.cells or max(4, int(self.spark.conf.get("spark.sql.shuffle.partitions")))
        return wcoj.hypercube_join(parts, columns, cells)

    def _atom(self, atom: ast.Atom, delta: _Known | None):
        """The atom's rows filtered by its constants and repeated variables, one column per variable."""
        source = delta.frame if delta is not None else self.read(atom.relation)
        first = ast.first_positions(atom)
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.Constant):
                source = source.where(F.col(f"c{i}") == F.lit(arg.value))
            elif isinstance(arg, ast.Variable) and first[arg.name] != i:
                source = source.where(F.col(f"c{i}") == F.col(f"c{first[arg.name]}"))
        frame = source.select(*[F.col(f"c{i}").alias(_col(n)) for n, i in first.items()],
                              *[c for c in source.columns if c.startswith("__")])   # a delta's sign (deltas.py)
        if self._known_size(atom, delta) <= BROADCAST_ROWS:
            frame = F.broadcast(frame)
        return frame, set(first)

    def _anti(self, frame, atom: ast.Atom, bound: set):
        part, names = self._atom(ast.Atom(atom.relation, tuple(
            a if not (isinstance(a, ast.Variable) and a.name not in bound) else ast.Wildcard() for a in atom.args)),
            None)
        keys = sorted(names)
        if not keys:                                    # !r(_, 1): all or nothing
            marker = "__datalog_any"
            part = part.limit(1).select(F.lit(1).alias(marker))
            return frame.withColumn(marker, F.lit(1)).join(part, on=[marker], how="left_anti").drop(marker)
        return frame.join(part.distinct(), on=[_col(n) for n in keys], how="left_anti")

    def _aggregate(self, frame, step: Step, types: dict, singles: set):
        agg: ast.Aggregate = step.expr
        group = list(step.group)
        body_steps, body_types = _plan(self.engine.schema, None, agg.body, {g: types[g] for g in group}, set())
        # the body's assignments: the group's values come from the outer frame (distinct)
        outer = frame.select(*[_col(g) for g in group]).distinct() if group else None
        body = self._body(body_steps, body_types, outer, set(group), set(), lambda atom: None)
        atoms = [lit for lit in agg.body if isinstance(lit, ast.Atom)]
        simple = len(atoms) == 1 and len({v.name for v in ast.variables(atoms)}) == len(list(ast.variables(atoms)))
        local = sorted((_variables(agg.body) - set(group)))
        if not simple:                                  # distinct local assignments (Soufflé materialises)
            body = body.select(*[_col(n) for n in group + local]).distinct()
        value = "__datalog_value"
        if agg.kind == "count":
            result = F.count(F.lit(1))
        elif agg.kind == "sum":
            result = F.sum(self._expr(agg.target, body_types).cast("decimal(38,0)"))
        elif agg.kind == "min":
            result = F.min(self._expr(agg.target, body_types))
        else:
            result = F.max(self._expr(agg.target, body_types))
        if group:
            grouped = body.groupBy(*[_col(g) for g in group]).agg(result.alias(value))
            how = "left" if agg.kind in ("count", "sum") else "inner"
            frame = frame.join(grouped, on=[_col(g) for g in group], how=how)
        else:
            frame = frame.crossJoin(body.agg(result.alias(value)))
        column = F.col(value)
        if agg.kind in ("count", "sum"):
            column = F.coalesce(column, F.lit(0))
            if agg.kind == "sum":
                column = column.cast("long")            # ANSI: beyond the long range is an error
        else:
            frame = frame.where(column.isNotNull())
        if step.var is None:
            other = step.literal.left if isinstance(step.literal.right, ast.Aggregate) else step.literal.right
            return frame.where(F.col(_col(other.name)) == column).drop(value)
        return frame.withColumn(_col(step.var), column).drop(value)

    def _condition(self, lit: ast.Comparison, types):
        left, right = self._expr(lit.left, types), self._expr(lit.right, types)
        return {"=": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
                ">": left > right, ">=": left >= right}[lit.op]

    def _expr(self, term, types):
        if isinstance(term, ast.Variable):
            return F.col(_col(term.name))
        if isinstance(term, ast.Constant):
            return F.lit(term.value).cast(_spark_type(_constant_type(term.value)))
        if isinstance(term, ast.Negate):
            return F.negative(self._expr(term.operand, types))
        if isinstance(term, ast.BinaryOp):
            left, right = self._expr(term.left, types), self._expr(term.right, types)
            if term.op == "/":                          # truncated toward zero, as C and the engine
                return F.call_function("div", left, right)
            return {"+": left + right, "-": left - right, "*": left * right, "%": left % right}[term.op]
        raise NotResident(f"the term {term}")

    # ------------------------------------------------------------ outputs
    def write_outputs(self, out_dir: str | None = None) -> list[str]:
        """As :func:`datalog.engine.outputs.write_outputs`, from the DataFrames."""
        engine = self.engine
        directives = engine.checked.directives("output")
        sinks = [d for d in directives if d.io == "spark"]
        if sinks:                                   # a sink's path refused before any file is written
            engine.check_spark_sinks(out_dir)
        texts = [d for d in directives if d.io in FILE_IO]
        files.write_outputs(texts, self.sorted_rows, out_dir, engine.allow_paths,
                            columns_of=lambda name: list(engine.schema[name].column_names),
                            types_of=lambda name: list(engine.schema[name].types))
        for directive in sinks:
            info = engine.schema[directive.relation]
            frame = self.read(directive.relation).toDF(*column_names(info))
            spark_io.write_frame(self.spark, directive, frame, out_dir or ".", engine.allow_paths)
        stratum_of = {r: i for i, s in enumerate(engine.checked.strata) for r in s.relations}
        counted = engine.checked.directives("printsize") + [d for d in directives if d.io == "stdoutprintsize"]
        sizes = sorted(counted, key=lambda d: stratum_of.get(d.relation, -1))
        return [f"{files.io_name(d)}\t{self.sizes.get(d.relation, 0)}" for d in sizes]

    def sorted_rows(self, name: str) -> "SortedRows":
        return SortedRows(self, name)


class SortedRows:
    """A relation's rows in the engine's order, streamed from Spark in chunks: iterating it
    holds at most one range partition (about ``CHUNK_ROWS`` rows) on the driver."""

    def __init__(self, resident: Resident, name: str):
        self.resident, self.name = resident, name

    def __len__(self) -> int:
        return self.resident.sizes.get(self.name, 0)

    def chunks(self):
        size = len(self)
        if not size:
            return
        frame = self.resident.read(self.name)
        columns = [F.col(c) for c in frame.columns]
        parts = max(1, -(-size // CHUNK_ROWS))
        ordered = frame.repartitionByRange(parts, *columns).sortWithinPartitions(*columns)
        chunk: list[tuple] = []
        for row in ordered.toLocalIterator():
            chunk.append(tuple(row))
            if len(chunk) >= 10_000:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def __iter__(self):
        for chunk in self.chunks():
            yield from chunk


def _atom_variables(atom: ast.Atom) -> list[str]:
    return list(dict.fromkeys(a.name for a in atom.args if isinstance(a, ast.Variable)))


def _union(frames):
    out = frames[0]
    for other in frames[1:]:
        out = out.unionByName(other)
    return out


def _reads(clause, members: set) -> bool:
    return any(isinstance(n, ast.Atom) and n.relation in members for n in ast.walk(clause.body))


def _engine_error(exc: Exception) -> DatalogError:
    """A Spark failure as the engine's error: a long overflow is ``number_out_of_range``, a
    division by zero ``division_by_zero``, anything else ``spark_error``."""
    text = str(exc)
    if "ARITHMETIC_OVERFLOW" in text or "CAST_OVERFLOW" in text or "NUMERIC_VALUE_OUT_OF_RANGE" in text:
        return NumberOutOfRange(f"an integer result is beyond {numbers.RANGE} (Spark: {first_line(exc)})")
    if "DIVIDE_BY_ZERO" in text:
        return DivisionByZero(f"division by zero (Spark: {first_line(exc)})")
    from datalog.language.errors import SparkError
    return SparkError(f"Spark failed in resident evaluation: {first_line(exc)}")


def run_resident(engine, out_dir: str | None = None, progress: Progress | None = None,
                 checkpoint_every: int = 25, join: str = "auto") -> tuple[Resident, list[str]]:
    """Evaluate ``engine``'s program resident on its Spark session and write its outputs;
    the evaluator (its frames) and the ``.printsize`` lines."""
    resident = Resident(engine, engine.spark_session(), checkpoint_every, progress, join)
    resident.run()
    return resident, resident.write_outputs(out_dir)


__all__ = ["Resident", "SortedRows", "NotResident", "Choice", "choices", "explain_lines", "run_resident", "unfit", "refuse_unfit"]
