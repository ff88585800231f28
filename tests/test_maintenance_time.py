"""``batch N: maintained in T ms`` (``run --updates``, ``update``, ``explain --maintenance``) is the
batch's own time: the maintainer's set-up (a recording pass over the whole program) and, with
``--changes``, pyarrow's first-use imports are done before the first batch is timed."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path

from datalog.engine.engine import Engine
from datalog.engine.updates import apply_updates
from datalog.language.parser import parse_updates

PROGRAM = """\
.decl edge(a: number, b: number)
.decl hop2(a: number, c: number)
.output hop2
hop2(a, c) :- edge(a, b), edge(b, c).
.decl reach(a: number)
reach(0).
reach(y) :- reach(x), edge(x, y).
"""


def test_the_first_batchs_time_excludes_the_maintainers_set_up():
    rng = random.Random(1)
    n = 4000
    engine = Engine.from_source(PROGRAM)
    engine.insert("edge", [(i, rng.randrange(n)) for i in range(n) for _ in range(2)])
    engine.run()
    assert engine.maintainer is None                     # built at the first commit: its set-up
    batches = parse_updates(f"+edge({n}, 0). commit. +edge({n + 1}, 0). commit.")
    reported: list[float] = []
    started = time.perf_counter()
    applied, failure = apply_updates(engine, batches, lambda number, delta, seconds: reported.append(seconds))
    total = time.perf_counter() - started
    assert (applied, failure) == (2, None)
    set_up = total - sum(reported)
    assert set_up > 0.1, (total, reported)              # the recording pass is long enough to see
    assert reported[0] < set_up / 4, (set_up, reported)  # and it is not the first batch's time
    fresh = Engine.from_source(PROGRAM)                  # and the batches were maintained right
    fresh.insert("edge", engine.rows("edge"))
    fresh.run()
    assert sorted(engine.rows("hop2")) == sorted(fresh.rows("hop2"))


def _maintained(output: str) -> list[float]:
    return [float(ms) for ms in re.findall(r"maintained in ([0-9.]+) ms", output)]


def test_the_first_change_file_is_not_timed_as_maintenance(tmp_path: Path):
    (tmp_path / "prog.dl").write_text(".decl edge(a: number, b: number)\n.input edge\n.decl path(a: number, b: number)\n"
                                      ".output path\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n")
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    batches = "".join(f"+edge({i}, {i + 1}).\ncommit.\n" for i in range(3, 6))
    (tmp_path / "updates.dl").write_text(batches)
    script = str(Path(sys.executable).with_name("datalog"))
    init = subprocess.run([script, "init", "ws", "prog.dl"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    update = subprocess.run([script, "update", "ws", "updates.dl", "--changes", "changes"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert update.returncode == 0, update.stderr
    assert len(list((tmp_path / "changes").glob("*-path.parquet"))) == 3      # a file for each batch
    first, *later = _maintained(update.stdout)
    assert len(later) == 2
    # alike batches (one edge, one file each): the first one no longer pays pyarrow's first
    # conversion, which imports pandas (0.5-2 s here), nor the Parquet writer's import
    assert first < 3 * max(later) + 150, (first, later)
