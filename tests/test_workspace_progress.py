"""``datalog init`` and ``datalog compact`` show their progress on stderr when it is a terminal (a
real pseudo-terminal here): the evaluation's strata, then setting up the maintainer, saving its
state and writing the snapshot; nothing of it when stderr is not a terminal."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

SCRIPT = str(Path(sys.executable).with_name("datalog"))
PROGRAM = """\
.decl edge(a: number, b: number)
.input edge
.decl reach(a: number)
.output reach
reach(0).
reach(y) :- reach(x), edge(x, y).
.decl hop2(a: number, c: number)
.output hop2
hop2(a, c) :- edge(a, b), edge(b, c).
"""
STEPS = re.compile(r"stratum \d/\d|setting up incremental maintenance|saving the maintainer's state|"
                   r"writing the snapshot")


def project(where: Path, n: int) -> Path:
    """The program over ``n`` nodes; at 2500 its init takes a second or two of CPU, most of it
    setting up and saving the maintainer."""
    rng = random.Random(2)
    (where / "prog.dl").write_text(PROGRAM)
    (where / "facts").mkdir()
    (where / "facts" / "edge.facts").write_text("".join(f"{i}\t{rng.randrange(n)}\n" for i in range(n)
                                                        for _ in range(2)))
    return where


def on_a_terminal(project: Path, *args: str, delay: str = "0.5") -> str:
    child = pexpect.spawn(SCRIPT, list(args), cwd=str(project), encoding="utf-8", timeout=120,
                          dimensions=(24, 120), env={**os.environ, "DATALOG_PROGRESS_DELAY": delay})
    output = child.read()
    child.close()
    assert child.exitstatus == 0, output
    return output


def test_init_and_compact_show_their_steps_on_a_terminal(tmp_path):
    project(tmp_path, 2500)
    shown = on_a_terminal(tmp_path, "init", "ws", "prog.dl", "-F", "facts", delay="0")
    assert "initialized ws: 3 relations" in shown
    steps = set(STEPS.findall(shown))
    assert {"setting up incremental maintenance", "saving the maintainer's state"} <= steps, shown[-2000:]
    assert re.search(r"3/3 strata", shown), shown[-2000:]          # evaluated, then the workspace's steps

    shown = on_a_terminal(tmp_path, "compact", "ws", delay="0")     # it can take under the usual 0.5 s
    assert "compacted ws: snapshot at commit 0" in shown
    assert {"saving the maintainer's state", "writing the snapshot"} & set(STEPS.findall(shown)), shown[-2000:]


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    project(tmp_path, 50)
    init = subprocess.run([SCRIPT, "init", "ws", "prog.dl", "-F", "facts"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert init.returncode == 0 and init.stdout.startswith("initialized ws: ") and init.stderr == ""
    compact = subprocess.run([SCRIPT, "compact", "ws"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert compact.returncode == 0 and compact.stderr == "", compact.stderr
