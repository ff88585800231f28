"""Incremental maintenance: update latency against from-scratch evaluation.

For each workload and EDB size (total EDB tuples) one fresh worker subprocess
(memory limit by setrlimit, wall-clock timeout) measures in-process, through
the Python API (datalog.engine.engine.Engine, maintenance="incremental"):

  scratch   Engine.run() on the full EDB (trie indexes + every stratum);
            median of up to --scratch-reps runs (fewer when one run is slow)
  build     the one-time build of the maintenance structures: the first,
            empty engine.commit() (recording triejoin, trace tree, sensitivity
            indices, support counts), reported separately
  insert    median latency of engine.commit() inserting one random new tuple
  retract   ... retracting one random existing tuple
  batch100  ... one transaction of 50 inserts and 50 retracts
  ratio     scratch / update latency

Memory: the sensitivity indices (with the trace and support counts they come
with) are measured as the growth of the process during the build, against the
memory that holds the EDB relations' tuples (tuple objects + sets, before
run() builds any trie index); --memory rss (default: resident set size, peak
from getrusage) or --memory tracemalloc (exact Python allocations, slower).

Counting twin (join3, triangles: the non-recursive workloads): bench/counting.py, first-order
delta rules with support counts (what a user might pick instead), in its own worker subprocess
after ours: built from the same initial EDB (build s, memory growth as for ours), then the same
updates replayed in the same order (median latency of Counting.apply per kind); at sizes
<= --check-max its final head relation is compared with Engine.run() on the final EDB.

Correctness: at sizes <= --check-max every commit is replayed on an engine
with maintenance="recompute" over the same initial EDB; each commit's delta
and, at the end, every relation must agree, else the run fails (exit 1).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import provenance, table, workloads as W

REPO = Path(__file__).resolve().parents[1]
NAMES = ["join3", "triangles", "andersen", "tc-dag"]
RECURSIVE = {"andersen", "tc-dag"}
BATCH = 100
TARGET_RATIO = {False: 1000.0, True: 100.0}     # recursive? -> min scratch/update at 1M
TARGET_GROWTH = 3.0                              # max latency(1M) / latency(10k)

# ----------------------------------------------------------------- workloads
#
# A workload at one size: program text (no .input: the EDB is inserted through
# the API), initial EDB rows, a description of its parameters, and `fresh(rng)`
# -> (relation, row): a random tuple drawn like the EDB's (may already exist).

JOIN3 = """\
.decl r(a: number, b: number)
.decl s(b: number, c: number)
.decl t(c: number, d: number)
.decl q(a: number, d: number)
.output q
q(a, d) :- r(a, b), s(b, c), t(c, d).
"""

TRIANGLES = """\
.decl edge(x: number, y: number)
.decl tri(x: number, y: number, z: number)
.output tri
tri(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).
"""

TC = """\
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""

TC_BLOCK_NODES, TC_BLOCK_EDGES = 100, 150

# the counting twin's rule per non-recursive workload: (head, variables), [(relation, variables)]
COUNTING = {"join3": (("q", "ad"), [("r", "ab"), ("s", "bc"), ("t", "cd")]),
            "triangles": (("tri", "xyz"), [("edge", "xy"), ("edge", "yz"), ("edge", "zx")])}


class Spec:
    def __init__(self, name, program, edb, params, fresh):
        self.name, self.program, self.edb, self.params, self.fresh = name, program, edb, params, fresh


def distinct_pairs(rng, count, draw) -> list[tuple]:
    out: set = set()
    while len(out) < count:
        out.add(draw())
    return sorted(out)


def make_join3(size: int, seed: int) -> Spec:
    """q(a, d) :- r(a, b), s(b, c), t(c, d). over three random tables of size/3 tuples with
    every column uniform in [0, size/3): each join key has ~1 partner, so |q| ~ size/3."""
    rng = W.rng_for(f"join3-{size}", seed)
    k = max(2, size // 3)
    draw = lambda: (rng.randrange(k), rng.randrange(k))
    edb = {rel: distinct_pairs(rng, k, draw) for rel in ("r", "s", "t")}
    return Spec("join3", JOIN3, edb, f"3 x {k} tuples, keys uniform in [0,{k})",
                lambda g: (g.choice("rst"), (g.randrange(k), g.randrange(k))))


def make_triangles(size: int, seed: int) -> Spec:
    """Directed triangles over a random digraph with m = size edges on n = size/10 nodes."""
    n = max(10, size // 10)
    edb = {"edge": W.random_digraph(W.rng_for(f"triangles-{size}", seed), n, size)}

    def fresh(g):
        while True:
            x, y = g.randrange(n), g.randrange(n)
            if x != y:
                return "edge", (x, y)
    return Spec("triangles", TRIANGLES, edb, f"n={n} m={size} (out-degree {size / n:g})", fresh)


def make_tc(size: int, seed: int) -> Spec:
    """Transitive closure of a random DAG: disjoint blocks of TC_BLOCK_NODES nodes, each with
    TC_BLOCK_EDGES random edges i -> j (i < j) inside the block, so |path| ~ 3 |edge|."""
    rng = W.rng_for(f"tc-dag-{size}", seed)
    blocks = max(1, size // TC_BLOCK_EDGES)
    K = TC_BLOCK_NODES

    def edge_in(g, b):
        while True:
            i, j = g.randrange(K), g.randrange(K)
            if i < j:
                return b * K + i, b * K + j
    edges: set = set()
    for b in range(blocks):
        block: set = set()
        while len(block) < TC_BLOCK_EDGES:
            block.add(edge_in(rng, b))
        edges |= block
    return Spec("tc-dag", TC, {"edge": sorted(edges)},
                f"{blocks} blocks x {K} nodes x {TC_BLOCK_EDGES} edges i->j (i<j)",
                lambda g: ("edge", edge_in(g, g.randrange(blocks))))


def make_andersen(size: int, seed: int) -> Spec:
    """bench.workloads.andersen(statements=size): modules of 500 statements, methods of 12
    locals, 10% non-local operands. New statements are drawn with the same mix and locality."""
    wl = W.andersen(size, seed)
    lines = []
    for rel, types in wl.decls.items():
        lines.append(f".decl {rel}({', '.join(f'c{i}: {t}' for i, t in enumerate(types))})")
    lines += [f"{W.fmt_atom(h)} :- {', '.join(W.fmt_atom(a) for a in body)}." for h, body in wl.rules]
    lines.append(f".output {wl.output}")
    p = wl.params
    n_modules = max(1, p["statements"] // p["module_statements"])
    vars_per_module = max(p["method_size"], p["module_statements"] // 2)
    methods = vars_per_module // p["method_size"]
    kinds, weights = zip(*W.ANDERSEN_MIX.items())
    counter = [0]

    def fresh(g):
        kind = g.choices(kinds, weights)[0]
        mod, meth = g.randrange(n_modules), g.randrange(methods)

        def local():
            return f"v{mod * vars_per_module + meth * p['method_size'] + g.randrange(p['method_size'])}"

        def var():
            if g.random() < p["nonlocal_frac"]:
                return f"v{mod * vars_per_module + g.randrange(vars_per_module)}"
            return local()
        if kind == "new":
            counter[0] += 1
            return "new", (local(), f"hb{counter[0]}")
        return kind, (var(), var())
    return Spec("andersen", "\n".join(lines) + "\n", wl.inputs,
                f"{size} statements, {n_modules} modules", fresh)


MAKERS = {"join3": make_join3, "triangles": make_triangles, "andersen": make_andersen,
          "tc-dag": make_tc}


# ----------------------------------------------------------------- worker

def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Meter:
    """Memory growth of a phase: tracemalloc (exact allocations) or RSS."""

    def __init__(self, how: str):
        self.how = how

    def start(self) -> None:
        gc.collect()
        if self.how == "tracemalloc":
            import tracemalloc
            tracemalloc.start()
            self.base = tracemalloc.get_traced_memory()[0]
        else:
            self.base = rss_bytes()
            self.peak_before = peak_rss_bytes()

    def stop(self) -> tuple[int, int]:
        """-> (retained bytes, peak bytes above the start)."""
        gc.collect()
        if self.how == "tracemalloc":
            import tracemalloc
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            return current - self.base, peak - self.base
        current, peak = rss_bytes(), peak_rss_bytes()
        # ru_maxrss only says something about this phase when the phase set a new maximum
        return current - self.base, (peak - self.base) if peak > self.peak_before else current - self.base


def canonical(delta) -> dict:
    return {name: (frozenset(c.inserted), frozenset(c.retracted)) for name, c in delta.items() if c}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _started(job: dict, res: dict):
    """A worker's start: its address space capped at ``job["mem_gb"]``; returns ``save(**kw)``,
    which adds to ``res`` and writes it to ``job["out"]`` atomically (temporary file, rename)."""
    out_path = Path(job["out"])

    def save(**kw):
        res.update(kw)
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(res, indent=1))
        tmp.replace(out_path)

    limit = int(job["mem_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return save


def worker(job: dict) -> None:
    from datalog.engine.engine import Engine
    import maintenance.incremental  # noqa: F401  (imported before any timing, as the engine is: the
    # first commit imports it, which compiles its modules where bytecode is not cached, ~0.3 s)

    save = _started(job, {"workload": job["workload"], "size": job["size"], "seed": job["seed"],
                          "reps": job["reps"], "memory": job["memory"], "status": "running",
                          "started": time.strftime("%Y-%m-%d %H:%M:%S")})
    tag = f"[{job['workload']} {job['size']}]"
    if hasattr(provenance, "source_digest"):
        save(engine_source=provenance.source_digest())
    try:
        t = time.perf_counter()
        spec = MAKERS[job["workload"]](job["size"], job["seed"])
        edb_total = sum(len(v) for v in spec.edb.values())
        save(params=spec.params, edb=edb_total, edb_rels={r: len(v) for r, v in spec.edb.items()})
        log(f"{tag} generated {edb_total} EDB tuples in {time.perf_counter() - t:.1f}s ({spec.params})")

        meter = Meter(job["memory"])
        engine = Engine.from_source(spec.program, name=f"{spec.name}.dl")
        edb_meter = Meter("tracemalloc")          # RSS is too coarse for the EDB at small sizes
        edb_meter.start()
        for rel, rows in spec.edb.items():
            engine.insert(rel, rows)
        edb_bytes, _ = edb_meter.stop()
        save(edb_bytes=edb_bytes)

        t = time.perf_counter()
        engine.run()
        scratch = [time.perf_counter() - t]
        idb = sum(len(engine.db[r]) for r in engine.idb)
        save(scratch=scratch, idb=idb, idb_rels={r: len(engine.db[r]) for r in sorted(engine.idb)})
        log(f"{tag} from scratch {scratch[0]:.2f}s, {idb} IDB tuples")

        meter.start()
        t = time.perf_counter()
        engine.commit()
        build = time.perf_counter() - t
        index_bytes, index_peak = meter.stop()
        intervals = engine.maintainer.registry.size()
        save(build=build, index_bytes=index_bytes, index_peak=index_peak, intervals=intervals)
        log(f"{tag} build {build:.2f}s, {intervals} sensitivity intervals, "
            f"+{index_bytes / 2**20:.0f} MB (peak +{index_peak / 2**20:.0f} MB) vs EDB {edb_bytes / 2**20:.1f} MB")

        rng = random.Random(job["seed"] * 7919 + job["size"])
        pool = [(rel, row) for rel, rows in spec.edb.items() for row in rows]

        def pick_new(taken):
            while True:
                rel, row = spec.fresh(rng)
                row = engine.admit(rel, row)
                if row not in engine.db[rel].tuples and (rel, row) not in taken:
                    taken.add((rel, row))
                    return rel, row

        def pick_old(taken):
            while True:
                rel, row = pool[rng.randrange(len(pool))]
                if row in engine.db[rel].tuples and (rel, row) not in taken:
                    taken.add((rel, row))
                    return rel, row

        commits: list[tuple[dict, dict, dict]] = []      # (inserts, retracts, delta) for the check
        check = job["check"]
        updates: list = []                               # (kind, inserts, retracts): the counting twin replays them

        def commit(inserts, retracts, kind=None):
            if kind and job["workload"] in COUNTING:
                updates.append((kind, inserts, retracts))
            t0 = time.perf_counter()
            delta = engine.commit(inserts=inserts, retracts=retracts)
            dt = time.perf_counter() - t0
            if check:
                commits.append((inserts, retracts, canonical(delta)))
            return dt

        def group(pairs):
            out: dict = {}
            for rel, row in pairs:
                out.setdefault(rel, []).append(row)
            return out

        commit(group([pick_new(set())]), {})          # warm-up, untimed
        commit({}, group([pick_old(set())]))
        profiler = None
        if job["profile"]:
            import cProfile
            profiler = cProfile.Profile()
        lat = {"insert": [], "retract": [], "batch": []}
        for i in range(job["reps"]):
            if profiler:
                profiler.enable()
            lat["insert"].append(commit(group([pick_new(set())]), {}, "insert"))
            lat["retract"].append(commit({}, group([pick_old(set())]), "retract"))
            if profiler:
                profiler.disable()
            save(latency=lat)
        for i in range(job["reps"]):
            taken: set = set()
            ins = group(pick_new(taken) for _ in range(BATCH // 2))
            ret = group(pick_old(taken) for _ in range(BATCH - BATCH // 2))
            lat["batch"].append(commit(ins, ret, "batch"))
            save(latency=lat)
        med = {k: statistics.median(v) * 1e3 for k, v in lat.items()}
        log(f"{tag} median ms: insert {med['insert']:.3f}, retract {med['retract']:.3f}, "
            f"batch{BATCH} {med['batch']:.2f}")
        if updates:
            save(updates=[[kind, {r: [list(row) for row in rows] for r, rows in ins.items()},
                           {r: [list(row) for row in rows] for r, rows in ret.items()}] for kind, ins, ret in updates])
        if profiler:
            write_profile(profiler, Path(job["profile"]), tag)
        save(peak_rss=peak_rss_bytes())

        # more from-scratch samples on fresh engines, while they are cheap
        while len(scratch) < job["scratch_reps"] and sum(scratch) < job["scratch_budget"]:
            again = Engine.from_source(spec.program)
            for rel, rows in spec.edb.items():
                again.insert(rel, rows)
            t = time.perf_counter()
            again.run()
            scratch.append(time.perf_counter() - t)
            del again
            save(scratch=scratch)

        if check:
            log(f"{tag} checking {len(commits)} commits against maintenance=recompute")
            save(check=check_against_recompute(engine, spec, commits, tag))
        save(status="ok", peak_rss=peak_rss_bytes())
    except MemoryError:
        save(status="out of memory", peak_rss=peak_rss_bytes())
        log(f"{tag} out of memory (limit {job['mem_gb']:g} GiB)")


def counting_worker(job: dict) -> None:
    """The counting twin on the workload's initial EDB, then ours' updates (``job["updates"]``, read
    from ours' result) replayed in order; results into ``job["out"]``."""
    from bench.counting import Counting

    save = _started(job, {"workload": job["workload"], "size": job["size"], "status": "running"})
    tag = f"[{job['workload']} {job['size']} counting]"
    try:
        spec = MAKERS[job["workload"]](job["size"], job["seed"])
        head, body = COUNTING[job["workload"]]
        meter = Meter(job["memory"])
        meter.start()
        t = time.perf_counter()
        twin = Counting(head, body, spec.edb)
        build = time.perf_counter() - t
        state_bytes, state_peak = meter.stop()
        save(build=build, state_bytes=state_bytes, state_peak=state_peak, heads=len(twin.count))
        log(f"{tag} build {build:.2f}s, {len(twin.count)} head tuples, +{state_bytes / 2**20:.0f} MB")
        lat: dict = {"insert": [], "retract": [], "batch": []}
        for kind, ins, ret in json.loads(Path(job["updates"]).read_text())["updates"]:
            ins = {r: [tuple(row) for row in rows] for r, rows in ins.items()}
            ret = {r: [tuple(row) for row in rows] for r, rows in ret.items()}
            t = time.perf_counter()
            twin.apply(ins, ret)
            lat[kind].append(time.perf_counter() - t)
        save(latency=lat)
        med = {k: statistics.median(v) * 1e3 for k, v in lat.items() if v}
        log(f"{tag} median ms: " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
        if job["check"]:
            from datalog.engine.engine import Engine
            engine = Engine.from_source(spec.program)
            for rel, rows in twin.rows_of.items():
                engine.insert(rel, sorted(rows))
            engine.run()
            ok = engine.db[head[0]].tuples == twin.rows()
            save(check="ok" if ok else f"MISMATCH: counting twin's {head[0]} differs from Engine.run()")
            log(f"{tag} check {'ok' if ok else 'MISMATCH'}")
        save(status="ok")
    except MemoryError:
        save(status="out of memory")
        log(f"{tag} out of memory (limit {job['mem_gb']:g} GiB)")


def check_against_recompute(engine, spec: Spec, commits, tag: str) -> str:
    from datalog.engine.engine import Engine
    twin = Engine.from_source(spec.program, maintenance="recompute")
    for rel, rows in spec.edb.items():
        twin.insert(rel, rows)
    twin.run()
    for n, (inserts, retracts, delta) in enumerate(commits, 1):
        want = canonical(twin.commit(inserts=inserts, retracts=retracts))
        if want != delta:
            names = sorted(set(want) | set(delta))
            diff = {r: (len(delta.get(r, ((), ()))[0]), len(delta.get(r, ((), ()))[1]),
                        len(want.get(r, ((), ()))[0]), len(want.get(r, ((), ()))[1]))
                    for r in names if want.get(r) != delta.get(r)}
            return f"MISMATCH in the delta of commit {n}: (ins, del) incremental vs recompute {diff}"
    for rel in engine.relations():
        if engine.db[rel].tuples != twin.db[rel].tuples:
            a, b = engine.db[rel].tuples, twin.db[rel].tuples
            return f"MISMATCH in {rel}: {len(a - b)} extra, {len(b - a)} missing"
    log(f"{tag} check ok: {len(commits)} deltas and {len(engine.relations())} relations agree")
    return "ok"


def write_profile(profiler, path: Path, tag: str) -> None:
    import io
    import pstats
    path.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(str(path))
    text = io.StringIO()
    for key in ("cumulative", "tottime"):
        print(f"==== {tag} single-tuple insert+retract commits, sorted by {key}", file=text)
        pstats.Stats(profiler, stream=text).strip_dirs().sort_stats(key).print_stats(25)
    path.with_suffix(".txt").write_text(text.getvalue())
    log(text.getvalue())


# ----------------------------------------------------------------- harness

def add_arguments(p) -> None:
    p.add_argument("--sizes", default="10000,100000,1000000",
                   help="comma-separated EDB sizes (total EDB tuples); default 10000,100000,1000000")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help=f"workloads whose name contains NAME (repeatable, comma-separated); "
                        f"of {', '.join(NAMES)}")
    p.add_argument("--reps", type=int, default=21, help="updates per kind (median of these); default 21")
    p.add_argument("--scratch-reps", type=int, default=3,
                   help="from-scratch runs (median), fewer when they exceed --scratch-budget; default 3")
    p.add_argument("--scratch-budget", type=float, default=30.0,
                   help="no further from-scratch run once they took this many seconds; default 30")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds per workload and size (the worker is killed); default 1800")
    p.add_argument("--mem-gb", type=float, default=16.0,
                   help="address-space limit of each worker (setrlimit RLIMIT_AS), GiB; default 16")
    p.add_argument("--memory", choices=("rss", "tracemalloc"), default="rss",
                   help="how index and EDB memory are measured; default rss")
    p.add_argument("--check-max", type=int, default=10000,
                   help="replay every commit on a maintenance=recompute engine at sizes <= this; "
                        "default 10000 (0: never)")
    p.add_argument("--profile", action="store_true",
                   help="cProfile the single-tuple commits; writes bench/out/maintenance/*.prof/.txt")
    p.add_argument("--reuse", action="store_true",
                   help="do not run a workload x size whose result is already saved under "
                        "<out>/maintenance/ (finished or not); report it as saved")
    p.add_argument("--no-counting", action="store_true",
                   help="do not run the counting twin (delta rules with support counts) beside join3 and triangles")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for results and the report (default bench/out)")


def run(args) -> int:
    sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    only = [o for arg in args.only for o in arg.split(",") if o]
    names = [n for n in NAMES if not only or any(o in n for o in only)]
    if not names:
        sys.exit(f"--only {only} matched no workload of {NAMES}")
    root = args.out / "maintenance"
    root.mkdir(parents=True, exist_ok=True)
    args.provenance_state = provenance.state() if hasattr(provenance, "state") else None
    started = time.perf_counter()
    results = {}
    for name in names:
        for size in sizes:
            results[(name, size)] = run_job(args, root, name, size)
            if name in COUNTING and not args.no_counting:
                results[(name, size)]["counting"] = run_counting(args, root, name, size)
    return report(args, names, sizes, results, time.perf_counter() - started)


def run_job(args, root: Path, name: str, size: int) -> dict:
    out = root / f"{name}-{size}.json"
    if args.reuse and out.exists():
        res = json.loads(out.read_text())
        if res.get("status") not in (None, "running") and res.get("seed") == args.seed:
            log(f"[{name} {size}] reusing {out} ({res['status']})")
            return res
    out.unlink(missing_ok=True)
    job = {"workload": name, "size": size, "seed": args.seed, "reps": args.reps,
           "scratch_reps": args.scratch_reps, "scratch_budget": args.scratch_budget,
           "mem_gb": args.mem_gb, "memory": args.memory, "check": 0 < size <= args.check_max,
           "profile": str(root / f"{name}-{size}.prof") if args.profile else "", "out": str(out)}
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "bench.maintenance", "--worker", json.dumps(job)],
                            cwd=REPO, stderr=subprocess.PIPE, text=True, start_new_session=True)
    err: list[str] = []
    import threading

    def pump():
        for line in proc.stderr:
            err.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()
    th = threading.Thread(target=pump, daemon=True)
    th.start()
    try:
        rc = proc.wait(timeout=args.timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc, timed_out = proc.wait(), True
    th.join(timeout=5)
    res = json.loads(out.read_text()) if out.exists() else {"workload": name, "size": size}
    res["wall"] = time.perf_counter() - t
    res.setdefault("seed", args.seed)
    if timed_out:
        res["status"] = "timeout"
        log(f"[{name} {size}] timeout after {args.timeout:g}s (killed)")
    elif res.get("status") in (None, "running"):
        tail = "".join(err[-20:])
        if "MemoryError" in tail or rc == -signal.SIGKILL:
            res["status"] = "out of memory"
        else:
            res["status"] = f"crashed (exit {rc})"
        res["error"] = tail[-2000:]
        log(f"[{name} {size}] {res['status']}")
    out.write_text(json.dumps(res, indent=1))
    return res


def run_counting(args, root: Path, name: str, size: int) -> dict:
    """The counting twin's worker over the updates ours' worker saved (none saved: not run)."""
    ours, out = root / f"{name}-{size}.json", root / f"{name}-{size}-counting.json"
    if not ours.exists() or "updates" not in json.loads(ours.read_text()):
        return {"status": "not run (no updates saved)"}
    out.unlink(missing_ok=True)
    job = {"workload": name, "size": size, "seed": args.seed, "mem_gb": args.mem_gb, "memory": args.memory,
           "check": 0 < size <= args.check_max, "updates": str(ours), "out": str(out)}
    proc = subprocess.Popen([sys.executable, "-m", "bench.maintenance", "--counting", json.dumps(job)],
                            cwd=REPO, start_new_session=True)
    try:
        rc = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return {"status": "timeout"}
    res = json.loads(out.read_text()) if out.exists() else {}
    if res.get("status") in (None, "running"):
        res["status"] = f"crashed (exit {rc})"
    return res


def ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3g}" if seconds < 1 else f"{seconds * 1e3:,.0f}"


def fmt_ratio(x) -> str:
    return "-" if x is None else f"{x:.{2 if x < 10 else 1 if x < 100 else 0}f}x"


def median(xs):
    return statistics.median(xs) if xs else None


def summary(res: dict) -> dict:
    lat = res.get("latency") or {}
    scratch = median(res.get("scratch") or [])
    s = {"scratch": scratch}
    for k in ("insert", "retract", "batch"):
        m = median(lat.get(k) or [])
        s[k] = m if m is not None and len(lat.get(k)) >= 1 else None
        s[k + "_ratio"] = scratch / m if scratch and m else None
    return s


def mb(x) -> str:
    return "-" if x is None else f"{x / 2**20:,.1f}"


def counting_table(names, sizes, results, failures: list) -> tuple[list, list]:
    """Ours beside the counting twin, per non-recursive workload and size."""
    headers = ["workload", "EDB", "ours build s", "ours MB", "ours ins ms", "ours ret ms", f"ours batch{BATCH}",
               "count build s", "count MB", "count/EDB", "count ins ms", "count ret ms", f"count batch{BATCH}",
               "status"]
    rows = []
    for name in names:
        for size in sizes:
            res = results[(name, size)]
            twin = res.get("counting")
            if twin is None:
                continue
            ours, lat = summary(res), twin.get("latency") or {}
            status = _checked(twin.get("status", "-"), twin.get("check"), failures, f"{name} {size} counting twin")
            state = twin.get("state_bytes")
            rows.append([name, f"{res.get('edb', size):,}",
                         "-" if res.get("build") is None else f"{res['build']:.2f}", mb(res.get("index_bytes")),
                         ms(ours["insert"]), ms(ours["retract"]), ms(ours["batch"]),
                         "-" if twin.get("build") is None else f"{twin['build']:.2f}", mb(state),
                         f"{state / res['edb_bytes']:.1f}x" if state is not None and res.get("edb_bytes") else "-",
                         ms(median(lat.get("insert") or [])), ms(median(lat.get("retract") or [])),
                         ms(median(lat.get("batch") or [])), status])
    return headers, rows


def _checked(status: str, check, failures: list, what: str) -> str:
    """The status column after the replay against recomputation: WRONG (and the failure listed
    under ``what``) if it disagreed, ", checked" added if it agreed, as it was if not replayed."""
    if check not in (None, "ok"):
        failures.append(f"{what}: {check}")
        return "WRONG"
    return status + ", checked" if check == "ok" else status


def report(args, names, sizes, results, total: float) -> int:
    headers = ["workload", "EDB", "IDB", "scratch s", "build s", "intervals", "index MB", "EDB MB",
               "index/EDB", "insert ms", "ratio", "retract ms", "ratio", f"batch{BATCH} ms", "ratio",
               "status"]
    rows, notes, failures, growth, targets = [], [], [], [], []
    for name in names:
        for size in sizes:
            res = results[(name, size)]
            s = summary(res)
            lat = res.get("latency") or {}
            partial = res["status"] != "ok" and any(lat.values())
            status = _checked(res["status"] + (" (partial)" if partial else ""), res.get("check"), failures,
                              f"{name} {size}")
            idx = res.get("index_bytes")
            ratio_mem = idx / res["edb_bytes"] if idx is not None and res.get("edb_bytes") else None
            nscr = len(res.get("scratch") or [])
            rows.append([name, f"{res.get('edb', size):,}", f"{res['idb']:,}" if "idb" in res else "-",
                         "-" if s["scratch"] is None else f"{s['scratch']:.3f}" + (f" ({nscr})" if nscr != 1 else ""),
                         "-" if res.get("build") is None else f"{res['build']:.2f}",
                         f"{res['intervals']:,}" if "intervals" in res else "-",
                         mb(idx), mb(res.get("edb_bytes")),
                         "-" if ratio_mem is None else f"{ratio_mem:.1f}x",
                         ms(s["insert"]), fmt_ratio(s["insert_ratio"]),
                         ms(s["retract"]), fmt_ratio(s["retract_ratio"]),
                         ms(s["batch"]), fmt_ratio(s["batch_ratio"]), status])
            if res["status"].startswith("crashed"):
                failures.append(f"{name} {size}: {res['status']}: {res.get('error', '')[-600:]}")
            if "params" in res and size == sizes[0]:
                notes.append(f"{name}: {res['params']} (at {size:,})")
        done = [(size, summary(results[(name, size)])) for size in sizes
                if summary(results[(name, size)])["insert"] is not None]
        if len(done) >= 2:
            (s0, a), (s1, b) = done[0], done[-1]
            growth.append(f"{name}: single-update latency {s0:,} -> {s1:,}: insert x{b['insert'] / a['insert']:.2f}, "
                          f"retract x{b['retract'] / a['retract']:.2f}"
                          + (f" (target <= {TARGET_GROWTH:g}x: "
                             f"{'met' if max(b['insert'] / a['insert'], b['retract'] / a['retract']) <= TARGET_GROWTH else 'MISSED'})"
                             if s0 <= 10_000 and s1 >= 1_000_000 else ""))
        want = TARGET_RATIO[name in RECURSIVE]
        big = summary(results[(name, 1_000_000)]) if (name, 1_000_000) in results else None
        if big is not None:
            if big["insert_ratio"] and big["retract_ratio"]:
                worst = min(big["insert_ratio"], big["retract_ratio"])
                targets.append(f"{name} at 1M: single-update speed-up {fmt_ratio(worst)} "
                               f"(target >= {want:g}x) {'met' if worst >= want else 'MISSED'}")
            else:
                targets.append(f"{name} at 1M: not measured ({results[(name, 1_000_000)]['status']}; "
                               f"target >= {want:g}x)")
    st = getattr(args, "provenance_state", None)
    prov = provenance.line(st) if st is not None else provenance.line()
    moved = provenance.changed(st) if st is not None and hasattr(provenance, "changed") else ""
    digests = sorted({r.get("engine_source") for r in results.values() if r.get("engine_source")})
    if len(digests) > 1:
        moved = (moved + " " if moved else "") + f"workers saw engine sources {', '.join(digests)}"
    if moved:
        notes.append(moved)
        print(moved, file=sys.stderr)
    dirty = provenance.git("status", "--porcelain", "--", "datalog", "lftj", "maintenance")
    right = set(range(1, 15))
    footnotes = [
        "EDB/IDB = tuples in the EDB / IDB relations after the initial evaluation.",
        "scratch s = Engine.run() on the full EDB (trie indexes + all strata), median of (n) runs; "
        "build s = first engine.commit() (recording triejoin, trace, sensitivity indices, support counts).",
        f"insert/retract ms = median commit latency of one random new / existing EDB tuple over "
        f"{args.reps} commits; batch{BATCH} = one commit of {BATCH // 2} inserts + {BATCH - BATCH // 2} retracts; "
        "ratio = scratch / that latency.",
        f"intervals = engine.maintainer.registry.size(); index MB = growth of the process during the build "
        f"({args.memory}: {'resident set size' if args.memory == 'rss' else 'tracemalloc current bytes'}), "
        "EDB MB = tracemalloc bytes allocated by inserting the EDB tuples (typed tuples and the "
        "relations' sets; no trie index yet); "
        "recursive strata (andersen, tc-dag) are maintained by DRed and keep no sensitivity index.",
        f"each workload x size runs in its own subprocess (timeout {args.timeout:g}s, "
        f"RLIMIT_AS {args.mem_gb:g} GiB); 'checked' = every commit's delta and the final relations agree "
        "with maintenance=recompute.",
    ]
    print(table.text(headers, rows, right))
    twin_headers, twin_rows = counting_table(names, sizes, results, failures)
    if twin_rows:
        print("counting twin (bench/counting.py: delta rules with support counts), same updates:")
        print(table.text(twin_headers, twin_rows, set(range(1, len(twin_headers) - 1))))
    print(prov)
    if dirty:
        print("  uncommitted engine files: " + ", ".join(l.split(maxsplit=1)[-1] for l in dirty.splitlines()))
    print(f"seed {args.seed}, reps {args.reps}, memory via {args.memory}, total {total:.0f}s")
    for n in notes:
        print("  workload:", n)
    for g in growth:
        print("  growth:", g)
    for t in targets:
        print("  target:", t)
    for i, f in enumerate(footnotes, 1):
        print(f"  {i}. {f}")
    for peak in [(n, s, results[(n, s)].get("peak_rss")) for n in names for s in sizes]:
        if peak[2]:
            notes.append(f"peak RSS {peak[0]} {peak[1]:,}: {peak[2] / 2**30:.2f} GiB")

    md = ["# Maintenance benchmarks", "", prov, "",
          *([f"uncommitted engine files: {', '.join(l[3:] for l in dirty.splitlines())}", ""] if dirty else []),
          f"seed {args.seed}, reps {args.reps}, timeout {args.timeout:g}s, memory via {args.memory}", "",
          table.markdown(headers, rows, right), ""]
    if twin_rows:
        md += ["Counting twin (bench/counting.py: delta rules with support counts), the same updates:", "",
               table.markdown(twin_headers, twin_rows, set(range(1, len(twin_headers) - 1))), ""]
    md += [f"{i}. {f}" for i, f in enumerate(footnotes, 1)]
    md += [""] + [f"- {x}" for x in notes + growth + targets + failures]
    name = "maintenance"
    (args.out / f"{name}.md").write_text("\n".join(md) + "\n")
    (args.out / f"{name}.json").write_text(json.dumps(
        {"provenance": prov, "results": {f"{n}-{s}": r for (n, s), r in results.items()}}, indent=1))
    print(f"report: {args.out / (name + '.md')}")
    if failures:
        bar = "!" * 72
        print(f"\n{bar}\n" + "\n".join(failures) + f"\n{bar}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--counting":
        counting_worker(json.loads(sys.argv[2]))
    else:
        p = argparse.ArgumentParser(prog="python -m bench.maintenance", description=__doc__)
        add_arguments(p)
        sys.exit(run(p.parse_args()))
