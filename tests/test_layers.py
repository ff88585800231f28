"""The layers import only downward: the import-linter contracts of pyproject.toml hold on the
code as it is, and a new upward import -- maintenance importing the engine -- breaks them.

The contracts (``lint-imports``, also run by ``make test`` before the tests): the layers
``datalog.cli`` > workspace, refresh, Spark diff and distributed evaluation > ``datalog.engine``
> ``maintenance`` > evaluation, sources, Spark tables and session > ``datalog.planning`` >
``datalog.language`` > ``lftj``; only ``datalog.spark`` imports pyspark and pyarrow; only the
parser imports lark; maintenance never imports the parser; lftj imports nothing from datalog or
maintenance; no two modules of a package import each other, even through others.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (the dev extra)")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def copy_of_the_code(where: Path) -> Path:
    for package in ("datalog", "lftj", "maintenance"):
        shutil.copytree(ROOT / package, where / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", where / "pyproject.toml")
    return where


def test_the_contracts_hold():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize("module, line, broken", [
    ("maintenance/journal.py", "from datalog.engine import Engine", "maintenance.journal -> datalog.engine"),
    ("lftj/trie.py", "from datalog.language import ast", "lftj.trie -> datalog.language"),
    ("datalog/planning/order.py", "from datalog.evaluation.compile import COMPARE",
     "datalog.planning.order -> datalog.evaluation.compile"),
    ("maintenance/delta.py", "import lark", "maintenance.delta -> lark"),
    ("maintenance/journal.py", "from datalog.language.parser import parse", "maintenance.journal -> datalog.language.parser"),
    ("datalog/language/types.py", "from datalog.language import checks", ".types -> .checks"),
])
def test_an_upward_import_breaks_a_contract(tmp_path, module, line, broken):
    code = copy_of_the_code(tmp_path)
    with open(code / module, "a", encoding="utf-8") as source:
        source.write(f"\n{line}  # an upward import\n")
    result = lint(code)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and broken in result.stdout, result.stdout
