"""Every program in programs/ is a golden test: its outputs must equal expected/.

Each program runs with both level intersections (hash probes and the leapfrog
loop) and must survive a parse -> print -> parse round trip.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.language.parser import parse, parse_file

PROGRAMS = sorted(p.parent for p in Path(__file__).resolve().parent.parent.glob("programs/*/prog.dl"))


def _run(program_dir: Path, out_dir: Path, intersect: str) -> str:
    engine = Engine.from_file(program_dir / "prog.dl", program_dir / "facts", intersect=intersect)
    engine.run()
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        lines = engine.write_outputs(str(out_dir))
    return "".join(line + "\n" for line in lines) + stdout.getvalue()


def test_there_are_programs():
    assert len(PROGRAMS) >= 8


@pytest.mark.parametrize("intersect", ["probe", "leapfrog"])
@pytest.mark.parametrize("program_dir", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_golden_outputs(program_dir: Path, intersect: str, tmp_path: Path):
    printed = _run(program_dir, tmp_path, intersect)
    expected_dir = program_dir / "expected"
    expected_files = sorted(expected_dir.glob("*.csv"))
    assert expected_files, f"{program_dir.name} has no expected outputs"
    for expected in expected_files:
        produced = tmp_path / expected.name
        assert produced.exists(), f"{program_dir.name}: {expected.name} was not written"
        assert produced.read_text() == expected.read_text(), f"{program_dir.name}: {expected.name} differs"
    written = {p.name for p in tmp_path.glob("*.csv")}
    assert written == {p.name for p in expected_files}
    stdout = expected_dir / "stdout.txt"
    assert printed == (stdout.read_text() if stdout.exists() else "")


@pytest.mark.parametrize("program_dir", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_round_trip(program_dir: Path):
    program = parse_file(program_dir / "prog.dl")
    assert parse(str(program)) == program
