"""One golden program per Soufflé construct (issue 18), each with its maintenance twin.

Every folder ``tests/constructs/<construct>/`` holds

- ``prog.dl``: a program written for this project that uses the construct (never copied from
  another project), its ``.input`` files in ``facts/`` (if any);
- ``expected/<relation>.csv``: the outputs, written by hand from Soufflé's documented semantics
  and compared line for line after sorting, as Soufflé's own test harness compares;
- ``updates.dl`` (optional): batches of ``+r(..).``/``-r(..).``/``commit.`` applied after the run,
  maintained incrementally and checked, batch after batch, against a twin engine that recomputes
  every stratum from scratch: every relation and every delta must agree.

Every program must also survive a parse -> print -> parse round trip. A folder may add
``args`` (one command-line option per line, e.g. ``-M`` definitions) for the CLI run, which runs in
the folder (so ``-I lib`` is the folder's lib/); its preprocessor options (``-I``, ``-M``) are used by
the in-process parses too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.engine.updates import apply_batch
from datalog.cli.options import add_preprocessor_options, parse_options
from datalog.language.parser import parse, parse_file, parse_updates_file
from tests.cli_process import run_datalog

HERE = Path(__file__).resolve().parent / "constructs"
CONSTRUCTS = sorted(p.parent for p in HERE.glob("*/prog.dl"))
WITH_UPDATES = [p for p in CONSTRUCTS if (p / "updates.dl").exists()]


def _facts(folder: Path) -> Path:
    return folder / "facts" if (folder / "facts").is_dir() else folder


def _args(folder: Path) -> list[str]:
    return (folder / "args").read_text().split() if (folder / "args").exists() else []


def _parse_options(folder: Path):
    """The preprocessor options of the folder's ``args``, -I directories relative to the folder."""
    parser = argparse.ArgumentParser()
    add_preprocessor_options(parser)
    args, _ = parser.parse_known_args(_args(folder))
    args.include_dir = [str(folder / d) for d in args.include_dir]
    return parse_options(args)


def _sorted_lines(path: Path) -> list[str]:
    return sorted(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("folder", CONSTRUCTS, ids=[p.name for p in CONSTRUCTS])
def test_outputs_as_soufflé_gives_them(folder: Path, tmp_path: Path):
    """The CLI run (as a user runs it) writes exactly the expected outputs."""
    done = run_datalog("run", folder / "prog.dl", "-F", _facts(folder), "-D", tmp_path, *_args(folder), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    expected = sorted((folder / "expected").glob("*.csv"))
    assert expected, f"{folder.name} has no expected outputs"
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == [p.name for p in expected]
    for want in expected:
        assert _sorted_lines(tmp_path / want.name) == _sorted_lines(want), want.name


@pytest.mark.parametrize("folder", CONSTRUCTS, ids=[p.name for p in CONSTRUCTS])
def test_parse_print_parse(folder: Path):
    program = parse_file(folder / "prog.dl", _parse_options(folder))
    assert parse(str(program)) == program


def _rows(engine: Engine) -> dict[str, set]:
    return {name: set(engine.rows(name)) for name in engine.relations()}


@pytest.mark.parametrize("folder", WITH_UPDATES, ids=[p.name for p in WITH_UPDATES])
def test_maintenance_twin_agrees_with_recomputation(folder: Path):
    options = _parse_options(folder)
    maintained = Engine.from_file(folder / "prog.dl", _facts(folder), maintenance="incremental",
                                  parse_options=options)
    recomputed = Engine.from_file(folder / "prog.dl", _facts(folder), maintenance="recompute",
                                  parse_options=options)
    for engine in (maintained, recomputed):
        engine.run()
    assert _rows(maintained) == _rows(recomputed)
    batches = parse_updates_file(folder / "updates.dl")
    assert batches, f"{folder.name}/updates.dl has no batch"
    for number, batch in enumerate(batches, 1):
        before = _rows(recomputed)
        delta = apply_batch(maintained, batch)
        apply_batch(recomputed, batch)
        after = _rows(recomputed)
        assert _rows(maintained) == after, f"batch {number}"
        for name in after:
            change = delta.get(name)
            inserted = set(change.inserted) if change else set()
            retracted = set(change.retracted) if change else set()
            assert inserted == after[name] - before[name], f"batch {number}: {name} inserted"
            assert retracted == before[name] - after[name], f"batch {number}: {name} retracted"
