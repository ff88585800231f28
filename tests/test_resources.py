"""Evaluation within a memory budget, running out of memory, and Ctrl-C (datalog/engine/resources.py):
real processes, a real address-space limit, a real SIGINT."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datalog import Engine
from datalog.language.errors import DatalogError
from interrupts import interrupted_within_a_second, resident_bytes
from maintenance.budget import resident

LIMIT = 350                     # MB of address space for the out-of-memory tests
DATALOG = str(Path(sys.executable).with_name("datalog"))
RUNAWAY = ".decl n(x: number)\nn(0).\nn(x + 1) :- n(x).\n.output n\n"
# grows fast: 16M pairs in one join (a GB of tuples)
WIDE = (".decl n(x: number)\nn(x) :- x = range(0, 4000).\n.decl p(x: number, y: number)\n"
        "p(x, y) :- n(x), n(y).\n.output p\n")


def _program(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prog.dl"
    path.write_text(text)
    (tmp_path / "out").mkdir()
    return path


def test_run_stops_at_the_memory_budget_with_a_code_and_writes_nothing(tmp_path):
    prog = _program(tmp_path, RUNAWAY)
    done = subprocess.run([DATALOG, "run", str(prog), "-D", str(tmp_path / "out"), "--memory-budget", "150M"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "error[memory_budget]" in done.stderr and "of n" in done.stderr and "Traceback" not in done.stderr
    assert "n(x + 1) :- n(x)." in done.stderr                # the caret at the rule that grew
    assert list((tmp_path / "out").iterdir()) == []


def test_an_engine_over_its_budget_stays_unevaluated_and_evaluates_again_right():
    text = ".decl n(x: number)\nn(0).\nn(x + 1) :- n(x), x < 400000.\n.decl c(k: number)\nc(k) :- k = count : { n(_) }.\n"
    engine = Engine.from_source(text, memory_budget=(resident() or 0) + (20 << 20))
    with pytest.raises(DatalogError) as caught:
        engine.run()
    assert caught.value.code == "memory_budget" and "of n" in caught.value.message
    assert not engine.evaluated
    assert engine.stored_relation("n").sorted_rows() == [(0,)] and engine.stored_relation("c").sorted_rows() == []
    with pytest.raises(DatalogError) as again:          # an answer runs it again: over the budget again
        engine.rows("n")
    assert again.value.code == "memory_budget" and not engine.evaluated
    engine.memory_budget = 1 << 40
    engine.run()
    assert engine.evaluated and len(engine.rows("n")) == 400001 and engine.rows("c") == [(400001,)]


def test_a_budget_that_is_not_reached_changes_nothing():
    text = "e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z)."
    engine = Engine.from_source(text, memory_budget=1 << 40)
    engine.run()
    assert engine.rows("p") == [(1, 2), (1, 3), (2, 3)]


def _limited(megabytes: int):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


def test_running_out_of_memory_is_a_coded_error_on_the_cli(tmp_path):
    prog = _program(tmp_path, WIDE)
    done = subprocess.run([DATALOG, "run", str(prog), "-D", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited(LIMIT))
    assert done.returncode == 1, done.stderr
    assert "error[out_of_memory]" in done.stderr and "Traceback" not in done.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_running_out_of_memory_is_a_coded_error_in_the_api(tmp_path):
    script = (f"from datalog import Engine\nfrom datalog.language.errors import DatalogError\n"
              f"e = Engine.from_source({WIDE!r})\n"
              f"try:\n    e.run()\nexcept DatalogError as exc:\n"
              f"    print(exc.code, e.evaluated, len(e.stored_relation('p').sorted_rows()), "
              f"len(e.stored_relation('n').sorted_rows()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited(LIMIT))
    assert done.stdout.split() == ["out_of_memory", "False", "0", "0"], done.stderr


def test_running_out_of_memory_while_loading_is_a_coded_error_in_the_api(tmp_path):
    # 3M pairs: about 30 MB of text, far more than the 350 MB of address space as tuples
    with open(tmp_path / "e.facts", "w") as facts:
        facts.writelines(f"{i}\t{i + 1}\n" for i in range(3_000_000))
    script = (f"from datalog import Engine\nfrom datalog.language.errors import DatalogError\n"
              f"e = Engine.from_source('.decl e(a: number, b: number)\\n.input e\\ne(-1, -1).', {str(tmp_path)!r})\n"
              f"try:\n    e.run()\nexcept DatalogError as exc:\n"
              f"    print(exc.code, e.stored_relation('e').sorted_rows())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited(LIMIT))
    assert done.stdout.split() == ["out_of_memory", "[(-1,", "-1)]"], done.stderr    # only the program's fact


def test_ctrl_c_stops_a_large_run_within_a_second(tmp_path):
    prog = _program(tmp_path, WIDE)
    child = subprocess.Popen([DATALOG, "run", str(prog), "-D", str(tmp_path / "out")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    interrupted_within_a_second(child, lambda: resident_bytes(child.pid) >= 400 << 20)     # much to free


def test_the_budget_holds_in_a_thread_other_than_the_main_one():
    # in a process of its own: run in this one, the test process's later workspace commits under
    # line-by-line interrupt injection (test_atomic_commits) ran without end (not understood yet)
    script = f"""
import threading
from datalog import Engine
from datalog.engine.resources import resident
from datalog.language.errors import DatalogError
engine = Engine.from_source({RUNAWAY!r}, memory_budget=(resident() or 0) + (20 << 20))
caught = []
def run():
    try:
        engine.run()
    except DatalogError as exc:
        caught.append(exc.code)
worker = threading.Thread(target=run)
worker.start()
worker.join(120)
print(caught, engine.evaluated, engine.stored_relation("n").sorted_rows())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=150)
    assert done.stdout.split("\n")[0] == "['memory_budget'] False [(0,)]", done.stderr
