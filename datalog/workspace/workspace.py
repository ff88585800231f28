"""Workspaces: a program and its EDB kept on disk, so that the next process continues where the
last one committed. The on-disk format and its guarantees are in ``datalog/workspace.md``.

This module is the :class:`Workspace`, which orchestrates the package's other modules: the
writer lock (``lock``), the commit log (``log``), the snapshot (``snapshot``) and the stored
maintainer beside it (``maintainer``), the program's blocks (``blocks``), the Spark directory
(``sources``) and the engine that logs its commits (``engine``); records are framed by
``format`` and rows packed by ``rows``; every value read is checked by ``validate``, and
``verify`` compares the stored state with a recomputation. It decides when each file is written:
create, open, commit, compact, addblock, removeblock.

>>> import tempfile
>>> path = tempfile.mkdtemp() + "/ws"
>>> with Workspace.create(path, "edge(1, 2). path(x, y) :- edge(x, y).") as ws:
...     _ = ws.engine.commit(inserts={"edge": [(2, 3)]})
>>> with Workspace.open(path, readonly=True) as ws:
...     ws.engine.rows("path")
[(1, 2), (2, 3)]
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import nullcontext
from pathlib import Path

from datalog.engine.memory import paused_gc
from datalog.language.errors import WorkspaceCorrupt, WorkspaceExists, WorkspaceIO, WorkspaceMissing, WorkspaceReadOnly
from datalog.language.parser import parse
from datalog.sources import atomic
from datalog.workspace import blocks as wsblocks
from datalog.workspace import engine as wsengine
from datalog.workspace import format as wsfile
from datalog.workspace import lock as wslock
from datalog.workspace import log as wslog
from datalog.workspace import maintainer as wsmaintainer
from datalog.workspace import snapshot as wssnapshot
from datalog.workspace import sources as wssources
from datalog.workspace import validate as wsvalidate
from datalog.workspace import verify as wsverify
from datalog.workspace.blocks import program_of           # program_of, source_snapshot: only
from datalog.workspace.engine import WorkspaceEngine        # re-exported (__all__), as before
from datalog.workspace.lock import lock_holder
from datalog.workspace.log import LOG
from datalog.workspace.snapshot import SNAPSHOT
from datalog.workspace.sources import source_snapshot
from maintenance import persistence as wsstate
from maintenance.delta import Delta, diff

COMPACT_MIN = 1 << 20               # the log is folded into a new snapshot when larger than this
                                    # and than the snapshot (with its maintainer file),
COMPACT_COMMITS = 10_000            # or when it holds this many commits: every open replays them
                                    # (about 1 ms each at 1M tuples; a compaction there is ~40 s)


class Workspace:
    """A workspace directory opened by one process: ``engine`` answers and (for the writer)
    commits; ``addblock``/``removeblock`` change the program. Use as a context manager or
    ``close()`` to release the writer lock.

    Invariants: ``engine``'s relations and program (``blocks``) are those of commit ``seq``
    (made at ``when``): for the writer the last one durable on disk, for a reader the last one
    when it opened. The snapshot it read or last wrote holds commit ``snapshot_seq`` <= ``seq``,
    and the log's records after that are the commits up to ``seq`` (``log_bytes`` long;
    ``discarded``: a torn record found on open, cut off before the first append). ``sources``
    names each Spark source's snapshot chain at ``seq``. A writer holds the lock (``_lock_fd``)
    and the log open for appending (``_log_fd``) until ``close``; a reader holds neither and
    cannot commit."""

    def __init__(self, path: Path, blocks: list[dict], seq: int, when: float, writer: bool,
                 compact_min: int = COMPACT_MIN):
        self.path, self.blocks, self.seq, self.when = path, blocks, seq, when
        self.writer, self.compact_min = writer, compact_min
        self.engine: WorkspaceEngine | None = None
        self._lock_fd = self._log_fd = None
        self.log_bytes = self.snapshot_bytes = 0
        self.discarded = 0                      # bytes of a torn last log record found on open
        self.snapshot_seq = seq                 # the commit the snapshot on disk holds
        self.sources: dict[str, str] = {}       # Spark source -> its snapshot under spark/ (refresh)
        self._next_sources: dict[str, str] | None = None
        self._before_log = None
        self._in_flight: dict | None = None     # the record of the commit being logged
        self.restored = None                    # (maintainer, its file): the one restored at open

    # ------------------------------------------------------------ create / open / close
    @classmethod
    def create(cls, path, program: str, facts_dir=None, source: str = "main", name: str = "main",
               out_dir=None, progress=None, **engine_options) -> "Workspace":
        """Evaluate ``program`` (text; ``.input`` files read from ``facts_dir``) once and save it as
        a new workspace at ``path``, its Spark sinks written (a local ``path=`` under ``out_dir``);
        returns it open for writing. ``progress`` is told of each step (the engine's lines, then
        the maintainer's set-up and the snapshot's writing), as ``Engine.run`` tells it."""
        path = Path(path)
        _refuse_existing(path)
        engine = WorkspaceEngine(parse(program, source), facts_dir, **engine_options)
        engine.progress = progress
        try:
            sources: dict[str, str] = {}
            engine.stage_source = wssources.stager(path, sources, engine)  # a Spark source's rows kept as Parquet
            engine.run()
            engine.stage_source = None
            if engine.maintenance == "incremental":
                _tell(engine, "setting up incremental maintenance (a pass over the rules)")
                engine.commit()                   # builds the maintainer, stored when it can be
            block = {"name": name, "source": source, "text": program, "converted": {}}
            return cls._new(path, [block], engine, sources, spark_outputs=True, out_dir=out_dir)
        finally:
            engine.progress = None

    @classmethod
    def create_from(cls, path, blocks: list[dict], tables: dict[str, set], **engine_options) -> "Workspace":
        """A new workspace at ``path`` whose program is ``blocks`` (the format's block list) and
        whose relations hold ``tables`` (every relation's rows, as an evaluated engine has them,
        e.g. a REPL session's): nothing is evaluated, as when opening. Returns it open for writing;
        the maintainer is built at the first commit. Error ``workspace_exists`` as for ``create``."""
        path = Path(path)
        _refuse_existing(path)
        engine = wsengine.restored([dict(b) for b in blocks], tables, engine_options, path / SNAPSHOT)
        return cls._new(path, [dict(b) for b in blocks], engine, {})

    @classmethod
    def _new(cls, path: Path, blocks: list[dict], engine: WorkspaceEngine, sources: dict[str, str],
             spark_outputs: bool = False, out_dir=None) -> "Workspace":
        """The directory made and locked, ``engine`` (commit 0 of ``blocks``) saved there: the log,
        then the snapshot, which makes the directory a workspace; with ``spark_outputs`` the Spark
        outputs written. Returns it open for writing (closed again on failure)."""
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceIO(f"cannot create the workspace directory {path}: {exc.strerror or exc}") from None
        ws = cls(path, blocks, 0, time.time(), writer=True)
        ws.sources = sources
        ws._lock()
        try:
            _refuse_existing(path)                # again, under the lock: two inits at once
            ws.engine, engine.workspace = engine, ws
            wslog.start(path, 0)
            ws._snapshot()                        # last: it makes the directory a workspace
            if spark_outputs:
                ws.write_spark_outputs(out_dir)
        except BaseException:
            ws.close()
            raise
        return ws

    @classmethod
    def open(cls, path, readonly: bool = False, compact_min: int = COMPACT_MIN,
             **engine_options) -> "Workspace":
        """Open a workspace: the writer takes the lock (error ``workspace_locked`` naming the holder),
        readers take no lock and see the last committed state. Every relation is read from the
        snapshot and the log, nothing is evaluated. A writer also restores the maintainer stored
        with the snapshot (``maintainer.S``) and maintains the log's commits through it; without
        that file its first commit builds the maintainer (a full recording pass over the
        non-recursive rules)."""
        path = Path(path)
        if not os.path.lexists(path / SNAPSHOT) and not os.path.lexists(path / LOG):
            _check_listable(path)                   # a directory we may not read is not "missing"
            raise WorkspaceMissing(f"{path} is not a workspace (no {path / SNAPSHOT}); create one "
                                   f"with datalog init")
        if _init_cut_short(path):                   # as init sees it: not a workspace yet
            raise WorkspaceMissing(f"{path} is not a workspace: an init was cut short before it wrote "
                                   f"{path / SNAPSHOT}; run datalog init again")
        wssources.check_directory(path)
        ws = cls(path, [], 0, 0.0, writer=not readonly, compact_min=compact_min)
        try:
            if ws.writer:
                ws._lock()
            with paused_gc():                   # millions of new tuples: the cyclic GC would rescan them
                ws.engine = ws._read_state(engine_options)
            ws.engine.workspace = ws
            if ws.writer:
                ws._open_log()
        except BaseException:
            ws.close()
            raise
        return ws

    def close(self) -> None:
        """Release the log and the writer lock (after a commit another thread is making)."""
        with self.engine.guard.lock if self.engine is not None else nullcontext():
            if self._log_fd is not None:
                fd, self._log_fd = self._log_fd, None
                os.close(fd)
            if self._lock_fd is not None:
                wslock.release(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the lock
    def _lock(self) -> None:
        self._lock_fd = wslock.acquire(self.path)

    def check_writable(self) -> None:
        if not self.writer:
            raise WorkspaceReadOnly(f"workspace {self.path} is open for reading: it cannot commit (open it "
                                    f"for writing to change it)")
        if self._lock_fd is None:
            raise WorkspaceReadOnly(f"workspace {self.path} is closed: it cannot commit (open it again)")

    # ------------------------------------------------------------ reading the state
    def _read_state(self, options: dict, maintainer: bool | None = None) -> WorkspaceEngine:
        """The engine of the last commit. A writer (or with ``maintainer``) with a stored
        maintainer (``maintainer`` of the snapshot's commit) restores it and maintains the log's
        commits through it; otherwise the log's changes are set arithmetic on the relations and
        the maintainer is built at the first commit."""
        log, snap = wslog.read_committed(self.path)
        where = self.path / SNAPSHOT
        self.seq, self.when = snap.header["seq"], snap.header.get("time", 0.0)
        first, self.blocks = wssnapshot.program_record(snap, where)
        engine = wsengine.unfilled(self.blocks, options, where)
        columns = wsvalidate.Columns(engine.schema)
        tables, ordered = wssnapshot.tables(snap, where, first, columns)
        self.sources = wssources.chains(first.get("sources", {}), where)
        self.snapshot_seq = self.seq
        self.log_bytes, self.snapshot_bytes = log.valid_length, snap.valid_length
        self.discarded = log.torn
        stored = wsmaintainer.read(self.path, self.seq) if (self.writer if maintainer is None else maintainer) else None
        if stored is not None and wsvalidate.rebuilds_values(engine.schema):
            raise WorkspaceCorrupt(f"workspace file {stored[1]}: a workspace whose program has records, "
                                   f"ADTs or mixed columns stores no maintainer; this one was planted or forged")
        if stored is not None:                           # counted with the snapshot, as _snapshot does
            self.snapshot_bytes += stored[2].valid_length
        if stored is None:
            for name in wslog.replay(self._logged(log), tables, self.path, columns):
                ordered.pop(name, None)
            return wsengine.fill(engine, tables, where, ordered, columns)
        wsengine.fill(engine, tables, where, ordered, columns)
        engine.adopt(wsstate.restore(engine.planned(), engine.db, *stored, columns))
        self.restored = (engine.maintainer, stored[1])
        with wsmaintainer.guarded(engine, self.restored):
            wslog.replay_through(engine, self._logged(log), self.path, columns, stored[1])
        return engine

    def _logged(self, log: wsfile.Contents):
        """The log's records after the snapshot (``log.records_after``); the workspace is at a
        record's commit once the caller has applied it and asks for the next."""
        for record in wslog.records_after(log, self.seq, self.path, self.sources):
            yield record
            self.seq, self.when = record["seq"], record.get("time", self.when)

    # ------------------------------------------------------------ writing
    def _open_log(self) -> None:
        """The writer cuts off a torn last record (the commit in flight at a crash) before appending."""
        self._log_fd = wslog.open_for_append(self.path, self.log_bytes, self.discarded)

    def log_commit(self, changes: Delta) -> None:
        """Append the commit's changes (EDB and IDB) to the log and fsync: the commit's durable
        point. :meth:`logged` then moves the workspace to it."""
        record = wslog.record_of(self.seq + 1, changes, self._next_sources)
        if self._before_log is not None:
            self._before_log()
        if self._log_fd is None:                  # a log reset stopped part way, or whose new log did not open
            self._reopen_log()
        self._in_flight = record
        wsfile.append(self._log_fd, record, self.path / LOG)

    def _reopen_log(self) -> None:
        """The log as a compaction left it (the old one, or the new empty one: both end at ``seq``
        or before), opened for appending again."""
        try:
            log = wslog.read(self.path)
            self._log_fd = wslog.open_for_append(self.path, log.valid_length, log.torn)
        except (WorkspaceIO, WorkspaceCorrupt, OSError) as exc:
            raise WorkspaceIO(f"the workspace log {self.path / LOG} is not open and could not be opened "
                              f"again after a compaction ({exc}); reopen the workspace") from None
        self.log_bytes, self.discarded = log.valid_length, 0

    def logged_anyway(self) -> bool:
        """After an exception from :meth:`log_commit`: whether its record is whole in the log all the
        same (the exception came after the append's fsync). A failed append cuts its frame off."""
        record, fd = self._in_flight, self._log_fd
        if record is None or fd is None:
            return False
        if os.fstat(fd).st_size != self.log_bytes + len(wsfile.encode(record)):
            self._in_flight = None
            return False
        os.fsync(fd)                              # (raising: neither before nor after, the engine breaks)
        return True

    def logged(self) -> None:
        """The record of :meth:`log_commit` is durable: the workspace is at its commit."""
        record, self._in_flight = self._in_flight, None
        self.log_bytes = os.fstat(self._log_fd).st_size
        self.seq, self.when = record["seq"], record["time"]
        if self._next_sources:
            self.sources.update(self._next_sources)

    def maybe_compact(self) -> None:
        """Compact when the log outgrew the snapshot or holds :data:`COMPACT_COMMITS` commits. A
        compaction that fails (a full disk: ``workspace_io``) leaves the workspace as it was: the log
        keeps growing and the next commit tries again."""
        if (self.log_bytes > max(self.compact_min, self.snapshot_bytes)
                or self.seq - self.snapshot_seq >= COMPACT_COMMITS):
            try:
                self.compact()
            except (WorkspaceIO, OSError, MemoryError):
                pass

    def compact(self, progress=None) -> None:
        """Fold the log into a new snapshot (temporary file, fsync, rename), then start an empty log.
        A crash between the two leaves the new snapshot and the old log, whose records it skips.
        ``progress`` is told of each step."""
        self.check_writable()
        self.engine.progress, told = progress, self.engine.progress
        try:
            self._snapshot()
        finally:
            self.engine.progress = told

    def _snapshot(self, then_reset_log: bool = True) -> None:
        _tell(self.engine, "saving the maintainer's state")
        with wsmaintainer.guarded(self.engine, self.restored):         # (capturing reads every page)
            extra = wsmaintainer.save(self.path, self.seq, self.engine)  # compaction pays for both files
        _tell(self.engine, "writing the snapshot")
        self.snapshot_bytes = extra + wssnapshot.write(self.path, self.seq, self.when, self.blocks, self.sources,
                                                       self.engine)
        self.snapshot_seq = self.seq
        wsmaintainer.drop_others(self.path, self.seq)
        _drop_temporaries(self.path)
        if then_reset_log:
            self._reset_log()

    def _reset_log(self) -> None:
        """A new empty log after ``seq``. The old log's descriptor is dropped first: stopped part
        way, the writer is left without a log (its next commit says so) rather than appending to
        a log that was replaced."""
        if self._log_fd is not None:
            fd, self._log_fd = self._log_fd, None
            os.close(fd)
        self.log_bytes = wslog.start(self.path, self.seq)
        self.discarded = 0
        self._open_log()

    # ------------------------------------------------------------ tables and subscriptions
    def relation(self, name: str):
        """A read-only live view of a relation as a table (``Engine.relation``)."""
        return self.engine.relation(name)

    def subscribe(self, name: str, callback=None, snapshot: bool = True):
        """Be told of each commit's change of relation ``name`` once the commit is durable
        (``Engine.subscribe``; the commit numbers are the workspace's). The subscription
        follows the workspace's engine through ``removeblock``."""
        return self.engine.subscribe(name, callback, snapshot)

    def changes(self, name: str, snapshot: bool = True):
        """``subscribe(name)`` without a callback: the changes queue (``poll()``, iteration)."""
        return self.engine.changes(name, snapshot)

    # ------------------------------------------------------------ Spark sources and outputs
    def commit_sources(self, inserts: dict, retracts: dict, sources: dict[str, str], before_log=None) -> Delta:
        """One transaction of EDB changes whose log record also moves the named Spark sources to
        new snapshots (``refresh``): the two become durable together or not at all.
        ``before_log`` runs after maintenance, before the record is written (the kill tests)."""
        with self.engine.guard.lock:                      # no other thread's commit takes the sources
            self._next_sources, self._before_log = dict(sources), before_log
            try:
                return self.engine.commit(inserts=inserts, retracts=retracts)
            finally:
                self._next_sources = self._before_log = None

    @property
    def refreshing(self) -> bool:
        """Whether the commit being made is a refresh's (:meth:`commit_sources`), which alone may
        change the relations Spark sources feed."""
        return self._next_sources is not None

    def write_spark_outputs(self, out_dir: str | None = None) -> None:
        """Every ``.output r(IO=spark)`` rewritten from the relations (a local ``path=`` held to
        ``out_dir``), then ``spark/outputs`` says they hold this commit (a failure leaves that for
        the next ``refresh`` to redo)."""
        outputs = self.engine.spark_directives("output")
        for directive in outputs:
            self.engine.write_spark_output(directive, out_dir=out_dir)
        if outputs:
            self.mark_outputs_synced()

    def outputs_synced(self) -> int | None:
        """The commit whose relations the Spark output tables last received in full or in part
        (``spark/outputs``), or None."""
        return wssources.outputs_synced(self.path)

    def mark_outputs_synced(self) -> None:
        wssources.mark_outputs_synced(self.path, self.seq)

    # ------------------------------------------------------------ program changes
    def addblock(self, name: str, text: str, source: str | None = None, facts_dir=None) -> Delta:
        """Add a named block of statements: only the strata it reaches are evaluated
        (``Engine.extend``); then a new snapshot makes it durable. All or nothing."""
        self.check_writable()
        wsblocks.check_new(self.blocks, name, self.path)
        engine, added = self.engine, parse(text, source or name)
        if not engine.evaluated:
            engine.run()
        converted = wsblocks.conversions(added, engine)
        wsblocks.check_conversions(converted, engine, added)
        block = {"name": name, "source": source or name, "text": text, "converted": converted}
        return engine.extend(added, facts_dir=facts_dir,
                             durable=lambda: self._durably(lambda: self.blocks.append(block)))

    def removeblock(self, name: str) -> Delta:
        """Remove a named block and everything only it derived. Cost: the remaining program is
        evaluated again from the stored EDB (a full evaluation), then a new snapshot is written."""
        with self.engine.guard.committing():              # subscribers told once it is made
            return self._removeblock(name)

    def _removeblock(self, name: str) -> Delta:
        self.check_writable()
        wsblocks.check_removable(self.blocks, name, self.path)
        old = self.engine
        tables = {n: set(old.db[n].tuples) for n in set(old.db) - old.idb}
        blocks = wsblocks.keep_conversions(self.blocks, name, tables)
        new = wsengine.build(blocks, tables, {"intersect": old.intersect, "maintenance": old.maintenance,
                                              "allow_paths": old.allow_paths, "provenance": old.provenance})
        new.workspace, new.guard = self, old.guard        # one writer: the same lock and deliveries
        names = set(old.db) | set(new.db)
        changes = {n: diff(old.db[n].tuples if n in old.db else set(), new.db[n].tuples if n in new.db else set())
                   for n in names}
        delta = {n: c for n, c in changes.items() if c}
        saved = (self.engine, self.blocks)
        try:
            self.engine, self.blocks = new, blocks
            self._durably(lambda: None)               # made at the snapshot's rename, raising only before it
        except BaseException:
            self.engine, self.blocks = saved
            raise
        try:
            old.workspace = None
            old.hand_over(new, delta)                 # the commit is durable: subscribers are told
        except BaseException as exc:                  # made: held until the commit is finished
            old.workspace = None
            new.guard.hold(exc)
        return delta

    def _durably(self, change) -> None:
        """Apply ``change`` to the block list and write a snapshot with the next sequence number;
        on failure before the snapshot's rename the in-memory workspace is as before (the old
        snapshot is still on disk). The rename is the commit point: from it on the change is made
        (the engine's guard says so: :meth:`Guard.made`), and an exception that came after it --
        in the lines after the rename, or resetting the log -- is held until the commit is
        finished, never undoing in memory what the disk holds."""
        saved, before = (list(self.blocks), self.seq, self.when), _identity(self.path / SNAPSHOT)
        resetting = False
        try:
            change()
            self.seq, self.when = self.seq + 1, time.time()
            self._snapshot(then_reset_log=False)      # its rename is the commit point
            self.engine.guard.made()
            resetting = True
            self._reset_log()                         # the old log's records are all in the snapshot
        except BaseException as exc:
            if not resetting and _identity(self.path / SNAPSHOT) == before:
                self.blocks, self.seq, self.when = saved
                raise
            self.snapshot_seq = self.seq              # renamed: made, whatever came after
            self.engine.guard.made()
            if not (resetting and isinstance(exc, (WorkspaceIO, OSError))):   # (a log reset that fails: the
                self.engine.guard.hold(exc)                                  # next commit reopens the log)

    # ------------------------------------------------------------ verify
    def verify(self) -> list[wsverify.Difference]:
        """The differences between what the workspace stores and a recomputation (``datalog
        verify``): the stored program evaluated from scratch over the stored EDB, compared with
        every stored relation; the stored maintainer (if any) restored and brought through the
        log as a writer would (without the lock: nothing is written), its support counts compared
        with those of a maintainer built over the recomputation. Empty: the workspace holds what
        its program derives from its EDB."""
        engine = self.engine
        edb = {n: set(engine.db[n].tuples) for n in set(engine.db) - engine.idb}
        recomputed = wsengine.build(self.blocks, edb, {"intersect": engine.intersect,
                                                       "maintenance": engine.maintenance})
        differences = wsverify.rows(engine, recomputed)
        if not wsmaintainer.file_of(self.path, self.snapshot_seq).exists() or engine.maintenance != "incremental":
            return differences
        probe = Workspace(self.path, [], 0, 0.0, writer=False)
        try:
            with paused_gc():
                maintained = probe._read_state({"intersect": engine.intersect}, maintainer=True).maintainer
        except WorkspaceCorrupt as exc:
            return differences + [wsverify.failed(exc)]
        if maintained is None or probe.seq != self.seq:             # a writer committed since we opened
            raise WorkspaceCorrupt(f"workspace {self.path} changed while it was verified: verify again")
        recomputed.commit()                                         # builds its maintainer
        try:
            return differences + wsverify.support(maintained, recomputed.maintainer)
        except WorkspaceCorrupt as exc:                             # a support count page that lies
            return differences + [wsverify.failed(exc)]

    # ------------------------------------------------------------ status
    def status(self) -> dict:
        sizes = [s for s in map(_lstat, self.path.rglob("*")) if s]      # spark/ snapshots too; no link
        return {"path": str(self.path), "blocks": [(b["name"], b["source"]) for b in self.blocks],
                "sizes": {n: len(self.engine.db[n]) for n in self.engine.relations()},
                "idb": sorted(self.engine.idb), "last_commit": self.seq, "time": self.when,
                "disk_bytes": sum(s.st_size for s in sizes if stat.S_ISREG(s.st_mode)),
                "writer": lock_holder(self.path), "discarded": self.discarded,
                "maintainer": wsmaintainer.file_of(self.path, self.snapshot_seq).exists()}


# ---------------------------------------------------------------- helpers

def _tell(engine, step: str) -> None:
    """A step of a long init or compaction, to the engine's progress (if it has one)."""
    if engine.progress is not None:
        engine.progress(step)


def _init_cut_short(path: Path) -> bool:
    """A log without commits and no snapshot: an ``init`` killed between writing its log and its
    snapshot (the snapshot, written last, makes a directory a workspace). Soak finding: opening
    such a directory said ``workspace_corrupt`` while init (rightly) took it as no workspace."""
    if os.path.lexists(path / SNAPSHOT) or not os.path.lexists(path / LOG):
        return False
    try:
        return not wslog.read(path).records
    except WorkspaceCorrupt:
        return False


def _refuse_existing(path: Path) -> None:
    """``init`` never overwrites a workspace. A log without commits and without a snapshot is
    an ``init`` cut short, and is overwritten."""
    if os.path.lexists(path / SNAPSHOT):
        raise WorkspaceExists(f"{path} already holds a workspace ({path / SNAPSHOT})")
    if os.path.lexists(path / LOG):
        if not _init_cut_short(path):
            raise WorkspaceExists(f"{path} holds a workspace log ({path / LOG}) but no snapshot: "
                                  f"it is damaged; move it away before datalog init")


def _lstat(path: Path):
    """The entry's own status (a link's, not its target's); None if it is gone (a writer's
    compaction replaced it meanwhile)."""
    try:
        return path.lstat()
    except OSError:
        return None


def _check_listable(path: Path) -> None:
    """``workspace_io`` if ``path`` is a directory that cannot be read (no permission)."""
    try:
        os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        raise WorkspaceIO(f"cannot read the workspace directory {path}: {exc.strerror or exc}") from None


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (device, inode; None: none): a rename over it changes it."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _drop_temporaries(path: Path) -> None:
    """The writer's temporary files left by a crash (``.NAME.<random>.tmp``: never read) are
    deleted after the next snapshot; only the writer, holding the lock, writes here."""
    for entry in path.iterdir():
        if atomic.is_temporary(entry.name):
            try:
                entry.unlink()
            except OSError:
                pass                                  # never read; next time


__all__ = ["Workspace", "WorkspaceEngine", "lock_holder", "program_of", "source_snapshot"]
