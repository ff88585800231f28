"""Forged workspace state (issue 23, item 3): files whose checksums hold -- rewritten with the
format's own writer, so every frame checks -- but whose records lie. A value of the wrong type,
a malformed record or header field, a support count that is not a positive integer is
``workspace_corrupt`` naming the file and the record, never a traceback nor an answer; a
compressed record that would inflate beyond the size it declares is refused before it does; what
a well-formed file can still lie about (an extra derived row, a raised support count) is what
``datalog verify`` finds."""

from __future__ import annotations

import functools
import random
import shutil
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.language.composites import NIL, Branch, Record
from datalog.language.errors import DatalogError
from datalog.workspace import format as wsfile
from datalog.workspace.workspace import LOG, SNAPSHOT, Workspace
from tests import workspace_oracle
from tests.workspace_oracle import PROGRAM, commit_of, contents, edb_after, from_scratch
from tests.cli_process import run_datalog

ROOT = Path(__file__).resolve().parent.parent
KIND = {SNAPSHOT: "snapshot", LOG: "log"}


def _kind(name: str) -> str:
    return KIND.get(name, "maintainer")


def _workspace(path: Path, program: str = PROGRAM) -> Path:
    """Commits 1-3 in the snapshot (with its maintainer.3), 4 and 5 in the log."""
    with Workspace.create(path, program) as ws:
        for k in range(1, 4):
            ws.engine.commit(*commit_of(k))
        ws.compact()
        for k in range(4, 6):
            ws.engine.commit(*commit_of(k))
    return path


def _forge(path: Path, name: str, change) -> None:
    """Rewrite file ``name`` of the workspace after ``change(header, records)``, with the format's
    writer: every checksum holds."""
    stored = wsfile.read_file(path / name, _kind(name), torn_tail=True)
    change(stored.header, stored.records)
    extra = {k: v for k, v in stored.header.items() if k not in ("format", "kind", "version")}
    wsfile.write_file(path / name, _kind(name), extra, stored.records)


def _use(path: Path) -> None:
    """What a user does with a workspace: read every relation, then commit and compact."""
    with Workspace.open(path, readonly=True) as reader:
        for name in reader.engine.relations():
            reader.engine.rows(name)
    with Workspace.open(path) as writer:
        writer.engine.commit(*commit_of(6))
        writer.compact()


def _corrupt(path: Path, *named: str) -> str:
    """The message of the workspace_corrupt that using ``path`` raises; it names ``named``."""
    with pytest.raises(DatalogError) as err:
        _use(path)
    assert err.value.code == "workspace_corrupt", err.value
    for part in named:
        assert part in err.value.message, (part, err.value.message)
    return err.value.message


def _directory(records) -> dict:
    return records[0]["relations"]


def _rows_record(records, relation: str) -> dict:
    return records[_directory(records)[relation]["first"]]


WRONG = ["x", None, 1.5, [1], {"a": 1}, True, 2.0, 2 ** 63, -2 ** 63 - 1]


# ---------------------------------------------------------------- values of the wrong type

@pytest.mark.parametrize("value", WRONG)
def test_wrong_value_in_a_snapshot_number_column_is_corrupt(tmp_path, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, SNAPSHOT, lambda h, records: _rows_record(records, "e")["values"].__setitem__(1, value))
    _corrupt(path, str(path / SNAPSHOT), "column 2 of e", "frame")


@pytest.mark.parametrize("value", WRONG)
def test_wrong_value_in_a_logged_row_is_corrupt(tmp_path, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, LOG, lambda h, records: records[-1]["insert"].setdefault(
        "e", {"arity": 2, "count": 1, "values": [0, 0]})["values"].__setitem__(0, value))
    _corrupt(path, str(path / LOG), "commit 5", "column 1 of e")


@pytest.mark.parametrize("value", ["x", None, 1.5, [1], True])
def test_wrong_value_in_a_directory_sample_is_corrupt(tmp_path, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, SNAPSHOT, lambda h, records: _directory(records)["v"]["sample"].__setitem__(0, value))
    with pytest.raises(DatalogError) as err:
        Workspace.open(path, readonly=True)                  # the sample settles types: checked at open
    assert err.value.code == "workspace_corrupt" and "directory entry of v" in err.value.message


def test_a_float_in_a_float_column_and_symbols_in_a_symbol_column_are_fine(tmp_path):
    program = ".decl r(x: float, s: symbol)\nr(1.5, \"a\").\nq(s) :- r(_, s).\n.decl q(c0: symbol)\n"
    path = tmp_path / "ws"
    with Workspace.create(path, program) as ws:
        ws.engine.commit(inserts={"r": [(2.5, "b"), (-0.0, "")]})
    with Workspace.open(path) as ws:
        assert ws.engine.rows("q") == [("",), ("a",), ("b",)]
    saved = (path / LOG).read_bytes()
    _forge(path, LOG, lambda h, records: records[-1]["insert"]["r"]["values"].__setitem__(0, 2))
    _corrupt(path, "column 1 of r", "not a float")            # the writer stores 2.0, never 2
    (path / LOG).write_bytes(saved)
    _forge(path, LOG, lambda h, records: records[-1]["insert"]["r"]["values"].__setitem__(0, float("nan")))
    _corrupt(path, "column 1 of r", "without NaN")


def test_mixed_types_in_an_auto_column_are_corrupt(tmp_path):
    """A column no declaration types takes the one type its stored values have."""
    path = tmp_path / "ws"
    (tmp_path / "r.facts").write_text("1\n")
    with Workspace.create(path, ".input r\nq(x) :- r(x).\n", tmp_path) as ws:
        ws.engine.commit(inserts={"r": [(2,)]})
        ws.engine.commit(inserts={"r": [(3,)]})
    with Workspace.open(path, readonly=True) as ws:
        assert ws.engine.rows("q") == [(1,), (2,), (3,)]
    _forge(path, LOG, lambda h, records: records[-1]["insert"]["r"]["values"].__setitem__(0, "a"))
    message = _corrupt(path, str(path / LOG), "column 1 of r")
    assert "other values are numbers" in message


def test_rows_of_a_relation_the_program_lacks_or_of_another_arity_are_corrupt(tmp_path):
    path = _workspace(tmp_path / "ws")
    saved = (path / LOG).read_bytes()
    _forge(path, LOG, lambda h, records: records[-1]["insert"].__setitem__(
        "ghost", {"arity": 1, "count": 1, "values": [1]}))
    _corrupt(path, str(path / LOG), "ghost")
    (path / LOG).write_bytes(saved)
    _forge(path, LOG, lambda h, records: records[-1]["insert"].__setitem__(
        "v", {"arity": 2, "count": 1, "values": [1, 2]}))
    _corrupt(path, str(path / LOG), "rows of v of arity 2")


# ---------------------------------------------------------------- header fields and blocks

@pytest.mark.parametrize("name, field, value", [
    (SNAPSHOT, "time", "x"), (SNAPSHOT, "time", 1e300), (SNAPSHOT, "time", float("nan")),
    (SNAPSHOT, "time", 10 ** 400), (SNAPSHOT, "time", float("inf")),
    (SNAPSHOT, "seq", True), (SNAPSHOT, "seq", -1), (SNAPSHOT, "seq", 2.0),
    (SNAPSHOT, "seq", 10 ** 400), (LOG, "base", 2 ** 63),       # a file name too long to stat (soak)
    (LOG, "base", "3"), (LOG, "base", None)])
def test_header_field_of_the_wrong_type_is_corrupt(tmp_path, name, field, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, name, lambda header, records: header.__setitem__(field, value))
    _corrupt(path, str(path / name))


@pytest.mark.parametrize("field, value", [("time", "x"), ("time", None), ("time", -5), ("time", 10 ** 400),
                                          ("seq", "5"), ("seq", 10 ** 400), ("seq", True), ("insert", []),
                                          ("sources", {"e": "../x"})])
def test_log_record_field_of_the_wrong_type_is_corrupt(tmp_path, field, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, LOG, lambda header, records: records[-1].__setitem__(field, value))
    _corrupt(path, str(path / LOG))


@pytest.mark.parametrize("forgery", ["text", "converted", "converted-row"])
def test_stored_program_that_does_not_check_is_corrupt(tmp_path, forgery):
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        block = records[0]["blocks"][0]
        if forgery == "text":
            block["text"] = "path(x) :- nowhere(x, ."
        elif forgery == "converted":
            block["converted"] = {"v": {"not": "rows"}}
        else:
            block["converted"] = {"v": [[{"a": 1}]]}
    _forge(path, SNAPSHOT, change)
    _corrupt(path, str(path / SNAPSHOT))


# ---------------------------------------------------------------- the maintainer file

@pytest.mark.parametrize("count", [0, -1, 1.5, True, "2", None])
def test_support_count_that_is_not_a_positive_integer_is_corrupt(tmp_path, count):
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        pages = [r for r in records if r.get("counts")]
        pages[0]["counts"][0][1] = count
    _forge(path, "maintainer.3", change)
    _corrupt(path, str(path / "maintainer.3"))
    with Workspace.open(path, readonly=True) as reader:          # readers do not read it
        assert contents(reader.engine) == from_scratch(PROGRAM, edb_after(5))


@pytest.mark.parametrize("value", ["x", 1.5, [1], {"a": 1}, None])
def test_support_count_row_of_the_wrong_type_is_corrupt(tmp_path, value):
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        pages = [r for r in records if r.get("counts")]
        pages[0]["counts"][0][0][0] = value
    _forge(path, "maintainer.3", change)
    _corrupt(path, str(path / "maintainer.3"))


@pytest.mark.parametrize("field, value", [("page", 0), ("page", -1), ("page", "256"), ("frames", "3"),
                                          ("groups", {"first": 1, "pages": 0, "counts": []}), ("wheres", [[{}]]),
                                          ("rules", [{"clause": 10 ** 9}]), ("support", {"ghost": []})])
def test_maintainer_state_field_of_the_wrong_type_or_value_is_corrupt(tmp_path, field, value):
    path = _workspace(tmp_path / "ws")
    _forge(path, "maintainer.3", lambda header, records: records[0]["state"].__setitem__(field, value))
    _corrupt(path, str(path / "maintainer.3"))


@pytest.mark.parametrize("pages", [0, -1, 1.0])
def test_support_count_pages_of_the_wrong_number_are_corrupt(tmp_path, pages):
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        for counts in records[0]["state"]["support"].values():
            counts["pages"] = pages
    _forge(path, "maintainer.3", change)
    _corrupt(path, str(path / "maintainer.3"))


def test_forged_trace_key_fails_as_corrupt_naming_the_maintainer_file(tmp_path):
    """A trace key of another type than its column's is read without complaint (reading does not
    know which column a level is) but fails when a commit compares it: that commit is refused as
    workspace_corrupt naming the file, and changes nothing."""
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        for record in records:
            for group in record.get("groups", []):
                for row in group[2]:
                    row[3] = {"a": 1}
    _forge(path, "maintainer.3", change)
    log = (path / LOG).read_bytes()
    with pytest.raises(DatalogError) as err:
        with Workspace.open(path) as ws:
            for k in range(6, 12):
                ws.engine.commit(*commit_of(k))
    assert err.value.code == "workspace_corrupt" and str(path / "maintainer.3") in err.value.message
    assert "derived data" in err.value.message
    with Workspace.open(path, readonly=True) as reader:
        assert reader.seq >= 5 and (path / LOG).read_bytes()[:len(log)] == log
        assert contents(reader.engine) == from_scratch(PROGRAM, edb_after(reader.seq))


def test_replay_mismatch_names_the_maintainer_file_read(tmp_path):
    """The maintainer restored is the snapshot's (maintainer.3); a logged commit it does not
    reproduce names that file, not one of the commit before."""
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        records[-1]["insert"]["path"] = {"arity": 2, "count": 1, "values": [9, 9]}
    _forge(path, LOG, change)
    with pytest.raises(DatalogError) as err:
        Workspace.open(path)
    assert err.value.code == "workspace_corrupt"
    assert str(path / "maintainer.3") in err.value.message and "maintainer.4" not in err.value.message


# ---------------------------------------------------------------- decompression bombs

@functools.cache
def _bomb() -> bytes:
    """About 400 KB of zlib data (level 9) that inflates to 400 MB of spaces."""
    packer, chunk = zlib.compressobj(9), b" " * (1 << 20)
    return b"".join(packer.compress(chunk) for _ in range(400)) + packer.flush()


def _frame(payload: bytes) -> bytes:
    return wsfile._FRAME.pack(len(payload), zlib.crc32(len(payload).to_bytes(4, "big")),
                              zlib.crc32(payload)) + payload


def _refused_in_little_memory(path: Path) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DatalogError) as err:
            Workspace.open(path, readonly=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.value.code == "workspace_corrupt" and str(path / SNAPSHOT) in err.value.message
    assert peak < 40 << 20, peak


@pytest.mark.parametrize("declared", ["little", "honest", "huge"])
def test_record_inflating_beyond_its_declared_size_is_refused_without_inflating_it(tmp_path, declared):
    """A checksum-valid record of 400 KB that inflates to 400 MB is workspace_corrupt, whether it
    declares 100 bytes, its true size (more than 512 times its own: no writer of the format
    writes that) or more than that; memory stays far below what inflating it would take."""
    path = _workspace(tmp_path / "ws")
    stored = wsfile.read_file(path / SNAPSHOT, "snapshot")
    frames = [wsfile.encode(stored.header)] + [wsfile.encode(r, compressed=True) for r in stored.records]
    assert b"".join(frames) == (path / SNAPSHOT).read_bytes()       # what the writer writes
    size = {"little": 100, "honest": 400 << 20, "huge": 1 << 40}[declared]
    frames[1] = _frame(size.to_bytes(8, "big") + _bomb())
    (path / SNAPSHOT).write_bytes(b"".join(frames))
    _refused_in_little_memory(path)


def test_version_3_snapshot_of_three_bombs_is_refused_without_inflating_them(tmp_path):
    """A version 3 snapshot (its payloads declare no size) of 1.2 MB whose three records would
    inflate to 1.2 GB: the first is refused once it passes 512 times its size."""
    path = _workspace(tmp_path / "ws")
    stored = wsfile.read_file(path / SNAPSHOT, "snapshot")
    header = wsfile.encode({**stored.header, "version": 3})
    (path / SNAPSHOT).write_bytes(header + b"".join(_frame(_bomb()) for _ in range(3)))
    _refused_in_little_memory(path)


def test_record_inflating_to_less_than_it_declares_is_corrupt(tmp_path):
    path = _workspace(tmp_path / "ws")
    stored = wsfile.read_file(path / SNAPSHOT, "snapshot")
    frames = [wsfile.encode(stored.header)] + [wsfile.encode(r, compressed=True) for r in stored.records]
    payload = frames[-1][wsfile._FRAME.size:]
    frames[-1] = _frame((int.from_bytes(payload[:8], "big") + 1).to_bytes(8, "big") + payload[8:])
    (path / SNAPSHOT).write_bytes(b"".join(frames))
    with pytest.raises(DatalogError) as err:
        Workspace.open(path, readonly=True)
    assert err.value.code == "workspace_corrupt" and "size it declares" in err.value.message


# ---------------------------------------------------------------- verify

def _datalog(*args):
    return run_datalog(*args, cwd=ROOT)


TC = ROOT / "programs" / "transitive_closure"


@pytest.mark.parametrize("program", ["PROGRAM", "TC", "THETA", "AGGREGATES"])
def test_verify_of_an_honest_workspace_finds_nothing(tmp_path, program):
    text = (TC / "prog.dl").read_text() if program == "TC" else getattr(workspace_oracle, program)
    if program == "TC":
        with Workspace.create(tmp_path / "tc", text, TC / "facts") as ws:
            assert ws.verify() == []
        done = _datalog("verify", tmp_path / "tc")
        assert done.returncode == 0 and "equal a recomputation" in done.stdout, done.stdout + done.stderr
        return
    path = _workspace(tmp_path / "ws", text)
    with Workspace.open(path, readonly=True) as ws:
        assert ws.verify() == []
    with Workspace.open(path) as ws:                              # a writer's, after more commits
        for k in range(6, 9):
            ws.engine.commit(*commit_of(k))
        assert ws.verify() == []
    done = _datalog("verify", path)
    assert done.returncode == 0 and "equal a recomputation" in done.stdout, done.stderr


def test_verify_finds_an_extra_derived_row_in_the_snapshot(tmp_path):
    path = _workspace(tmp_path / "ws")

    def change(header, records):
        _directory(records)["path"]["count"] += 1
        rows = _rows_record(records, "path")
        rows["values"] += [9, 9]
        rows["count"] += 1
    _forge(path, SNAPSHOT, change)
    with Workspace.open(path, readonly=True) as ws:
        assert (9, 9) in ws.engine.rows("path")                   # served: well-formed, typed
        differences = ws.verify()
    assert [(d.relation, d.row, d.stored, d.recomputed) for d in differences if d.what == "row"] == \
        [("path", (9, 9), True, False)]
    done = _datalog("verify", path)
    assert done.returncode == 1 and "path(9, 9): stored, not recomputed" in done.stdout
    assert "Traceback" not in done.stderr


def test_verify_finds_a_missing_derived_row_in_the_log(tmp_path):
    path = _workspace(tmp_path / "ws")
    expected = from_scratch(PROGRAM, edb_after(5))
    logged = wsfile.read_file(path / LOG, "log").records
    at, name = next((i, n) for i, record in enumerate(logged) for n in sorted(record["insert"])
                    if n not in ("e", "v"))

    def change(header, records):
        del records[at]["insert"][name]
    _forge(path, LOG, change)
    with Workspace.open(path, readonly=True) as ws:
        differences = ws.verify()
    missing = [d for d in differences if d.what == "row"]
    assert missing and all(d.relation == name and d.row in expected[name] and not d.stored for d in missing)
    assert any(d.what == "maintainer" and "maintainer.3" in d.stored for d in differences)


def test_verify_finds_a_raised_support_count(tmp_path):
    """(Commits 1-5 in the snapshot: a raised count that a logged commit reaches would fail the
    replay instead, as the test above.)"""
    path = _workspace(tmp_path / "ws")
    with Workspace.open(path) as ws:
        ws.compact()
    raised = {}

    def change(header, records):
        page = next(r for r in records if r.get("counts"))
        page["counts"][0][1] += 1
        raised["row"] = tuple(page["counts"][0][0])
    _forge(path, "maintainer.5", change)
    with Workspace.open(path, readonly=True) as ws:
        differences = ws.verify()
    counts = [d for d in differences if d.what == "support count"]
    assert len(counts) == 1 and counts[0].row == raised["row"] and counts[0].stored == counts[0].recomputed + 1
    done = _datalog("verify", path)
    assert done.returncode == 1 and "support count of" in done.stdout and "Traceback" not in done.stderr


# ---------------------------------------------------------------- forged records at random

HOSTILE = ["x", None, 1.5, [1], {"a": 1}, True, -1, 0, 2 ** 70, "", [[1]], [None], -0.0, [1, "x"], {}, []]


def _leaves(value, at=()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, at + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _leaves(inner, at + (i,))
    if at:
        yield at


def _replace(record, at, value) -> None:
    for key in at[:-1]:
        record = record[key]
    record[at[-1]] = value


def test_forged_records_at_random_give_coded_errors_only(tmp_path):
    """One value anywhere in any record (header fields that name the format aside) replaced by
    a hostile one, the file rewritten with valid checksums: reading, committing and compacting
    either work or raise a coded error (a DatalogError), never anything else."""
    base = _workspace(tmp_path / "base")
    rng = random.Random(23)
    names = [SNAPSHOT, LOG, "maintainer.3"]
    outcomes = {"ok": 0, "coded": 0}
    for _ in range(40):
        path = tmp_path / "ws"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(base, path)
        name = rng.choice(names)

        def change(header, records):
            target = rng.randrange(len(records) + 1)
            record = header if target == 0 else records[target - 1]
            spots = [at for at in _leaves(record)
                     if target or at[0] not in ("format", "kind", "version", "compression")]
            _replace(record, rng.choice(spots), rng.choice(HOSTILE))
        _forge(path, name, change)
        try:
            _use(path)
            outcomes["ok"] += 1
        except DatalogError as err:
            assert err.code.startswith("workspace_"), err
            outcomes["coded"] += 1
    assert outcomes["coded"] > 10, outcomes


# ---------------------------------------------------------------- records and ADTs (issue 18)

RECORDS = """
.type L = [head: number, tail: L]
.type Shape = Circle {r: number} | Square {side: number}
.decl s(x: Shape)
.decl e(n: number, l: L)
.decl big(x: Shape)
big(x) :- s(x), x = $Circle(r), r > 2.
.decl tails(l: L)
tails(l) :- e(_, l).
tails(t) :- tails([_, t]).
"""


def _records_workspace(path: Path) -> Path:
    """Records and ADT values in the snapshot (commit 1, compacted) and in the log (commit 2)."""
    with Workspace.create(path, RECORDS) as ws:
        ws.engine.commit(inserts={"s": [(Branch(["Circle", 5]),), (Branch(["Square", 1]),)],
                                  "e": [(1, Record([1, Record([2, NIL])]))]})
        ws.compact()
        ws.engine.commit(inserts={"s": [(Branch(["Circle", 9]),)], "e": [(2, NIL)]})
    return path


def test_records_and_adts_are_stored_maintained_and_verified(tmp_path):
    """A workspace keeps record and ADT values (JSON arrays, rebuilt by their column's type),
    maintains them, reopens equal to a recomputation, and stores no maintainer for them."""
    path = _records_workspace(tmp_path / "ws")
    with Workspace.open(path) as ws:
        ws.engine.commit(retracts={"s": [(Branch(["Circle", 5]),)]})
        kept = {n: ws.engine.rows(n) for n in ws.engine.relations()}
        assert kept["big"] == [(Branch(["Circle", 9]),)]
        assert sorted(map(str, (r[0] for r in kept["tails"]))) == ["[1, [2, nil]]", "[2, nil]", "nil"]
        assert ws.verify() == []
        ws.compact()
    with Workspace.open(path, readonly=True) as reader:
        assert {n: reader.engine.rows(n) for n in reader.engine.relations()} == kept
    scratch = Engine.from_source(RECORDS)
    scratch.insert("s", kept["s"])
    scratch.insert("e", kept["e"])
    scratch.run()
    assert {n: scratch.rows(n) for n in scratch.relations()} == kept
    assert not list(path.glob("maintainer*"))


@pytest.mark.parametrize("where, value, column", [
    (SNAPSHOT, [7, [1]], "column 2 of e"), (SNAPSHOT, [7, 8], "column 2 of e"),
    (SNAPSHOT, "[1, nil]", "column 2 of e"), (SNAPSHOT, {"head": 1}, "column 2 of e"),
    (LOG, ["Triangle", 3], "column 1 of s"), (LOG, ["Circle", "x"], "column 1 of s"),
    (LOG, ["Circle"], "column 1 of s"), (LOG, ["Circle", 2 ** 63], "column 1 of s")])
def test_a_forged_record_or_adt_value_is_corrupt(tmp_path, where, value, column):
    path = _records_workspace(tmp_path / "ws")
    if where == SNAPSHOT:
        _forge(path, SNAPSHOT, lambda h, records: _rows_record(records, "e")["values"].__setitem__(1, value))
    else:
        _forge(path, LOG, lambda h, records: records[-1]["insert"]["s"]["values"].__setitem__(0, value))
    with pytest.raises(DatalogError) as err:
        _use_records(path)
    assert err.value.code == "workspace_corrupt" and column in err.value.message, err.value.message


def _use_records(path: Path) -> None:
    with Workspace.open(path, readonly=True) as reader:
        for name in reader.engine.relations():
            reader.engine.rows(name)


def test_a_maintainer_planted_in_a_records_workspace_is_corrupt(tmp_path):
    """A records workspace stores no maintainer; one planted there for the snapshot's commit
    (checksums and commit number right) is refused by a writer, which would read it."""
    plain = _workspace(tmp_path / "plain")                      # one with a maintainer.3 of its own
    path = _records_workspace(tmp_path / "ws")                  # snapshot of commit 1
    shutil.copy(plain / "maintainer.3", path / "maintainer.1")
    _forge(path, "maintainer.1", lambda header, records: header.__setitem__("seq", 1))
    _use_records(path)                                          # readers never read it
    with pytest.raises(DatalogError) as err:
        Workspace.open(path)
    assert err.value.code == "workspace_corrupt" and "records, ADTs" in err.value.message


def test_a_block_that_would_derive_stored_records_is_refused_and_changes_nothing(tmp_path):
    path = _records_workspace(tmp_path / "ws")
    with Workspace.open(path) as ws:
        before = ({n: ws.engine.rows(n) for n in ws.engine.relations()}, list(ws.blocks))
        with pytest.raises(DatalogError) as err:
            ws.addblock("derive_s", "s($Square(side)) :- e(side, _).")
        assert err.value.code == "unsupported" and "s" in err.value.message
        assert ({n: ws.engine.rows(n) for n in ws.engine.relations()}, ws.blocks) == before
        ws.addblock("more", ".decl first(n: number)\nfirst(h) :- e(_, [h, _]).")     # records read: fine
        assert ws.engine.rows("first") == [(1,)]


UNSIGNED = ".decl u(x: unsigned)\nu(1u).\n.decl s(t: unsigned)\ns(t) :- t = sum x : u(x).\n"


@pytest.mark.parametrize("value", [-1, 2 ** 64, "1", 1.5, True])
def test_a_forged_value_in_an_unsigned_column_is_corrupt(tmp_path, value):
    """An unsigned column (issue 18) holds ints 0 .. 2^64-1: 2^64 - 1 is fine, -1 is forged."""
    path = tmp_path / "ws"
    with Workspace.create(path, UNSIGNED) as ws:
        ws.engine.commit(inserts={"u": [(2 ** 64 - 1,), (2 ** 63,)]})
    with Workspace.open(path) as ws:
        assert ws.engine.rows("s") == [((1 + 2 ** 64 - 1 + 2 ** 63) % 2 ** 64,)]
    _forge(path, LOG, lambda h, records: records[-1]["insert"]["u"]["values"].__setitem__(0, value))
    with pytest.raises(DatalogError) as err:
        Workspace.open(path, readonly=True)
    assert err.value.code == "workspace_corrupt" and "column 1 of u" in err.value.message, err.value
