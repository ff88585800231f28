"""Every page a user reads (README.md and docs/*.md) is true where it shows commands or Python.

Each page's fenced blocks run in document order in one scratch directory (``programs/`` is a
link to the repository's), sharing one Python namespace:

- a ``sh`` block runs under bash with this virtualenv's ``datalog`` and ``python`` first on
  ``PATH``; it must exit 0, or N where the block says ``# exit status N``; when a ``text`` block
  follows it, what it prints (stdout and stderr, in order) must be that text, timings aside
  (``maintained in 0.4 ms``: the numbers are not compared);
- a ``pycon`` block is a doctest, a ``python`` block is executed; neither may fail.

A ``sh`` block preceded by ``<!-- not run: reason -->`` is not run (it starts Spark, or it stands
for the reader's own files): the reason is required. With ``DATALOG_DOCS_SPARK=1`` the blocks whose
reason begins "starts Spark" run as well (a JVM each: for the long test runs). ``ipython`` cells run in
tests/test_notebook.py, the REPL session also in tests/test_repl.py.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(<!-- not run: ([^>]*?) -->\s*)?^```(\w*)\n(.*?)^```\n", re.S | re.M)
TIMING = re.compile(r"\b\d+(\.\d+)? (ms|s)\b")
SPARK = os.environ.get("DATALOG_DOCS_SPARK") == "1"    # run the blocks that start Spark too (slow)


def blocks(page: str) -> list[tuple[int, str, str, str | None]]:
    """(line, kind, body, why it is not run) of each fenced block of ``page``, in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(3)) + 1, m.group(3), m.group(4), m.group(2))
            for m in FENCE.finditer(text)]


def expected_output(found: list, index: int) -> str | None:
    """The ``text`` block right after block ``index`` of ``found``, if one is."""
    if index + 1 < len(found) and found[index + 1][1] == "text":
        return found[index + 1][2]
    return None


def run_shell(page: str, line: int, body: str, cwd: Path, shown: str | None) -> None:
    status = re.search(r"# exit status (\d+)", body)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run(["bash", "-e", "-c", body], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    where = f"{page}:{line}"
    assert done.returncode == (int(status.group(1)) if status else 0), (where, done.stdout)
    if shown is not None:
        assert TIMING.sub("T", done.stdout) == TIMING.sub("T", shown), where


def run_python(page: str, line: int, kind: str, body: str, globs: dict) -> None:
    if kind == "python":
        exec(compile(body, f"{page}:{line}", "exec"), globs)          # the page's own example
        return
    test = doctest.DocTestParser().get_doctest(body, globs, f"{page}:{line}", page, line)
    test.globs = globs                                  # the page's blocks share one namespace
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test, clear_globs=False)
    assert runner.summarize(verbose=False).failed == 0, f"{page}:{line}"


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, tmp_path, monkeypatch):
    found = blocks(page)
    (tmp_path / "programs").symlink_to(ROOT / "programs")
    monkeypatch.chdir(tmp_path)
    globs: dict = {"__name__": "__docs__"}
    with warnings.catch_warnings():                    # an example may silence warnings
        for index, (line, kind, body, not_run) in enumerate(found):
            if not_run is not None and not (not_run.startswith("starts Spark") and SPARK):
                assert kind == "sh" and not_run.strip(), f"{page}:{line}: say why it is not run"
            elif kind == "sh":
                run_shell(page, line, body, tmp_path, expected_output(found, index))
            elif kind in ("pycon", "python"):
                run_python(page, line, kind, body, globs)


def test_every_page_is_tested():
    """The pages are all found, and each shell block runs or says why not."""
    assert {"README.md", "docs/cli.md", "docs/language.md", "docs/python-api.md", "docs/workspaces.md",
            "docs/spark.md", "docs/maintenance.md", "docs/provenance.md", "docs/benchmarks.md"} <= set(PAGES)
    shells = [(page, b) for page in PAGES for b in blocks(page) if b[1] == "sh"]
    run = [b for _, b in shells if b[3] is None]
    assert len(run) >= 10 and len(run) > len(shells) - len(run)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of ``page``'s headings."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES)
def test_links_lead_somewhere(page):
    """Every relative link of the page names a file that exists, and a heading of it."""
    source = ROOT / page
    for target in re.findall(r"\]\(([^)\s]+)\)", source.read_text(encoding="utf-8")):
        if re.match(r"\w+:", target):
            continue                                    # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        assert linked.exists(), f"{page}: {target}"
        if anchor:
            assert anchor in anchors(linked), f"{page}: {target}"


def test_readme_contents_list_every_page_and_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    contents = readme[readme.index("## Contents"):]
    for page in PAGES[1:]:
        assert f"]({page})" in contents, page
        for section in anchors(ROOT / page) - {anchors_of_title(ROOT / page)}:
            assert f"]({page}#{section})" in contents, (page, section)


def anchors_of_title(page: Path) -> str:
    title = page.read_text(encoding="utf-8").splitlines()[0]
    return re.sub(r"[^\w\- ]", "", title[2:].strip().lower()).replace(" ", "-")
