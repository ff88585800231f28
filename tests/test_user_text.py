"""What a user reads names no internal work item ("issue 18", "session 17") and no commit hash:
the README, docs/, the design notes next to the code, the benchmark notes and the CLI's help."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from datalog.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
WORK_ITEM = re.compile(r"\b(issue|session|stop|task)s? #?\d+\b", re.I)
# a word of 7-40 hexadecimal digits with a letter and a digit in it: a commit (a plain number,
# 10000000, or a word of letters, "defaced", is none)
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def user_pages() -> list[Path]:
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "bench").glob("*.md"),
             *(ROOT / "maintenance").glob("**/README.md"), ROOT / "datalog" / "workspace.md"]
    return sorted(p for p in pages if p.exists())


def internal_references(text: str) -> list[str]:
    return [m.group(0) for m in WORK_ITEM.finditer(text)] + COMMIT.findall(text)


def test_the_patterns_find_what_they_are_for():
    assert internal_references("as in issue 18, measured at d546eca (session 17; Task 3)") == \
        ["issue 18", "session 17", "Task 3", "d546eca"]
    assert internal_references("10000000 rows, a deadbeef cafe, 0x1f, 2026-11-27, SHA-256, spark.session") == []


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_name_no_work_items_or_commits(page):
    found = [(n, ref) for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for ref in internal_references(line)]
    assert found == [], f"{page.relative_to(ROOT)}: reword with dates or without the labels"


def help_text(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


def test_cli_help_names_no_work_items_or_commits():
    top = help_text()
    commands = re.search(r"\{([\w,-]+)\}", top).group(1).split(",")
    assert "run" in commands and "refresh" in commands
    texts = [top, *(help_text(command) for command in commands)]
    assert all("usage: datalog" in text for text in texts)
    assert [ref for text in texts for ref in internal_references(text)] == []
