"""The forked CLI runner of the tests (tests/cli_process.py) against a real ``python -m datalog``:
the same exit status, stdout and stderr for each kind of command the CLI test files run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_process import run_datalog

ROOT = Path(__file__).resolve().parent.parent
TC = ROOT / "programs" / "transitive_closure"
FRESH = {**os.environ, "DATALOG_TEST_SUBPROCESS": "1"}

COMMANDS = [
    pytest.param(("run", TC / "prog.dl", "-F", TC / "facts", "-D", "-"), None, id="run to stdout"),
    pytest.param(("check", "errors/unsafe_negation.dl"), None, id="a golden error"),
    pytest.param(("run", "no/such/file.dl"), None, id="a missing program"),
    pytest.param(("--version",), None, id="version"),
    pytest.param(("run", "--facts", "x"), None, id="an argument mistake"),
    pytest.param(("repl", TC / "prog.dl", "-F", TC / "facts"), "?- path(1, X).\nedge(9, 1).\n?- path(9, X).\n",
                 id="a piped repl script"),
    pytest.param(("repl",), ".decl r(x: number)\nr(1).\n?- r(\n", id="a repl script that ends mid-statement"),
]


@pytest.mark.parametrize("args, stdin", COMMANDS)
def test_a_forked_command_is_what_a_new_process_gives(args, stdin):
    forked = run_datalog(*args, cwd=ROOT / "tests", input=stdin)
    fresh = run_datalog(*args, cwd=ROOT / "tests", input=stdin, env=FRESH)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.stdout or forked.stderr                  # (a command that printed nothing proves little)


def test_the_child_has_its_own_directory_environment_and_umask(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r(x: number)\nr(1).\n.output r\n")
    before = (os.getcwd(), dict(os.environ), os.umask(0o022))
    os.umask(before[2])
    done = run_datalog("run", "p.dl", "-D", ".", cwd=tmp_path, env={**os.environ, "X_ONLY_THE_CHILD": "1"},
                       umask=0o077)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.csv").read_text() == "1\n"
    assert (tmp_path / "r.csv").stat().st_mode & 0o077 == 0             # written under the child's umask
    now = (os.getcwd(), dict(os.environ), os.umask(0o022))
    os.umask(now[2])
    assert now == before                                                # none of it reached the test process


def test_a_command_that_overruns_its_timeout_is_killed(tmp_path):
    import subprocess
    (tmp_path / "p.dl").write_text("n(0).\nn(x + 1) :- n(x), x < 100000000.\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_datalog("run", "p.dl", "-D", ".", cwd=tmp_path, timeout=1)
