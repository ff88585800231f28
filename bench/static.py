"""Static (from-scratch) evaluation: triangles, transitive closure, Andersen, and two example programs
with comparisons, arithmetic and aggregates (same generation, shortest paths) on scaled inputs.

Every engine runs as its own fresh subprocess on the same generated .facts
files and writes the output relation as TSV; the harness times the whole
process (start-up, imports, loading, evaluation, output), then counts and
hashes the sorted rows.  Engines that finished must agree exactly and none may
crash, otherwise the run fails (exit 1) after printing the table.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from . import peers, provenance, table, workloads as W

FULL = [
    lambda s: W.triangles(10_000, 100_000, s),
    lambda s: W.triangles(10_000, 300_000, s),
    lambda s: W.tc(1_000, 2_000, s),
    lambda s: W.tc(2_000, 4_000, s),
    lambda s: W.andersen(50_000, s),
    lambda s: W.same_generation(50, s),
    lambda s: W.shortest_path(150, s),
]
QUICK = [
    lambda s: W.triangles(1_000, 5_000, s),
    lambda s: W.tc(200, 400, s),
    lambda s: W.andersen(400, s),
    lambda s: W.same_generation(2, s),
    lambda s: W.shortest_path(20, s),
]

# (peer, workload kinds, ours must be at least this many times faster)
TARGETS = [
    ("clingo", {"triangles"}, 3.0),
    ("clingo", {"tc", "andersen"}, 1.0),
    ("pyDatalog", {"triangles", "tc", "andersen"}, 50.0),
    ("souffle", {"triangles", "tc", "andersen"}, 1.0),      # at most Soufflé's interpreter's time
    ("souffle", {"same_generation", "shortest_path"}, 0.5),  # at most twice its time
]

FOOTNOTES = [
    "seconds = wall-clock time of a fresh subprocess per engine and workload: "
    "interpreter start-up, imports, reading the .facts files, evaluation and writing "
    "the output relation. ours = the `datalog run prog.dl -F facts -D out` command. "
    "ratio = engine time / ours time (>1: we are faster); `>` after a timeout.",
    "rows = lines in the output relation; agreement is checked on row count and "
    "sha256 of the sorted rows (column `sha`, first 10 hex digits).",
    "peak MB = maximum resident set size of the engine process (includes a ~12 MB "
    "floor from the launcher that measures it; not available after a timeout).",
    "clingo: Python API, ground only (no solve); result = atoms of the output predicate.",
    "souffle: `souffle -j1` (its interpreter) on the same prog.dl and facts, when souffle is on PATH; "
    "souffle-compiled: the executable of `souffle -j1 -o`, its compile time reported apart "
    "(docs/benchmarks.md says how to build Soufflé).",
    "pyDatalog: Python API (assert_fact + load + ask), top-down evaluation with tabling. "
    "Rule bodies are reordered (recursive atoms first; a fixed order for Andersen) because "
    "pyDatalog 0.22 loops forever on other orders (see bench/peers/pydatalog.py).",
    "duckdb: triangles = 3-way self-join with DISTINCT; tc = WITH RECURSIVE ... UNION; "
    "andersen = semi-naive fixpoint loop driven from Python over temp tables "
    "(mutual recursion pointsTo/heapPointsTo is not expressible as one recursive CTE). "
    "DuckDB uses all cores; the other engines are single-threaded.",
]


def add_arguments(p) -> None:
    p.add_argument("--quick", action="store_true", help="small sizes (smoke test, < 1 min)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run workloads whose name contains NAME (repeatable, comma-separated), "
                        "e.g. --only triangles or --only tc-n2k")
    p.add_argument("--engines", default=",".join(peers.PEERS),
                   help=f"comma-separated subset of {','.join(peers.PEERS)}")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per engine per workload (default 300, 60 with --quick)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=1, metavar="N",
                   help="runs per engine and workload, the engines in turn (ours, souffle, ours, ...); "
                        "the table shows each one's median time and peak (of an even number, the slower "
                        "middle run; default 1)")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for inputs, outputs, logs and the report (default bench/out)")


def selected_engines(spec: str) -> list:
    names = [e.strip() for e in spec.split(",") if e.strip()]
    by_lower = {k.lower(): v for k, v in peers.PEERS.items()}
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown or not names:
        sys.exit(f"unknown engine(s) {unknown}; choose from {list(peers.PEERS)}")
    return [by_lower[n.lower()] for n in names]


def selected_workloads(args) -> list[W.Workload]:
    wls = [make(args.seed) for make in (QUICK if args.quick else FULL)]
    only = [o for arg in args.only for o in arg.split(",") if o]
    if only:
        wls = [w for w in wls if any(o in w.name for o in only)]
        if not wls:
            sys.exit(f"--only {only} matched no workload")
    return wls


def median(results: list[peers.Result]) -> peers.Result:
    """One engine's runs as one result: the last, if it was not ok; else the run of the median
    time (of an even number, the slower of the two middle ones), with the median peak of all."""
    if results[-1].status != "ok":
        return results[-1]
    by_time = sorted(results, key=lambda r: r.seconds)
    middle = by_time[len(by_time) // 2]
    peaks = sorted(r.rss_mb for r in results if r.rss_mb is not None)
    return dataclasses.replace(middle, rss_mb=peaks[len(peaks) // 2] if peaks else None)


def ratio(r: peers.Result, ours: peers.Result | None, timeout: float):
    """-> (engine time / ours time, bound) with bound '' exact, '>' or '<'; or None."""
    if ours is None or r is ours:
        return (1.0, "") if r is ours and r.status == "ok" else None
    if r.status == "ok" and ours.status == "ok":
        return r.seconds / ours.seconds, ""
    if r.status == "timeout" and ours.status == "ok":
        return timeout / ours.seconds, ">"
    if r.status == "ok" and ours.status == "timeout":
        return r.seconds / timeout, "<"
    return None


def fmt_ratio(q) -> str:
    if q is None:
        return "-"
    x, bound = q
    return f"{bound}{x:.{2 if x < 10 else 1 if x < 100 else 0}f}x"


def fmt_seconds(r: peers.Result, timeout: float) -> str:
    if r.status == "ok":
        return f"{r.seconds:.2f}"
    return f"timeout >{timeout:g}s" if r.status == "timeout" else r.status


def target_lines(results, timeout: float) -> list[str]:
    out = []
    for peer, kinds, factor in TARGETS:
        for wl, per in results:
            if wl.kind not in kinds or peer not in per:
                continue
            q = ratio(per[peer], per.get("ours"), timeout)
            if q is None:
                verdict = "n/a"
            elif q[1] != "<" and q[0] >= factor:
                verdict = "met"
            else:
                verdict = "unknown" if q[1] == ">" else "MISSED"
            out.append(f"ours vs {peer} on {wl.kind} {wl.size}: {fmt_ratio(q)} "
                       f"(target >= {factor:g}x) {verdict}")
    return out


def disagreements(results) -> list[str]:
    problems = []
    for wl, per in results:
        answers: dict[tuple, list[str]] = {}
        for eng, r in per.items():
            if r.status == "ok":
                answers.setdefault((r.rows, r.digest), []).append(eng)
        if len(answers) > 1:
            problems.append(f"{wl.name}: " + "; ".join(
                f"{'/'.join(e)} -> {n} rows sha {h[:10]}" for (n, h), e in answers.items()))
    return problems


def run(args) -> int:
    if args.timeout is None:
        args.timeout = 60 if args.quick else 300
    engines = selected_engines(args.engines)
    wls = selected_workloads(args)
    name = "static-quick" if args.quick else "static"
    root = args.out / name
    st = provenance.state()
    started, prov = time.perf_counter(), provenance.line(st)
    results: list[tuple[W.Workload, dict[str, peers.Result]]] = []
    for wl in wls:
        t = time.perf_counter()
        d = wl.write(root / wl.name / "input")
        log(f"{wl.describe()}  (generated in {time.perf_counter() - t:.1f}s)")
        runs: dict[str, list[peers.Result]] = {eng.NAME: [] for eng in engines}
        for _ in range(max(args.repeats, 1)):
            for eng in engines:
                if runs[eng.NAME] and runs[eng.NAME][-1].status != "ok":
                    continue                     # (a timeout or a failure is not run again)
                if wl.engines is not None and eng.NAME not in wl.engines:
                    runs[eng.NAME].append(peers.Result("unavailable", note=f"no rendering of the {wl.kind} program in its language"))
                    continue
                r = peers.run(eng, d, root / wl.name / eng.NAME, wl.output, args.timeout)
                runs[eng.NAME].append(r)
                shown = f"{r.seconds:.2f}s" if r.seconds is not None else ""
                log(f"  {eng.NAME:<10} {r.status:<11} {shown:>9}  rows={r.rows}  {r.note}")
        results.append((wl, {name: median(rs) for name, rs in runs.items()}))

    headers = ["workload", "size", "engine", "seconds", "rows", "ratio", "peak MB", "sha"]
    rows, notes, crashes = [], [], []
    for wl, per in results:
        for eng, r in per.items():
            rows.append([wl.kind, wl.size, eng, fmt_seconds(r, args.timeout),
                         "-" if r.rows is None else str(r.rows),
                         fmt_ratio(ratio(r, per.get("ours"), args.timeout)),
                         "-" if r.rss_mb is None else f"{r.rss_mb:.0f}", (r.digest or "-")[:10]])
            if r.status == "unavailable" and f"{eng}: unavailable: {r.note}" not in notes:
                notes.append(f"{eng}: unavailable: {r.note}")
            elif r.status == "error":
                crashes.append(f"{wl.name} / {eng}: {r.note}")
    problems = disagreements(results)
    targets = target_lines(results, args.timeout)
    if moved := provenance.changed(st):
        notes.append(moved)
    right = {3, 4, 5, 6}

    print(table.text(headers, rows, right))
    print(prov)
    print(f"seed {args.seed}, timeout {args.timeout:g}s, median of {max(args.repeats, 1)}, "
          f"total {time.perf_counter() - started:.0f}s")
    for n in notes + [f"CRASH {c}" for c in crashes]:
        print("  note:", n)
    if targets and not args.quick:
        print("targets:\n  " + "\n  ".join(targets))
    for where, seconds in peers.souffle.COMPILE_SECONDS.items():
        notes.append(f"souffle-compiled: souffle -o took {seconds:.1f}s for {Path(where).parent.name} (not in its time)")
        print("  note:", notes[-1])

    md = [f"# Static benchmarks{' (quick)' if args.quick else ''}", "", prov, "",
          f"seed {args.seed}, timeout {args.timeout:g}s, median of {max(args.repeats, 1)}", "",
          table.markdown(headers, rows, right), ""]
    md += [f"{i}. {f}" for i, f in enumerate(FOOTNOTES, 1)]
    md += [""] + [f"- {n}" for n in notes + crashes + targets]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.md").write_text("\n".join(md) + "\n")
    (args.out / f"{name}.json").write_text(json.dumps(
        {"provenance": prov, "results": {wl.name: {e: vars(r) for e, r in per.items()}
                                         for wl, per in results}}, indent=1))
    print(f"report: {args.out / (name + '.md')}")

    if problems or crashes:
        bar = "!" * 72
        print(f"\n{bar}", file=sys.stderr)
        if problems:
            print("RESULT MISMATCH between engines that finished:", file=sys.stderr)
            print("\n".join("  " + p for p in problems), file=sys.stderr)
        if crashes:
            print("ENGINE CRASHED (logs beside the outputs under "
                  f"{root}):", file=sys.stderr)
            print("\n".join("  " + c for c in crashes), file=sys.stderr)
        print(bar, file=sys.stderr)
        return 1
    return 0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
