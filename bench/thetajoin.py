"""Theta-join backend: Q1-Q12 of Idris et al. (§7) against LFTJ maintenance and from scratch.

Streams (regenerated as in §7, scaled down): a stream of N single-tuple inserts for a
k-relation query holds N/k tuples per relation in uniformly random order; equality
attributes (k) are uniform in [1, 200]; c and i are strings; the other attributes are
uniform integers, or, in a temporally ordered stream (--order temporal), every attribute
that occurs in an inequality takes a fresh value larger than all before it.

For every query, stream size and system, one worker subprocess (memory limit, timeout)
replays the stream and reports the total update time, the peak memory of the maintained
state (tracemalloc, measured in a second replay so that tracing does not slow the timed
one), and the time of one full enumeration of the result:

  a  T-reduct  the rule's GCQ (datalog.planning.backend) maintained by ``maintain(gcq)``: one
               ``update`` per tuple, its delta enumerated (push mode, as the paper
               measures); the result is not materialized. Enumeration: Algorithm 1
               (constant delay) and the bulk enumeration (maintenance/gjt/bulk.py, blocks
               built by C-level iterators; what the engine uses for whole scans), each next
               to iterating a pre-materialized list of the same results (``/list``).
  b  LFTJ      the engine with ``// @backend lftj`` and maintenance="incremental": one
               commit per tuple, the head materialized.
  c  scratch   a fresh engine evaluating everything after every 10% of the stream (total).
  d  engine    the engine with ``// @backend thetajoin``: one commit per tuple, as
               ``datalog run --updates`` does. No rule reads the head, so for a full query
               (Q1-Q6) or the §7 view (Q10-Q12) it is not stored (maintenance/view_relation.py);
               the projections Q7-Q9 keep support counts and a stored relation.

Output sizes (distinct head tuples) come from the T-reduct's enumeration and, for the full
queries Q1-Q6, its root multiplicity; they are checked against every other system (the head
evaluated by LFTJ) and, at sizes <= --oracle-max, the brute-force oracle
(maintenance/gjt/oracle.py), which must also agree tuple by tuple with the enumeration.
"""
from __future__ import annotations

import gc
import json
import random
import resource
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from . import table

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = {"a": "T-reduct", "b": "LFTJ", "c": "scratch", "d": "engine"}

R3, S3, T3 = ("a", "b", "c"), ("d", "e", "f"), ("g", "h", "i")
RST = (("R", R3), ("S", S3), ("T", T3))
RST_K5 = (("R", R3 + ("k",)), ("S", S3 + ("k",)), ("T", T3))
RST_K6 = (("R", R3), ("S", S3 + ("k",)), ("T", T3 + ("k",)))
PROJECTION = "b c e f h i"

# Table 1 of the paper: atoms, inequalities, head (None: every variable)
QUERIES = {
    "Q1": (RST[:2], ["a < d"], None),
    "Q2": ((("R", R3 + ("k",)), ("S", S3 + ("k",))), ["a < d"], None),
    "Q3": (RST, ["a < d", "e < g"], None),
    "Q4": (RST, ["a < d", "d < g"], None),
    "Q5": (RST_K5, ["a < d", "d < g"], None),
    "Q6": (RST_K6, ["a < d", "d < g"], None),
    "Q7": (RST, ["a < d", "d < g"], "a b d e f g h"),
    "Q8": (RST_K5, ["a < d", "d < g"], "a d e f g h k"),
    "Q9": (RST_K6, ["a < d", "d < g"], "d e f g h k"),
    "Q10": (RST, ["a < d", "d < g"], PROJECTION),
    "Q11": (RST_K5, ["a < d", "d < g"], PROJECTION),
    "Q12": (RST_K6, ["a < d", "d < g"], PROJECTION),
}
STRINGS = {"c", "i"}


def program(name: str, backend: str) -> str:
    atoms, preds, head = QUERIES[name]
    lines = []
    for rel, cols in atoms:
        lines.append(f".decl {rel}({', '.join(f'{v}: {_type(v)}' for v in cols)})")
    head_vars = head.split() if head else list(dict.fromkeys(v for _, cols in atoms for v in cols))
    lines.append(f".decl q({', '.join(f'{v}: {_type(v)}' for v in head_vars)})")
    body = [f"{rel}({', '.join(cols)})" for rel, cols in atoms] + preds
    lines.append(f"// @backend {backend}")
    lines.append(f"q({', '.join(head_vars)}) :- {', '.join(body)}.")
    return "\n".join(lines) + "\n"


def _type(v: str) -> str:
    return "symbol" if v in STRINGS else "number"


def stream(name: str, size: int, order: str, seed: int) -> list[tuple[str, tuple]]:
    """N/k tuples per relation, emitted in random order (see the module docstring)."""
    atoms, preds, _ = QUERIES[name]
    rng = random.Random(f"{name}-{size}-{order}-{seed}")
    per = max(1, size // len(atoms))
    theta = {v for p in preds for v in p.split() if v.isalpha()}
    emitted = [rel for rel, _ in atoms for _ in range(per)]
    rng.shuffle(emitted)
    cols = dict(atoms)
    clock: dict[str, int] = {}
    out = []
    for rel in emitted:
        row = []
        for v in cols[rel]:
            if v == "k":
                row.append(rng.randint(1, 200))
            elif v in STRINGS:
                row.append(f"{v}{rng.randrange(per)}")
            elif order == "temporal" and v in theta:
                clock[v] = clock.get(v, 0) + rng.randint(1, 3)
                row.append(clock[v])
            else:
                row.append(rng.randrange(10 * per))
        out.append((rel, tuple(row)))
    return out


# ----------------------------------------------------------------- worker

def worker(job: dict) -> None:
    limit = int(job["mem_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    res = {k: job[k] for k in ("query", "size", "order", "system")}
    try:
        data = stream(job["query"], job["size"], job["order"], job["seed"])
        res.update(RUNS[job["system"]](job, data))
        res["status"] = "ok"
    except MemoryError:
        res["status"] = "out of memory"
    Path(job["out"]).write_text(json.dumps(res))


def _engine(job, backend: str, maintenance: str = "incremental"):
    from datalog.engine.engine import Engine
    engine = Engine.from_source(program(job["query"], backend), name=f"{job['query']}.dl", maintenance=maintenance)
    engine.run()
    return engine


def _measure(prepare, feed) -> tuple[object, dict]:
    """Replay the stream (``feed``) on a fresh ``prepare()``: timed, then again under tracemalloc
    for the peak memory above the prepared state. Returns the first replay's state."""
    state = prepare()
    gc.collect()
    t = time.perf_counter()
    out = feed(state)
    out["update_s"] = time.perf_counter() - t
    again = prepare()
    gc.collect()
    tracemalloc.start()
    feed(again)
    out["peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    del again
    return state, out


def run_treduct(job, data) -> dict:
    from datalog.engine.engine import Engine
    from maintenance.gjt import TReduct, maintain
    engine = Engine.from_source(program(job["query"], "thetajoin"))
    (clause,) = [c for c in engine.checked.clauses if c.body]
    gcq = engine.plans[clause.index].backend.gcq

    def feed(view):
        pushed = 0
        for rel, row in data:
            view.update(rel, row, 1)
            for _ in view.enumerate_delta_bulk():
                pushed += 1
        return {"pushed": pushed}
    view, out = _measure(lambda: maintain(gcq), feed)
    out["enum_s"], out["output"] = _consume(view.enumerate())
    out["bulk_s"], bulk_output = _consume(view.enumerate_bulk())
    assert bulk_output == out["output"], "bulk enumeration disagrees with Algorithm 1"
    if isinstance(view, TReduct) and gcq.is_full():
        out["root_count"] = view.count()                      # |Q(db)| from the ∅-root
    out["list_s"], _ = _consume(list(view.enumerate()))      # the same loop over a materialized list
    if job["size"] <= job["oracle_max"]:
        out["oracle"] = _oracle(gcq, view, data)
    return out


def _consume(pairs) -> tuple[float, int]:
    """Seconds to iterate (tuple, multiplicity) pairs, and how many there were."""
    t, n = time.perf_counter(), 0
    for _, m in pairs:
        n += 1
    return time.perf_counter() - t, n


def _oracle(gcq, view, data) -> int:
    from maintenance.gjt.oracle import evaluate
    db: dict = {}
    for rel, row in data:
        db.setdefault(rel, {})[row] = 1
    result = evaluate(gcq, db, view.output_vars)
    assert result == dict(view.enumerate()), "the T-reduct disagrees with the brute-force oracle"
    return len(result)


def run_engine(backend: str):
    def run(job, data) -> dict:
        def prepare():
            engine = _engine(job, backend)
            engine.commit()                                   # builds the maintainer
            return engine

        def feed(engine):
            for rel, row in data:
                engine.commit(inserts={rel: [row]})
            return {}
        engine, out = _measure(prepare, feed)
        t = time.perf_counter()
        out["output"] = len(engine.rows("q"))
        out["enum_s"] = time.perf_counter() - t
        return out
    return run


def run_scratch(job, data) -> dict:
    """A fresh engine (checked and planned again) evaluating the prefix at every 10%."""
    from datalog.engine.engine import Engine
    from datalog.language.parser import parse
    parsed = parse(program(job["query"], "lftj"))
    cuts = [len(data) * i // 10 for i in range(1, 11)]

    def feed(box):
        for cut in cuts:
            engine = Engine(parsed)
            rows: dict = {}
            for rel, row in data[:cut]:
                rows.setdefault(rel, []).append(row)
            for rel, rs in rows.items():
                engine.insert(rel, rs)
            engine.run()
            box[:] = [engine]
        return {}
    box, out = _measure(list, feed)
    out["output"] = len(box[0].db["q"])
    return out


RUNS = {"a": run_treduct, "b": run_engine("lftj"), "c": run_scratch, "d": run_engine("thetajoin")}


# ----------------------------------------------------------------- harness

def add_arguments(p) -> None:
    p.add_argument("--sizes", default="60,120,240", help="stream sizes N (total tuples); default 60,120,240")
    p.add_argument("--queries", default=",".join(QUERIES), help="comma-separated, of Q1-Q12; default all")
    p.add_argument("--k-scale", type=int, default=10,
                   help="stream sizes of the queries with an equality attribute k (Q2, Q5, Q6, Q8, Q9, "
                        "Q11, Q12; their outputs are ~200x smaller) are multiplied by this; default 10")
    p.add_argument("--systems", default="abcd", help="of a (T-reduct), b (LFTJ), c (scratch), d (engine)")
    p.add_argument("--order", choices=("random", "temporal"), default="random")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per query, size and system; default 60")
    p.add_argument("--mem-gb", type=float, default=4.0, help="address-space limit of each worker, GiB")
    p.add_argument("--oracle-max", type=int, default=150, help="brute-force check at sizes <= this; default 150")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for results and the report (default bench/out)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: print the report of the results saved under <out>/thetajoin/")
    p.add_argument("--worker", help=__import__("argparse").SUPPRESS)


def run(args) -> int:
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    root = args.out / "thetajoin"
    root.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    queries = [q for q in args.queries.split(",") if q]
    results = {}
    for q in queries:
        for size in sizes_of(q, sizes, args.k_scale):
            for system in args.systems:
                saved = root / f"{q}-{size}-{args.order}-{system}.json"
                results[(q, size, system)] = json.loads(saved.read_text()) if args.report_only and \
                    saved.exists() else {"status": "not run"} if args.report_only else \
                    run_job(args, root, q, size, system)
    text = report(queries, sizes, args.systems, results, args.order, args.k_scale)
    print(text)
    (args.out / "thetajoin.md").write_text(text + "\n")
    (args.out / "thetajoin.json").write_text(json.dumps([r for r in results.values()], indent=1))
    return 1 if "WRONG" in text else 0


def sizes_of(query: str, sizes: list[int], k_scale: int) -> list[int]:
    has_k = any("k" in cols for _, cols in QUERIES[query][0])
    return [size * k_scale for size in sizes] if has_k else sizes


def run_job(args, root: Path, query: str, size: int, system: str) -> dict:
    out = root / f"{query}-{size}-{args.order}-{system}.json"
    out.unlink(missing_ok=True)
    job = {"query": query, "size": size, "order": args.order, "system": system, "seed": args.seed,
           "mem_gb": args.mem_gb, "oracle_max": args.oracle_max, "out": str(out)}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "thetajoin", "--worker", json.dumps(job)],
                            cwd=REPO, start_new_session=True)
    try:
        proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        import os
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        out.write_text(json.dumps({"status": f"timeout {args.timeout:g}s"}))
    if not out.exists():
        out.write_text(json.dumps({"status": f"crashed (exit {proc.returncode})"}))
    return json.loads(out.read_text())


def report(queries, sizes, systems, results, order: str, k_scale: int) -> str:
    headers = ["query", "N", "output"] + [f"{SYSTEMS[s]} {m}" for s in systems for m in ("s", "MB")] + \
              ["enum s", "enum/list", "bulk s", "bulk/list", "a vs b time", "a vs b mem", "check"]
    rows = []
    for q in queries:
        for size in sizes_of(q, sizes, k_scale):
            got = {s: results[(q, size, s)] for s in systems}
            outputs = {s: r.get("output") for s, r in got.items() if r.get("status") == "ok"}
            a = got.get("a", {})
            ok = len(set(outputs.values())) <= 1 and a.get("oracle", a.get("output")) == a.get("output") \
                and a.get("root_count", a.get("output")) == a.get("output")
            row = [q, f"{size:,}", f"{next(iter(outputs.values())):,}" if outputs else "-"]
            for s in systems:
                r = got[s]
                row += [f"{r['update_s']:.3f}", f"{r['peak_mb']:.2f}"] if r.get("status") == "ok" \
                    else [r.get("status", "?"), "-"]
            b = got.get("b", {})
            both = a.get("status") == "ok" and b.get("status") == "ok"
            row += [f"{a['enum_s']:.4f}" if "enum_s" in a else "-",
                    f"{a['enum_s'] / a['list_s']:.1f}x" if a.get("list_s") else "-",
                    f"{a['bulk_s']:.4f}" if "bulk_s" in a else "-",
                    f"{a['bulk_s'] / a['list_s']:.1f}x" if a.get("list_s") and "bulk_s" in a else "-",
                    f"{b['update_s'] / a['update_s']:.1f}x" if both else "-",
                    f"{b['peak_mb'] / a['peak_mb']:.1f}x" if both else "-",
                    ("ok" + (" +oracle" if "oracle" in a else "")) if ok else "WRONG"]
            rows.append(row)
    right = set(range(1, len(headers) - 1))
    return (f"theta-join benchmark, {order} streams (N = total inserts; times are totals in seconds)\n\n"
            + table.text(headers, rows, right) + "\n\n" + targets(queries, sizes, results, k_scale))


def targets(queries, sizes, results, k_scale: int) -> str:
    """The issue's targets, on the largest size where both a and b completed."""
    lines = ["targets (a = T-reduct, b = LFTJ maintenance; at the largest N where both completed):"]
    for q in queries:
        both = [n for n in sizes_of(q, sizes, k_scale)
                if all(results.get((q, n, s), {}).get("status") == "ok" for s in "ab")]
        if not both:
            continue
        a, b = results[(q, both[-1], "a")], results[(q, both[-1], "b")]
        speed, memory = b["update_s"] / a["update_s"], b["peak_mb"] / a["peak_mb"]
        lines.append(f"  {q:>3} N={both[-1]:,}: update time b/a {speed:.1f}x"
                     f"{' (target >= 10x: ' + ('met' if speed >= 10 else 'MISSED') + ')' if q in SPEED_TARGET else ''}"
                     f", memory b/a {memory:.1f}x"
                     f"{' (target >= 10x at 200 tuples per relation: ' + ('met' if memory >= 10 else 'not met') + ' here)' if q == 'Q4' else ''}"
                     f", enumeration / list: Algorithm 1 {a['enum_s'] / a['list_s']:.0f}x,"
                     f" bulk {a['bulk_s'] / a['list_s']:.1f}x (target <= 3x)")
    return "\n".join(lines)


SPEED_TARGET = {"Q1", "Q2", "Q3", "Q4", "Q5", "Q6"}

