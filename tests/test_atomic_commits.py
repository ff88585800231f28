"""Commits through the Python API are serialised and whole: threads, interrupts and exceptions at
any line of a commit, subscribers that raise or commit, inserts after evaluation, an interrupted
run. Every state is compared with a from-scratch engine over the same EDB and, for a workspace,
with the workspace reopened and verified."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from datalog import DatalogError, Engine, Workspace
from datalog.workspace import log as wslog
from datalog.workspace import workspace as wsmodule
from tests.interrupts import Where, attempt, project
from tests.workspace_oracle import EDB, PROGRAM, from_scratch, broken, state

EXCEPTIONS = (KeyboardInterrupt, "SIGINT", MemoryError, SystemExit)
from tiers import LONG  # noqa: E402  (make test-all: every line, more examples)
STRIDE = 1 if LONG else 11


def edb_of(rows: dict[str, set]) -> dict[str, set]:
    return {name: set(rows[name]) for name in EDB}


def weights(subscription, total: Counter) -> dict[tuple, int]:
    """The weights delivered so far, added to ``total`` (zero sums dropped)."""
    for change in subscription.poll():
        for row in change.rows():
            total[row[:-1]] += row[-1]
    return {row: w for row, w in total.items() if w}


# ---------------------------------------------------------------- threads
def _thread_batches(seed: int, count: int) -> list[tuple[dict, dict]]:
    rng = random.Random(seed)
    return [({"e": [(rng.randrange(8), rng.randrange(8)) for _ in range(3)]},
             {"e": [(rng.randrange(8), rng.randrange(8))]}) for _ in range(count)]


def _run_threads(engine, batches_of: list[list]) -> list[BaseException]:
    errors: list[BaseException] = []

    def work(batches):
        try:
            for inserts, retracts in batches:
                engine.commit(inserts=inserts, retracts=retracts)
        except BaseException as exc:          # collected: the test fails on any
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(b,)) for b in batches_of]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def state_matches_scratch(rows: dict[str, set]) -> bool:
    return rows == from_scratch(PROGRAM, edb_of(rows))


@pytest.mark.parametrize("workspace", [False, True])
def test_threads_committing_at_once_are_serialised(tmp_path, workspace):
    batches_of = [_thread_batches(seed, 25) for seed in range(4)]
    ws = Workspace.create(tmp_path / "ws", PROGRAM) if workspace else None
    engine = ws.engine if ws else Engine.from_source(PROGRAM)
    engine.run()
    start = engine.commit_number
    subscription = engine.changes("path")
    total: Counter = Counter()
    assert _run_threads(engine, batches_of) == []
    rows = state(engine)
    assert engine.commit_number == start + 100
    assert state_matches_scratch(rows)
    assert weights(subscription, total) == {row: 1 for row in rows["path"]}
    if ws:
        assert ws.verify() == []
        ws.close()
        with Workspace.open(tmp_path / "ws") as again:           # the writer reopens
            assert state(again.engine) == rows and again.seq == start + 100
            assert again.verify() == []


# ---------------------------------------------------------------- any line of a commit
def _toggle(edb: dict[str, set]) -> tuple[dict, dict, dict]:
    """A commit that flips e(4, 1) and v(6): (inserts, retracts, the EDB after)."""
    inserts, retracts, after = {}, {}, {n: set(r) for n, r in edb.items()}
    for name, row in (("e", (4, 1)), ("v", (6,))):
        if row in edb[name]:
            retracts[name] = [row]
            after[name].discard(row)
        else:
            inserts[name] = [row]
            after[name].add(row)
    return inserts, retracts, after


def _durable_seq(path) -> int:
    """The last commit on disk: the log's last record, else the snapshot's."""
    log, snap = wslog.read_committed(path)
    return log.records[-1]["seq"] if log.records else snap.header["seq"]


class _Writer:
    """A workspace writer stopped at line after line of its commits, each outcome checked."""

    def __init__(self, path):
        self.path, self.ws = path, Workspace.create(path, PROGRAM)
        self.scratch: dict = {}
        self.outcomes: Counter = Counter()
        self._watch()

    def _watch(self):
        self.subscription, self.total = self.ws.changes("path"), Counter()
        self.edb = edb_of(state(self.ws.engine))

    def expected(self, edb):
        key = tuple(sorted((n, tuple(sorted(r))) for n, r in edb.items()))
        if key not in self.scratch:
            self.scratch[key] = from_scratch(PROGRAM, edb)
        return self.scratch[key]

    def stop_at(self, at: int, exc, reopen: bool) -> bool:
        """One commit with ``exc`` at event ``at``; whether it fired."""
        ws, edb = self.ws, self.edb
        inserts, retracts, after = _toggle(edb)
        seq = ws.seq
        fired, _ = attempt(lambda: ws.engine.commit(inserts=inserts, retracts=retracts), at, exc)
        if broken(ws.engine):
            assert exc != "SIGINT", f"a Ctrl-C at event {at} broke the engine"
            self.outcomes["broken"] += 1
            ws.close()
            self.ws = Workspace.open(self.path)
            assert state(self.ws.engine) in (self.expected(edb), self.expected(after)), at
            if LONG or self.outcomes["broken"] % 5 == 1:
                assert self.ws.verify() == [], at
            self._watch()
            return fired
        rows = state(ws.engine)
        made = rows == self.expected(after)
        assert made or rows == self.expected(edb), f"{exc} at event {at}: neither before nor after"
        assert ws.seq == seq + made == _durable_seq(self.path), f"{exc} at event {at}"
        self.outcomes["made" if made else "undone"] += 1
        if reopen:
            with Workspace.open(self.path, readonly=True) as reader:
                assert state(reader.engine) == rows and reader.seq == ws.seq, f"{exc} at event {at}"
        assert weights(self.subscription, self.total) == {row: 1 for row in rows["path"]}, f"{exc} at {at}"
        self.edb = edb_of(rows)
        return fired


def test_a_workspace_commit_stopped_at_any_line_is_before_or_after(tmp_path, monkeypatch):
    """KeyboardInterrupt, SystemExit, MemoryError raised at each line of a commit's own steps
    (maintenance's entry, log append, sequence update, delivery, then compaction), and a real
    SIGINT sent there: the writer's state is the commit's before or after and is what the disk
    holds; the subscriber was told exactly when the commit was made; a Ctrl-C never breaks the
    engine, an exception while finishing or undoing may, and then the workspace reopens to
    before or after."""
    writer = _Writer(tmp_path / "ws")
    at, unfired = 0, 0
    while unfired < 2:                                      # the lines of commits without compaction
        at += STRIDE
        fired = writer.stop_at(at, EXCEPTIONS[at // STRIDE % len(EXCEPTIONS)], reopen=at % 20 < STRIDE)
        unfired = 0 if fired else unfired + 1
    monkeypatch.setattr(wsmodule, "COMPACT_COMMITS", 1)      # then every commit compacts: its lines
    plain, unfired = at - 2 * STRIDE, 0
    while unfired < 2:
        at += 2 * STRIDE
        fired = writer.stop_at(at, EXCEPTIONS[at // STRIDE % len(EXCEPTIONS)], reopen=True)
        unfired = 0 if fired else unfired + 1
    assert at - plain > 4 * STRIDE, "no compaction lines"
    outcomes, ws = writer.outcomes, writer.ws
    assert outcomes["made"] > 10 and outcomes["undone"] > 10, outcomes
    assert ws.verify() == []
    edb = edb_of(state(ws.engine))
    ws.engine.commit(inserts={"e": [(5, 1)]})                      # the writer goes on
    assert state(ws.engine) == from_scratch(PROGRAM, {**edb, "e": edb["e"] | {(5, 1)}})
    ws.close()
    with Workspace.open(tmp_path / "ws") as again:
        assert again.verify() == [] and (5, 1) in again.engine.rows("e")


def test_an_engine_commit_stopped_inside_maintenance_is_before_or_after():
    """The same for an engine without a workspace, at lines all through every module a commit
    runs (the joins and the maintainer's inner loops included; every 131st, every 7th in the long
    run): a Ctrl-C never breaks it, a MemoryError may (it may strike between a change and its
    undo record)."""
    engine = Engine.from_source(PROGRAM)
    engine.run()
    edb, at, unfired, outcomes = edb_of(state(engine)), 0, 0, Counter()
    stride = 7 if LONG else 131
    while unfired < 2:
        at += stride
        inserts, retracts, after = _toggle(edb)
        exc = ("SIGINT", MemoryError)[at // stride % 2]
        fired, _ = attempt(lambda: engine.commit(inserts=inserts, retracts=retracts), at, exc, select=project)
        unfired = 0 if fired else unfired + 1
        if broken(engine):
            assert exc == MemoryError, f"a Ctrl-C at event {at} broke the engine"
            outcomes["broken"] += 1
            engine = Engine.from_source(PROGRAM)              # built again: the EDB is the program's
            engine.run()
            edb = edb_of(state(engine))
            continue
        rows, made = state(engine), from_scratch(PROGRAM, after)
        assert rows == made or rows == from_scratch(PROGRAM, edb), at
        outcomes[exc, rows == made] += 1
        edb = edb_of(rows)
    assert outcomes["SIGINT", False] > 3 and outcomes["broken"] + outcomes[MemoryError, False] > 3, outcomes


def _journal(filename: str) -> bool:
    return filename.endswith("maintenance/journal.py")


def test_a_memory_error_while_undoing_breaks_the_engine():
    """A commit fails (division by zero) and, undoing it, memory runs out: the relations are half
    undone, so the engine refuses every later call with engine_broken."""
    program = PROGRAM + ".decl q(x: number, d: number)\nq(x, d) :- e(x, y), d = 10 / y.\n"
    rows = [(i, i + 1) for i in range(10, 40)] + [(99, 0)]

    def engine_of():
        engine = Engine.from_source(program)
        engine.run()
        return engine
    probe = engine_of()
    counted = Where(10 ** 9, select=_journal)               # the journal's lines; its rollback's come last
    with counted, pytest.raises(DatalogError, match="division_by_zero"):
        probe.commit(inserts={"e": rows})
    assert state(probe) == state(engine_of())               # undone
    for back in (2, 5, 9):
        engine = engine_of()
        fired, caught = attempt(lambda: engine.commit(inserts={"e": rows}), counted.count - back, MemoryError,
                                select=_journal)
        assert fired and isinstance(caught, MemoryError)
        assert broken(engine), back
        for call in (lambda: engine.commit(inserts={"e": [(1, 5)]}), lambda: engine.insert("e", [(1, 5)]),
                     lambda: engine.query("path(1, X)"), lambda: engine.relation("path"), engine.run):
            with pytest.raises(DatalogError, match="engine_broken"):
                call()


# ---------------------------------------------------------------- subscribers
def test_a_subscriber_raising_keyboard_interrupt_does_not_keep_others_from_the_commit():
    engine = Engine.from_source(PROGRAM, provenance=True)
    engine.run()
    assert engine.why("path(1, 3)").height == 2
    first, second = [], []

    def stop(change):
        first.append(change.commit)
        raise KeyboardInterrupt

    engine.subscribe("path", stop, snapshot=False)
    engine.subscribe("path", lambda change: second.append(change.commit), snapshot=False)
    for inserts in ([(1, 3), (3, 5)], [(5, 6)]):
        with pytest.raises(KeyboardInterrupt):
            engine.commit(inserts={"e": inserts})
    assert first == second == [1, 2] and engine.commit_number == 2
    assert engine.why("path(1, 3)").height == 1                     # the kept heights were repaired
    assert state(engine) == from_scratch(PROGRAM, {**EDB, "e": EDB["e"] | {(1, 3), (3, 5), (5, 6)}})


def test_a_commit_made_in_a_callback_reaches_the_others_after_the_one_that_made_it():
    engine = Engine.from_source(PROGRAM)
    engine.run()
    seen: list[tuple[str, int]] = []

    def committing(change):
        seen.append(("a", change.commit))
        if change.commit == 1:
            engine.commit(inserts={"e": [(5, 1)]})
            engine.insert("v", [(9,)])                  # an insert after run() is a commit too

    engine.subscribe("path", committing, snapshot=False)
    engine.subscribe("path", lambda change: seen.append(("b", change.commit)), snapshot=False)
    engine.subscribe("v", lambda change: seen.append(("v", change.commit)), snapshot=False)
    engine.commit(inserts={"e": [(3, 4)]})
    assert seen == [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("v", 3)]
    assert state(engine) == from_scratch(PROGRAM, {"e": EDB["e"] | {(3, 4), (5, 1)}, "v": EDB["v"] | {(9,)}})


# ---------------------------------------------------------------- no stale answers
def test_insert_and_retract_after_run_are_maintained():
    engine = Engine.from_source(PROGRAM)
    engine.run()
    engine.insert("e", [(3, 5), (5, 5)])
    assert state(engine) == from_scratch(PROGRAM, {**EDB, "e": EDB["e"] | {(3, 5), (5, 5)}})
    engine.retract("e", [(1, 2)])
    engine.retract("v", [(4,)])
    expected_edb = {"e": (EDB["e"] | {(3, 5), (5, 5)}) - {(1, 2)}, "v": EDB["v"] - {(4,)}}
    assert state(engine) == from_scratch(PROGRAM, expected_edb)      # negation and aggregates too
    assert engine.commit_number == 3
    engine.run()                                                     # nothing to repair
    engine.commit(inserts={"e": [(2, 1)]})
    expected_edb["e"].add((2, 1))
    assert state(engine) == from_scratch(PROGRAM, expected_edb)


def test_insert_into_a_derived_relation_is_not_edb():
    engine = Engine.from_source(PROGRAM)
    for call in (lambda: engine.insert("path", [(7, 7)]), lambda: engine.retract("iso", [(1,)])):
        with pytest.raises(DatalogError) as refused:
            call()
        assert refused.value.code == "not_edb" and "derived by rules" in refused.value.message
    engine.run()
    assert (7, 7) not in engine.rows("path")


def test_insert_on_a_workspace_engine_is_a_durable_commit(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.engine.insert("e", [(3, 5)])
        ws.engine.retract("v", [(5,)])
        rows, seq = state(ws.engine), ws.seq
        with Workspace.open(path, readonly=True) as reader:
            assert state(reader.engine) == rows and reader.seq == seq
            with pytest.raises(DatalogError) as refused:
                reader.engine.insert("e", [(6, 6)])
            assert refused.value.code == "workspace_readonly" and "reading" in refused.value.message
            assert state(reader.engine) == rows
    with pytest.raises(DatalogError) as refused:
        ws.engine.insert("e", [(6, 6)])
    assert refused.value.code == "workspace_readonly" and "closed" in refused.value.message
    with Workspace.open(path) as again:
        assert state(again.engine) == rows == from_scratch(PROGRAM, edb_of(rows))
        assert (3, 5) in rows["e"] and (5,) not in rows["v"] and (6, 6) not in rows["e"]


def _evaluation(filename: str) -> bool:
    return project(filename) and ("datalog/evaluation/" in filename or "lftj/" in filename)


def test_an_answer_before_any_run_runs_the_program():
    """Defect: rows() and query() of an engine never run answered the derived relations empty."""
    expected = from_scratch(PROGRAM, EDB)
    engine = Engine.from_source(PROGRAM)
    assert engine.query("path(1, X)") == sorted(r for r in expected["path"] if r[0] == 1)
    assert engine.evaluated
    again = Engine.from_source(PROGRAM)
    assert again.stored_relation("path").sorted_rows() == [] and not again.evaluated    # held, unevaluated
    assert state(again) == expected


def test_an_interrupted_run_is_run_again_by_the_next_answer():
    """A run stopped at any line of its evaluation (every 97th; every 3rd in the long run) leaves
    nothing half evaluated: the answers afterwards are the whole program's."""
    expected = from_scratch(PROGRAM, EDB)
    fired, at = True, 0
    while fired:
        at += 3 if LONG else 97
        engine = Engine.from_source(PROGRAM)
        fired, caught = attempt(engine.run, at, KeyboardInterrupt, select=_evaluation)
        if not fired:
            break
        assert isinstance(caught, KeyboardInterrupt) and not engine.evaluated
        assert engine.query("path(1, X)") == sorted(r for r in expected["path"] if r[0] == 1), at
        assert state(engine) == expected, at
    assert at > 50
