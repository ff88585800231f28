"""The engine's front door: parse, check, plan, load, evaluate, answer.

>>> e = Engine.from_source('''
...     .decl edge(a: number, b: number)
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''')
>>> e.insert("edge", [(1, 2), (2, 3)])
>>> e.run()
>>> e.rows("path")
[(1, 2), (1, 3), (2, 3)]
>>> e.query("path(1, X)")
[(1, 2), (1, 3)]
>>> with e.transaction() as tx:
...     tx.insert("edge", [(3, 4)])
...     tx.retract("edge", [(1, 2)])
>>> sorted(tx.delta["path"].inserted), sorted(tx.delta["path"].erased)
([(2, 4), (3, 4)], [(1, 2), (1, 3)])
>>> sorted(e.commit(inserts={"edge": [(1, 2)]})["path"].inserted)
[(1, 2), (1, 3), (1, 4)]
"""

from __future__ import annotations

import contextlib
import gc
from operator import itemgetter
from pathlib import Path
from typing import Callable

from datalog.language import ast
from datalog.language.checks import Checked, bound_variables, check, settle_types
from datalog.language.errors import ArityMismatch, DatalogError, NotEdb, UndefinedRelation
from datalog.evaluation import fixpoint
from datalog.evaluation.compile import COMPARE, CompiledPlan, compile_plan
from datalog.evaluation.expressions import compile_term
from datalog.evaluation.program import PlannedProgram
from datalog.engine.admission import admit
from datalog.engine.extension import combined, downstream, newly_derived, seeds
from datalog.language.rewrites import dnf, rewrite
from datalog.language.parser import parse, parse_atom, parse_file
from datalog.planning.plan import RulePlan
from datalog.planning.planner import plan_program
from lftj.relation import Relation
from datalog.language.types import AUTO, value_type
from datalog.sources import files
from maintenance.delta import Delta, diff, pending_changes
from maintenance.journal import Journal
from maintenance.maintainer import make_maintainer

BULK = 200_000                              # new container objects that make a load "bulk"


@contextlib.contextmanager
def paused_gc():
    """The cyclic garbage collector paused while millions of acyclic tuples, sets and trie nodes
    are built, and what bulk work built then frozen (``gc.freeze``): moved out of the generations
    that collections scan. Running, the collector rescanned the growing heap: loading 2M edges and
    evaluating took 10.7 s instead of 5.7 s. Left in the young generation, the new objects would
    be scanned by a young, a middle and a full collection in turn inside whatever runs next; one
    full collection instead cost 2.7 s of a 13 s workspace open at 1M tuples (it scans the whole
    process, so a Python program holding its own data paid more: 4.5 s for a 0.35 s read).

    The price of freezing: frozen objects that later become *cyclic* garbage (trace nodes a commit
    drops) are not reclaimed until :func:`thaw`; the memory they keep is bounded by what the bulk
    work built. :meth:`Engine.extend`, which replaces the program's state, thaws.

    Commits run paused too: a workspace opened for writing reads its state when a commit first
    needs it (relation rows, trie levels, trace nodes), which is bulk work of the same kind --
    running, the collector tripled the first commits after an open at 1M tuples (12 commits:
    5.9 s, paused 2.1 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            if gc.get_count()[0] > BULK:          # only after bulk work; freezing is cheap
                gc.freeze()


def thaw() -> None:
    """Frozen objects back under the collector (state about to be replaced can be reclaimed)."""
    if gc.get_freeze_count():
        gc.unfreeze()


Progress = Callable[[str], None]
_ANSWER = "?answer"                        # the head of a query's rule: no relation can be named so
_STATE = ("program", "checked", "schema", "db", "plans", "compiled", "maintainer")   # what extend() replaces


class Engine:
    """A checked program, its relations, and its evaluation.

    Lifecycle: construct (parse + check + plan; nothing evaluated), ``insert``
    EDB facts, ``run`` (loads ``.input`` files once, then evaluates every
    stratum), then read with ``rows`` / ``query`` and write with
    ``write_outputs``.
    """

    def __init__(self, program: ast.Program, facts_dir: str | Path | None = None, intersect: str = "probe",
                 maintenance: str = "incremental", spark: dict | None = None):
        self.program = program
        self.checked: Checked = check(program)
        self.facts_dir = Path(facts_dir) if facts_dir is not None else Path(".")
        self.intersect = intersect
        self.schema = self.checked.schema
        self.db: dict[str, Relation] = {n: Relation(n, i.arity) for n, i in self.schema.items()}
        self._plan(self.checked)
        self._inputs_loaded = False
        self._evaluated = False
        self.maintenance = maintenance
        self.maintainer = None                    # built on the first commit
        self.spark_options = spark or {}          # master=, conf= for the Spark session
        self.stage_source = None                  # a workspace's hook: keep what a Spark source gave
        self._load_program_facts()

    # ------------------------------------------------------------ construction
    @classmethod
    def from_source(cls, text: str, facts_dir=None, name: str = "<input>", **kw) -> "Engine":
        return cls(parse(text, name), facts_dir, **kw)

    @classmethod
    def from_file(cls, path: str | Path, facts_dir=None, **kw) -> "Engine":
        return cls(parse_file(path), facts_dir, **kw)

    def _load_program_facts(self, only=None, clauses=None) -> None:
        for clause in self.checked.clauses if clauses is None else clauses:
            if not clause.body and (only is None or clause.head.relation in only):
                self.db[clause.head.relation].insert([self._fact(clause)])

    def _fact(self, clause) -> tuple:
        """A fact of the program, typed."""
        name = clause.head.relation
        row = tuple(compile_term(t, {}, name, clause.head.span)([]) for t in clause.head.args)
        return self._typed(name, row, clause.head.span)

    @property
    def evaluated(self) -> bool:
        """Whether the program has been evaluated (``run`` or ``run_on_spark``, or restored evaluated)."""
        return self._evaluated

    @property
    def idb(self) -> set[str]:
        """Relations defined by rules with a body; the others are EDB, changed by transactions."""
        return {c.head.relation for c in self.checked.clauses if c.body}

    def _typed(self, name: str, row: tuple, span=None) -> tuple:
        return admit(self.schema[name], row, span)

    # ------------------------------------------------------------ EDB
    def insert(self, name: str, rows) -> None:
        """Add EDB facts (before ``run``)."""
        self._relation(name).insert([self._typed(name, tuple(r)) for r in rows])

    def load_inputs(self, progress: Progress | None = None) -> None:
        """Read every ``.input`` file and Spark source; all or nothing."""
        if self._inputs_loaded:
            return
        loaded = self._read_inputs(self.checked.directives("input"), progress)
        self._settle_types(loaded)
        for name, rows in loaded:
            self.db[name].insert(rows)
        self._inputs_loaded = True

    def _read_inputs(self, directives, progress: Progress | None = None) -> list[tuple[str, list]]:
        """Every file and Spark ``.input`` of ``directives``, read before any is loaded."""
        loaded = self._read_spark_inputs(directives, progress)
        for directive in directives:
            if directive.kind != "input" or directive.io != "file":
                continue
            info = self.schema[directive.relation]
            path = files.input_path(directive, self.facts_dir)
            rows = files.read_facts(path, info.types, directive.param("delimiter") or "\t", directive)
            loaded.append((directive.relation, rows))
        return loaded

    def _read_spark_inputs(self, directives, progress: Progress | None) -> list[tuple[str, list]]:
        """Spark sources: every schema is checked before any row is read (``type_mismatch``)."""
        directives = [d for d in directives if d.kind == "input" and d.io == "spark"]
        if not directives:
            return []
        from datalog.spark import tables as spark_io  # pyspark is loaded only for Spark programs
        session = self.spark_session()
        frames = [(d, spark_io.source_frame(session, d, self.schema[d.relation].types, self.column_names(d.relation)))
                  for d in directives]
        loaded = []
        for directive, frame in frames:
            if self.stage_source is not None:
                frame = self.stage_source(directive, frame)
            loaded.append((directive.relation, spark_io.rows_of(frame, progress, f"loading {directive.relation}")))
        return loaded

    def spark_directives(self, kind: str) -> list[ast.Directive]:
        """The ``.input`` or ``.output`` directives with ``IO=spark``."""
        return [d for d in self.checked.directives(kind) if d.io == "spark"]

    def spark_session(self):
        """The process's Spark session (started on first use with ``spark_options``)."""
        from datalog.spark.session import session
        return session(**self.spark_options)

    def column_names(self, name: str) -> list[str]:
        """A relation's column names: the ``.decl``'s, else ``c0, c1, ...``."""
        info = self.schema[name]
        names = list(info.column_names) if len(info.column_names) == info.arity else []
        return names if len(set(names)) == len(names) and names else [f"c{i}" for i in range(info.arity)]

    def _settle_types(self, loaded) -> None:
        """An ``auto`` column takes the type of its loaded values; the program is type-checked again."""
        settled = {}
        for name, rows in loaded:
            types = self.schema[name].types
            if AUTO in types and rows:
                settled[name] = [value_type(rows[0][i]) if t == AUTO else t for i, t in enumerate(types)]
        if settled:
            settle_types(self.checked, settled)

    # ------------------------------------------------------------ evaluation
    def run(self, progress: Progress | None = None) -> None:
        """Evaluate every stratum in order (semi-naive inside recursive strata)."""
        with paused_gc():
            self.load_inputs(progress)
            self.evaluate(progress)
        self._evaluated = True

    def evaluate(self, progress: Progress | None = None, only: set[str] | None = None) -> None:
        """Every stratum in order, or only those holding a relation of ``only``."""
        fixpoint.evaluate(self.checked.strata, self.compiled, self.db, self.intersect, progress, only)

    def _plan(self, checked: Checked) -> None:
        """The plan of every rule (with its backend, issue 4), keyed by its clause's index, and
        the plans compiled."""
        self.plans: dict[int, RulePlan] = plan_program(checked.clauses, checked.strata, checked.schema)
        self.compiled: dict[int, CompiledPlan] = {i: compile_plan(p) for i, p in self.plans.items()}

    # ------------------------------------------------------------ growing the program
    def extend(self, text: str | ast.Program, name: str = "<input>") -> Delta:
        """Add declarations, directives, facts and rules to the evaluated program; returns the change
        of every relation. The combined program is checked first, relations that the new statements
        cannot reach keep their contents, and only the strata downstream of the new heads (and new
        ``.input`` relations) are evaluated again. All or nothing, also on ``KeyboardInterrupt``.
        The maintainer is dropped and rebuilt, not incrementally, at the next commit."""
        thaw()                                      # the replaced state may become garbage
        return self._extend(text, name)

    def _extend(self, text: str | ast.Program, name: str) -> Delta:
        if not self._evaluated:
            self.run()
        added = parse(text, name) if isinstance(text, str) else text
        checked = self._check_added(added)
        old = {key: getattr(self, key) for key in _STATE}
        try:
            affected = self._install(checked, added, old["db"], old["schema"])
        except BaseException:
            for key, value in old.items():
                setattr(self, key, value)
            raise
        changes = {n: diff(old["db"][n].tuples if n in old["db"] else set(), self.db[n].tuples)
                   for n in affected}
        return {n: change for n, change in changes.items() if change}

    def _check_added(self, added: ast.Program) -> Checked:
        """The program with ``added`` checked (relations it newly derives keep their rows as facts)."""
        converted = {n: self.rows(n) for n in newly_derived(added, self.idb, self.db)}
        return check(combined(self.program, added, converted))

    def _install(self, checked: Checked, added: ast.Program, old_db, old_schema) -> set[str]:
        """Switch to ``checked`` (the old program plus ``added``), keeping unaffected relations, and
        evaluate the affected strata; returns the affected relations. The caller restores on error."""
        self.program, self.checked, self.schema, self.maintainer = checked.program, checked, checked.schema, None
        self.db = {n: old_db[n] if n in old_db else Relation(n, i.arity) for n, i in self.schema.items()}
        loaded = self._read_inputs(added.directives)
        self._settle_types([(n, [next(iter(r.tuples))]) for n, r in old_db.items() if r.tuples] + loaded)
        for n in (n for n in old_db if old_schema[n].types != self.schema[n].types):
            for row in old_db[n].tuples:                  # a new .decl of a relation that has rows
                self._typed(n, row, self.schema[n].span)
        self._plan(checked)
        affected, idb = downstream(checked.clauses, seeds(added)), self.idb
        for n in affected:
            kept = () if n in idb or n not in old_db else old_db[n].tuples
            self.db[n] = Relation(n, self.schema[n].arity, kept)
        self._load_program_facts(only=affected & idb)
        self._load_program_facts(only=affected - idb, clauses=rewrite(added))
        for n, rows in loaded:
            self.db[n].insert(rows)
        self.evaluate(only=affected & idb)
        return affected

    # ------------------------------------------------------------ transactions
    def transaction(self) -> "Transaction":
        """``with engine.transaction() as tx: tx.insert(r, rows); tx.retract(r, rows)``; on exit the
        program is maintained and ``tx.delta`` holds every relation's change; on error nothing changed."""
        return Transaction(self)

    def commit(self, inserts=None, retracts=None) -> Delta:
        """Apply inserts and retracts of EDB tuples (``{relation: rows}``) and maintain every IDB
        relation; returns the delta of every relation that changed. All or nothing."""
        with self.transaction() as tx:
            for name, rows in (inserts or {}).items():
                tx.insert(name, rows)
            for name, rows in (retracts or {}).items():
                tx.retract(name, rows)
        return tx.delta

    def _apply(self, pending: dict[str, dict[tuple, int]]) -> Delta:
        if not self._evaluated:
            self.run()
        if self.maintainer is None:
            self._materialize_views()
            self.adopt(make_maintainer(self.planned(), self.db, self.maintenance))
        journal = Journal()
        with paused_gc(), journal.deferring_interrupts():    # Ctrl-C cancels at a point the journal can undo
            try:
                delta = self.maintainer.apply(pending_changes(pending, self.db), journal)
                journal.check_interrupt()
                return delta
            except BaseException:
                journal.rollback()
                if getattr(self.maintainer, "broken", False):
                    self.maintainer = None           # rebuilt from the restored relations next time
                raise

    def planned(self) -> PlannedProgram:
        """The program as evaluation and maintenance take it: clauses, strata, compiled plans,
        schema, its facts typed by the current schema, its ``.input`` relations."""
        facts: dict[str, list[tuple]] = {}
        for clause in self.checked.clauses:
            if not clause.body:
                facts.setdefault(clause.head.relation, []).append(self._fact(clause))
        inputs = frozenset(d.relation for d in self.checked.directives("input"))
        return PlannedProgram(self.checked.clauses, self.checked.strata, self.compiled, self.schema, facts,
                              inputs, self.intersect)

    def adopt(self, maintainer) -> None:
        """Maintain with ``maintainer`` (built, or restored from a workspace): the heads it keeps
        unstored are served from its views."""
        self.db.update(getattr(maintainer, "unstored", {}))
        self.maintainer = maintainer

    def _materialize_views(self) -> None:
        """A new maintainer (after ``extend``) starts from stored relations: the old views are still
        current, so their rows are the relations' rows."""
        for name, relation in list(self.db.items()):
            if not relation.stored:
                self.db[name] = Relation(name, relation.arity, relation.tuples)

    def stats(self) -> dict:
        """Per rule: iterator operations in the last maintenance, sensitivity-index sizes, oracle
        regions visited, and whether no change reached it (skipped)."""
        return self.maintainer.stats() if self.maintainer else {}

    # ------------------------------------------------------------ answers
    def relations(self) -> list[str]:
        return sorted(self.db)

    def relation(self, name: str, span=None) -> Relation:
        """The relation ``name``; ``undefined_relation`` (pointing at ``span``) if there is none."""
        if name not in self.db:
            raise UndefinedRelation(f"undefined relation {name}", span)
        return self.db[name]

    def _relation(self, name: str, span=None) -> Relation:
        return self.relation(name, span)

    def rows(self, name: str) -> list[tuple]:
        return self._relation(name).sorted_rows()

    def query(self, text: str | ast.Atom) -> list[tuple]:
        """Tuples of a relation matching an atom such as ``path(1, X)`` (``_`` matches anything)."""
        atom = parse_atom(text) if isinstance(text, str) else text
        relation = self._relation(atom.relation, atom.span)
        if len(atom.args) != relation.arity:
            raise ArityMismatch(f"{atom.relation} has arity {relation.arity}, the query has "
                                f"{len(atom.args)} arguments", atom.span)
        if not relation.stored:             # enumerated on demand: filtered as it streams, not sorted whole
            return sorted(row for row in relation if _matches(atom, row))
        return [row for row in relation.sorted_rows() if _matches(atom, row)]

    def ask(self, body: tuple) -> tuple[list[str], list[tuple]]:
        """Answers of a query body (see :func:`datalog.language.parser.parse_query`): the variables it binds,
        in order, and their sorted rows. Evaluated as a rule of its own (over a relation that is
        not stored, filtered by :meth:`_scan` when it can be); nothing changes."""
        alternatives = dnf(body)
        names = [n for n in dict.fromkeys(v.name for v in ast.variables(body))
                 if all(n in bound_variables(alt) for alt in alternatives)]
        head = ast.Atom(_ANSWER, tuple(ast.Variable(n) for n in names), body[0].span if body else None)
        if not self._evaluated:
            self.run()
        rule = ast.Program((ast.Rule((head,), body, head.span),))
        scanned = self._scan(rule)
        if scanned is not None:
            return names, scanned
        old = {key: getattr(self, key) for key in _STATE}
        try:
            self._extend(rule, "<query>")
            return names, self.rows(_ANSWER)
        finally:
            for key, value in old.items():
                setattr(self, key, value)

    def _scan(self, query: ast.Program) -> list[tuple] | None:
        """The answers of a query rule whose body is one atom of a relation that is not stored (a
        theta-join view, maintenance/view_relation.py) and comparisons of its variables and
        constants, filtered from the view's enumeration as it streams: as a rule, the query would
        build a trie of every row first (at 1.5M rows, 14-26 s for a few thousand answers, against
        0.8 s). None for any other query. The rule is checked as ``_extend`` checks it
        (``_check_added``), so a wrong query gets the same error."""
        (rule,) = query.statements
        if not rule.body:
            return None
        (head,), (atom, *tests) = rule.heads, rule.body
        if type(atom) is not ast.Atom or not all(type(test) is ast.Comparison for test in tests):
            return None
        relation = self.db.get(atom.relation)
        if relation is None or relation.stored or not all(isinstance(a, _SIMPLE) for a in atom.args):
            return None
        first: dict[str, int] = {}
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.Variable):
                first.setdefault(arg.name, i)
        sides = [side for test in tests for side in (test.left, test.right)]
        if not all(type(s) is ast.Constant or (type(s) is ast.Variable and s.name in first) for s in sides):
            return None
        self._check_added(query)
        holds = [_comparison(test, first) for test in tests]
        pick = [first[v.name] for v in head.args]
        return sorted({tuple(row[i] for i in pick) for row in relation
                       if _matches(atom, row) and all(test(row) for test in holds)})

    def write_outputs(self, out_dir: str | None = None) -> list[str]:
        """Write ``.output`` relations; return the ``.printsize`` lines (``name<TAB>count``)."""
        for directive in self.checked.directives("output"):
            io = directive.io
            if io in ("file", "stdout"):
                files.write_output(directive, self.rows(directive.relation), out_dir)
            elif io == "spark":
                self.write_spark_output(directive)
        stratum_of = {r: i for i, s in enumerate(self.checked.strata) for r in s.relations}
        sizes = sorted(self.checked.directives("printsize"), key=lambda d: stratum_of.get(d.relation, -1))
        return [f"{d.relation}\t{len(self.db[d.relation])}" for d in sizes]   # in evaluation order

    def write_spark_output(self, directive: ast.Directive, delta=None) -> None:
        """Write a relation to its Spark sink: all of it, or with ``mode=merge`` and a ``delta``
        holding only insertions, just those (a deletion rewrites the sink)."""
        from datalog.spark import tables as spark_io
        name = directive.relation
        names, types = self.column_names(name), self.schema[name].types
        types = [t if t != AUTO else value_type(next(iter(self.db[name].tuples), ("",) * len(types))[i])
                 for i, t in enumerate(types)]
        merge = (directive.param("mode") or "overwrite").lower() == "merge"
        if merge and delta is not None and not delta.erased:
            if delta.inserted:
                spark_io.append_sink(self.spark_session(), directive, delta.inserted, names, types)
            return
        spark_io.write_sink(self.spark_session(), directive, self.rows(name), names, types)

    def explain(self) -> str:
        lines = []
        for number, stratum in enumerate(self.checked.strata, 1):
            kind = "recursive" if stratum.recursive else "non-recursive"
            lines.append(f"stratum {number} ({kind}): {', '.join(stratum.relations)}")
            for clause in stratum.clauses:
                plan = self.plans.get(clause.index)
                detail = plan.describe() if plan else "fact"
                lines.append(f"  {clause}\n      {detail}")
        return "\n".join(lines)


class Transaction:
    """Requests collected in order; maintained together when the ``with`` block ends."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.pending: dict[str, dict[tuple, int]] = {}
        self.delta: Delta = {}

    def insert(self, name: str, rows) -> None:
        self._request(name, rows, +1)

    def retract(self, name: str, rows) -> None:
        self._request(name, rows, -1)

    def _request(self, name: str, rows, sign: int) -> None:
        engine = self.engine
        engine._relation(name)
        if name in engine.idb:
            raise NotEdb(f"{name} is derived by rules; a transaction changes only EDB relations "
                         f"(inputs and facts)", engine.schema[name].span)
        requests = self.pending.setdefault(name, {})
        for row in rows:
            requests[engine._typed(name, tuple(row))] = sign

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        if kind is None:
            self.delta = self.engine._apply(self.pending)
        return False


_SIMPLE = (ast.Constant, ast.Variable, ast.Wildcard)


def _comparison(test: ast.Comparison, first: dict[str, int]):
    """row -> whether ``test`` holds, a variable read at its first position in the atom."""
    compare = COMPARE[test.op]
    left, right = (_cell(side, first) for side in (test.left, test.right))
    return lambda row: compare(left(row), right(row))


def _cell(term, first: dict[str, int]):
    if type(term) is ast.Constant:
        value = term.value
        return lambda row: value
    return itemgetter(first[term.name])


def _matches(atom: ast.Atom, row: tuple) -> bool:
    seen: dict[str, object] = {}
    for arg, value in zip(atom.args, row):
        if isinstance(arg, ast.Constant):
            if arg.value != value and not (isinstance(value, float) and arg.value == value):
                return False
        elif isinstance(arg, ast.Variable):
            if seen.setdefault(arg.name, value) != value:
                return False
        elif not isinstance(arg, ast.Wildcard):
            raise DatalogError(f"a query argument must be a constant, a variable or _, not {arg}", atom.span)
    return True
