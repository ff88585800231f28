"""Spark's fixed costs: whole `datalog` processes on a 16-edge Parquet source (issue 42's targets).

A program over a 16-edge Parquet directory (written by pyarrow) with one Spark sink:

    path(x, y) :- edge(x, y).                path(x, z) :- path(x, y), edge(y, z).
    .output path(IO=spark, path="paths", mode=merge)

For each workspace kind (in-process: ``datalog init``; Spark-resident: ``init --engine spark``)
and each setting of the driver JVM's class archive (datalog.spark.class_archive: ``off``,
``DATALOG_SPARK_CLASS_ARCHIVE=0``; ``on``, the archive made beforehand in a private cache), the
wall time of whole processes, each a separate ``python -m datalog`` as a user runs it:

  init        datalog init ws/ p.dl
  no change   datalog refresh ws/ with the source as it was
  1 row       datalog refresh ws/ after one edge was added (a new Parquet file)

Median of --repeats fresh workspaces. Targets (issue 42): a refresh of a 1-row change at most
5 s, of no change at most 3 s, for both kinds.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import provenance, table

PROGRAM = """
.decl edge(src: number, dst: number)
.input edge(IO=spark, path="edges")
.decl path(a: number, b: number)
.output path(IO=spark, path="paths", mode=merge)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
EDGES = [(i, (i * 7 + 3) % 16) for i in range(16)]
STEPS = ("init", "no change", "1 row")


def add_arguments(p) -> None:
    p.add_argument("--repeats", type=int, default=3, help="fresh workspaces per cell (median); default 3")
    p.add_argument("--kinds", default="in-process,resident", help="workspace kinds; default both")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out")


def run(args) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq
    work = Path(tempfile.mkdtemp(prefix="bench-spark-small-"))
    cache = work / "cache"
    env = {**os.environ, "DATALOG_CACHE_DIR": str(cache)}
    env.pop("DATALOG_SPARK_JAVA_OPTIONS", None)            # the product's JVM options, not the tests'
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from datalog.spark import session; session.prepare_class_archive()"],
                   env=env, check=True)
    prepared = time.perf_counter() - started
    rows = []
    try:
        for kind in args.kinds.split(","):
            for archive in ("off", "on"):
                cells = {step: [] for step in STEPS}
                for repeat in range(args.repeats):
                    where = work / f"{kind}-{archive}-{repeat}"
                    (where / "edges").mkdir(parents=True)
                    pq.write_table(pa.table({"src": [e[0] for e in EDGES], "dst": [e[1] for e in EDGES]}),
                                   where / "edges" / "part-0.parquet")
                    (where / "p.dl").write_text(PROGRAM)
                    run_env = {**env, "DATALOG_SPARK_CLASS_ARCHIVE": "0" if archive == "off" else "1"}
                    engine = ["--engine", "spark"] if kind == "resident" else []
                    cells["init"].append(_timed(["init", "ws", "p.dl", *engine], where, run_env))
                    cells["no change"].append(_timed(["refresh", "ws"], where, run_env))
                    pq.write_table(pa.table({"src": [100], "dst": [0]}), where / "edges" / "part-1.parquet")
                    cells["1 row"].append(_timed(["refresh", "ws"], where, run_env))
                rows.append([kind, archive, *[f"{statistics.median(cells[s]):.1f} s" for s in STEPS]])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = "\n".join([f"# bench spark-small: {provenance.line(provenance.state())}",
                        f"(the class archive made beforehand in {prepared:.1f} s; median of {args.repeats})",
                        table.text(["workspace", "class archive", *STEPS], rows, right={2, 3, 4})])
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "spark_small.txt").write_text(report + "\n")
    return 0


def _timed(command: list[str], where: Path, env: dict) -> float:
    """Seconds of a whole ``python -m datalog ...`` process in ``where``; it must succeed."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "datalog", *command], cwd=where, env=env, capture_output=True,
                          text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"datalog {' '.join(command)} failed in {where}:\n{done.stderr}")
    return took
