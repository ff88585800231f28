"""The README's "From Python and notebooks" section is true: its ``pycon`` blocks run as one doctest,
its ``sh`` commands run and the files they write are what it says; so do the ``pycon`` blocks of
its "Python API" section."""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## From Python and notebooks"
API = "## Python API"


def section(name: str = SECTION) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(name)
    end = text.index("\n## ", start + len(name))
    return text[start:end]


def blocks(kind: str, name: str = SECTION) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(name), re.S)


def test_python_api_examples_run():
    pytest.importorskip("pandas")
    examples = "\n".join(blocks("pycon", API))
    assert examples.count(">>>") >= 5
    test = doctest.DocTestParser().get_doctest(examples, {}, "README: Python API", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted == examples.count(">>>")


def test_python_examples_run(monkeypatch, tmp_path):
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    examples = "\n".join(blocks("pycon"))
    assert examples.count(">>>") > 10
    test = doctest.DocTestParser().get_doctest(examples, {}, "README: From Python and notebooks", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    with warnings.catch_warnings():                      # the example silences SubscriptionWarning
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted == examples.count(">>>")


def test_shell_examples_run(tmp_path):
    commands = [line.split("#")[0].strip() for line in blocks("sh")[0].splitlines() if line.strip()]
    for command in commands:
        words = shlex.split(command)
        words = [str(ROOT / w) if w.startswith("programs/") else w for w in words]
        if words[0] == "datalog":
            done = subprocess.run([sys.executable, "-m", "datalog", *words[1:]], cwd=tmp_path,
                                  capture_output=True, text=True)
            assert done.returncode == 0, (command, done.stderr)
    said = re.search(r"ls changes/ +# (.*)", blocks("sh")[0]).group(1).replace("...", "").split()
    files = sorted(p.name for p in (tmp_path / "changes").iterdir())
    assert files[:len(said)] == said
    first = pq.read_table(tmp_path / "changes" / files[0])
    assert first.column_names == ["x", "y", "weight"]
