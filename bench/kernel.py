"""The compiled leapfrog kernel alone against the engine: triangles and a two-atom path join.

Each engine runs as a fresh process on the same generated .facts files (as in ``bench static``)
and writes the output relation; the harness measures the whole process (wall-clock and CPU
seconds, peak RSS) and checks that the engines agree on the rows. On a shared machine the CPU
seconds are the numbers to compare. Engines:

  kernel   ``python -m bench.kernel_run compiled``: numpy reads the facts, builds CSR tries,
           the compiled kernel joins (``lftj.kernel``), pyarrow writes the output
  twin     the same with ``DATALOG_KERNEL=python`` (the kernel's uncompiled twin): small sizes only
  ours     ``datalog run prog.dl -F facts -D out``, the engine as it is

The join columns are the kernel's own wall-clock and CPU time inside its process (``kernel_run``'s
phases.json).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import peers, provenance, static, table, workloads as W


def path2(n: int, m: int, seed: int) -> W.Workload:
    """path2(x, z) :- edge(x, y), edge(y, z).  (a two-atom join, one shared variable)"""
    name = f"path2-n{W._k(n)}-m{W._k(m)}"
    return W.Workload(
        name=name, kind="path2",
        decls={"edge": ["number"] * 2, "path2": ["number"] * 2},
        rules=[(("path2", "x", "z"), [("edge", "x", "y"), ("edge", "y", "z")])],
        output="path2", size=f"n={W._k(n)} m={W._k(m)}",
        inputs={"edge": W.random_digraph(W.rng_for(name, seed), n, m)}, params={"n": n, "m": m})


SMALL = [lambda s: W.triangles(1_000, 5_000, s), lambda s: path2(1_000, 5_000, s)]
FULL = [lambda s: W.triangles(10_000, 100_000, s), lambda s: W.triangles(10_000, 300_000, s),
        lambda s: path2(10_000, 100_000, s)]


class Kernel:
    """A peer (see bench.peers): the kernel alone, compiled or its twin."""

    def __init__(self, name: str, which: str):
        self.NAME, self.which = name, which

    def command(self, workdir: Path, outdir: Path) -> list[str]:
        return [sys.executable, "-m", "bench.kernel_run", self.which, str(workdir), str(outdir)]


ENGINES = {"kernel": Kernel("kernel", "compiled"), "twin": Kernel("twin", "python"), "ours": peers.ours}


def add_arguments(p) -> None:
    p.add_argument("--quick", action="store_true", help="the small sizes only")
    p.add_argument("--repeat", type=int, default=1, help="runs per engine and workload (the median is shown)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for inputs, outputs and the report (default bench/out)")


def run(args) -> int:
    root, started, st = args.out / "kernel", time.perf_counter(), provenance.state()
    prov = provenance.line(st)
    plan = [(make(args.seed), ("kernel", "twin", "ours")) for make in SMALL]
    if not args.quick:
        plan += [(make(args.seed), ("kernel", "ours")) for make in FULL]
    results = []
    for wl, engines in plan:
        d = wl.write(root / wl.name / "input")
        static.log(wl.describe())
        per = {name: median_run(ENGINES[name], d, root / wl.name / name, wl.output, args) for name in engines}
        results.append((wl, per))
    headers = ["workload", "size", "engine", "seconds", "cpu s", "join s", "join cpu s", "rows", "cpu ratio",
               "peak MB", "sha"]
    rows = [[wl.kind, wl.size, eng, static.fmt_seconds(r, args.timeout), cpu(r), *join_seconds(root / wl.name / eng),
             "-" if r.rows is None else str(r.rows), cpu_ratio(r, per.get("ours")),
             "-" if r.rss_mb is None else f"{r.rss_mb:.0f}", (r.digest or "-")[:10]]
            for wl, per in results for eng, r in per.items()]
    print(table.text(headers, rows, {3, 4, 5, 6, 7, 8, 9}))
    print(prov)
    print(f"seed {args.seed}, median of {args.repeat}, total {time.perf_counter() - started:.0f}s; "
          "cpu ratio = cpu s / ours' cpu s (< 1: less CPU than the engine as it is)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kernel.md").write_text("\n".join([
        "# The leapfrog kernel alone", "", prov, "", table.markdown(headers, rows, {3, 4, 5, 6, 7, 8, 9}), "",
        (__doc__ or "").strip()]) + "\n")
    problems = static.disagreements(results) + [f"{wl.name} / {e}: {r.status} {r.note}" for wl, per in results
                                                for e, r in per.items() if r.status != "ok"]
    for p in problems:
        print("PROBLEM", p, file=sys.stderr)
    return 1 if problems else 0


def median_run(engine, workdir: Path, outdir: Path, output: str, args) -> peers.Result:
    """The run of median time of ``args.repeat`` (its phases.json stays beside it)."""
    runs = []
    for i in range(args.repeat):
        r = peers.run(engine, workdir, outdir.with_name(f"{outdir.name}.{i}"), output, args.timeout)
        runs.append(r)
        static.log(f"  {engine.NAME:<7} {r.status:<8} {r.seconds or 0:8.2f}s  rows={r.rows}  peak={r.rss_mb} MB")
    ok = sorted((r for r in runs if r.status == "ok"), key=lambda r: r.seconds)
    best = ok[len(ok) // 2] if ok else runs[-1]
    phases = outdir.with_name(f"{outdir.name}.{runs.index(best)}") / "phases.json"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "phases.json").unlink(missing_ok=True)
    if phases.exists():
        (outdir / "phases.json").write_text(phases.read_text())
    return best


def cpu(r: peers.Result) -> str:
    return "-" if r.cpu_seconds is None else f"{r.cpu_seconds:.2f}"


def cpu_ratio(r: peers.Result, ours: peers.Result | None) -> str:
    if ours is None or r.cpu_seconds is None or not ours.cpu_seconds:
        return "-"
    return f"{r.cpu_seconds / ours.cpu_seconds:.2f}x"


def join_seconds(outdir: Path) -> tuple[str, str]:
    """The join's wall-clock and CPU seconds in its process (the CPU time is what a shared machine
    does not inflate)."""
    if not (outdir / "phases.json").exists():
        return "-", "-"
    phases = json.loads((outdir / "phases.json").read_text())
    return f"{phases['join']:.3f}", f"{phases['join_cpu']:.3f}"

