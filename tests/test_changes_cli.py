"""``datalog update ws/ upd.dl --changes DIR`` end to end on a real workspace: the files read back
(pyarrow) add up, per output relation, to the relation's change over the run, which is what
evaluating the program from scratch gives."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from datalog import Engine, Workspace
from datalog.cli.commands import main

PROGRAM = """
.decl e(x: number, y: number)
.decl blocked(x: number)
.decl reach(x: number, y: number)
.decl open(x: number, y: number)
.decl label(x: number, name: symbol)
.output reach
.output open
.output label
reach(x, y) :- e(x, y).
reach(x, z) :- reach(x, y), e(y, z).
open(x, y) :- reach(x, y), !blocked(x), !blocked(y).
label(x, cat("n", to_string(x))) :- reach(x, _), !blocked(x).
e(0, 1). e(1, 2).
"""
OUTPUTS = ("reach", "open", "label")


def updates(seed: int) -> str:
    rng = random.Random(seed)
    lines = []
    for _ in range(rng.randint(1, 6)):
        for _ in range(rng.randint(0, 4)):
            sign = rng.choice("+-")
            if rng.random() < 0.7:
                lines.append(f"{sign}e({rng.randint(0, 4)}, {rng.randint(0, 4)}).")
            else:
                lines.append(f"{sign}blocked({rng.randint(0, 4)}).")
        lines.append("commit.")
    return "\n".join(lines) + "\n"


def summed(directory: Path, fmt: str) -> dict[str, dict[tuple, int]]:
    totals: dict[str, Counter] = {name: Counter() for name in OUTPUTS}
    files = sorted(directory.iterdir())
    commits = [int(f.name.split("-")[0]) for f in files]
    assert commits == sorted(commits)
    for path in files:
        name = path.name.split("-", 1)[1].rsplit(".", 1)[0]
        assert path.suffix == "." + fmt
        table = pq.read_table(path) if fmt == "parquet" else pcsv.read_csv(path)
        assert table.column_names[-1] == "weight"
        for row in table.to_pylist():
            weight = row.pop("weight")
            totals[name][tuple(row.values())] += weight
    return {name: {row: w for row, w in counter.items() if w} for name, counter in totals.items()}


def edb_of(path: Path) -> dict[str, list]:
    with Workspace.open(path, readonly=True) as ws:
        return {name: ws.engine.rows(name) for name in ("e", "blocked")}, \
            {name: set(ws.engine.rows(name)) for name in OUTPUTS}, ws.seq


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_changes_files_add_up_to_the_relations(tmp_path, seed, fmt, capsys):
    program, upd, ws, out = tmp_path / "p.dl", tmp_path / "u.dl", tmp_path / "ws", tmp_path / "changes"
    program.write_text(PROGRAM)
    upd.write_text(updates(seed))
    assert main(["init", str(ws), str(program)]) == 0
    _, before, seq_before = edb_of(ws)
    assert main(["update", str(ws), str(upd), "--changes", str(out), "--changes-format", fmt]) == 0
    edb, after, seq_after = edb_of(ws)
    scratch = Engine.from_source(PROGRAM.replace("e(0, 1). e(1, 2).", ""))
    for name, rows in edb.items():
        scratch.insert(name, rows)
    scratch.run()
    totals = summed(out, fmt) if out.exists() else {name: {} for name in OUTPUTS}
    for name in OUTPUTS:
        assert after[name] == set(scratch.rows(name))
        expected = {**{r: 1 for r in after[name] - before[name]}, **{r: -1 for r in before[name] - after[name]}}
        assert totals[name] == expected, name
    if out.exists():
        assert all(seq_before < int(f.name[:10]) <= seq_after for f in out.iterdir())


def test_types_and_names_of_the_files(tmp_path):
    program, upd, ws, out = tmp_path / "p.dl", tmp_path / "u.dl", tmp_path / "ws", tmp_path / "deep" / "changes"
    program.write_text(PROGRAM)
    upd.write_text("+e(2, 3).\ncommit.\n")
    done = subprocess.run([sys.executable, "-m", "datalog", "init", str(ws), str(program)], capture_output=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "datalog", "update", str(ws), str(upd), "--changes", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["0000000001-label.parquet", "0000000001-open.parquet",
                                                     "0000000001-reach.parquet"]
    label = pq.read_table(out / "0000000001-label.parquet")
    assert label.schema.types == [pa.int64(), pa.string(), pa.int8()]
    assert label.to_pydict() == {"x": [2], "name": ["n2"], "weight": [1]}


def test_a_file_that_cannot_be_written_leaves_the_commit_and_exits_1(tmp_path, capsys):
    program, upd, ws, out = tmp_path / "p.dl", tmp_path / "u.dl", tmp_path / "ws", tmp_path / "changes"
    program.write_text(PROGRAM)
    upd.write_text("+e(2, 3).\ncommit.\n+e(3, 4).\ncommit.\n")
    assert main(["init", str(ws), str(program)]) == 0
    (out / "0000000001-reach.parquet").mkdir(parents=True)        # a directory where the file goes
    assert main(["update", str(ws), str(upd), "--changes", str(out)]) == 1
    err = capsys.readouterr().err
    assert "commit 1 is made, but its changes were not written" in err and "error[output_error]" in err
    _, after, seq = edb_of(ws)
    assert seq == 2 and (0, 4) in after["reach"]                  # both commits stand
    assert (out / "0000000002-reach.parquet").is_file()           # later commits are still written


def test_changes_directory_that_cannot_be_made_commits_nothing(tmp_path, capsys):
    program, upd, ws, out = tmp_path / "p.dl", tmp_path / "u.dl", tmp_path / "ws", tmp_path / "file"
    program.write_text(PROGRAM)
    upd.write_text("+e(2, 3).\ncommit.\n")
    out.write_text("not a directory")
    assert main(["init", str(ws), str(program)]) == 0
    assert main(["update", str(ws), str(upd), "--changes", str(out)]) == 1
    assert "error[output_error]" in capsys.readouterr().err
    assert edb_of(ws)[2] == 0
