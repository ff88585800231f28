"""The memory budget of the maintained state (``--memory-budget``, maintenance/budget.py) and the
state size per rule that ``engine.stats()`` / ``datalog explain --maintenance`` report."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from maintenance.budget import MemoryBudget, parse_size, resident
from tests.test_maintenance import snapshot
from tests.cli_process import run_datalog

PROGRAM = """
.decl e(x: number, y: number)
.decl f(x: number, y: number)
p(x, y) :- e(x, y).
two(x, z) :- e(x, y), f(y, z).
.decl p(c0: number, c1: number)
.decl two(c0: number, c1: number)
"""
EDGES = [(i, (i * 7) % 50) for i in range(200)]


def _engine(budget=None) -> Engine:
    engine = Engine.from_source(PROGRAM, memory_budget=budget)
    engine.insert("e", EDGES)
    engine.insert("f", [(b, a) for a, b in EDGES])
    engine.run()
    return engine


def _contents(engine: Engine) -> dict:
    return {name: sorted(engine.db[name].tuples) for name in ("e", "f", "p", "two")}


@pytest.mark.skipif(resident() is None, reason="no /proc: the process's memory is not known")
def test_a_rule_whose_state_does_not_fit_is_named_and_the_build_changes_nothing():
    engine = _engine(budget=1)                         # one byte: no rule fits
    before = _contents(engine)
    with pytest.raises(DatalogError) as err:
        engine.commit({"e": [(1000, 1)]})
    assert err.value.code == "memory_budget"
    assert re.search(r"rule `(p\(x, y\) :- e\(x, y\)|two\(x, z\) :- e\(x, y\), f\(y, z\))\.?`", err.value.message)
    assert "memory budget of 1 bytes" in err.value.message
    assert _contents(engine) == before and engine.maintainer is None
    engine.memory_budget = None                        # the machine's: it fits
    delta = engine.commit({"e": [(1000, 1)]})
    twin = Engine.from_source(PROGRAM, maintenance="recompute")
    twin.insert("e", EDGES)
    twin.insert("f", [(b, a) for a, b in EDGES])
    twin.run()
    assert delta == twin.commit({"e": [(1000, 1)]})
    assert _contents(engine) == _contents(twin)


@pytest.mark.skipif(resident() is None, reason="no /proc: the process's memory is not known")
def test_a_transaction_past_the_budget_rolls_back(monkeypatch):
    """The maintainer is built; then the budget shrinks and a commit that records is refused:
    relations, support counts, sensitivity indices and traces are as before."""
    engine = _engine()
    engine.commit({"e": [(1000, 1)]})
    before = snapshot(engine)
    monkeypatch.setattr(MemoryBudget, "every", 0)   # (a check at every operation of new rules only)
    engine.maintainer.registry.budget = MemoryBudget(1)
    for rule in engine.maintainer.rules.values():  # the recorders read ``every`` when made
        rule.records = [rule._recorder(d) for d in range(rule.depth)]
    with pytest.raises(DatalogError) as err:
        engine.commit({"e": [(2000, 3)], "f": [(3, 4)]}, {"e": [EDGES[0]]})
    assert err.value.code == "memory_budget"
    assert snapshot(engine) == before
    engine.maintainer.registry.budget = MemoryBudget(None)
    engine.commit({"e": [(2000, 3)]})
    assert (2000, 3) in engine.db["p"].tuples


def test_stats_report_each_rules_state():
    engine = _engine()
    engine.commit({"e": [(1000, 1)]})
    stats = engine.stats()
    for rule in ("p(x, y) :- e(x, y).", "two(x, z) :- e(x, y), f(y, z)."):
        assert re.fullmatch(r"\d+(\.\d)? (bytes|KB|MB|GB)", stats[rule]["state"]), stats[rule]
    big, small = (_bytes(stats[r]["state"]) for r in ("two(x, z) :- e(x, y), f(y, z).", "p(x, y) :- e(x, y)."))
    assert big > small > 0                           # a join keeps more than a copy


def _bytes(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"bytes": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit]


def test_sizes():
    assert parse_size("8G") == 8 << 30 and parse_size("500m") == 500 << 20 and parse_size("1.5k") == 1536
    with pytest.raises(ValueError):
        parse_size("lots")


# ---------------------------------------------------------------- the command line

def _datalog(*args, cwd: Path) -> subprocess.CompletedProcess:
    result = run_datalog(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def program(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM.replace(".decl e(x: number, y: number)", ".decl e(x: number, y: number)\n.input e")
                                   .replace(".decl f(x: number, y: number)", ".decl f(x: number, y: number)\n.input f"))
    (tmp_path / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in EDGES))
    (tmp_path / "f.facts").write_text("".join(f"{b}\t{a}\n" for a, b in EDGES))
    (tmp_path / "u.dl").write_text("+e(1000, 1).\ncommit.\n")
    return tmp_path


@pytest.mark.skipif(resident() is None, reason="no /proc: the process's memory is not known")
def test_cli_names_the_rule_that_does_not_fit(program):
    result = _datalog("run", "p.dl", "-D", "-", "--updates", "u.dl", "--memory-budget", "1", cwd=program)
    assert result.returncode == 1
    assert "error[memory_budget]" in result.stderr and "rule `" in result.stderr


def test_cli_explain_maintenance_shows_the_state_of_each_rule(program):
    result = _datalog("explain", "p.dl", "--maintenance", "--updates", "u.dl", "--memory-budget", "64G", cwd=program)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.endswith("rule"))
    assert "state" in header.split()
    rows = [line for line in result.stdout.splitlines() if ":-" in line]
    assert len(rows) == 2 and all(re.search(r"\d (bytes|KB|MB|GB)\s", row) for row in rows)


def test_cli_refuses_a_size_that_is_not_one(program):
    result = _datalog("run", "p.dl", "--memory-budget", "lots", cwd=program)
    assert result.returncode == 1 and "error[bad_option]" in result.stderr and "not a size" in result.stderr
