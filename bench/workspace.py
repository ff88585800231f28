"""Workspaces: opening against evaluating from scratch, commit latency with fsync, size on disk.

For each EDB size (total tuples of the join3 workload of bench.maintenance: q(a, d) :- r(a, b),
s(b, c), t(c, d) over three random tables) fresh subprocesses measure:

  scratch   Engine.run() on the EDB read from .facts files (parse, load, evaluate)
  init      Workspace.create: the same evaluation, building the maintainer (one recording
            pass), writing the snapshot and the maintainer file
  open      Workspace.open(readonly=True), a reader (reads snapshot + log; no evaluation);
            median of --reps opens
  writer    Workspace.open(), the writer: also attaches the stored maintainer (trace trees,
            sensitivity entries, support counts), whose pages, like the relations and the trie
            indexes its rules read, are read when a commit first reaches them
  first     the writer's first one-tuple commit after opening
  commit    median latency of a one-tuple commit after that, including the log fsync
  slowest   the slowest of those commits after the first (a commit that first reaches a large
            part of the stored state reads and builds it: see datalog/workspace.md)
  update    wall time of `datalog update ws changes.dl` with one new tuple, a process of its
            own: interpreter start, imports, writer open, commit, close -- what a batch job pays;
            the commits above are in the log, and an open replays the commits logged since the
            last compaction (reading what they reached)
  logged    the same after --logged more one-tuple commits
  disk      every file of the workspace at the end, against the EDB as tab-separated .facts
            files (and against EDB + IDB as such files)

Targets from the issue: open at least 5x faster than scratch.
"""
from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import provenance, table

REPO = Path(__file__).resolve().parents[1]


def add_arguments(p) -> None:
    p.add_argument("--sizes", default="10000,100000,1000000",
                   help="comma-separated EDB sizes (total EDB tuples); default 10000,100000,1000000")
    p.add_argument("--reps", type=int, default=3, help="opens (median); default 3")
    p.add_argument("--commits", type=int, default=21, help="one-tuple commits (median); default 21")
    p.add_argument("--logged", type=int, default=200,
                   help="commits logged before the second `datalog update`; default 200")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per worker process; default 3600")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for results and the report (default bench/out)")


def worker(size: int, seed: int, reps: int, commits: int, tmp: str) -> dict:
    """Everything but the `datalog update` processes, in ``tmp`` (left for them)."""
    from bench.maintenance import make_join3
    from datalog.engine.engine import Engine
    from datalog.sources.files import format_rows
    from datalog.workspace.workspace import Workspace

    spec = make_join3(size, seed)
    program = spec.program + "".join(f".input {rel}\n" for rel in spec.edb)
    tmp = Path(tmp)
    facts = tmp / "facts"
    facts.mkdir()
    for rel, rows in spec.edb.items():
        (facts / f"{rel}.facts").write_text(format_rows(rows, "\t"))
    csv_bytes = sum(f.stat().st_size for f in facts.iterdir())
    out = {"size": size, "params": spec.params, "edb_csv_bytes": csv_bytes}
    Engine.from_source(program, facts)                     # warm: the parser is built once
    started = time.perf_counter()
    engine = Engine.from_source(program, facts)
    engine.run()
    out["scratch"] = time.perf_counter() - started
    out["all_csv_bytes"] = csv_bytes + len(format_rows(engine.rows("q"), "\t").encode())
    del engine
    started = time.perf_counter()
    Workspace.create(tmp / "ws", program, facts).close()
    out["init"] = time.perf_counter() - started
    opens = []
    for _ in range(reps):
        started = time.perf_counter()
        Workspace.open(tmp / "ws", readonly=True).close()
        opens.append(time.perf_counter() - started)
    out["open"] = statistics.median(opens)
    rng = random.Random(seed)
    started = time.perf_counter()
    with Workspace.open(tmp / "ws") as ws:
        out["writer"] = time.perf_counter() - started
        out["restored"] = ws.engine.maintainer is not None
        latencies = []
        for _ in range(commits + 1):
            rel, row = spec.fresh(rng)
            started = time.perf_counter()
            ws.engine.commit(inserts={rel: [row]})
            latencies.append(time.perf_counter() - started)
    out["first"], out["commit"] = latencies[0], statistics.median(latencies[1:])
    out["slowest"] = max(latencies[1:])
    for name in ("update-1", "update-2"):
        rel, row = spec.fresh(rng)
        (tmp / f"{name}.dl").write_text(f"+{rel}({', '.join(map(str, row))}).\ncommit.\n")
    return out


def log_commits(size: int, seed: int, logged: int, tmp: str) -> None:
    """``logged`` more one-tuple commits to the workspace in ``tmp`` (the log grows)."""
    from bench.maintenance import make_join3
    from datalog.workspace.workspace import Workspace
    spec, rng = make_join3(size, seed), random.Random(seed + 1)
    with Workspace.open(Path(tmp) / "ws") as ws:
        for _ in range(logged):
            rel, row = spec.fresh(rng)
            ws.engine.commit(inserts={rel: [row]})


def _update(tmp: Path, name: str) -> float:
    """Seconds of a `datalog update` process applying ``name``.dl, started from this (small)
    process: started from the worker, which holds gigabytes, it took 1-2 s longer at 1M."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "datalog", "update", str(tmp / "ws"), str(tmp / f"{name}.dl")],
                   check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - started


def _python(code: str, timeout: float) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1:])
    return done.stdout


def measure(size: int, args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-ws-"))
    try:
        out = json.loads(_python(f"import json; from bench.workspace import worker; print(json.dumps(worker("
                                 f"{size}, {args.seed}, {args.reps}, {args.commits}, {str(tmp)!r})))",
                                 args.timeout).strip().splitlines()[-1])
        out["update"] = _update(tmp, "update-1")
        _python(f"from bench.workspace import log_commits; log_commits({size}, {args.seed}, {args.logged}, "
                f"{str(tmp)!r})", args.timeout)
        out["logged"] = _update(tmp, "update-2")
        out["disk_bytes"] = sum(f.stat().st_size for f in (tmp / "ws").iterdir())
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args) -> int:
    sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    root = args.out / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    state = provenance.state()
    results = []
    for size in sizes:
        try:
            results.append(measure(size, args))
        except subprocess.TimeoutExpired:
            results.append({"size": size, "error": f"timeout after {args.timeout:.0f} s"})
            continue
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            results.append({"size": size, "error": str(exc)})
            continue
        (root / f"join3-{size}.json").write_text(json.dumps(results[-1], indent=1))
    return report(args, results, state)


def report(args, results: list[dict], state) -> int:
    headers = ["EDB tuples", "scratch", "init", "open", "scratch/open", "writer open", "scratch/writer",
               "first commit", "commit (fsync)", "slowest", "update", f"+{args.logged} logged",
               "disk", "disk/EDB csv", "disk/all csv"]
    rows = []
    for r in results:
        if "error" in r:
            rows.append([str(r["size"]), f"error: {r['error']}"] + [""] * (len(headers) - 2))
            continue
        rows.append([f"{r['size']:,}", _s(r["scratch"]), _s(r["init"]), _s(r["open"]),
                     f"{r['scratch'] / r['open']:.1f}x", _s(r["writer"]) + ("" if r["restored"] else " (no state)"),
                     f"{r['scratch'] / r['writer']:.1f}x", _s(r["first"]), f"{r['commit'] * 1000:.2f} ms",
                     _s(r["slowest"]), _s(r["update"]), _s(r["logged"]),
                     f"{r['disk_bytes'] / 1e6:.1f} MB", f"{r['disk_bytes'] / r['edb_csv_bytes']:.2f}",
                     f"{r['disk_bytes'] / r['all_csv_bytes']:.2f}"])
    print(table.text(headers, rows, right=set(range(len(headers)))))
    md = ["# Workspace benchmark (join3)", "", provenance.line(state), "", __doc__.strip(), "",
          table.markdown(headers, rows, right=set(range(len(headers))))]
    (args.out / "workspace.md").write_text("\n".join(md) + "\n")
    (args.out / "workspace.json").write_text(json.dumps(results, indent=1))
    return 0 if all("error" not in r for r in results) else 1


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 10 else f"{seconds:.1f} s"
