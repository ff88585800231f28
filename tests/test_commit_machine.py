"""A hypothesis state machine over the public API of an engine and of a workspace writer side by side:
commits, transactions, insert/retract after run, run, subscribers whose callbacks record, raise or
commit, threads committing at once, exceptions and real SIGINTs injected at a line of a commit,
close and reopen. After every step each one's relations are what a from-scratch engine over its
EDB gives, and the recording subscribers' weights add up to the relation; the workspace, reopened
for reading, holds the writer's state; at the end it verifies. ``DATALOG_TEST_LONG=1`` (make test-all) runs more and
longer examples (``make test-all``)."""

from __future__ import annotations

import os
import threading
import warnings
from collections import Counter

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from datalog import Engine, SubscriptionWarning, Workspace
from tests.interrupts import attempt
from tests.workspace_oracle import EDB, PROGRAM, from_scratch, broken, state

from tiers import LONG, examples  # noqa: E402  (make test-all: every line, more examples)
NODE = st.integers(0, 5)
ROWS = st.lists(st.tuples(NODE, NODE), max_size=3)
EXCEPTIONS = st.sampled_from([KeyboardInterrupt, "SIGINT", MemoryError, SystemExit])
_SCRATCH: dict = {}


def scratch(edb: dict[str, set]) -> dict[str, set]:
    key = tuple(sorted((n, tuple(sorted(r))) for n, r in edb.items()))
    if key not in _SCRATCH:
        _SCRATCH[key] = from_scratch(PROGRAM, edb)
    return _SCRATCH[key]


class Target:
    """An engine (or a workspace's), its model EDB, its subscriptions, and the rows its
    committing callbacks committed."""

    def __init__(self, engine, workspace=None):
        self.engine, self.workspace = engine, workspace
        self.edb = {name: set(rows) for name, rows in EDB.items()}
        self.watch()

    def watch(self):
        self.recorder, self.total = self.engine.changes("path"), Counter()
        self.committed: list[tuple] = []              # v rows committed by callbacks

    def weights(self) -> dict:
        for change in self.recorder.poll():
            for row in change.rows():
                self.total[row[:-1]] += row[-1]
        return {row: w for row, w in self.total.items() if w}

    def apply_model(self, edb, inserts, retracts) -> dict:
        after = {n: set(r) for n, r in edb.items()}
        for name, rows in retracts.items():
            after[name] -= set(rows)
        for name, rows in inserts.items():
            after[name] |= set(rows)
        return after


class CommitMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        import tempfile
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "ws")
        engine = Engine.from_source(PROGRAM)
        engine.run()
        self.plain = Target(engine)
        ws = Workspace.create(self.path, PROGRAM)
        self.ws = Target(ws.engine, ws)
        self.targets = (self.plain, self.ws)

    # ------------------------------------------------------------ helpers
    def _change(self, target, call, inserts, retracts, exc=None, at=None):
        """``call()`` on ``target``: made (no injection: always), or with ``exc`` at ``at`` made or
        undone or the engine broken (then rebuilt / reopened from before or after)."""
        before = target.edb
        after = target.apply_model(before, inserts, retracts)
        v_before = len(target.committed)
        if exc is None:
            try:
                call()
            except (KeyboardInterrupt, SystemExit):       # a subscriber's: the commit is made
                pass
        else:
            attempt(call, at, exc)
        after["v"] |= {row for row in target.committed[v_before:]}
        before = {**before, "v": before["v"] | {row for row in target.committed[v_before:]}}
        if exc is not None and broken(target.engine):
            assert exc != "SIGINT", f"a Ctrl-C at event {at} broke the engine"
            self._rebuild(target, before, after)
            return
        rows = state(target.engine)
        if exc is None:
            assert rows == scratch(after)
            target.edb = after
        else:
            assert rows in (scratch(before), scratch(after)), f"{exc} at {at}: neither before nor after"
            target.edb = after if rows == scratch(after) else before

    def _rebuild(self, target, before, after):
        if target.workspace is None:
            engine = Engine.from_source(PROGRAM)
            engine.run()
            target.engine = engine
            target.edb = {name: set(rows) for name, rows in EDB.items()}
            target.watch()
            return
        target.workspace.close()
        target.workspace = Workspace.open(self.path)
        target.engine = target.workspace.engine
        rows = state(target.engine)
        assert rows in (scratch(before), scratch(after))
        target.edb = after if rows == scratch(after) else before
        target.watch()

    # ------------------------------------------------------------ rules
    @rule(inserts=ROWS, retracts=ROWS, blocked=st.lists(st.integers(1, 5), max_size=2))
    def commit(self, inserts, retracts, blocked):
        ins, ret = {"e": inserts}, {"e": [r for r in retracts if r not in inserts], "v": [(b,) for b in blocked]}
        for target in self.targets:
            self._change(target, lambda: target.engine.commit(inserts=ins, retracts=ret), ins, ret)

    @rule(inserts=ROWS, retracts=ROWS)
    def transaction(self, inserts, retracts):
        retracts = [r for r in retracts if r not in inserts]
        for target in self.targets:
            def call():
                with target.engine.transaction() as tx:
                    tx.retract("e", retracts)
                    tx.insert("e", inserts)
            self._change(target, call, {"e": inserts}, {"e": retracts})

    @rule(rows=ROWS, insert=st.booleans())
    def insert_or_retract(self, rows, insert):
        for target in self.targets:
            call = (lambda: target.engine.insert("e", rows)) if insert else (lambda: target.engine.retract("e", rows))
            self._change(target, call, {"e": rows} if insert else {}, {} if insert else {"e": rows})

    @rule()
    def run_again(self):
        for target in self.targets:
            target.engine.run()

    @rule(kind=st.sampled_from(["raise", "interrupt", "commit"]))
    def subscribe(self, kind):
        for target in self.targets:
            def callback(change, target=target, engine=target.engine):
                if kind == "raise":
                    raise ValueError("a subscriber's mistake")
                if kind == "interrupt":
                    raise KeyboardInterrupt
                row = (100 + len(target.committed),)
                try:
                    engine.commit(inserts={"v": [row]})    # a commit made inside a callback
                finally:
                    if row in engine.db["v"].tuples:       # made (an injection may have stopped it)
                        target.committed.append(row)
            target.engine.subscribe("path", callback, snapshot=False)

    @rule(seed=st.integers(0, 3))
    def threads(self, seed):
        for target in self.targets:
            batches = [[({"e": [(10 + k, (seed + i) % 4)]}, {"e": [(10 + k, (seed + i + 1) % 4)]})
                        for i in range(4)] for k in range(3)]
            errors = []

            def work(work_batches):
                for inserts, retracts in work_batches:
                    try:
                        target.engine.commit(inserts=inserts, retracts=retracts)
                    except (KeyboardInterrupt, SystemExit):
                        pass                               # a subscriber's: the commit is made
                    except BaseException as exc:
                        errors.append(exc)
            v_before = len(target.committed)
            threads = [threading.Thread(target=work, args=(b,)) for b in batches]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
            edb = target.edb
            for work_batches in batches:                   # each thread's rows are its own: any order
                for inserts, retracts in work_batches:
                    edb = target.apply_model(edb, inserts, retracts)
            edb["v"] |= set(target.committed[v_before:])
            assert state(target.engine) == scratch(edb)
            target.edb = edb

    @rule(inserts=ROWS, at=st.integers(1, 700), exc=EXCEPTIONS)
    def interrupted_commit(self, inserts, at, exc):
        for target in self.targets:
            self._change(target, lambda: target.engine.commit(inserts={"e": inserts}), {"e": inserts}, {},
                         exc, at)

    @precondition(lambda self: self.ws.workspace is not None)
    @rule()
    def reopen(self):
        target = self.ws
        target.workspace.close()
        target.workspace = Workspace.open(self.path)
        target.engine = target.workspace.engine
        target.watch()

    # ------------------------------------------------------------ invariants
    @invariant()
    def equals_scratch(self):
        for target in self.targets:
            rows = state(target.engine)
            assert rows == scratch(target.edb)
            assert target.weights() == {row: 1 for row in rows["path"]}

    @invariant()
    def disk_holds_the_writer(self):
        with Workspace.open(self.path, readonly=True) as reader:
            assert state(reader.engine) == state(self.ws.engine) and reader.seq == self.ws.workspace.seq

    def teardown(self):
        try:
            assert self.ws.workspace.verify() == []
        finally:
            self.ws.workspace.close()


CommitMachine.TestCase.settings = settings(
    max_examples=examples(100) if LONG else 10, stateful_step_count=20 if LONG else 10, deadline=None,
    suppress_health_check=list(HealthCheck))
TestCommitMachine = CommitMachine.TestCase


def setup_module(module):
    warnings.simplefilter("ignore", SubscriptionWarning)
