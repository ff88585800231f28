"""The engine: a program taken through the pipeline, its relations, and their maintenance.

>>> e = Engine.from_source('''
...     .decl edge(a: number, b: number)
...     .decl path(a: number, b: number)
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
>>> sorted(tx.delta["path"].inserted), sorted(tx.delta["path"].retracted)
([(2, 4), (3, 4)], [(1, 2), (1, 3)])
>>> sorted(e.commit(inserts={"edge": [(1, 2)]})["path"].inserted)
[(1, 2), (1, 3), (1, 4)]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from datalog.engine import answers, outputs, resources, tables
from datalog.engine.absent import absent_retractions, warn_absent
from datalog.engine import query as queries
from datalog.engine.admission import admit
from datalog.engine.extension import combined, downstream, newly_derived, seeds
from datalog.engine.loading import program_facts, read_inputs, settled
from datalog.engine.memory import paused_gc, thaw
from datalog.engine.serial import Guard
from datalog.engine.pipeline import analyse, compiled, fill, plan, relations
from datalog.engine.transaction import Transaction, change_edb
from datalog.evaluation import fixpoint, worklist
from datalog.sources import files
from datalog.evaluation.program import PlannedProgram
from datalog.language import ast
from datalog.language.checks import Checked
from datalog.language.errors import ArityMismatch, BadFact, DatalogError, FactAbsent, OutOfMemory, UndefinedRelation
from datalog.language.mixed import MIXED
from datalog.language.parser import ParseOptions, parse, parse_atom, parse_file
from datalog.language.rewrites import dnf, is_internal, rewrite
from datalog.language.types import example
from datalog.language.variables import bound_variables
from datalog.provenance.commits import InsertLog
from lftj.relation import Relation
from maintenance.budget import MemoryBudget
from maintenance.delta import Delta, diff, pending_changes
from maintenance.journal import Journal
from maintenance.maintainer import make_maintainer
from datalog.language.display import plural

if TYPE_CHECKING:                                 # provenance is imported when it is asked for (start-up)
    from datalog.provenance import Explainer, Proof, WhyNot
    from datalog.provenance.heights import Heights

Progress = Callable[[str], None]
_ANSWER = "?answer"                        # the head of a query's rule: no relation can be named so
_ANYWHERE = (MemoryError, RecursionError)   # may come between a change and its undo record: a commit
                                           # they stop cannot be known undone (the engine breaks)
_STATE = ("program", "checked", "db", "plans", "compiled", "maintainer")   # what extend() replaces


class Engine:
    """A program, its relations, and its evaluation and maintenance.

    Lifecycle: construct (the pipeline up to planning: parse, rewrite, check, stratify, plan;
    nothing evaluated), ``insert`` EDB facts, ``run`` (loads ``.input`` files once, then
    evaluates every stratum), then read with ``rows`` / ``query`` / ``ask`` (each runs it first if
    it is not evaluated), change with
    ``transaction`` / ``commit`` (the IDB relations are maintained), grow with ``extend``, write
    with ``write_outputs``. ``.input``/``.output`` files stay under the fact and output directories
    unless ``allow_paths`` (the user's choice: :mod:`datalog.sources.paths`). Invariant after ``run``: every IDB relation holds what evaluating the
    program from scratch over the EDB relations would give."""

    def __init__(self, program: str | ast.Program, facts_dir: str | Path | None = None, intersect: str = "hash",
                 maintenance: str = "incremental", spark: dict | None = None, allow_paths: bool = False,
                 memory_budget: int | None = None, provenance: bool = False):
        if isinstance(program, str):              # Engine("p(1). q(x) :- p(x)."): the program's text
            program = parse(program, "<input>")
        elif not isinstance(program, ast.Program):
            raise TypeError(f"Engine takes a program's text (a str) or a parsed program, not {type(program).__name__}"
                            " (Engine.from_file(path) reads a file)")
        self.program = program
        self.checked: Checked = analyse(program)            # rewrite, check, stratify
        self.facts_dir = Path(facts_dir) if facts_dir is not None else Path(".")
        self.intersect = intersect
        self.plans = plan(self.checked)                     # plan (and compile)
        self.compiled = compiled(self.plans)
        self.db: dict[str, Relation] = relations(self.checked)
        self._inputs_loaded = False
        self._evaluated = False
        self.maintenance = maintenance
        if maintenance == "incremental" and self.limited():
            self.maintenance = "recompute"        # see limited()
        self.maintainer = None                    # built on the first commit
        self.memory_budget = memory_budget        # bytes the process may hold while evaluating and while
                                                  # maintenance records (None: what the machine has free,
                                                  # maintenance/budget.py, datalog/engine/resources.py)
        self.spared = None                        # the rows an interrupted run derived, freed at the next
        self.spark_options = spark or {}          # master=, conf= for the Spark session
        self.stage_source = None                  # a workspace's hook: keep what a Spark source gave
        self.allow_paths = allow_paths            # .input/.output files may lead out of -F/-D (the user's
                                                  # command-line choice, never a program's)
        self._commits = 0                         # commits made (transactions, commit, extend)
        self._subscriptions: list[tables.Subscription] = []
        self.progress: Progress | None = None      # told of long loads and evaluations when run, extend
                                                  # and loading are given no progress of their own
        self.arrow_tables: dict = {}              # (relation, ordered) -> its last to_arrow(), kept while
                                                  # it is unchanged or patched (tables.Relation.to_arrow)
        self._inserted_at = InsertLog()          # EDB fact -> the commit that inserted it (the latest)
        self._explainer = None                    # (state it was made in, Explainer): see explainer()
        self.provenance = provenance              # keep every IDB fact's least proof height (--provenance)
        self._kept = None                         # ((checked, db) ids, Heights) when provenance: see heights
        self.guard = Guard()                      # one commit at a time, each whole (datalog.engine.serial)
        self._run_cut_short = False               # a run() stopped part way: answers run it again
        fill(self.db, program_facts(self.checked))

    @classmethod
    def from_source(cls, text: str, facts_dir=None, name: str = "<input>", **kw) -> "Engine":
        return cls(parse(text, name), facts_dir, **kw)

    @classmethod
    def from_file(cls, path: str | Path, facts_dir=None, parse_options=None, **kw) -> "Engine":
        """The program of the file ``path``, read with ``parse_options`` (the preprocessor's -I and
        -M; by default what Soufflé does with no options; included files stay under the program's
        directory unless ``allow_paths``)."""
        if parse_options is None:
            parse_options = ParseOptions(allow_paths=kw.get("allow_paths", False))
        return cls(parse_file(path, parse_options), facts_dir, **kw)

    @property
    def schema(self) -> dict:
        return self.checked.schema

    @property
    def warnings(self) -> list:
        """What the program's checks warn about (DatalogWarning: code, message, span), never blocking."""
        return self.checked.warnings

    @property
    def evaluated(self) -> bool:
        """Whether the program has been evaluated (``run`` or ``run_on_spark``, or restored evaluated)."""
        return self._evaluated

    @property
    def idb(self) -> set[str]:
        """Relations defined by rules with a body; the others are EDB, changed by transactions."""
        return {c.head.relation for c in self.checked.clauses if c.body}

    def admit(self, name: str, row: tuple, span=None) -> tuple:
        """``row`` as relation ``name`` stores it (``arity_mismatch``, ``type_mismatch``)."""
        return admit(self.schema[name], row, span)

    # ------------------------------------------------------------ loading
    def insert(self, name: str, rows) -> None:
        """Add EDB facts: an iterable of tuples, or a table (a pandas or Polars DataFrame, a pyarrow
        Table or RecordBatchReader, anything with ``__arrow_c_stream__``: its columns matched by
        name, else by position, :mod:`datalog.engine.arrow`). Every row is checked before any is
        added. Once the program is evaluated this is a commit (``commit(inserts=...)``: the derived
        relations are maintained; on a workspace's engine it is durable); a derived relation is
        ``not_edb``."""
        change_edb(self, name, rows, +1)

    def retract(self, name: str, rows) -> None:
        """Remove EDB facts, as :meth:`insert` adds them (once evaluated, ``commit(retracts=...)``)."""
        change_edb(self, name, rows, -1)

    def load_inputs(self, progress: Progress | None = None) -> None:
        """Read every ``.input`` file and Spark source, settle the types of ``auto`` columns, then
        load them; all or nothing."""
        if self._inputs_loaded:
            return
        directives = self.checked.directives("input")
        before = {d.relation: set(self.db[d.relation].tuples) for d in directives}   # their facts, if any
        try:
            loaded = self._read_inputs(directives, progress or self.progress)
            self.settle(loaded)
            fill(self.db, loaded)
        except MemoryError:
            for name, rows in before.items():         # the rows filled before it ran out, dropped
                self.db[name] = Relation(name, self.db[name].arity, rows)
            raise OutOfMemory("the machine ran out of memory reading the inputs; nothing was loaded. "
                              "Free memory, or read fewer or smaller inputs") from None
        self._inputs_loaded = True

    def _read_inputs(self, directives, progress: Progress | None = None):
        return read_inputs(self.checked, directives, self.facts_dir, self.spark_session, self.stage_source,
                           progress or self.progress, self.allow_paths)

    def settle(self, samples) -> None:
        """``auto`` columns take the type of their loaded values (``samples``: (relation, rows));
        the program is type-checked again (on an error nothing changes)."""
        self.checked = settled(self.checked, samples)

    def restore(self, relations: dict[str, Relation], samples, evaluated: bool) -> None:
        """Take ``relations`` as they are (a workspace's stored rows) instead of reading ``.input``
        files; ``samples`` (relation, rows) settle the types; ``evaluated``: they already hold
        the evaluated program."""
        self.settle(samples)
        self.db.update(relations)
        if self._kept is not None:
            self._kept[1].invalidate()
        self._inputs_loaded = True
        self._evaluated = self._evaluated or evaluated

    def spark_directives(self, kind: str) -> list[ast.Directive]:
        """The ``.input`` or ``.output`` directives with ``IO=spark`` (sources: and ``IO=delta``, read
        through Spark as well)."""
        return [d for d in self.checked.directives(kind) if d.io in ("spark", "delta")]

    def spark_session(self):
        """The process's Spark session (started on first use with ``spark_options``)."""
        from datalog.spark.session import session
        return session(**self.spark_options)

    def column_names(self, name: str) -> list[str]:
        """A relation's column names: the ``.decl``'s, else ``c0, c1, ...``."""
        return outputs.column_names(self.schema[name])

    # ------------------------------------------------------------ evaluation
    def run(self, progress: Progress | None = None) -> None:
        """Load the inputs, then evaluate every stratum in order (semi-naive inside recursive ones).
        Once evaluated, nothing to do. All or nothing: a run stopped part way (Ctrl-C, an error)
        leaves the derived relations as they were before it, and the next answer runs it again."""
        with self.guard.serial():
            if self._evaluated:
                return
            progress = progress or self.progress
            before = {n: set(self.db[n].tuples) for n in self.idb}     # their program facts, unevaluated
            self._run_cut_short = True
            self.guard.changing()                     # settled once evaluated, or reset
            try:
                with paused_gc():
                    self.load_inputs(progress)
                    resources.evaluating(self, lambda: self.evaluate(progress))   # memory budget
                    if self.provenance:
                        self.heights.refresh()            # the heights of the evaluated relations, kept
            except BaseException:
                for name, rows in before.items():
                    self.db[name] = Relation(name, self.db[name].arity, rows)
                self._kept = None
                self.guard.settled()
                raise
            self._evaluated, self._run_cut_short = True, False
            self.guard.settled()

    def evaluate(self, progress: Progress | None = None, only: set[str] | None = None) -> None:
        """Every stratum in order, or only those holding a relation of ``only``."""
        fixpoint.evaluate(self.checked.strata, self.compiled, self.db, self.intersect, progress or self.progress,
                          only, schema=self.schema)

    # ------------------------------------------------------------ growing the program
    def extend(self, text: str | ast.Program, name: str = "<input>", facts_dir=None, durable=None) -> Delta:
        """Add declarations, directives, facts and rules to the evaluated program; returns the change
        of every relation. The combined program is checked first, relations that the new statements
        cannot reach keep their contents, and only the strata downstream of the new heads (and new
        ``.input`` relations, read from ``facts_dir`` if given) are evaluated again. ``durable()``
        (a workspace's) runs last. All or nothing, also on ``KeyboardInterrupt``. The maintainer is
        dropped and rebuilt, not incrementally, at the next commit."""
        if not self._evaluated:
            self.run()
        with self.guard.committing():
            thaw()                                      # the replaced state may become garbage
            delta = self._extend(text, name, facts_dir, durable)
            self._committed(delta)
            self.guard.settled()
        return delta

    def _extend(self, text, name: str, facts_dir=None, durable=None) -> Delta:
        if not self._evaluated:
            self.run()
        added = parse(text, name) if isinstance(text, str) else text
        source, checked = self._check_added(added)
        old = {key: getattr(self, key) for key in (*_STATE, "facts_dir")}
        try:
            self.guard.changing()       # settled by the caller once finished, or here once undone
            if facts_dir is not None:
                self.facts_dir = Path(facts_dir)
            affected = self._install(checked, added, old["db"])
            self.program = source       # as written: eqrel, inline, pragmas are lowered again next time
            if durable is not None:
                durable()               # made at its commit point (a snapshot's rename)
            self.guard.made()
        except BaseException as exc:
            if not self.guard.holding:  # not made yet: undone
                for key, value in old.items():
                    setattr(self, key, value)
                self.guard.settled()
                raise
            self.guard.hold(exc)        # it came after the commit point: raised once finished
        changes = {n: diff(old["db"][n].tuples if n in old["db"] else set(), self.db[n].tuples)
                   for n in affected}
        return {n: change for n, change in changes.items() if change}

    def _check_added(self, added: ast.Program) -> tuple[ast.Program, Checked]:
        """The program with ``added`` (relations it newly derives keep their rows as facts), and
        it checked."""
        converted = {n: self.rows(n) for n in newly_derived(added, self.idb, self.db)}
        source = combined(self.program, added, converted)
        return source, analyse(source)

    def _install(self, checked: Checked, added: ast.Program, old_db) -> set[str]:
        """Switch to ``checked`` (the old program plus ``added``), keeping unaffected relations, and
        evaluate the affected strata; returns the affected relations. The caller restores on error."""
        old_schema = self.schema
        self.program, self.checked, self.maintainer = checked.program, checked, None
        self.db = {n: old_db[n] if n in old_db else Relation(n, i.arity) for n, i in self.schema.items()}
        loaded = self._read_inputs(added.directives)
        self.settle([(n, [next(iter(r.tuples))]) for n, r in old_db.items() if r.tuples] + loaded)
        for n in (n for n in old_db if old_schema[n].types != self.schema[n].types):
            # a new .decl of a relation that has rows: they must fit it; a column made mixed (plain
            # Datalog) holds its rows as mixed values (datalog.language.mixed), so they are rebuilt
            admitted = [self.admit(n, row, self.schema[n].span) for row in old_db[n].tuples]
            if MIXED in self.schema[n].types:
                self.db[n] = Relation(n, self.schema[n].arity, admitted)
        self.plans = plan(self.checked)
        self.compiled = compiled(self.plans)
        affected, idb = downstream(checked.clauses, seeds(added)), self.idb
        for n in affected:
            kept = () if n in idb or n not in old_db else self.db[n].tuples
            self.db[n] = Relation(n, self.schema[n].arity, kept)
        fill(self.db, program_facts(self.checked, only=affected & idb))
        fill(self.db, program_facts(self.checked, rewrite(added), only=affected - idb))
        fill(self.db, loaded)
        self.evaluate(only=affected & idb)
        return affected

    # ------------------------------------------------------------ transactions
    def transaction(self) -> Transaction:
        """``with engine.transaction() as tx: tx.insert(r, rows); tx.retract(r, rows)``; on exit the
        program is maintained and ``tx.delta`` holds every relation's change; on error nothing changed."""
        return Transaction(self)

    def commit(self, inserts=None, retracts=None) -> Delta:
        """Apply inserts and retracts of EDB tuples (``{relation: rows}``) and maintain every IDB
        relation; returns the delta of every relation that changed. All or nothing. Retractions
        of facts that are not there are reported as an ``AbsentRetractionWarning`` (the commit
        stands: :mod:`datalog.engine.absent`)."""
        with self.guard.serial():                      # the facts counted absent are those it retracts
            if not self._evaluated:
                self.run()
            with self.transaction() as tx:
                for name, rows in (inserts or {}).items():
                    tx.insert(name, rows)
                for name, rows in (retracts or {}).items():
                    tx.retract(name, rows)
                absent = absent_retractions(self, tx.pending) if retracts else (0, [])
        warn_absent(absent, stacklevel=2)
        return tx.delta

    def apply(self, pending: dict[str, dict[tuple, int]]) -> Delta:
        """One commit: the requests ``{relation: {row: +1 | -1}}`` (admitted EDB rows) applied and
        every IDB relation maintained; the delta of every relation that changed. All or nothing,
        also on ``KeyboardInterrupt``, ``SystemExit`` and ``MemoryError`` (:mod:`datalog.engine.serial`):
        before its durable point the journal undoes every change; from it on the commit is
        finished, and an exception that came meanwhile is raised once it is. Once it is made (for a
        workspace: durable), the subscribers of the relations it changed are told, in commit order,
        and the Arrow tables kept of them note their changes (:func:`tables.note_changes`)."""
        if not self._evaluated:
            self.run()
        with self.guard.committing(self._after_commits):
            current = tables.current_tables(self)
            delta = self._apply(pending)
            tables.note_changes(self, delta, current)
            self._committed(delta)
            self.guard.settled()
        return delta

    def prepare(self) -> None:
        """What a commit needs before it maintains: the program evaluated (if it was not) and the
        maintainer set up (for the incremental strategies a recording pass over the program), both
        done once. A commit does it if it was not done; ``run --updates`` does it first, so that
        a batch's time is its maintenance only."""
        if not self._evaluated:
            self.run()
        if self.maintainer is None:
            self._materialize_views()
            self.adopt(make_maintainer(self.planned(), self.db, self.maintenance, self._budget()))

    def _apply(self, pending: dict[str, dict[tuple, int]]) -> Delta:
        """:meth:`apply` up to the relations after it, without telling the subscribers: maintained,
        made durable (:meth:`_durable`), then the commit is made (:meth:`_made`)."""
        self.prepare()
        changes = pending_changes(pending, self.db)
        journal = Journal()
        with paused_gc(), journal.deferring_interrupts():    # Ctrl-C cancels at a point the journal can undo
            try:
                self.guard.changing()
                delta = self.maintainer.apply(changes, journal)
                journal.check_interrupt()
                self._durable(changes, delta)              # the durable point
            except BaseException as exc:
                if not self._durable_anyway():
                    journal.rollback()
                    if getattr(self.maintainer, "broken", False):
                        self.maintainer = None       # rebuilt from the restored relations next time
                    if not isinstance(exc, _ANYWHERE):
                        self.guard.settled()
                    raise
                self.guard.hold(exc)                  # it came after the durable point: raised once finished
            self.guard.made()
        if journal.interrupted:                        # a Ctrl-C during the log write: held
            self.guard.interrupted = True
        self._made()
        return delta

    def _durable(self, changes: Delta, delta: Delta) -> None:
        """Make the maintained commit durable (a workspace's log); without one, it is made already."""

    def _durable_anyway(self) -> bool:
        """After an exception from :meth:`_durable`: whether the commit is durable all the same."""
        return False

    def _made(self) -> None:
        """The commit is durable: the state that says so (a workspace's commit number) moves on."""

    def _after_commits(self) -> None:
        """After the outermost commit is finished and delivered (a workspace compacts)."""

    def tentatively(self, pending: dict[str, dict[tuple, int]], answer: Callable[[], object]):
        """``answer()`` run on the relations as if the requests ``pending`` (as :meth:`apply` takes
        them) were committed, then every change undone: nothing is committed (nor logged, for a
        workspace), no subscriber is told. A query inside a transaction sees its changes so."""
        with self.guard.serial():
            self.prepare()
            journal = Journal()
            try:
                with paused_gc(), journal.deferring_interrupts():
                    self.maintainer.apply(pending_changes(pending, self.db), journal)
                    journal.check_interrupt()
                return answer()
            finally:
                with journal.deferring_interrupts():
                    journal.rollback()
                if getattr(self.maintainer, "broken", False):
                    self.maintainer = None       # rebuilt from the restored relations next time

    def planned(self) -> PlannedProgram:
        """The program as evaluation and maintenance take it: clauses, strata, compiled plans,
        schema, its facts typed by the current schema, its ``.input`` relations."""
        facts: dict[str, list[tuple]] = {}
        for name, rows in program_facts(self.checked):
            facts.setdefault(name, []).extend(rows)
        inputs = frozenset(d.relation for d in self.checked.directives("input"))
        return PlannedProgram(self.checked.clauses, self.checked.strata, self.compiled, self.schema, facts,
                              inputs, self.intersect)

    def adopt(self, maintainer) -> None:
        """Maintain with ``maintainer`` (built, or restored from a workspace): the heads it keeps
        unstored are served from its views."""
        self.db.update(getattr(maintainer, "unstored", {}))
        registry = getattr(maintainer, "registry", None)
        if registry is not None and registry.budget is None:
            registry.budget = self._budget()
        self.maintainer = maintainer

    def _budget(self) -> MemoryBudget:
        """The memory budget of the maintained state (``memory_budget``, else the machine's)."""
        if self.memory_budget is None:
            return MemoryBudget.default()
        return MemoryBudget(self.memory_budget)

    def _materialize_views(self) -> None:
        """A new maintainer (after ``extend``) starts from stored relations: the old views are still
        current, so their rows are the relations' rows."""
        for name, relation in list(self.db.items()):
            if not relation.stored:
                self.db[name] = Relation(name, relation.arity, relation.tuples)

    def stats(self) -> dict:
        """Per rule: iterator operations in the last maintenance, sensitivity-index sizes, oracle
        regions visited, and whether no change reached it (skipped); a program with a
        ``.limitsize`` says that it is recomputed."""
        stats = self.maintainer.stats() if self.maintainer else {}
        if self.maintainer and self.limited():
            stats = {**{f".limitsize {name}(n={n})": {"maintenance": "recomputed"}
                        for name, n in self.limited().items()}, **stats}
        return stats

    def limited(self) -> dict[str, int]:
        """The relations of recursive strata that a ``.limitsize`` stops, with their limits. What
        such a relation holds depends on the rounds of its evaluation (Soufflé's definition), which
        incremental maintenance does not replay: such a program is maintained by recomputation."""
        return {name: n for s in self.checked.strata if s.recursive for name, n in s.limits.items()}

    # ------------------------------------------------------------ answers
    def relations(self) -> list[str]:
        return sorted(self.db)

    def relation(self, name: str, span=None) -> tables.Relation:
        """A read-only live view of the relation ``name`` as a table (:mod:`datalog.engine.tables`):
        ``len``, iteration, ``rows()``, ``to_arrow()``, ``to_pandas()``, ``to_polars()``,
        ``__arrow_c_stream__``; ``undefined_relation`` (pointing at ``span``) if there is none."""
        self.stored_relation(name, span)
        return tables.Relation(self, name)

    def stored_relation(self, name: str, span=None) -> Relation:
        """The relation ``name`` as the engine stores it; ``undefined_relation`` (pointing at
        ``span``) if there is none."""
        self.guard.check()
        if name not in self.db:
            raise UndefinedRelation(f"undefined relation {name}", span)
        return self.db[name]

    def answered_relation(self, name: str, span=None) -> Relation:
        """The relation ``name`` as stored once the program is evaluated: it is run first if it is
        not (as :meth:`rows` does), so a view read before any ``run`` (``engine.relation(name)``)
        is not an empty derived relation."""
        with self.guard.serial():
            if not self._evaluated:
                self.run()
            return self.stored_relation(name, span)

    def rows(self, name: str) -> list[tuple]:
        """The relation's rows, sorted; the program is run first if it is not evaluated (never
        run, or a ``run`` stopped part way), as :meth:`ask` does, so no answer is a derived
        relation not yet derived. (``stored_relation(name)`` reads what is held, evaluated or not.)"""
        with self.guard.serial():
            if not self._evaluated:
                self.run()
            return self.stored_relation(name).sorted_rows()

    def query(self, text: str | ast.Atom) -> list[tuple] | queries.Answers:
        """A query as the REPL takes it, ``?- body.`` (any body: conjunctions, comparisons, negation,
        aggregates): its :class:`~datalog.engine.query.Answers` (``columns``, ``rows``, ``df()``,
        ``pl()``, ``arrow()``), as :meth:`ask` gives them. Text without ``?-`` (or an atom): the
        tuples of one relation matching an atom such as ``path(1, X)`` (``_`` matches anything)."""
        if queries.is_query(text):
            return queries.run(self, text)
        atom = queries.atom(text) if isinstance(text, str) else text
        with self.guard.serial():
            if not self._evaluated:
                self.run()
            return answers.matching(self.stored_relation(atom.relation, atom.span), atom)

    def ask(self, body: str | tuple) -> tuple[list[str], list[tuple]]:
        """Answers of a query, its text (``?- path(x, y), x > 0.``) or its body (see
        :func:`datalog.language.parser.parse_query`): the variables it binds, in order, and their
        sorted rows. Evaluated as a rule of its own (a one-atom query is read off its relation as it
        streams, :mod:`datalog.engine.answers`); nothing changes. A wrong query gets the error the
        rule would."""
        body = queries.parsed(body) if isinstance(body, str) else body
        alternatives = dnf(body)
        names = [n for n in dict.fromkeys(v.name for v in ast.variables(body))
                 if all(n in bound_variables(alt) for alt in alternatives)]
        head = ast.Atom(_ANSWER, tuple(ast.Variable(n) for n in names), body[0].span if body else None)
        if not self._evaluated:
            self.run()
        rule = ast.Rule((head,), body, head.span)
        if answers.scannable(rule, self.db):
            self._check_added(ast.Program((rule,)))
            return names, answers.scan(rule, self.db[rule.body[0].relation])
        old = {key: getattr(self, key) for key in _STATE}
        with self.guard.serial():
            try:
                self._extend(ast.Program((rule,)), "<query>")
                return names, self.rows(_ANSWER)
            except DatalogError as err:       # at run time (division_by_zero): about the query, not its rule
                err.message = err.message.replace(f"a rule for {_ANSWER}", "the query")
                raise
            finally:
                for key, value in old.items():
                    setattr(self, key, value)
                self.guard.settled()

    # ------------------------------------------------------------ provenance
    def why(self, fact: str | ast.Atom, depth: int | None = None) -> Proof:
        """Why the relation holds ``fact`` (``"path(1, 4)"``): a proof of least height, read off
        the current relations (:mod:`datalog.provenance`): each rule instance with its clause,
        position and binding over the proofs of its positive body facts, its negated atoms shown
        absent, its comparisons and aggregates; EDB facts at the leaves with their source. Below
        ``depth`` rule levels a proof is cut (a ``cut`` node). ``fact_absent`` if it is missing."""
        from datalog.provenance import fact_text
        relation, row = self.ground_fact(fact)
        explainer = self.explainer()
        if not explainer.holds(relation, row):
            raise FactAbsent(f"{relation} does not hold {fact_text(relation, row)} (why_not explains it)",
                             getattr(fact, "span", None))
        return explainer.why(relation, row, depth)

    def why_not(self, fact: str | ast.Atom, depth: int = 1, limit: int = 3) -> WhyNot:
        """Why the relation does not hold ``fact``: for each rule that could derive it, the body
        literal at which its closest partial matches (at most ``limit``) stop, a missing positive
        fact explained in turn to ``depth`` more levels."""
        relation, row = self.ground_fact(fact)
        return self.explainer().why_not(relation, row, depth, limit)

    def explainer(self) -> Explainer:
        """An :class:`~datalog.provenance.Explainer` over the relations as they are now (evaluated
        first if they were not). The heights and rule instances it learns are kept for the next
        question until anything changes (a commit, ``extend``, ``insert``): then a new one starts."""
        from datalog.provenance import Explainer
        if not self._evaluated:
            self.run()
        state = (self._commits, id(self.checked), id(self.db), sum(len(r) for r in self.db.values()))
        if self._explainer is None or self._explainer[0] != state:     # what it learnt holds until a change
            heights = self.heights if self.provenance else None
            self._explainer = (state, Explainer(self.checked.clauses, self.db, self.idb, self._program_facts(),
                                                self.fact_source, heights))
        return self._explainer[1]

    @property
    def heights(self) -> Heights | None:
        """The kept least proof heights of the IDB facts (``provenance=True``, else None): made
        for the current program and relations, brought up to date on first use after a commit
        (:mod:`datalog.provenance.heights`)."""
        if not self.provenance:
            return None
        from datalog.provenance.heights import Heights
        key = (id(self.checked), id(self.db))
        if self._kept is None or self._kept[0] != key:
            self._kept = (key, Heights(self.checked.clauses, self.compiled, self.db, self._program_facts(),
                                       self.intersect))
        return self._kept[1]

    def _program_facts(self) -> dict[str, set]:
        """The facts the program's text states, by relation (a proof's leaves besides the inputs)."""
        base: dict[str, set] = {}
        for name, rows in program_facts(self.checked):
            base.setdefault(name, set()).update(rows)
        return base

    def ground_fact(self, fact: str | ast.Atom) -> tuple[str, tuple]:
        """``fact`` (text or atom) as (relation, row) typed as stored; ``bad_fact`` if an argument
        is not a value."""
        atom = parse_atom(fact) if isinstance(fact, str) else fact
        info = self.schema.get(atom.relation)
        if info is None:
            raise UndefinedRelation(f"undefined relation {atom.relation}", atom.span)
        if len(atom.args) != info.arity:
            raise ArityMismatch(f"{atom.relation} has arity {info.arity}, the fact has "
                                f"{plural(len(atom.args), 'argument')}", atom.span)
        values = []
        for arg in atom.args:
            if isinstance(arg, ast.Negate) and isinstance(arg.operand, ast.Constant):
                arg = ast.Constant(-arg.operand.value, arg.span)
            if not isinstance(arg, ast.Constant):
                raise BadFact(f"{arg} is not a value: why and why_not take one tuple, such as "
                              f"{atom.relation}({', '.join(map(example, info.types))})", arg.span or atom.span)
            values.append(arg.value)
        return atom.relation, self.admit(atom.relation, tuple(values), atom.span)

    def fact_source(self, relation: str, row: tuple) -> str | None:
        """Where an EDB fact came from, where known: the program line stating it, the commit that
        inserted it, or its relation's input."""
        for clause in self.checked.clauses:
            if not clause.body and clause.head.relation == relation and clause.rule.span is not None \
                    and all(isinstance(a, ast.Constant) for a in clause.head.args) \
                    and tuple(a.value for a in clause.head.args) == row:
                return str(clause.rule.span)
        commit = self._inserted_at.commit_of(relation, row)
        if commit is not None:
            return f"commit {commit}"
        for directive in self.checked.directives("input"):
            if directive.relation == relation:
                if directive.io == "delta":
                    return f"Delta table {directive.param('path')}"
                if directive.io == "spark":
                    return f"Spark table {directive.param('table') or directive.param('path') or relation}"
                return files.row_source(directive, self.facts_dir, row, self.allow_paths)
        return None

    # ------------------------------------------------------------ subscriptions
    @property
    def commit_number(self) -> int:
        """The number of the last commit (0 before any): transactions, ``commit`` and ``extend``
        count; a workspace's engine has its workspace's numbers."""
        return self._commits

    def subscribe(self, name: str, callback: Callable[[tables.TableChange], object] | None = None,
                  snapshot: bool = True) -> tables.Subscription:
        """Be told of every later commit's change of relation ``name``: ``callback(change)`` (a
        :class:`~datalog.engine.tables.TableChange`) or, without a callback, queued in the returned
        :class:`~datalog.engine.tables.Subscription` (``poll()``, iteration). With ``snapshot`` the
        first change is the relation's current rows (the program is evaluated first if it was
        not). See :mod:`datalog.engine.tables` for the guarantees."""
        self.stored_relation(name)
        subscription = tables.Subscription(self, name, callback)
        if snapshot and not self._evaluated:
            self.run()
        with self.guard.serial():
            if snapshot:
                tables.snapshot(self, subscription, self.commit_number)
            self._subscriptions.append(subscription)
        return subscription

    def changes(self, name: str, snapshot: bool = True) -> tables.Subscription:
        """``subscribe(name)`` without a callback: ``for change in engine.changes("r")`` takes the
        queued changes; ``poll()`` takes them as a list."""
        return self.subscribe(name, None, snapshot)

    def unsubscribe(self, subscription: tables.Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def hand_over(self, successor: "Engine", delta: Delta) -> None:
        """``successor`` replaces this engine (a workspace's ``removeblock``), changing the relations
        by ``delta``: the subscriptions move to it and are told."""
        moved, self._subscriptions = self._subscriptions, []
        for subscription in moved:
            subscription.engine = successor
        successor._subscriptions.extend(moved)
        with successor.guard.committing():
            successor.guard.deliveries.add(tables.changes_of(successor, moved, delta, successor.commit_number,
                                                             before=self))

    def _committed(self, delta: Delta) -> None:
        """A commit was made: count it, note the commit of each EDB fact it inserted (the source
        ``why`` names), repair the kept heights, and queue its changes for the subscribers (told
        once the outermost commit is finished: :mod:`datalog.engine.delivery`)."""
        self._commits += 1
        self.arrow_tables = {key: kept for key, kept in self.arrow_tables.items()    # a replaced relation's
                             if self.db.get(key[0]) is kept[0]}                         # table is dropped
        for name, change in delta.items():
            if name not in self.idb:
                self._inserted_at.record(self.commit_number, name, change.inserted, change.retracted)
        if self._kept is not None and self._kept[0] != (id(self.checked), id(self.db)):
            self._kept = None                     # of a program since extended: made anew when asked
        if self._kept is not None:
            try:
                self._kept[1].changed(delta)      # repaired now, or stale until the next question
            except Exception:                     # (a MemoryError): made anew when asked
                self._kept = None
        if self._subscriptions:                   # told once the outermost commit is finished
            self.guard.deliveries.add(tables.changes_of(self, self._subscriptions, delta, self.commit_number))

    def write_outputs(self, out_dir: str | None = None) -> list[str]:
        """Write ``.output`` relations; return the ``.printsize`` lines (``name<TAB>count``)."""
        return outputs.write_outputs(self, out_dir)

    def check_spark_sinks(self, out_dir: str | None = None) -> None:
        """Refuse a Spark sink whose local path leaves ``out_dir`` before anything is written
        (:func:`datalog.engine.outputs.check_spark_sinks`)."""
        outputs.check_spark_sinks(self, out_dir)

    def write_spark_output(self, directive: ast.Directive, delta=None, out_dir: str | None = None) -> None:
        """Write a relation to its Spark sink (:func:`datalog.engine.outputs.write_spark_output`)."""
        outputs.write_spark_output(self, directive, delta, out_dir)

    def explain(self, internal: bool = False) -> str:
        """Strata, and per rule its plan: variable order, indexes, filters, backend; a stratum of
        relations made by rewrites (:func:`~datalog.language.rewrites.is_internal`) only with ``internal``."""
        lines = []
        for number, stratum in enumerate(self.checked.strata, 1):
            if not internal and all(is_internal(name) for name in stratum.relations):
                continue
            kind = "recursive" if stratum.recursive else "non-recursive"
            if stratum.constrained:             # choice-domain / subsumption: no delta rules
                kind += "; choice-domain/subsumption, recomputed on change"
            if worklist.linear(stratum, [self.compiled[c.index] for c in stratum.clauses if c.body]) is not None:
                kind += "; tuple at a time"     # evaluated from a worklist, not semi-naive rounds
            lines.append(f"stratum {number} ({kind}): {', '.join(stratum.relations)}")
            for clause in stratum.clauses:
                plan_ = self.plans.get(clause.index)
                lines.append(f"  {clause}\n      {plan_.describe() if plan_ else 'fact'}")
        return "\n".join(lines)
