"""Workspaces (issue 5): reopening against from-scratch evaluation, the CLI as subprocesses, the
writer lock held by a real process, corruption of every kind of file, addblock/removeblock.
The crash test (SIGKILL during commits) is in test_workspace_crash.py."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.language.errors import DatalogError
from datalog.workspace.workspace import LOG, SNAPSHOT, Workspace
from tests.strategies import DOMAIN, programs
from tests.cli_process import run_datalog
from tests.workspace_oracle import (AGGREGATES, BLOCK, EDB, PLAIN, PROGRAM, THETA, commit_of, contents, edb_after,
                                    from_scratch)
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

ROOT = Path(__file__).resolve().parent.parent


def _datalog(*args, cwd=None):
    return run_datalog(*args, cwd=cwd, timeout=60)


def _committed(path, n: int, compact_min: int = 1 << 20) -> None:
    with Workspace.create(path, PROGRAM) as ws:
        ws.compact_min = compact_min
        for k in range(1, n + 1):
            inserts, retracts = commit_of(k)
            ws.engine.commit(inserts, retracts)


# ---------------------------------------------------------------- reopening

@pytest.mark.parametrize("compact_min", [1 << 20, 300])       # log only / frequent compactions
def test_reopened_workspace_equals_from_scratch(tmp_path, compact_min):
    path = tmp_path / "ws"
    ws = Workspace.create(path, PROGRAM)
    ws.compact_min = compact_min
    for k in range(1, 41):
        ws.engine.commit(*commit_of(k))
        if k % 8 == 0:                                          # stop and resume
            ws.close()
            ws = Workspace.open(path, compact_min=compact_min)
            assert ws.seq == k
            assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(k))
    ws.close()
    with Workspace.open(path, readonly=True) as reader:
        assert contents(reader.engine) == from_scratch(PROGRAM, edb_after(40))


def test_log_of_compact_commits_commits_is_compacted(tmp_path, monkeypatch):
    """However small its records, a log holding COMPACT_COMMITS commits is folded into a new
    snapshot (with the maintainer's file) by the commit that reaches that count: an open replays
    every logged commit."""
    from datalog.workspace import workspace, format as wsfile
    monkeypatch.setattr(workspace, "COMPACT_COMMITS", 3)
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.compact_min = 1 << 30                                # (the byte trigger never fires)
        for k in range(1, 3):
            ws.engine.commit(*commit_of(k))
        assert wsfile.read_file(path / SNAPSHOT, "snapshot").header["seq"] == 0
        ws.engine.commit(*commit_of(3))
        assert wsfile.read_file(path / SNAPSHOT, "snapshot").header["seq"] == 3
        assert not wsfile.read_file(path / LOG, "log", torn_tail=True).records
        assert sorted(p.name for p in path.glob("maintainer.*")) == ["maintainer.3"]
    with Workspace.open(path, compact_min=1 << 30) as ws:
        assert ws.seq == 3 and contents(ws.engine) == from_scratch(PROGRAM, edb_after(3))
        ws.engine.commit(*commit_of(4))
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(4))


def _work(stats: dict) -> dict:
    return {rule: (v["operations"], v["regions"], v["skipped"], v["delta_rules"], v["derived"])
            for rule, v in stats.items()}


def _blocking(monkeypatch) -> None:
    """Every sensitivity group, however small, a StabbingGroup whose every query builds its
    blocks (as groups of thousands of entries are), whether read from disk or recorded."""
    from maintenance import sensitivity, stabbing
    monkeypatch.setattr(sensitivity, "SMALL", 0)
    monkeypatch.setattr(stabbing, "PENDING", 0)


@pytest.mark.parametrize("mode", ["plain", "chunked", "blocks"])
@pytest.mark.parametrize("program", [PLAIN, PROGRAM, AGGREGATES, THETA])
def test_reopened_commit_has_the_same_delta_and_iterator_operations(tmp_path, program, mode, monkeypatch):
    """A workspace closed and reopened before every commit against one that never stopped: the
    same delta and the same work per rule (engine.stats()) for each commit, and the same
    contents as from scratch. Opening restores the stored maintainer -- LFTJ traces, aggregate
    views, whole-rule fallbacks, T-reducts -- without evaluating anything (``construct`` and
    ``run`` are never called) and maintains the log's commits through it; with compact_min=600
    the reopened workspace alternates between a fresh snapshot and a log to replay. ``chunked``:
    every edited level of two keys or more becomes ChunkedKeys and every edit goes through them
    (surgery.CHUNKED and FEW lowered), as a level of millions of keys would. ``blocks``: see
    :func:`_blocking`."""
    if mode == "blocks":
        _blocking(monkeypatch)
    if mode == "chunked":
        import maintenance.surgery as surgery
        monkeypatch.setattr(surgery, "CHUNKED", 2)
        monkeypatch.setattr(surgery, "FEW", 0)
    steady = Workspace.create(tmp_path / "steady", program)
    reopened = Workspace.create(tmp_path / "reopened", program)
    assert (tmp_path / "reopened" / "maintainer.0").exists()
    try:
        for k in range(1, 41):
            expected = steady.engine.commit(*commit_of(k))
            reopened.close()
            reopened = _open_without_evaluating(tmp_path / "reopened")
            assert reopened.engine.maintainer is not None
            assert reopened.engine.commit(*commit_of(k)) == expected
            assert _work(reopened.engine.stats()) == _work(steady.engine.stats())
            assert contents(reopened.engine) == from_scratch(program, edb_after(k))
            assert _index_sizes(reopened.engine) == _index_sizes(steady.engine)
    finally:
        steady.close()
        reopened.close()


@pytest.mark.parametrize("program", [PLAIN, PROGRAM])
def test_version_2_maintainer_file_is_restored(tmp_path, program):
    """A maintainer file of format version 2 (every rule's trace in one record, read whole) is
    restored as before, and the commits after it do the same work as in a process that never
    stopped; the next compaction writes the current version."""
    from datalog.workspace import format as wsfile
    from maintenance import persistence as wsstate
    steady = Workspace.create(tmp_path / "steady", program)
    old = Workspace.create(tmp_path / "old", program)
    try:
        for k in range(1, 4):
            steady.engine.commit(*commit_of(k))
            old.engine.commit(*commit_of(k))
        old.compact()
        name = tmp_path / "old" / "maintainer.3"
        records = wsstate.capture(old.engine.maintainer, paged=False)
        name.write_bytes(b"".join(wsfile.encode(r) for r in [{**wsfile.header("maintainer", {"seq": 3}),
                                                               "version": 2}, *records]))
        old.close()
        old = _open_without_evaluating(tmp_path / "old")
        assert wsfile.read_file(name, "maintainer").header["version"] == 2
        for k in range(4, 12):
            expected = steady.engine.commit(*commit_of(k))
            assert old.engine.commit(*commit_of(k)) == expected
            assert _work(old.engine.stats()) == _work(steady.engine.stats())
        old.compact()
        header = wsfile.read_file(tmp_path / "old" / "maintainer.11", "maintainer").header
        assert header["version"] == wsfile.version_of("maintainer") and header["compression"] == "zlib"
        assert contents(old.engine) == from_scratch(program, edb_after(11))
    finally:
        steady.close()
        old.close()


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_paged_support_counts_act_as_a_counter(tmp_path_factory, data):
    """A restored relation's support counts read page by page (wsstate._StoredCounts, from a real
    maintainer file with small pages) against a Counter of the same counts, under random lookups,
    sets and deletions through the journal (as maintenance makes them), rollback, and whole reads."""
    from maintenance.journal import Journal
    from maintenance.persistence import capturing
    program = ".decl e(x: number, y: number)\n.decl t(x: number, z: number)\nt(x, z) :- e(x, y), e(y, z).\n"
    rows = data.draw(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=30))
    path = tmp_path_factory.mktemp("ws") / "ws"
    with Workspace.create(path, program) as ws:
        ws.engine.commit({"e": sorted(rows)}, {})
        old, capturing.COUNTS = capturing.COUNTS, 4
        try:
            ws.compact()
        finally:
            capturing.COUNTS = old
        model = Counter(ws.engine.maintainer.support["t"])
    with Workspace.open(path) as ws:
        counts, original = ws.engine.maintainer.support["t"], Counter(model)
        assert type(counts).__name__ == "_StoredCounts"
        keys = st.tuples(st.integers(0, 7), st.integers(0, 7))
        journal = Journal()
        rollback = data.draw(st.booleans())         # then only journaled changes (set, pop)
        if model and not rollback:
            first = min(model)                     # a stored row set before its page was read
            counts[first] = model[first] = 50
        ops = st.sampled_from(["get", "in", "item", "set", "pop"] + ([] if rollback else ["assign", "delete"]))
        for op, key, value in data.draw(st.lists(st.tuples(ops, keys, st.integers(5, 20)), max_size=25)):
            if op == "assign":                       # as Counter.update would, without a lookup first
                counts[key] = model[key] = value
            elif op == "delete":
                if key in model:
                    del model[key]
                    del counts[key]
            elif op == "get":
                assert counts.get(key, 0) == model.get(key, 0)
            elif op == "in":
                assert (key in counts) == (key in model)
            elif op == "item":
                assert counts[key] == model[key]
            else:
                journal.set_item(counts, key, value if op == "set" else None)
                if op == "set":
                    model[key] = value
                else:
                    model.pop(key, None)
        if rollback:
            journal.rollback()
            model = original
        assert dict(counts) == dict(model) and len(counts) == len(model) and counts == model


def _open_without_evaluating(path) -> Workspace:
    """Workspace.open with every way of evaluating a rule made to fail while the stored maintainer
    is restored (replaying the log afterwards maintains, and may evaluate regions)."""
    from maintenance import persistence as wsstate
    from maintenance import incremental, rule, theta_rule

    def refuse(*args, **kwargs):
        raise AssertionError("evaluation while restoring a maintainer")
    patched = [(rule.RuleMaintainer, "evaluate"), (theta_rule.ThetaRule, "load"),
               (incremental.WholeRule, "evaluate"), (incremental.IncrementalMaintainer, "_build")]
    real_restore, restored = wsstate.restore, []

    def restore_refusing(*args):
        saved = [(owner, name, getattr(owner, name)) for owner, name in patched]
        try:
            for owner, name in patched:
                setattr(owner, name, refuse)
            maintainer = real_restore(*args)
            restored.append(True)
            return maintainer
        finally:
            for owner, name, value in saved:
                setattr(owner, name, value)
    wsstate.restore = restore_refusing
    try:
        ws = Workspace.open(path, compact_min=600)
    finally:
        wsstate.restore = real_restore
    assert restored, "the maintainer was not restored"
    return ws


@st.composite
def _batches(draw, generated):
    names = sorted(generated.edb)
    return [[(draw(st.sampled_from("+-")), name, draw(st.tuples(*[DOMAIN] * generated.arity[name])))
             for name in draw(st.lists(st.sampled_from(names), max_size=5))]
            for _ in range(draw(st.integers(1, 4)))]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_reopening_random_programs_matches_a_process_that_never_stopped(tmp_path_factory, data):
    generated = data.draw(programs())
    text = generated.text + "\n" + "".join(f"{name}({', '.join(map(str, row))}).\n"
                                           for name, rows in generated.edb.items() for row in sorted(rows))
    root = tmp_path_factory.mktemp("ws")
    try:
        steady = Workspace.create(root / "steady", text)
    except DatalogError:
        return                                        # e.g. a division by zero when evaluating
    reopened = Workspace.create(root / "reopened", text)
    restored = False
    compact_min = data.draw(st.sampled_from([0, 400, 1 << 20]))
    restore_blocked = _blocked(data.draw(st.sampled_from([None, 0, 2])))
    try:
        for batch in data.draw(_batches(generated)):
            inserts, retracts = {}, {}
            for sign, name, row in batch:
                (inserts if sign == "+" else retracts).setdefault(name, []).append(row)
            if data.draw(st.booleans()):      # else the same process goes on (after a failed commit too)
                reopened.close()
                reopened = Workspace.open(root / "reopened", compact_min=compact_min)
                restored = reopened.engine.maintainer is not None    # else built afresh: its work may differ
            try:
                expected = steady.engine.commit(inserts, retracts)
            except DatalogError:
                with pytest.raises(DatalogError):
                    reopened.engine.commit(inserts, retracts)
                continue
            assert reopened.engine.commit(inserts, retracts) == expected
            if restored:
                assert _work(reopened.engine.stats()) == _work(steady.engine.stats())
            assert contents(reopened.engine) == contents(steady.engine)
    finally:
        restore_blocked()
        steady.close()
        reopened.close()


def test_a_rule_whose_lookup_failed_first_does_the_same_work_steady_and_reopened(tmp_path):
    """r0_0's lookup e0(1, 0) fails, so its one-atom body e0(_, x) is never joined and the
    evaluation (a scan) builds no (1, 0) index of e0; the first recording builds it, as a
    restored maintainer does, so inserting e0(0, 0) revisits the same region in both (found
    by the property test above)."""
    text = (".decl e0(c0: number, c1: number)\n.decl r0_0(c0: number)\n"
            "r0_0(x) :- e0(_, x), e0(1, 0).\nr0_0(0).\ne0(0, 1).\ne0(0, 2).\n")
    steady = Workspace.create(tmp_path / "steady", text)
    Workspace.create(tmp_path / "reopened", text).close()
    reopened = Workspace.open(tmp_path / "reopened", compact_min=0)
    try:
        assert reopened.engine.maintainer is not None
        change = {"e0": [(0, 0)]}
        assert steady.engine.commit(change, {}) == reopened.engine.commit(change, {})
        assert _work(steady.engine.stats()) == _work(reopened.engine.stats())
        assert contents(steady.engine) == contents(reopened.engine)
    finally:
        steady.close()
        reopened.close()


def _blocked(rows):
    """Sensitivity groups of more than ``rows`` entries kept as StabbingGroups (None: the
    default); returns the function that puts the default back."""
    from maintenance import sensitivity
    saved = sensitivity.SMALL
    if rows is not None:
        sensitivity.SMALL = rows

    def restore():
        sensitivity.SMALL = saved
    return restore


def test_failed_commits_on_stored_sensitivity_change_nothing(tmp_path, monkeypatch):
    """Entries still on disk that a commit adds beside, drops or matches -- before their group
    is read or after, in StabbingGroups -- and then rolls back (a division by zero): the next commits
    do what a process that never stopped does, and the contents equal evaluation from scratch."""
    _blocking(monkeypatch)
    program = PROGRAM + ".decl ratio(x: number, q: number)\nratio(x, q) :- e(x, y), q = 12 / (y - 9).\n"  # commit_of: y <= 6
    steady, reopened = Workspace.create(tmp_path / "steady", program), Workspace.create(tmp_path / "reopened", program)
    edb = {name: set(rows) for name, rows in EDB.items()}
    try:
        for k in range(1, 13):
            inserts, retracts = commit_of(k)
            for engine in (steady.engine, reopened.engine):
                with pytest.raises(DatalogError) as err:             # the same change, and y = 9
                    engine.commit({**inserts, "e": [*inserts.get("e", []), (k % 5, 9)]}, retracts)
                assert err.value.code == "division_by_zero"
            if k % 3 == 0:
                reopened.close()
                reopened = _open_without_evaluating(tmp_path / "reopened")
            assert reopened.engine.commit(inserts, retracts) == steady.engine.commit(inserts, retracts)
            assert _work(reopened.engine.stats()) == _work(steady.engine.stats())
            for name, rows in inserts.items():
                edb.setdefault(name, set()).update(rows)
            for name, rows in retracts.items():
                edb[name].difference_update(rows)
            assert contents(reopened.engine) == from_scratch(program, edb)
            assert _index_sizes(reopened.engine) == _index_sizes(steady.engine)
        assert _intervals(reopened.engine) == _intervals(steady.engine)     # (reads every group)
    finally:
        steady.close()
        reopened.close()


@pytest.mark.parametrize("blocked", [0, None])
def test_one_session_over_stored_groups_does_the_work_of_a_process_that_never_stopped(tmp_path, blocked):
    """Many commits in one session after an open: groups read (StabbingGroups from the first entry with blocked=0)
    by one commit, whose entries a later commit makes by reading their trace nodes and drops
    by revisiting them, must not answer a third commit's match -- the same delta and work as a
    process that never stopped, the same intervals, and from-scratch contents."""
    restore = _blocked(blocked)
    rng = random.Random(5)
    program = ".decl e(x: number, y: number)\n.decl t(x: number, z: number)\nt(x, z) :- e(x, y), e(y, z).\n"
    edges = {(rng.randrange(12), rng.randrange(12)) for _ in range(60)}
    text = program + "".join(f"e({x}, {y}).\n" for x, y in sorted(edges))
    steady, reopened = Workspace.create(tmp_path / "steady", text), Workspace.create(tmp_path / "reopened", text)
    try:
        reopened.close()
        reopened = _open_without_evaluating(tmp_path / "reopened")
        for _ in range(60):
            row = (rng.randrange(14), rng.randrange(14))
            change = ({}, {"e": [row]}) if row in edges and rng.random() < 0.6 else ({"e": [row]}, {})
            edges = (edges - set(change[1].get("e", []))) | set(change[0].get("e", []))
            assert reopened.engine.commit(*change) == steady.engine.commit(*change)
            assert _work(reopened.engine.stats()) == _work(steady.engine.stats())
            assert _index_sizes(reopened.engine) == _index_sizes(steady.engine)
        assert contents(reopened.engine) == from_scratch(program, {"e": edges})
        assert _intervals(reopened.engine) == _intervals(steady.engine)
    finally:
        restore()
        steady.close()
        reopened.close()


def _index_sizes(engine) -> dict:
    return {where: len(index) for where, index in engine.maintainer.registry.indexes.items() if len(index)}


def _intervals(engine) -> dict:
    return {where: index.intervals() for where, index in engine.maintainer.registry.indexes.items() if len(index)}


def test_commit_through_transaction_is_durable_and_empty_commits_count(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        with ws.engine.transaction() as tx:
            tx.insert("e", [(5, 1)])
            tx.retract("v", [(5,)])
        ws.engine.commit()                                      # empty: still commit number 2
        assert ws.seq == 2
    with Workspace.open(path, readonly=True) as ws:
        assert ws.seq == 2 and (5, 1) in ws.engine.db["e"] and (5,) not in ws.engine.db["v"]


def test_failed_transaction_changes_nothing_on_disk(tmp_path):
    path = tmp_path / "ws"
    program = PROGRAM + ".decl ratio(x: number, q: number)\nratio(x, q) :- e(x, y), q = 12 / y.\n"
    with Workspace.create(path, program) as ws:
        before = (path / LOG).read_bytes()
        with pytest.raises(DatalogError) as err:
            ws.engine.commit(inserts={"e": [(3, 0)]})           # division by zero: rolled back
        assert err.value.code == "division_by_zero"
        with pytest.raises(DatalogError) as err:
            ws.engine.commit(inserts={"path": [(9, 9)]})
        assert err.value.code == "not_edb"
        assert (path / LOG).read_bytes() == before and ws.seq == 0
        ws.engine.commit(inserts={"e": [(3, 4)]})
    with Workspace.open(path, readonly=True) as ws:
        assert ws.seq == 1 and contents(ws.engine) == from_scratch(program, {**EDB, "e": EDB["e"] | {(3, 4)}})


def test_reader_cannot_commit_and_init_refuses_existing(tmp_path):
    path = tmp_path / "ws"
    Workspace.create(path, PROGRAM).close()
    with Workspace.open(path, readonly=True) as ws:
        with pytest.raises(DatalogError) as err:
            ws.engine.commit(inserts={"e": [(1, 1)]})
        assert err.value.code == "workspace_readonly"
    with pytest.raises(DatalogError) as err:
        Workspace.create(path, PROGRAM)
    assert err.value.code == "workspace_exists"
    with pytest.raises(DatalogError) as err:
        Workspace.open(tmp_path / "nothing")
    assert err.value.code == "workspace_missing"


def test_values_of_every_type_survive(tmp_path):
    program = '.decl r(a: number, b: symbol, c: float)\nr(1, "a\\"b", 2.5).\ns(x, y, z) :- r(x, y, z).\n.decl s(c0: number, c1: symbol, c2: float)\n'
    path = tmp_path / "ws"
    rows = [(-7, "ünï\tcode", 1.0), (2 ** 63 - 1, "", -0.5), (-2 ** 63, "x", float("inf"))]
    with Workspace.create(path, program) as ws:
        ws.engine.commit(inserts={"r": rows})
    with Workspace.open(path, readonly=True) as ws:
        assert set(ws.engine.rows("s")) == {(1, 'a"b', 2.5), *rows}
        assert all(type(row[2]) is float for row in ws.engine.rows("r"))


# ---------------------------------------------------------------- CLI

def test_cli_init_update_query_export_status(tmp_path):
    program = ROOT / "programs" / "transitive_closure"
    ws = tmp_path / "ws"
    done = _datalog("init", ws, program / "prog.dl", "-F", program / "facts")
    assert done.returncode == 0, done.stderr
    done = _datalog("update", ws, program / "updates.dl")
    assert done.returncode == 0, done.stderr
    run = _datalog("run", program / "prog.dl", "-F", program / "facts", "-D", tmp_path / "expected",
                   "--updates", program / "updates.dl")
    assert [l for l in done.stdout.splitlines() if "maintained in" not in l] == \
           [l for l in run.stdout.splitlines() if "maintained in" not in l]
    assert _datalog("export", ws, "-D", tmp_path / "out").returncode == 0
    assert (tmp_path / "out" / "path.csv").read_text() == (tmp_path / "expected" / "path.csv").read_text()
    query = _datalog("query", ws, "path(1, X)")
    expected = [l for l in (tmp_path / "expected" / "path.csv").read_text().splitlines() if l.startswith("1\t")]
    assert query.returncode == 0 and query.stdout.splitlines() == expected
    status = _datalog("status", ws)
    assert status.returncode == 0 and "last commit: " in status.stdout and "on disk: " in status.stdout
    assert f"path\t{len((tmp_path / 'expected' / 'path.csv').read_text().splitlines())}\tidb" in status.stdout


def test_cli_errors_have_codes_and_no_traceback(tmp_path):
    ws = tmp_path / "ws"
    (tmp_path / "p.dl").write_text(PROGRAM)
    assert _datalog("init", ws, tmp_path / "p.dl").returncode == 0
    (tmp_path / "bad.dl").write_text("+path(1, 2).\ncommit.\n")
    cases = [(("update", ws, tmp_path / "bad.dl"), "not_edb"),
             (("init", ws, tmp_path / "p.dl"), "workspace_exists"),
             (("status", tmp_path / "none"), "workspace_missing"),
             (("query", ws, "nope(X)"), "undefined_relation"),
             (("removeblock", ws, "ghost"), "bad_block")]
    for args, code in cases:
        done = _datalog(*args)
        assert done.returncode == 1 and f"error[{code}]" in done.stderr and "Traceback" not in done.stderr, args
    with Workspace.open(ws, readonly=True) as opened:
        assert opened.seq == 0                               # the failed update applied nothing


# ---------------------------------------------------------------- the writer lock

HOLDER = """
import sys, time
from datalog.workspace.workspace import Workspace
ws = Workspace.open(sys.argv[1])
print("ready", flush=True)
time.sleep(60)
"""


def test_second_writer_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "ws"
    _committed(path, 3)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(DatalogError) as err:
            Workspace.open(path)
        assert err.value.code == "workspace_locked" and str(holder.pid) in err.value.message
        done = _datalog("update", path, ROOT / "programs" / "transitive_closure" / "updates.dl")
        assert done.returncode == 1 and f"error[workspace_locked]" in done.stderr and str(holder.pid) in done.stderr
        with Workspace.open(path, readonly=True) as reader:    # readers take no lock
            assert reader.seq == 3 and contents(reader.engine) == from_scratch(PROGRAM, edb_after(3))
        assert f"writer: process {holder.pid}" in _datalog("status", path).stdout
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with Workspace.open(path) as ws:                           # the kernel released the lock
        assert ws.seq == 3


# ---------------------------------------------------------------- corruption

def _error_of(path) -> str | None:
    try:
        Workspace.open(path, readonly=True).close()
    except DatalogError as err:
        assert str(path) in err.message or "workspace" in err.message
        return err.code
    return None


@pytest.mark.parametrize("name", [SNAPSHOT, LOG])
def test_flipped_byte_anywhere_is_corrupt(tmp_path, name):
    base = tmp_path / "base"
    _committed(base, 6)
    data = (base / name).read_bytes()
    rng = random.Random(name)
    for position in sorted(set(rng.sample(range(len(data)), min(40, len(data))) + [0, 5, 9, len(data) - 1])):
        (base / name).write_bytes(data[:position] + bytes([data[position] ^ 0x5A]) + data[position + 1:])
        try:
            Workspace.open(base, readonly=True).close()
        except DatalogError as err:
            assert err.code == "workspace_corrupt" and str(base / name) in err.message, position
        else:
            pytest.fail(f"a flipped byte at {position} of {name} was not detected")
    (base / name).write_bytes(data)


@pytest.mark.parametrize("name", [SNAPSHOT, LOG])
def test_deleted_file_is_corrupt(tmp_path, name):
    path = tmp_path / "ws"
    _committed(path, 2)
    (path / name).unlink()
    with pytest.raises(DatalogError) as err:
        Workspace.open(path, readonly=True)
    assert err.value.code == "workspace_corrupt" and str(path / name) in err.value.message
    done = _datalog("status", path)
    assert done.returncode == 1 and "error[workspace_corrupt]" in done.stderr and "Traceback" not in done.stderr


def test_deleted_or_damaged_lock_file_is_harmless(tmp_path):
    """The lock file holds no data: only the flock on it and the holder's pid matter."""
    path = tmp_path / "ws"
    _committed(path, 2)
    (path / "lock").unlink()
    with Workspace.open(path) as ws:
        assert ws.seq == 2 and (path / "lock").exists()
    for garbage in (b"", b"\xff\x00garbage", b"999999999\n"):
        (path / "lock").write_bytes(garbage)
        assert "writer: none" in _datalog("status", path).stdout
        with Workspace.open(path) as ws:
            assert ws.seq == 2 and (path / "lock").read_text() == f"{os.getpid()}\n"


def test_truncated_snapshot_is_corrupt(tmp_path):
    path = tmp_path / "ws"
    _committed(path, 4)
    data = (path / SNAPSHOT).read_bytes()
    for size in sorted({0, 1, 7, 11, 12, 30, len(data) // 2, len(data) - 1}):
        (path / SNAPSHOT).write_bytes(data[:size])
        assert _error_of(path) == "workspace_corrupt", size


def test_truncated_log(tmp_path):
    """Cut into its header: corrupt. Cut inside its last record: exactly what a crash during that
    commit leaves, so the commit is dropped (it was never acknowledged) and the writer cuts it off;
    ``status`` says so. Cut on a record boundary: indistinguishable from fewer commits."""
    path = tmp_path / "ws"
    _committed(path, 4)
    data = (path / LOG).read_bytes()
    for size in (0, 5, 11, 20):
        (path / LOG).write_bytes(data[:size])
        assert _error_of(path) == "workspace_corrupt", size
    (path / LOG).write_bytes(data[:-3])
    with Workspace.open(path, readonly=True) as ws:
        assert ws.seq == 3 and ws.discarded > 0
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(3))
    assert "unfinished commit" in _datalog("status", path).stdout
    with Workspace.open(path) as ws:                           # the writer cuts the torn record off
        ws.engine.commit(*commit_of(4))
    with Workspace.open(path, readonly=True) as ws:
        assert ws.seq == 4 and ws.discarded == 0
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(4))


def test_maintainer_file_damaged_is_corrupt_and_deleted_is_rebuilt(tmp_path):
    """The stored maintainer is derived data: deleted, the writer builds it at its first commit
    (readers never read it); damaged, it is workspace_corrupt for the writer."""
    path = tmp_path / "ws"
    with Workspace.create(path, PLAIN) as ws:
        for k in range(1, 6):
            ws.engine.commit(*commit_of(k))
        ws.compact()
    name = path / "maintainer.5"
    data = name.read_bytes()
    rng = random.Random(3)
    damaged = [data[:size] for size in (0, 7, 30, len(data) // 2, len(data) - 1)]
    for position in rng.sample(range(len(data)), 25):
        damaged.append(data[:position] + bytes([data[position] ^ 0x21]) + data[position + 1:])
    for bad in damaged:
        name.write_bytes(bad)
        with pytest.raises(DatalogError) as err:
            Workspace.open(path)
        assert err.value.code == "workspace_corrupt" and str(name) in err.value.message
        with Workspace.open(path, readonly=True) as reader:      # readers do not need it
            assert contents(reader.engine) == from_scratch(PLAIN, edb_after(5))
    name.unlink()
    with Workspace.open(path) as ws:
        assert ws.engine.maintainer is None                      # built at the first commit
        ws.engine.commit(*commit_of(6))
        assert contents(ws.engine) == from_scratch(PLAIN, edb_after(6))
    (path / "maintainer.4").write_bytes(data)                   # a stale file of another commit
    with Workspace.open(path) as ws:
        assert ws.seq == 6 and ws.engine.maintainer is None
        ws.engine.commit(*commit_of(7))
        ws.compact()
    assert sorted(p.name for p in path.glob("maintainer.*")) == ["maintainer.7"]
    with Workspace.open(path) as ws:                            # the snapshot's own: restored
        assert ws.engine.maintainer is not None


@pytest.mark.parametrize("part", ["children", "leaves", "entries", "links", "group", "group-blocked", "counts"])
def test_maintainer_records_out_of_order_are_corrupt(tmp_path, part, monkeypatch):
    """A maintainer file whose checksums hold but where one trace node's children, leaves or
    sensitivity entries are out of order (restoring appends them as they come), or whose node
    index disagrees with a node's page, or where one entry id repeats in a sensitivity group
    (into small groups, or StabbingGroups), or a support count is not a positive integer, is
    workspace_corrupt when that part is read -- by a commit that reaches it, or a compaction,
    which reads every page -- and the failed operation changes nothing."""
    from datalog.workspace import format as wsfile
    path = tmp_path / "ws"
    two_hops = ".decl e(x: number, y: number)\n.decl t(x: number, z: number)\nt(x, z) :- e(x, y), e(y, z).\n"
    edges = [(a, b) for a in range(4) for b in range(4) if a != b]
    with Workspace.create(path, two_hops) as ws:
        ws.engine.commit({"e": edges}, {})
        ws.compact()
    name = path / "maintainer.1"
    stored = wsfile.read_file(name, "maintainer")
    if part == "links":                    # the node index names a node's key wrongly: its page differs
        links = next(page["links"] for page in stored.records[1:] if "links" in page)
        i, j = next((i, j) for i in range(1, len(links)) for j in range(i + 1, len(links))   # below the
                    if links[i][0] == links[j][0] != 0 and links[i][1] != links[j][1])          # root's children
        links[i][1], links[j][1] = links[j][1], links[i][1]
    elif part == "counts":                 # a support count that is no count
        next(page["counts"] for page in stored.records[1:] if page.get("counts"))[0][1] = "2"
    elif part.startswith("group"):         # an entry listed twice in its group
        if part == "group-blocked":
            _blocking(monkeypatch)
        rows = max((rows for page in stored.records[1:] for _, _, rows in page.get("groups", ())), key=len)
        rows[1][1] = rows[0][1]
    else:
        field, key = {"children": (2, 0), "leaves": (3, 0), "entries": (4, 5)}[part]
        rows, i, j = next((rows, i, j) for page in stored.records[1:] for record in page.get("nodes", ())
                          for rows in [record[field]] for i in range(len(rows)) for j in range(i + 1, len(rows))
                          if rows[i][key] is not None and rows[j][key] is not None and rows[i][key] != rows[j][key])
        rows[i], rows[j] = rows[j], rows[i]
    wsfile.write_file(name, "maintainer", {k: v for k, v in stored.header.items()
                                          if k not in ("format", "kind", "version")}, stored.records)
    log = (path / LOG).read_bytes()
    with Workspace.open(path) as ws:                            # pages are read when needed
        with pytest.raises(DatalogError) as err:
            ws.engine.commit({}, {"e": edges})                  # reaches every region: rolled back
        assert err.value.code == "workspace_corrupt" and str(name) in err.value.message
        assert (path / LOG).read_bytes() == log and contents(ws.engine) == from_scratch(two_hops, {"e": set(edges)})
        with pytest.raises(DatalogError) as err:             # nothing was left half read
            ws.engine.commit({}, {"e": edges})
        assert err.value.code == "workspace_corrupt" and str(name) in err.value.message
        if part.startswith("group"):     # a compaction writes the groups again from the trace
            ws.compact()
        else:
            with pytest.raises(DatalogError) as err:
                ws.compact()
            assert err.value.code == "workspace_corrupt" and str(name) in err.value.message
    with Workspace.open(path, readonly=True) as reader:
        assert reader.seq == 1 and contents(reader.engine) == from_scratch(two_hops, {"e": set(edges)})
    if part.startswith("group"):                                # a process opening the new file commits
        with Workspace.open(path) as ws:
            ws.engine.commit({}, {"e": edges[:5]})
            assert contents(ws.engine) == from_scratch(two_hops, {"e": set(edges[5:])})


def test_version_2_snapshot_is_read_whole(tmp_path):
    """A snapshot of format version 2 (no directory of the relations' frames) is read whole, as
    before, by readers and writers; the next compaction writes the current version."""
    from datalog.workspace import format as wsfile
    path = tmp_path / "ws"
    _committed(path, 3)
    stored = wsfile.read_file(path / SNAPSHOT, "snapshot")
    first = {k: v for k, v in stored.records[0].items() if k != "relations"}
    header = {**{k: v for k, v in stored.header.items() if k != "compression"}, "version": 2}    # (v2: raw JSON)
    (path / SNAPSHOT).write_bytes(b"".join(wsfile.encode(r) for r in [header, first, *stored.records[1:]]))
    with Workspace.open(path, readonly=True) as reader:
        assert contents(reader.engine) == from_scratch(PROGRAM, edb_after(3))
    with Workspace.open(path) as ws:
        ws.engine.commit(*commit_of(4))
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(4))
        ws.compact()
    header = wsfile.read_file(path / SNAPSHOT, "snapshot").header
    assert header["version"] == wsfile.version_of("snapshot") and header["compression"] == "zlib"


@pytest.mark.parametrize("kind", ["snapshot", "maintainer"])
def test_compressed_record_that_does_not_decompress_is_corrupt(tmp_path, kind):
    """Snapshots and maintainer files are compressed (zlib, named in the header); a record whose
    checksum holds but which is not zlib data is workspace_corrupt naming the file when read,
    and a header naming a compression this engine does not know is workspace_version."""
    from datalog.workspace import format as wsfile
    path = tmp_path / "ws"
    _committed(path, 3, compact_min=0)
    name = path / SNAPSHOT if kind == "snapshot" else next(path.glob("maintainer.*"))
    original = name.read_bytes()
    stored = wsfile.read_file(name, kind)
    assert stored.header["compression"] == "zlib"
    frames = [wsfile.encode(stored.header)] + [wsfile.encode(r, compressed=True) for r in stored.records]
    assert b"".join(frames) == original                                 # what was read is what is stored
    payload = json.dumps(stored.records[-1]).encode("ascii")            # the last record, not compressed
    frames[-1] = wsfile._FRAME.pack(len(payload), zlib.crc32(len(payload).to_bytes(4, "big")),
                                    zlib.crc32(payload)) + payload
    name.write_bytes(b"".join(frames))
    with pytest.raises(DatalogError) as err:
        with Workspace.open(path) as ws:                                 # (a writer reads the maintainer)
            ws.compact()                                                 # reads every record
    assert err.value.code == "workspace_corrupt" and str(name) in err.value.message
    name.write_bytes(wsfile.encode({**stored.header, "compression": "zstd"}) + b"".join(frames[1:]))
    with pytest.raises(DatalogError) as err:
        Workspace.open(path)
    assert err.value.code == "workspace_version" and str(name) in err.value.message and "zstd" in err.value.message
    name.write_bytes(original)
    with Workspace.open(path, readonly=True) as reader:
        assert contents(reader.engine) == from_scratch(PROGRAM, edb_after(3))


@pytest.mark.parametrize("lie", ["count", "arity", "relation"])
def test_snapshot_directory_that_lies_is_corrupt_when_read(tmp_path, lie):
    """A version 3 snapshot whose checksums hold but whose directory names a relation's frames
    wrongly is workspace_corrupt, naming the file, when that relation is first read: by a reader
    (``rows``, ``status`` counts from the directory without reading) or by a writer's commit,
    which is rolled back."""
    from datalog.workspace import format as wsfile
    path = tmp_path / "ws"
    _committed(path, 3, compact_min=0)                            # the snapshot holds all three
    stored = wsfile.read_file(path / SNAPSHOT, "snapshot")
    entry = stored.records[0]["relations"]["e"]
    if lie == "count":
        entry["count"] += 1
    elif lie == "arity":
        entry["arity"], entry["sample"] = 3, entry["sample"] + [0]
    else:
        entry["first"] = stored.records[0]["relations"]["v"]["first"]
    wsfile.write_file(path / SNAPSHOT, "snapshot", {k: v for k, v in stored.header.items()
                                                  if k not in ("format", "kind", "version")}, stored.records)
    if lie == "arity":                                            # checked against the program at open
        with pytest.raises(DatalogError) as err:
            Workspace.open(path, readonly=True)
        assert err.value.code == "workspace_corrupt" and str(path / SNAPSHOT) in err.value.message
        return
    with Workspace.open(path, readonly=True) as reader:
        assert reader.status()["sizes"]["v"] == len(from_scratch(PROGRAM, edb_after(3))["v"])
        with pytest.raises(DatalogError) as err:
            reader.engine.rows("e")
        assert err.value.code == "workspace_corrupt" and str(path / SNAPSHOT) in err.value.message
    log = (path / LOG).read_bytes()
    with Workspace.open(path) as ws:
        with pytest.raises(DatalogError) as err:
            ws.engine.commit(*commit_of(4))
        assert err.value.code == "workspace_corrupt" and str(path / SNAPSHOT) in err.value.message
        assert (path / LOG).read_bytes() == log and ws.seq == 3


def test_newer_format_version_is_refused(tmp_path):
    from datalog.workspace import format as wsfile
    path = tmp_path / "ws"
    _committed(path, 1)
    (maintainer,) = [p.name for p in path.glob("maintainer.*")]
    for name, kind in ((SNAPSHOT, "snapshot"), (LOG, "log"), (maintainer, "maintainer")):
        original = (path / name).read_bytes()
        contents_ = wsfile.read_file(path / name, kind, torn_tail=True)
        header = {**contents_.header, "version": wsfile.version_of(kind) + 1}
        (path / name).write_bytes(wsfile.encode(header) + b"\x00\x01 whatever a later version stores")
        with pytest.raises(DatalogError) as err:
            Workspace.open(path, readonly=kind != "maintainer")          # only a writer reads it
        assert err.value.code == "workspace_version" and str(path / name) in err.value.message
        (path / name).write_bytes(original)


# ---------------------------------------------------------------- program changes

BLOCK_CONVERTING = "v(x) :- hop2(x, _).\n"      # v had facts (EDB): its rows become facts of the program


def test_addblock_and_removeblock_against_from_scratch(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        for k in range(1, 6):
            ws.engine.commit(*commit_of(k))
        ws.addblock("hops", BLOCK)
        assert contents(ws.engine) == from_scratch(PROGRAM + BLOCK, edb_after(5))
        for k in range(6, 11):
            ws.engine.commit(*commit_of(k))
        assert contents(ws.engine) == from_scratch(PROGRAM + BLOCK, edb_after(10))
    with Workspace.open(path) as ws:
        assert contents(ws.engine) == from_scratch(PROGRAM + BLOCK, edb_after(10))
        delta = ws.removeblock("hops")
        assert "hop2" in delta and "reach1" in delta
        expected = from_scratch(PROGRAM, edb_after(10))
        assert contents(ws.engine) == expected
        ws.engine.commit(*commit_of(11))
    with Workspace.open(path, readonly=True) as ws:
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(11))
        assert [b["name"] for b in ws.blocks] == ["main"]


def test_addblock_converting_an_edb_relation_survives_reopen(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.engine.commit(retracts={"v": [(2,)]})
        ws.addblock("hops", BLOCK)
        ws.addblock("conv", BLOCK_CONVERTING)
        ws.engine.commit(inserts={"e": [(6, 6)]})
        live = contents(ws.engine)
    program = (PROGRAM.replace("v(1). v(2). v(3). v(4). v(5).", "v(1). v(3). v(4). v(5).")
               + BLOCK + BLOCK_CONVERTING)
    expected = from_scratch(program, {"e": EDB["e"] | {(6, 6)}})
    assert live == expected and (6,) in expected["v"]            # v(6): derived from hop2(6, 6)
    with Workspace.open(path, readonly=True) as ws:
        assert contents(ws.engine) == expected


@pytest.mark.parametrize("later", ["", "v(x) :- e(x, x).\n"])
def test_removeblock_keeps_the_rows_a_block_converted(tmp_path, later):
    """v had facts and a retraction (EDB) when 'conv' made it derived: its rows then became
    facts. Removing 'conv' keeps those rows -- as v's table if v is EDB again, as facts if a
    later block still derives it -- rather than the program text's original facts."""
    with Workspace.create(tmp_path / "ws", PROGRAM) as ws:
        ws.engine.commit(retracts={"v": [(2,)]})
        ws.addblock("hops", BLOCK)
        ws.addblock("conv", BLOCK_CONVERTING)
        if later:
            ws.addblock("later", later)
        ws.engine.commit(inserts={"e": [(6, 6)]})
        ws.removeblock("conv")
        live = contents(ws.engine)
    program = PROGRAM.replace("v(1). v(2). v(3). v(4). v(5).", "v(1). v(3). v(4). v(5).") + BLOCK + later
    expected = from_scratch(program, {"e": EDB["e"] | {(6, 6)}})
    assert live == expected and (2,) not in expected["v"]
    with Workspace.open(tmp_path / "ws", readonly=True) as ws:
        assert contents(ws.engine) == expected


def test_engine_extend_is_refused_but_ask_works(tmp_path):
    with Workspace.create(tmp_path / "ws", PROGRAM) as ws:
        with pytest.raises(DatalogError) as err:
            ws.engine.extend("q(x) :- v(x).")
        assert err.value.code == "bad_block" and "addblock" in err.value.message
        from datalog.language.parser import parse_query
        names, rows = ws.engine.ask(parse_query("?- path(1, y), !iso(y)."))
        assert names == ["y"] and rows == [(2,)]                # 3 has no way out: iso(3)
        ws.engine.commit(inserts={"e": [(3, 1)]})
    with Workspace.open(tmp_path / "ws", readonly=True) as ws:
        assert contents(ws.engine) == from_scratch(PROGRAM, {**EDB, "e": EDB["e"] | {(3, 1)}})


def test_failed_addblock_and_removeblock_change_nothing(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.addblock("hops", BLOCK)
        ws.addblock("uses", ".decl far(y: number)\nfar(y) :- hop2(1, y).\n")
        before = ((path / SNAPSHOT).read_bytes(), (path / LOG).read_bytes(), contents(ws.engine))
        for action, code in ((lambda: ws.addblock("bad", ".decl q(x: number)\nq(x) :- nothere(x, y)."), "undefined_relation"),
                             (lambda: ws.addblock("hops", "q(1)."), "bad_block"),
                             (lambda: ws.addblock("neg", ".decl n(x: number)\nn(x) :- v(x), !n(x)."), "cyclic_negation"),
                             (lambda: ws.removeblock("hops"), "undefined_relation"),   # 'uses' needs hop2
                             (lambda: ws.removeblock("main"), "bad_block")):
            with pytest.raises(DatalogError) as err:
                action()
            assert err.value.code == code
            assert ((path / SNAPSHOT).read_bytes(), (path / LOG).read_bytes(), contents(ws.engine)) == before
        ws.engine.commit(inserts={"e": [(3, 1)]})
        assert contents(ws.engine) == from_scratch(PROGRAM + BLOCK + ".decl far(y: number)\nfar(y) :- hop2(1, y).\n",
                                                   {**EDB, "e": EDB["e"] | {(3, 1)}})


def test_cli_addblock_removeblock(tmp_path):
    ws = tmp_path / "ws"
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "hops.dl").write_text(BLOCK)
    assert _datalog("init", ws, tmp_path / "p.dl").returncode == 0
    done = _datalog("addblock", ws, tmp_path / "hops.dl")
    assert done.returncode == 0 and done.stdout.startswith("added block hops: ") and "hop2 +" in done.stdout
    assert "hops (" in _datalog("status", ws).stdout
    assert _datalog("query", ws, "hop2(1, X)").stdout == "1\t3\n"
    done = _datalog("removeblock", ws, "hops")
    assert done.returncode == 0 and "hop2 +0 -" in done.stdout
    done = _datalog("query", ws, "hop2(1, X)")
    assert done.returncode == 1 and "error[undefined_relation]" in done.stderr


def test_init_that_fails_or_was_cut_short(tmp_path):
    path = tmp_path / "ws"
    with pytest.raises(DatalogError) as err:
        Workspace.create(path, ".decl p(x: number)\np(x) :- q(x, y).")   # undefined relation: nothing written
    assert err.value.code == "undefined_relation" and not path.exists()
    from datalog.workspace import format as wsfile
    path.mkdir()
    wsfile.write_file(path / LOG, "log", {"base": 0}, [])      # a crash between init's two writes
    assert _error_of(path) == "workspace_missing"               # no workspace, for open as for init
    Workspace.create(path, PROGRAM).close()                     # init may start over
    _committed(tmp_path / "other", 1)
    (tmp_path / "other" / SNAPSHOT).unlink()                    # a log with commits is never clobbered
    with pytest.raises(DatalogError) as err:
        Workspace.create(tmp_path / "other", PROGRAM)
    assert err.value.code == "workspace_exists"


def test_a_stored_filter_region_is_restored_with_its_interval(tmp_path):
    """``!e0(y, x)`` records an entry whose region is kept apart (OTHER); restored from disk its
    kind carries the stored flags, and the region was dropped (KeyError at the first commit
    that revisited it: the reopen property test found it). Steady and reopened agree."""
    text = """.decl e0(c0: number, c1: number)
.decl r0_0(c0: number)
r0_0(x) :- e0(x, y), !e0(y, x).
r0_0(0).
.decl r1_0(c0: number)
r1_0(x) :- e0(x, x).
e0(0, 1). e0(0, 2).
"""
    steady = Workspace.create(tmp_path / "steady", text)
    Workspace.create(tmp_path / "reopened", text).close()
    reopened = Workspace.open(tmp_path / "reopened", compact_min=0)
    try:
        assert reopened.engine.maintainer is not None
        expected = steady.engine.commit({"e0": [(0, 0)]}, {})
        assert reopened.engine.commit({"e0": [(0, 0)]}, {}) == expected
        assert contents(reopened.engine) == contents(steady.engine)
    finally:
        steady.close()
        reopened.close()


_VALUES = st.one_of(st.integers(), st.integers(-3, 3).map(float), st.booleans(), st.floats(allow_nan=False), st.text())


@given(st.integers(0, 40), st.lists(_VALUES, max_size=4), st.integers(1, 200))
def test_a_group_page_is_the_crc_of_its_json_text(where, alpha, pages):
    """The page of a sensitivity group or support count (``bucket``; its integers-only path writes
    the text itself) is the CRC-32 of the JSON ``json.dumps`` writes, integral floats as integers:
    the slow twin, which older files were written by."""
    from maintenance.persistence.records import bucket
    canonical = [int(v) if type(v) is float and v.is_integer() else v for v in alpha]
    text = json.dumps([where, canonical], separators=(",", ":"))
    assert bucket(where, tuple(alpha), pages) == zlib.crc32(text.encode("ascii")) % pages
