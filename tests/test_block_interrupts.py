"""``Workspace.addblock`` and ``removeblock`` stopped at any line of their own steps (KeyboardInterrupt,
a real SIGINT, SystemExit, MemoryError): the workspace is its program before or after, in memory,
on disk (reopened, verified), or its engine says ``engine_broken`` and the
workspace reopens to one of the two."""

from __future__ import annotations

import traceback
from collections import Counter

from datalog import Workspace
from datalog.workspace import log as wslog
from tests.interrupts import attempt
from tests.workspace_oracle import EDB, PROGRAM, from_scratch, broken, state

from tiers import LONG  # noqa: E402  (make test-all: every line)
STRIDE = 1 if LONG else 13
EXCEPTIONS = (KeyboardInterrupt, "SIGINT", MemoryError, SystemExit)
BLOCK = ".decl hop2(x: number, z: number)\nhop2(x, z) :- e(x, y), e(y, z).\nreach1(x) :- hop2(1, x).\n" \
        ".decl reach1(x: number)\n"
EXPECTED = {False: from_scratch(PROGRAM, EDB), True: from_scratch(PROGRAM + BLOCK, EDB)}


def _where(caught) -> str:
    return "".join(traceback.format_exception(caught)) if caught else "nothing raised"


def has_block(ws) -> bool:
    return [b["name"] for b in ws.blocks] == ["main", "hops"]


def durable_seq(path) -> int:
    log, snap = wslog.read_committed(path)
    return log.records[-1]["seq"] if log.records else snap.header["seq"]


def check_reopened(path, present: bool, at) -> None:
    with Workspace.open(path, readonly=True) as reader:
        assert has_block(reader) == present and state(reader.engine) == EXPECTED[present], at


def test_addblock_and_removeblock_stopped_at_any_line_are_before_or_after(tmp_path):
    path = tmp_path / "ws"
    ws = Workspace.create(path, PROGRAM)
    ws.engine.run()
    outcomes, at, unfired = Counter(), 0, 0
    while unfired < 2:
        at += STRIDE
        exc = EXCEPTIONS[at // STRIDE % len(EXCEPTIONS)]
        present, seq = has_block(ws), ws.seq
        operation = (lambda: ws.removeblock("hops")) if present else (lambda: ws.addblock("hops", BLOCK))
        fired, caught = attempt(operation, at, exc)
        unfired = 0 if fired else unfired + 1
        assert fired or caught is None, (at, caught)
        if broken(ws.engine):
            assert exc != "SIGINT", f"a Ctrl-C at event {at} broke the engine"
            outcomes["broken"] += 1
            ws.close()
            ws = Workspace.open(path)
            assert state(ws.engine) == EXPECTED[has_block(ws)] and ws.verify() == [], at
            continue
        now = has_block(ws)
        outcomes["made" if now != present else "undone"] += 1
        assert state(ws.engine) == EXPECTED[now], f"{exc} at event {at}: the blocks say {now}, the rows do not"
        assert ws.seq == seq + (now != present) == durable_seq(path), f"{exc} at event {at}: " + _where(caught)
        check_reopened(path, now, f"{exc} at event {at}")
    assert outcomes["made"] > 3 and outcomes["undone"] > 3, outcomes
    assert ws.verify() == []
    ws.close()
