"""The README's "Why is this here?" section is true: each ``sh`` block's last command prints the
``text`` block after it (run from a scratch directory, ``programs/`` read from the repository),
and its ``pycon`` block runs as a doctest from the repository's root."""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Why is this here?"


def section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    return text[start:text.index("\n## ", start + len(SECTION))]


def test_shell_examples_print_what_the_readme_shows(tmp_path):
    pairs = re.findall(r"```sh\n(.*?)```\s*```text\n(.*?)```", section(), re.S)
    assert len(pairs) == 3
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for commands, shown in pairs:
        for command in commands.strip().splitlines():
            if command.startswith("printf"):
                subprocess.run(command, shell=True, cwd=tmp_path, check=True)
                continue
            words = [w.replace("programs/", f"{ROOT}/programs/") for w in shlex.split(command)]
            done = subprocess.run([sys.executable, "-m", "datalog", *words[1:]], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (command, done.stderr)
            printed = done.stdout.replace(f"{ROOT}/programs/", "programs/")
        assert printed == shown, command


def test_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    examples = "\n".join(re.findall(r"```pycon\n(.*?)```", section(), re.S))
    test = doctest.DocTestParser().get_doctest(examples, {}, "README: Why is this here?", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0 and examples.count(">>>") >= 8
