"""Provenance from the command line: golden transcripts of Soufflé's explain interface and of the
REPL's .why / .whynot (tests/provenance/, UPDATE_GOLDEN=1 rewrites them for review), explain-fact,
a workspace's why, and their errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_process import run_datalog

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "provenance"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
ANDERSEN = ["programs/andersen/prog.dl", "-F", "programs/andersen/facts"]


def datalog(*args, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return run_datalog(*args, input=stdin, cwd=cwd, env=env)


def golden(name: str, text: str) -> None:
    path = CASES / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_explain_interface_transcript(tmp_path):
    """The program's .pragma "provenance" opens Soufflé's interface after the run: explain,
    setdepth, subproof, explainnegation, rule, format json; piped, only trees are printed."""
    done = datalog("run", "tests/provenance/family.dl", "-D", tmp_path,
                   stdin=(CASES / "family.in").read_text(encoding="utf-8"))
    assert done.returncode == 0 and done.stderr == ""
    golden("family.out", done.stdout)


def test_explain_interface_layout_of_floats_equalities_and_negations(tmp_path):
    """Soufflé's layout: a fact's floats as %f, an equality over variables atoms bound shown as a
    test (2 = 2), an assignment not shown, a negation under explainnegation as !muted(); query's
    answers one a line (`;` asks for the next, anything else stops), true. / false., an error."""
    done = datalog("run", "tests/provenance/measures.dl", "-D", tmp_path,
                   stdin=(CASES / "measures.in").read_text(encoding="utf-8"))
    assert done.returncode == 0 and done.stderr == ""
    golden("measures.out", done.stdout)


def test_t_explain_opens_the_interface_without_the_pragma(tmp_path):
    done = datalog("run", *ANDERSEN, "-D", tmp_path, "-t", "explain",
                   stdin='explain heapPointsTo("build@113", "put@13")\nmeasure alias\nexit\n')
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()                 # after .printsize's line: the tree
    at = [line.strip() for line in lines].index('heapPointsTo("build@113", "put@13")')
    assert lines[0].startswith("alias\t") and lines[at - 1].endswith("(R1)")
    assert sum(line.startswith("Tuples expanded: ") for line in lines) >= 10


def test_repl_session_transcript():
    done = datalog("repl", "--echo", stdin=(CASES / "session.dl").read_text(encoding="utf-8"))
    assert done.returncode == 1                      # the last statement is a mistake
    assert "error[bad_fact]" in done.stderr and "Traceback" not in done.stderr
    golden("session.out", done.stdout)


def test_explain_fact_text_json_and_why_not():
    done = datalog("explain-fact", *ANDERSEN, 'heapPointsTo("build@113", "put@13")')
    assert done.returncode == 0 and done.stdout.splitlines()[-1].strip() == 'heapPointsTo("build@113", "put@13")'
    done = datalog("explain-fact", *ANDERSEN, 'heapPointsTo("build@113", "put@13")', "--format", "json")
    proof = json.loads(done.stdout)
    assert proof["rule"] == "heapPointsTo(b, o) :- store(base, from), pointsTo(base, b), pointsTo(from, o)."
    assert proof["premises"][0]["source"].startswith("store.facts:")
    done = datalog("explain-fact", *ANDERSEN, 'pointsTo("build_z", "get@87")', "--depth", "0")
    assert "fails at pointsTo(from, o): no pointsTo(\"get_s\", \"get@87\") in pointsTo" in done.stdout


def test_explain_fact_after_updates(tmp_path):
    (tmp_path / "up.dl").write_text('-store("swap_t", "put_q").\ncommit.\n')
    done = datalog("explain-fact", *ANDERSEN, 'heapPointsTo("build@113", "put@13")', "--updates", tmp_path / "up.dl")
    assert done.returncode == 0
    assert 'store("swap_t", "put_q")' not in done.stdout


def test_workspace_why(tmp_path):
    assert datalog("init", tmp_path / "ws", *ANDERSEN).returncode == 0
    (tmp_path / "up.dl").write_text('+assign("build_z", "swap_t").\ncommit.\n')
    assert datalog("update", tmp_path / "ws", tmp_path / "up.dl").returncode == 0
    done = datalog("why", tmp_path / "ws", 'pointsTo("build_z", "build@113")', "--format", "json")
    proof = json.loads(done.stdout)
    assert proof["premises"][0]["fact"] == 'assign("build_z", "swap_t")'
    done = datalog("why", tmp_path / "ws", 'pointsTo("build_z", "nowhere")')
    assert done.returncode == 0 and "is not in pointsTo: 3 rules could derive it" in done.stdout


@pytest.mark.parametrize("fact, code", [('pointsTo(X, "a")', "bad_fact"), ("nothing(1)", "undefined_relation"),
                                        ('pointsTo("a")', "arity_mismatch"), ("pointsTo(", "syntax_error")])
def test_explain_fact_errors(fact, code):
    done = datalog("explain-fact", *ANDERSEN, fact)
    assert done.returncode == 1 and f"error[{code}]" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_kept_heights_from_the_command_line(tmp_path):
    """--provenance (explain-fact, run, why, repl): the proof read off kept heights has the
    height of the searched one."""
    fact = 'heapPointsTo("build@113", "put@13")'
    searched = json.loads(datalog("explain-fact", *ANDERSEN, fact, "--format", "json").stdout)
    kept = json.loads(datalog("explain-fact", *ANDERSEN, fact, "--format", "json", "--provenance").stdout)
    assert kept["height"] == searched["height"] and kept["fact"] == fact
    done = datalog("run", *ANDERSEN, "-D", tmp_path, "--provenance")
    assert done.returncode == 0 and done.stdout.startswith("alias\t"), done.stderr
    assert datalog("init", tmp_path / "ws", *ANDERSEN).returncode == 0
    done = datalog("why", tmp_path / "ws", fact, "--format", "json", "--provenance")
    assert json.loads(done.stdout)["height"] == searched["height"]
    done = datalog("repl", "--provenance", *ANDERSEN, stdin=f".why {fact}\n")
    assert done.returncode == 0 and fact in done.stdout, done.stderr
