"""Crash test: a child process commits a stream of transactions to a workspace (compacting often)
while this process kills it with SIGKILL at random instants. After every kill the reopened
workspace must be at the last acknowledged commit or the one in flight, and equal, relation by
relation, to evaluating that commit's EDB from scratch. Some rounds also open a reader while
the child commits: it must see a committed state at least as new as the acknowledgements seen."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from datalog.workspace.workspace import Workspace
from tests.workspace_oracle import PLAIN, PROGRAM, contents, edb_after, expected_after_steps, from_scratch

ROOT = Path(__file__).resolve().parent.parent
KILLS = 52
BLOCK_KILLS = 12          # more, in a stream that also adds and removes a block

CHILD = """
import sys
from datalog.workspace.workspace import Workspace
from tests.workspace_oracle import commit_of, step
ws = Workspace.open(sys.argv[1], compact_min=int(sys.argv[2]))
blocks = sys.argv[3] == "blocks"
k = ws.seq
print(f"open {k}", flush=True)
while True:
    k += 1
    if blocks:
        step(ws, k)
    else:
        ws.engine.commit(*commit_of(k))
    print(f"ack {k}", flush=True)
"""


def _acks(lines: list[str]) -> int | None:
    numbers = [int(line.split()[1]) for line in lines if line.startswith("ack ")]
    return numbers[-1] if numbers else None


def _check_committed(path: Path, low: int, high: int, blocks: bool = False) -> int:
    with Workspace.open(path, readonly=True) as ws:
        assert low <= ws.seq <= high, (low, ws.seq, high)
        expected = expected_after_steps(ws.seq) if blocks else from_scratch(PLAIN, edb_after(ws.seq))
        assert contents(ws.engine) == expected, ws.seq
        return ws.seq


def _round(path: Path, rng: random.Random, committed: int, blocks: bool = False) -> int:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(rng.choice([300, 800, 1 << 20])),
                              "blocks" if blocks else "commits"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if rng.random() < 0.15:
        time.sleep(rng.uniform(0, 0.3))                    # often before or while the child opens
    else:
        first = child.stdout.readline()
        assert first.startswith("open "), first
        assert committed <= int(first.split()[1]) <= committed + 1
        if rng.random() < 0.3:                             # a reader while commits run
            _check_committed(path, committed, 10 ** 9, blocks)
        time.sleep(rng.uniform(0, 0.15))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read().splitlines()
    child.wait()
    acknowledged = _acks(rest)
    low = committed if acknowledged is None else acknowledged
    return _check_committed(path, low, low + 1, blocks)


def test_sigkill_during_commits_loses_nothing_and_half_applies_nothing(tmp_path):
    """On PLAIN, whose maintainer is stored: each child restores it and maintains the log."""
    path = tmp_path / "ws"
    Workspace.create(path, PLAIN).close()
    rng = random.Random(int(os.environ.get("CRASH_SEED", "5")))
    committed = 0
    for _ in range(KILLS):
        committed = _round(path, rng, committed)
    assert committed > KILLS                               # commits really happened between kills
    with Workspace.open(path) as ws:                       # and the writer can go on
        assert ws.seq == committed and ws.engine.maintainer is not None


def test_sigkill_during_addblock_and_removeblock(tmp_path):
    path = tmp_path / "ws"
    Workspace.create(path, PROGRAM).close()
    rng = random.Random(int(os.environ.get("CRASH_SEED", "5")) + 1)
    committed = 0
    for _ in range(BLOCK_KILLS):
        committed = _round(path, rng, committed, blocks=True)
    assert committed > 10                                  # block steps were passed
