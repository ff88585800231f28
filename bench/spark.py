"""Spark: batch refresh against a full reload, and distributed evaluation against in-process.

Refresh. An edge table of --rows rows (Parquet, written by Spark) and a small vip table feed

    vip_edge(x, y) :- edge(x, y), vip(x).          .output vip_edge(IO=spark, mode=merge)
    reach2(x, z)   :- vip_edge(x, y), edge(y, z).   .output reach2(IO=spark, mode=merge)

``datalog init`` loads it into a workspace. Then, for each --fractions f, a new version of the
table with f/2 of its rows deleted and as many inserted (f of the rows changed) is written, and
``refresh`` runs; its time is split into the phases of datalog.refresh:

  stage      writing the source's rows as a full snapshot version (Spark), only when the
             chain of delta versions is long (datalog.refresh.CHAIN): 0 in this benchmark
  diff       the digest-then-rows diff in Spark, writing the delta version, and the transfer
             of the delta through Arrow
  load       reading the changed source relations from the workspace and the root levels of
             their indexes (an open reads them only when first used)
  maintain   the transaction: incremental maintenance of the program
  write back the outputs' delta (merge: appended; a deletion rewrites the sink)
  open       Workspace.open before the refresh: checking the stored files and restoring what
             the maintainer keeps in memory (relations, trie nodes and trace pages are read when
             first used) -- what a separate `datalog refresh` process pays first

``full`` is the alternative a refresh replaces: a fresh engine reads the whole table through
Arrow, evaluates from scratch and overwrites the outputs. Targets from the issue: the
maintain phase proportional to the delta (10x delta ~ 10x time) and refresh >= 10x faster than
full.

Change patterns (--patterns, issue 19 part 3). An edge table of --pattern-rows rows in 100
Hive-style partitions (``part=k``) feeds the same two rules; --pattern-share of its rows change
in one of three ways, each refreshed by an in-process and a Spark-resident workspace:

  uniform    rows deleted and inserted all over the table (every file rewritten): a snapshot
             source, diffed (datalog.spark.diff)
  partition  the same number of rows changed inside one partition of the 100: a
             ``partitioned=true`` source, which reads that partition only
  append     the same number of rows appended as new files: an ``append_only=true`` source

against ``full``: a fresh engine (in-process) or a fresh resident init reading the whole table,
evaluating and writing the outputs. Phases: read changes (diff, or read what the source says
changed), maintain (load, maintenance, commit), write back.

Driver memory (Spark-resident runs: --resident and the patterns' resident workspace, issue 19's
"driver peak memory below 1 GB"): per run and per refresh phase, "python RSS / heap / JVM RSS"
in MB (bench.memory): this Python process's peak RSS (VmHWM, reset at the phase's start), the
peak of what the phase allocated on the Python heap (tracemalloc, on only inside the phase), and
the peak RSS of the JVM the driver started (in local mode the executors run in that JVM, so it
is not the driver's alone; its heap is bounded by --memory).

Distributed. Triangles over --triangle-edges random edges: ``datalog run --engine spark``
(datalog.spark.distributed, local[2]) against the in-process engine, same results required.
"""
from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import memory, provenance, table

PROGRAM = """
.decl edge(src: number, dst: number)
.input edge(IO=spark, path="{dir}/edges")
.decl vip(n: number)
.input vip(IO=spark, path="{dir}/vip")
.decl vip_edge(x: number, y: number)
.output vip_edge(IO=spark, path="{dir}/vip_edge", mode=merge)
.decl reach2(x: number, z: number)
.output reach2(IO=spark, path="{dir}/reach2", mode=merge)
vip_edge(x, y) :- edge(x, y), vip(x).
reach2(x, z) :- vip_edge(x, y), edge(y, z).
"""

TRIANGLES = """
.decl e(a: number, b: number)
.decl triangle(a: number, b: number, c: number)
triangle(x, y, z) :- e(x, y), e(y, z), e(x, z), x < y, y < z.
"""


def add_arguments(p) -> None:
    p.add_argument("--rows", type=int, default=10_000_000, help="edge table rows; default 10M")
    p.add_argument("--fractions", default="0.001,0.01",
                   help="changed share of the rows per refresh (comma-separated); default 0.001,0.01")
    p.add_argument("--vips", type=int, default=1000, help="vip nodes; default 1000")
    p.add_argument("--triangle-edges", type=int, default=1_000_000,
                   help="edges of the distributed triangle run (0: skip); default 1M")
    p.add_argument("--resident", action="store_true",
                   help="also a Spark-resident workspace (init --engine spark): its refresh against a fresh "
                        "resident init (a full reload and re-evaluation on Spark)")
    p.add_argument("--resident-only", action="store_true",
                   help="with --resident: skip the in-process workspace (with --patterns: its in-process runs)")
    p.add_argument("--memory", default="8g", help="Spark driver memory; default 8g")
    p.add_argument("--patterns", action="store_true", help="the three change patterns (uniform, one partition, "
                                                           "append-only) against a full reload")
    p.add_argument("--patterns-only", action="store_true", help="only the change patterns")
    p.add_argument("--pattern-rows", type=int, default=1_000_000, help="rows of the patterns' table; default 1M")
    p.add_argument("--pattern-share", type=float, default=0.001, help="share of its rows changed; default 0.001")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out")


def run(args) -> int:
    os.environ["DATALOG_SPARK_MEMORY"] = args.memory
    from datalog.spark import session as spark_session
    spark = spark_session.session()
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    lines = [f"# bench spark: {provenance.line(provenance.state())}"]
    try:
        if args.patterns or args.patterns_only:
            lines.append(_patterns(spark, work, args))
        if args.patterns_only:
            args.resident = args.resident_only = False
            args.triangle_edges = 0
        if not args.resident_only and not args.patterns_only:
            rows = _refresh_rows(spark, work, args)
            lines.append(table.text(["phase", *[r[0] for r in rows]], _transpose(rows),
                                    right=set(range(1, len(rows) + 1))))
        if args.resident or args.resident_only:
            rows = _resident_rows(spark, work, args)
            lines.append("")
            lines.append("Spark-resident workspace (init --engine spark; maintained inside Spark):")
            lines.append(table.text(["phase", *[r[0] for r in rows]], _transpose_resident(rows),
                                    right=set(range(1, len(rows) + 1))))
        if args.triangle_edges:
            lines.append("")
            lines.append(_distributed(spark, work, args.triangle_edges))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = "\n".join(lines)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "spark.txt").write_text(report + "\n")
    return 0


def _transpose(rows):
    phases = ["rows changed", "stage", "diff", "load", "maintain", "write back", "total", "vs full", "open",
              "open+total", "vs full, with open"]
    return [[phase, *[r[1].get(phase, "") for r in rows]] for phase in phases]


# ---------------------------------------------------------------- refresh

def _edges(spark, rows: int, salt: int):
    """``rows`` distinct random edges over ``rows`` nodes, numbered from ``salt``-dependent ids."""
    from pyspark.sql import functions as F
    ids = spark.range(rows).select((F.col("id") + salt * rows).alias("id"))
    return ids.select(F.pmod(F.xxhash64("id", F.lit(1)), F.lit(rows)).alias("src"),
                      F.pmod(F.xxhash64("id", F.lit(2)), F.lit(rows)).alias("dst")).distinct()


def _replace(frame, where: Path) -> None:
    staged = where.with_name(where.name + ".next")
    frame.write.mode("overwrite").parquet(str(staged))
    shutil.rmtree(where, ignore_errors=True)
    os.replace(staged, where)


def _refresh_rows(spark, work: Path, args) -> list:
    from pyspark.sql import functions as F
    from datalog.refresh import refresh
    from datalog.workspace.workspace import Workspace
    _replace(_edges(spark, args.rows, 0), work / "edges")
    spark.range(args.vips).select(F.col("id").alias("n")).write.parquet(str(work / "vip"))
    program = PROGRAM.format(dir=work)
    edges = spark.read.parquet(str(work / "edges")).count()
    out = []
    gc.collect()                      # each timed section pays for its own garbage only
    started = time.perf_counter()
    Workspace.create(work / "ws", program, facts_dir=work, out_dir=work).close()   # its paths lie in -F and -D
    out.append(("init", {"rows changed": f"{edges:,} loaded", "total": f"{time.perf_counter() - started:.1f}"}))
    full = _full(spark, program, work)
    for number, fraction in enumerate(float(f) for f in args.fractions.split(",")):
        changed = int(args.rows * fraction / 2)
        current = spark.read.parquet(str(work / "edges"))
        kept = current.where(F.pmod(F.xxhash64("src", "dst", F.lit(number + 7)), F.lit(args.rows))
                             >= changed)
        fresh = _edges(spark, changed, number + 1)
        _replace(kept.unionByName(fresh).distinct().localCheckpoint(), work / "edges")
        gc.collect()
        opened = time.perf_counter()
        with Workspace.open(work / "ws") as ws:
            opened = time.perf_counter() - opened
            report = refresh(ws, facts_dir=str(work), out_dir=str(work))
        s = report.seconds
        total = sum(s.values())
        source = {x.relation: x for x in report.sources}["edge"]
        out.append((f"f={fraction:g}", {
            "rows changed": f"+{source.inserted:,} -{source.retracted:,}",
            "stage": f"{s.get('stage', 0):.2f}", "diff": f"{s.get('diff+transfer', 0):.2f}",
            "load": f"{s.get('load', 0):.2f}",
            "maintain": f"{s.get('maintain', 0):.2f}", "write back": f"{s.get('write back', 0):.2f}",
            "total": f"{total:.2f}", "vs full": f"{full / total:.1f}x",
            "open": f"{opened:.2f}", "open+total": f"{opened + total:.2f}",
            "vs full, with open": f"{full / (opened + total):.1f}x"}))
    out.append(("full reload", {"total": f"{full:.2f}", "rows changed": "all"}))
    return out


def _full(spark, program: str, work: Path) -> float:
    """A fresh engine: read every source through Arrow, evaluate, overwrite the outputs."""
    from datalog.engine.engine import Engine
    gc.collect()
    started = time.perf_counter()
    engine = Engine.from_source(program, work)
    engine.run()
    engine.write_outputs(str(work))
    return time.perf_counter() - started


def _transpose_resident(rows):
    phases = ["rows changed", "repair", "diff", "maintain", "commit", "write back", "total", "vs full"]
    phases += ["memory MB: python RSS / heap / JVM RSS"] + [f"  {p}" for p in ("repair", "diff", "maintain",
                                                                              "commit", "write back", "total")]
    return [[phase, *[r[1].get(phase, "") for r in rows]] for phase in phases]


def _memory_cells(whole: memory.Peaks, by_phase: dict) -> dict:
    return {"  total": whole.text(), **{f"  {name}": peaks.text() for name, peaks in by_phase.items()}}


def _refresh_measured(refresh, *args, **kwargs):
    """``refresh(*args, **kwargs)``, its report, and its memory peaks: the whole and by phase."""
    from datalog.spark.report import RefreshReport
    by_phase = {}
    with memory.phase() as tail, memory.per_report_phase(RefreshReport, by_phase):
        report = refresh(*args, **kwargs)
    return report, memory.overall([tail, *by_phase.values()]), by_phase


def _resident_rows(spark, work: Path, args) -> list:
    """The refresh benchmark on a Spark-resident workspace: the same program and change
    pattern; ``full`` is a fresh resident init of the current tables (read, evaluate and count
    in Spark, write the sinks), run after the refreshes (the first init pays the cold JVM)."""
    from pyspark.sql import functions as F
    from datalog.engine.engine import Engine
    from datalog.spark import resident_workspace
    where = work / "resident"
    where.mkdir()
    _replace(_edges(spark, args.rows, 0), where / "edges")
    spark.range(args.vips).select(F.col("id").alias("n")).write.parquet(str(where / "vip"))
    program = PROGRAM.format(dir=where)

    def engine_of(text, source):
        return Engine.from_source(text, where, name=source)
    gc.collect()
    started = time.perf_counter()
    with memory.phase() as peaks:
        resident_workspace.create(where / "ws", program, engine_of, out_dir=where)
    seconds = time.perf_counter() - started
    out = [("init", {"rows changed": f"{args.rows:,} (about) loaded", "total": f"{seconds:.1f}",
                     "  total": peaks.text()})]
    for number, fraction in enumerate(float(f) for f in args.fractions.split(",")):
        changed = int(args.rows * fraction / 2)
        current = spark.read.parquet(str(where / "edges"))
        kept = current.where(F.pmod(F.xxhash64("src", "dst", F.lit(number + 7)), F.lit(args.rows)) >= changed)
        _replace(kept.unionByName(_edges(spark, changed, number + 1)).distinct().localCheckpoint(), where / "edges")
        gc.collect()
        report, whole, by_phase = _refresh_measured(resident_workspace.refresh, where / "ws", engine_of,
                                                    out_dir=where)
        s = report.seconds
        total = sum(s.values())
        source = {x.relation: x for x in report.sources}["edge"]
        out.append((f"f={fraction:g}", {"rows changed": f"+{source.inserted:,} -{source.retracted:,}",
                                        **{k: f"{v:.2f}" for k, v in s.items()},
                                        "total": f"{total:.2f}", **_memory_cells(whole, by_phase)}))
    shutil.rmtree(where / "again", ignore_errors=True)
    gc.collect()
    started = time.perf_counter()
    with memory.phase() as peaks:
        resident_workspace.create(where / "again", program, engine_of, out_dir=where)   # sinks overwritten
    full = time.perf_counter() - started
    out.append(("full (init)", {"total": f"{full:.2f}", "rows changed": "all", "  total": peaks.text()}))
    for _, cells in out[1:-1]:        # against the full init after them: its JVM as warm as theirs
        cells["vs full"] = f"{full / float(cells['total']):.1f}x"
    return out


# ---------------------------------------------------------------- change patterns

PATTERN_PROGRAM = """
.decl edge(src: number, dst: number, part: number)
.input edge(IO=spark, path="{dir}/edges"{flag})
.decl vip(n: number)
.input vip(IO=spark, path="{dir}/vip")
.decl vip_edge(x: number, y: number)
.output vip_edge(IO=spark, path="{dir}/vip_edge", mode=merge)
.decl reach2(x: number, z: number)
.output reach2(IO=spark, path="{dir}/reach2", mode=merge)
vip_edge(x, y) :- edge(x, y, _), vip(x).
reach2(x, z) :- vip_edge(x, y), edge(y, z, _).
"""
PATTERNS = {"uniform": "", "partition": ", partitioned=true", "append": ", append_only=true"}
PARTS = 100


def _with_part(frame):
    from pyspark.sql import functions as F
    return frame.withColumn("part", F.pmod(F.xxhash64("src", "dst", F.lit(3)), F.lit(PARTS)))


def _change(spark, where: Path, pattern: str, changed: int) -> None:
    """``changed`` rows of the table at ``where`` changed as ``pattern`` says (half deleted,
    half inserted; appended: all inserted)."""
    from pyspark.sql import functions as F
    fresh = _with_part(_edges(spark, changed, 99)).withColumn("src", F.col("src") + 10 ** 9)
    if pattern == "append":
        fresh.coalesce(1).write.mode("append").partitionBy("part").parquet(str(where))
        return
    current = spark.read.parquet(str(where))
    if pattern == "uniform":
        kept = current.where(F.pmod(F.xxhash64("src", "dst", F.lit(7)), F.lit(current.count())) >= changed // 2)
        new = kept.unionByName(fresh.limit(changed // 2)).localCheckpoint()
        staged = where.with_name(where.name + ".next")
        new.write.mode("overwrite").partitionBy("part").parquet(str(staged))
        shutil.rmtree(where)
        os.replace(staged, where)
        return
    part = current.where("part = 0").drop("part").localCheckpoint()
    rows = part.count()
    kept = part.where(F.pmod(F.xxhash64("src", "dst", F.lit(7)), F.lit(rows)) >= changed // 2)
    new = kept.unionByName(fresh.drop("part").limit(changed // 2)).localCheckpoint()
    staged = where.with_name("part0.next")
    new.coalesce(1).write.mode("overwrite").parquet(str(staged))
    shutil.rmtree(where / "part=0")
    os.replace(staged, where / "part=0")


def _phases(seconds: dict) -> dict:
    read = sum(seconds.get(k, 0) for k in ("diff+transfer", "stage", "diff", "read changes"))
    maintain = sum(seconds.get(k, 0) for k in ("load", "maintain", "commit"))
    back = seconds.get("write back", 0)
    return {"read changes": read, "maintain": maintain, "write back": back, "total": sum(seconds.values())}


def _patterns(spark, work: Path, args) -> str:
    from pyspark.sql import functions as F
    from datalog.engine.engine import Engine
    from datalog.refresh import refresh
    from datalog.spark import resident_workspace
    from datalog.workspace.workspace import Workspace
    changed = max(int(args.pattern_rows * args.pattern_share), 2)
    lines, memories = [], []
    for pattern, flag in PATTERNS.items():
        for kind in ("resident",) if args.resident_only else ("in-process", "resident"):
            where = work / f"{pattern}-{kind}"
            where.mkdir()
            _with_part(_edges(spark, args.pattern_rows, 0)).write.partitionBy("part").parquet(str(where / "edges"))
            spark.range(args.vips).select(F.col("id").alias("n")).write.parquet(str(where / "vip"))
            program = PATTERN_PROGRAM.format(dir=where, flag=flag)

            def engine_of(text, source, where=where):
                return Engine.from_source(text, where, name=source)
            if kind == "in-process":
                Workspace.create(where / "ws", program, facts_dir=where, out_dir=where).close()
            else:
                resident_workspace.create(where / "ws", program, engine_of, out_dir=where)
            _change(spark, where / "edges", pattern, changed)
            gc.collect()
            if kind == "in-process":
                opened = time.perf_counter()
                with Workspace.open(where / "ws") as ws:
                    opened = time.perf_counter() - opened
                    report = refresh(ws, facts_dir=str(where), out_dir=str(where))
                full = _full(spark, program, where)
            else:
                opened = 0.0
                report, whole, by_phase = _refresh_measured(resident_workspace.refresh, where / "ws", engine_of,
                                                            out_dir=where)
                gc.collect()
                started = time.perf_counter()
                # the full reload reads the table as a plain snapshot source (no watermark kept)
                with memory.phase() as full_peaks:
                    resident_workspace.create(where / "again", PATTERN_PROGRAM.format(dir=where, flag=""),
                                              engine_of, out_dir=where)
                full = time.perf_counter() - started
                memories.append([pattern, whole.text(), *[by_phase[k].text() if k in by_phase else ""
                                                          for k in ("diff", "read changes", "maintain", "write back")],
                                 full_peaks.text()])
            phases = _phases(report.seconds)
            source = {x.relation: x for x in report.sources}["edge"]
            total = phases["total"] + opened
            lines.append([pattern, kind, f"+{source.inserted:,} -{source.retracted:,}", f"{source.rows_read:,}",
                          f"{phases['read changes']:.2f}", f"{phases['maintain']:.2f}", f"{phases['write back']:.2f}",
                          f"{opened:.2f}", f"{total:.2f}", f"{full:.2f}", f"{full / total:.1f}x"])
            shutil.rmtree(where, ignore_errors=True)
    return (f"change patterns: {args.pattern_rows:,} rows in {PARTS} partitions, {changed:,} rows changed "
            f"({args.pattern_share:g}); seconds\n"
            + table.text(["pattern", "workspace", "changed", "rows read", "read changes", "maintain", "write back",
                          "open", "refresh", "full reload", "speed-up"], lines, right=set(range(2, 11)))
            + "\nresident workspace, driver memory MB: python RSS / heap / JVM RSS peaks (bench.memory)\n"
            + table.text(["pattern", "refresh", "diff", "read changes", "maintain", "write back", "full reload"],
                         memories, right=set(range(1, 7))))


# ---------------------------------------------------------------- distributed

def _distributed(spark, work: Path, edges: int) -> str:
    from datalog.spark.distributed import evaluate_on_spark
    from datalog.engine.engine import Engine
    import random
    rng = random.Random(1)
    nodes = max(int(edges ** 0.5 * 10), 10)
    rows = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)}
    results, lines = {}, []
    for name in ("in-process", "spark local[2]"):
        engine = Engine.from_source(TRIANGLES)
        engine.insert("e", rows)
        gc.collect()
        started = time.perf_counter()
        if name == "in-process":
            engine.run()
        else:
            evaluate_on_spark(engine, spark)
        seconds = time.perf_counter() - started
        results[name] = engine.rows("triangle")
        lines.append([name, f"{len(rows):,}", f"{seconds:.2f}", f"{len(results[name]):,}"])
    same = results["in-process"] == results["spark local[2]"]
    return (f"triangles, {len(rows):,} edges over {nodes:,} nodes (results equal: {same})\n"
            + table.text(["engine", "edges", "seconds", "triangles"], lines, right={1, 2, 3}))
