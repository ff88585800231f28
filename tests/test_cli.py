"""The command line, run as a subprocess: ``datalog run | check | explain`` and ``python -m datalog``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import run_datalog

SCRIPT = Path(sys.executable).with_name("datalog")       # the console script next to this interpreter

PROGRAM = """\
.decl edge(a: number, b: number)
.input edge
.decl path(a: number, b: number)
.output path
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.decl unreachable(a: number, b: number)
.output unreachable
unreachable(x, y) :- edge(x, _), edge(_, y), !path(x, y).
.decl degree(a: number, n: number)
.printsize degree
degree(x, n) :- edge(x, _), n = count : { edge(x, _) }.
"""
EDGES = "1\t2\n2\t3\n4\t1\n"
PATH = "1\t2\n1\t3\n2\t3\n4\t1\n4\t2\n4\t3\n"
UNREACHABLE = "1\t1\n2\t1\n2\t2\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "prog.dl").write_text(PROGRAM)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text(EDGES)
    return tmp_path


def datalog(*args, cwd: Path, module: bool = True) -> subprocess.CompletedProcess:
    if module:
        return run_datalog(*args, cwd=cwd)
    return subprocess.run([str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


# ---------------------------------------------------------------- run

def test_run_writes_csv_files(project):
    result = ok(datalog("run", "prog.dl", "-F", "facts", "-D", "out", cwd=project))
    out = project / "out"
    assert sorted(p.name for p in out.iterdir()) == ["path.csv", "unreachable.csv"]
    assert (out / "path.csv").read_text() == PATH
    assert (out / "unreachable.csv").read_text() == UNREACHABLE
    assert result.stdout == "path\t6\ndegree\t3\n"             # .printsize only; outputs went to files
    assert result.stderr == ""


def test_run_creates_the_output_directory(project):
    ok(datalog("run", "prog.dl", "-F", "facts", "-D", "deep/er/out", cwd=project))
    assert (project / "deep" / "er" / "out" / "path.csv").read_text() == PATH


def test_run_with_console_script(project):
    if not SCRIPT.exists():
        pytest.skip(f"no console script at {SCRIPT} (is the package installed in this interpreter?)")
    ok(datalog("run", "prog.dl", "-F", "facts", "-D", "out", cwd=project, module=False))
    assert (project / "out" / "path.csv").read_text() == PATH


def test_run_defaults_to_current_directory(project):
    shutil.copy(project / "facts" / "edge.facts", project / "edge.facts")
    ok(datalog("run", "prog.dl", cwd=project))
    assert (project / "path.csv").read_text() == PATH


def test_output_to_stdout(project):
    result = ok(datalog("run", "prog.dl", "-F", "facts", "-D", "-", cwd=project))
    # Soufflé's -D - prints every output with its header line (the .decl's column names)
    assert result.stdout == ("---------------\npath\na\tb\n===============\n" + PATH + "===============\n"
                             "---------------\nunreachable\na\tb\n===============\n" + UNREACHABLE +
                             "===============\n"
                             "path\t6\ndegree\t3\n")
    assert not (project / "path.csv").exists()


def test_printsize_lines(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r(a: number)\n.printsize r\nr(1). r(2). r(2). r(3).\n"
                                   ".decl s(a: symbol)\n.printsize s\n")
    result = ok(datalog("run", "p.dl", "-D", "out", cwd=tmp_path))
    assert result.stdout == "r\t3\ns\t0\n"                     # `name<TAB>count`, duplicates counted once


@pytest.mark.parametrize("join", ["probe", "leapfrog"])
def test_join_strategies_agree(project, join):
    ok(datalog("run", "prog.dl", "-F", "facts", "-D", "out", "--join", join, cwd=project))
    assert (project / "out" / "path.csv").read_text() == PATH
    assert (project / "out" / "unreachable.csv").read_text() == UNREACHABLE


def test_timing_goes_to_stderr(project):
    result = ok(datalog("run", "prog.dl", "-F", "facts", "-D", "out", "--timing", cwd=project))
    assert result.stderr.startswith("evaluated in ") and result.stderr.endswith(" s\n")
    assert result.stdout == "path\t6\ndegree\t3\n"


def test_io_parameters(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pairs.csv").write_text("a,1\nb,2\n")
    (tmp_path / "p.dl").write_text('.decl pair(s: symbol, n: number)\n.input pair(filename="pairs.csv", '
                                   'delimiter=",")\n.decl big(s: symbol, n: number)\n'
                                   '.output big(filename="big.txt", delimiter=";")\n'
                                   "big(s, m) :- pair(s, n), m = n * 10.\n")
    ok(datalog("run", "p.dl", "-F", "in", "-D", "out", cwd=tmp_path))
    assert (tmp_path / "out" / "big.txt").read_text() == "a;10\nb;20\n"


def test_broken_pipe_is_quiet(tmp_path):
    rows = "".join(f"r({i}).\n" for i in range(20000))
    (tmp_path / "p.dl").write_text(f".decl r(a: number)\n.output r\n{rows}")
    command = f"set -o pipefail; {sys.executable} -m datalog run p.dl -D - | head -n 2"
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stdout == "---------------\nr\n"
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- check and explain

def test_check_prints_ok(project):
    result = ok(datalog("check", "prog.dl", cwd=project))
    assert result.stdout == "prog.dl: ok\n"
    assert result.stderr == ""
    assert not (project / "path.csv").exists()                # check evaluates nothing, writes nothing


def test_check_does_not_read_facts(tmp_path):
    (tmp_path / "p.dl").write_text(".decl e(a: number)\n.input e\n")   # there is no e.facts
    assert ok(datalog("check", "p.dl", cwd=tmp_path)).stdout == "p.dl: ok\n"


def test_explain_lists_strata_and_orders(project):
    result = ok(datalog("explain", "prog.dl", cwd=project))
    lines = result.stdout.splitlines()
    strata = [line for line in lines if line.startswith("stratum ")]
    assert strata == ["stratum 1 (non-recursive): edge",
                      "stratum 2 (recursive; tuple at a time): path",
                      "stratum 3 (non-recursive): unreachable",
                      "stratum 4 (non-recursive): degree"]
    assert "  path(x, z) :- path(x, y), edge(y, z)." in lines
    orders = [line.strip() for line in lines if line.strip().startswith("order [")]
    assert len(orders) == 4                                     # one plan per rule
    assert all("indexes" in order for order in orders)
    assert any(order.startswith("order [y, x, z]") for order in orders)   # the join variable y first
    assert result.stderr == ""


# ---------------------------------------------------------------- python -m datalog, usage, errors

def test_python_dash_m(project):
    result = ok(subprocess.run([sys.executable, "-m", "datalog", "--help"], capture_output=True, text=True,
                               cwd=project, timeout=60))
    assert "run" in result.stdout and "check" in result.stdout and "explain" in result.stdout
    ok(datalog("run", "prog.dl", "-F", "facts", "-D", "out", cwd=project, module=True))
    assert (project / "out" / "path.csv").read_text() == PATH


def test_no_command_is_a_usage_error(tmp_path):
    result = datalog(cwd=tmp_path)
    assert result.returncode == 1
    assert "error[bad_command]" in result.stderr and "usage:" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("program, code", [
    (".decl e(a: number)\np(x, y) :- e(x).\n.decl p(c0: number, c1: number)\n", "unbound_variable"),
    ("p(x) :- q(x)", "syntax_error"),
    (".decl e(a: number, b: number)\ne(1, 0).\n.output q\nq(z) :- e(x, y), z = x / y.\n.decl q(c0: number)\n", "division_by_zero"),
])
@pytest.mark.parametrize("command", ["run", "check"])
def test_user_error_exits_1_without_traceback(tmp_path, program, code, command):
    (tmp_path / "p.dl").write_text(program)
    result = datalog(command, "p.dl", "-D", "out", cwd=tmp_path) if command == "run" else \
        datalog(command, "p.dl", cwd=tmp_path)
    if command == "check" and code == "division_by_zero":        # a run-time error: the program checks
        assert ok(result).stdout == "p.dl: ok\n"
        return
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"error[{code}]" in result.stderr
    assert result.stderr.startswith("p.dl:")
    assert result.stdout == ""
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_program_exits_1(tmp_path):
    for command in ("run", "check", "explain"):
        result = datalog(command, "nope.dl", cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr == "error[missing_input]: program file nope.dl does not exist\n"


def test_too_deep_nesting_is_reported_not_crashed(tmp_path):
    (tmp_path / "p.dl").write_text("p(" + "1 + " * 3000 + "1).\n.output p\n")
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error[" in result.stderr


def test_unwritable_output_is_an_error(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r(a: number)\n.output r\nr(1).\n")
    (tmp_path / "out").write_text("a file, not a directory")
    result = datalog("run", "p.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "error[output_error]" in result.stderr and "Traceback" not in result.stderr


def test_nullary_relation_in_a_body(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r()\n.decl e()\n.printsize e\nr().\ne() :- r().\n")
    result = ok(datalog("run", "p.dl", "-D", "out", cwd=tmp_path))
    assert result.stdout == "e\t1\n"
