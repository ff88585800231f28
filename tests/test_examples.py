"""The notebook-style examples of programs/ (issue 20, part 5) run as scripts, as a user runs them,
and what they show is checked against the engine: the change stream of
programs/notebook_stream/example.py adds up to the relation that evaluating the program from
scratch over the final facts gives, one change per commit that changed it, in commit order."""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pandas")

from datalog import Engine  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "programs" / "notebook_stream" / "example.py"


def test_the_example_runs_as_a_script():
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parents[2]), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "weight" in done.stdout and "reaches: " in done.stdout


def test_the_examples_stream_adds_up_to_the_relation():
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        scope = runpy.run_path(str(EXAMPLE), run_name="__main__")
    engine, stream, changes = scope["engine"], scope["stream"], scope["changes"]
    commits = [change.commit for change in stream]
    assert commits == sorted(set(commits)) and commits[0] == 0 and commits[-1] < engine.commit_number
    scratch = Engine.from_source(scope["PROGRAM"])
    for name in ("route", "closed"):
        scratch.insert(name, engine.rows(name))
    scratch.run()
    total: dict = {}
    for change in stream:
        for *row, weight in change.rows():
            total[tuple(row)] = total.get(tuple(row), 0) + weight
    assert sorted(row for row, weight in total.items() if weight) == scratch.rows("reaches")
    assert all(weight in (0, 1) for weight in total.values())
    assert changes.to_string(index=False) in printed.getvalue()
