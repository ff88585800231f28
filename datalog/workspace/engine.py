"""The workspace's engine: :class:`WorkspaceEngine`, an Engine whose commits its workspace
logs, and such engines made from a block list and relation rows (``build`` evaluates,
``restored`` does not: the rows are the stored ones)."""

from __future__ import annotations

from pathlib import Path

from datalog.engine.engine import Engine
from datalog.language import ast
from datalog.language.errors import BadBlock, DatalogError, NotUpdatable, WorkspaceCorrupt
from datalog.workspace import maintainer as wsmaintainer
from datalog.workspace.blocks import program_of
from datalog.workspace.snapshot import SnapshotRows
from lftj.relation import LazyRelation, Relation
from maintenance.delta import Delta


class WorkspaceEngine(Engine):
    """An engine whose commits are made durable by its workspace before they return.

    Invariants, with a workspace: every commit (an empty one too) gets the next number and returns
    only once its record is durable in the log; a commit whose record cannot be written is undone,
    so the relations are as before it; the program changes only through ``Workspace.addblock``
    (which makes the new block durable as the last step of ``extend``), ``extend`` is refused
    otherwise. Without a workspace it is an Engine."""

    workspace = None                                  # its Workspace, once attached

    def __init__(self, program: ast.Program, *args, **kw):
        super().__init__(program, *args, **kw)

    def extend(self, text, name: str = "<input>", facts_dir=None, durable=None):
        """Only through ``Workspace.addblock`` (durable); ``ask`` adds its rule itself, undone at once."""
        if self.workspace is not None and durable is None:
            raise BadBlock(f"statements join a workspace's program as a block: use Workspace.addblock "
                           f"(datalog addblock {self.workspace.path} FILE), which makes them durable")
        return super().extend(text, name, facts_dir, durable)

    @property
    def commit_number(self) -> int:
        """The workspace's commit number (its ``seq``); without one, the engine's own count."""
        return self.workspace.seq if self.workspace is not None else super().commit_number

    def _apply(self, pending):
        """The commit, made once its log record is durable (subscribers are told by ``apply`` after that)."""
        workspace = self.workspace
        if workspace is None:
            return super()._apply(pending)
        workspace.check_writable()
        if not workspace.refreshing:
            self._refuse_fed(pending)
        with wsmaintainer.guarded(self, workspace.restored):
            return super()._apply(pending)

    def _durable(self, changes: Delta, delta: Delta) -> None:
        """Every commit gets a number, empty ones too: its EDB and IDB changes appended to the log."""
        if self.workspace is not None:
            idb = self.idb
            self.workspace.log_commit({**changes, **{n: c for n, c in delta.items() if n in idb and c}})

    def _durable_anyway(self) -> bool:
        return self.workspace is not None and self.workspace.logged_anyway()

    def _made(self) -> None:
        if self.workspace is not None:
            self.workspace.logged()

    def _after_commits(self) -> None:
        if self.workspace is not None:
            self.workspace.maybe_compact()             # the commits are made whatever happens here


    def _refuse_fed(self, pending) -> None:
        """``not_updatable``: a relation a Spark (or Delta) source feeds changes only by ``refresh``,
        which diffs the source with its snapshot: a row updated in the workspace would stay
        until the source itself changed there, and one retracted would not come back."""
        fed = {d.relation: d for d in self.spark_directives("input")}
        for name, changes in pending.items():
            if name in fed and changes:
                directive = fed[name]
                where = " ".join(f"{k}={v!r}" for k, v in ((k, directive.param(k)) for k in ("table", "path", "query"))
                                 if v is not None)
                raise NotUpdatable(f"{name} is fed by its {directive.io} source ({where}) and changes only with it: "
                                   f"change the source, then run `datalog refresh {self.workspace.path}`; nothing "
                                   f"was committed", directive.span)


def build(blocks: list[dict], tables: dict[str, set], options: dict) -> WorkspaceEngine:
    """An engine for ``blocks`` whose EDB relations hold ``tables`` (not the program's facts or
    input files), evaluated from scratch."""
    engine = WorkspaceEngine(program_of(blocks), None, **options)
    _fill(engine, {n: rows for n, rows in tables.items() if n in engine.db and n not in engine.idb}, False)
    engine.run()
    return engine


def restored(blocks: list[dict], tables: dict[str, set], options: dict, where: Path,
             ordered: dict[str, list] | None = None) -> WorkspaceEngine:
    """An engine for ``blocks`` whose every relation holds what ``tables`` says: nothing evaluated.
    ``ordered``: the rows of some of them as lists in stored order (``Relation.presorted``)."""
    return fill(WorkspaceEngine(program_of(blocks), None, **options), tables, where, ordered)


def unfilled(blocks: list[dict], options: dict, where: Path) -> WorkspaceEngine:
    """An engine for the stored program ``blocks``, its relations still empty (:func:`fill`); a
    stored program that does not check is ``workspace_corrupt`` (the engine that wrote it had
    checked it)."""
    try:
        return WorkspaceEngine(program_of(blocks), None, **options)
    except DatalogError as exc:
        raise WorkspaceCorrupt(f"workspace file {where}: its program does not check: {exc.message}") from None


def fill(engine: WorkspaceEngine, tables: dict[str, set], where: Path, ordered: dict[str, list] | None = None,
         columns=None) -> WorkspaceEngine:
    """``engine`` (:func:`unfilled`) with every relation holding what ``tables`` says, nothing
    evaluated; ``columns`` (:class:`datalog.workspace.validate.Columns`, which checked the rows)
    then takes the types the engine settled from them."""
    for name, rows in tables.items():
        if name not in engine.db:
            raise WorkspaceCorrupt(f"workspace file {where} holds rows of {name}, which its program "
                                   f"does not have")
        arity = rows.arity if isinstance(rows, SnapshotRows) else len(next(iter(rows))) if rows else None
        if arity is not None and arity != engine.db[name].arity:         # one arity per relation:
            raise WorkspaceCorrupt(f"workspace file {where}: the rows of {name} do not have arity "
                                   f"{engine.db[name].arity}")             # checked by rows.add
    try:
        _fill(engine, {n: tables.get(n, set()) for n in engine.db}, True)
    except DatalogError as exc:                     # the rows' types do not fit the program
        raise WorkspaceCorrupt(f"workspace file {where}: {exc.message}") from None
    if columns is not None:
        columns.settle(engine.schema, where)
    for name, rows in (ordered or {}).items():
        engine.db[name].presorted = rows
    return engine


def _fill(engine: WorkspaceEngine, tables: dict, evaluated: bool) -> None:
    """The relations of ``tables`` (sets, or a snapshot's rows left to read when first used:
    :class:`LazyRelation`) replace the engine's; the ``.input`` files count as read."""
    edb = set(engine.db) - engine.idb
    samples = [(n, [rows.sample if isinstance(rows, SnapshotRows) else next(iter(rows))])
               for n, rows in tables.items() if n in edb and rows]
    relations = {}
    for name, rows in tables.items():
        arity = engine.db[name].arity
        if isinstance(rows, SnapshotRows):
            relations[name] = LazyRelation(name, arity, rows)
        else:
            relation = relations[name] = Relation(name, arity)
            relation.tuples = rows if isinstance(rows, set) else set(rows)
    engine.restore(relations, samples, evaluated)
