"""Provenance: latency of engine.why (a proof of least height, built on demand) and
engine.why_not, right after evaluation and after 1,000 single-tuple commits (whose latency is
reported too: with kept heights a commit repairs them).

Workloads are bench.maintenance's: Andersen points-to (bench.workloads.andersen) and the
transitive closure of a random DAG of disjoint blocks (tc-dag), at the given EDB sizes (total
EDB tuples). For each: evaluate (Engine.run), then time why() on --samples random IDB facts (the
first call separately: it builds the trie indexes the proofs read, which inserts and erases keep
up to date from then on), and why_not() on --samples absent facts; then commit --updates random
single-tuple inserts or retracts (half each) and time why() and why_not() again.

Reported per phase: median, p90 and max latency in ms; the proofs' heights (max, and how many
are <= 10); how many of those of height <= 10 took < 50 ms (the issue's target); how many calls
ran past --timeout seconds and were stopped (not in the latencies). Memory: the
process's RSS growth over the first why() calls (the indexes they build), against the RSS after
evaluation; without a why() call provenance holds nothing.

Modes (--modes): ``search``, proofs searched on demand (no --provenance); ``kept``, the engine
made with provenance=True: heights computed right after evaluation (its time reported as "heights
pass"), proofs read off them; each commit repairs the heights it changed (its latency with it),
and the first why after the commits is reported apart (with whether it found the heights kept, or
repaired or recomputed stale ones a commit's repair declined). Memory overhead of kept:
the bytes the heights hold (their dicts and row tuples, by sys.getsizeof) and the process's RSS
growth over the pass, against the engine after evaluation without them (which holds none: tested).

Run as `python -m bench provenance [--sizes 100000 1000000] [--workloads andersen tc-dag]
[--modes search kept]`.
"""
from __future__ import annotations

import gc
import random
import signal
import statistics
import sys
import time

from . import maintenance as M, provenance, table

TARGET_MS, TARGET_HEIGHT = 50.0, 10


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--workloads", nargs="+", default=["andersen", "tc-dag"], choices=["andersen", "tc-dag"])
    p.add_argument("--samples", type=int, default=50, help="facts explained per phase (default 50)")
    p.add_argument("--updates", type=int, default=1000, help="single-tuple commits between the phases")
    p.add_argument("--interleaved", type=int, default=10,
                   help="kept mode: rounds of one commit then one why (not stopped by --timeout)")
    p.add_argument("--modes", nargs="+", default=["search", "kept"], choices=["search", "kept"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds one why/why_not may take before it is stopped and counted as a timeout")


def run(args) -> int:
    state = provenance.state()
    print(f"# python -m bench provenance\n# {provenance.line(state)}\n")
    rows = []
    for name in args.workloads:
        for size in args.sizes:
            for mode in args.modes:
                rows.extend(_measure(name, size, args, mode))
    print(table.text(["workload", "EDB", "mode", "phase", "n", "median ms", "p90 ms", "max ms", "max height",
                        f"h<={TARGET_HEIGHT} & <{TARGET_MS:g}ms", "timeouts", "memory"], rows))
    note = provenance.changed(state)
    if note:
        print(note)
    return 0


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _measure(name: str, size: int, args, mode: str = "search") -> list[list]:
    from datalog.engine.engine import Engine
    global TIMEOUT
    TIMEOUT = args.timeout
    signal.signal(signal.SIGALRM, _alarm)
    spec = M.MAKERS[name](size, args.seed)
    engine = Engine.from_source(spec.program)
    for rel, rows in spec.edb.items():
        engine.insert(rel, rows)
    started = time.perf_counter()
    engine.run()
    evaluated = time.perf_counter() - started
    gc.collect()
    rss = M.rss_bytes()
    rng = random.Random(args.seed)
    output = max(sorted(engine.idb), key=lambda n: len(engine.db[n]))
    print(f"{name} at {size:,} EDB tuples ({spec.params}), {mode}: evaluated in {evaluated:.1f} s; "
          f"{output} has {len(engine.db[output]):,} tuples", flush=True)
    out = []
    if mode == "kept":
        out.append(_heights_pass(engine, name, size, evaluated))
    row = _sample(engine, output, rng, 1)[0]
    first = _timed(lambda: engine.explainer().why(output, row))
    grown = M.rss_bytes() - rss
    out.append([name, f"{size:,}", mode, "why, first call (builds indexes)", 1, f"{first[0]:.1f}", "", "",
                first[1].height if first[1] is not None else "", "", 0 if first[1] is not None else 1, ""])
    out.append(_phase(engine, output, rng, args.samples, name, size, mode, "why, after evaluation"))
    if mode == "search":
        out.append(_absent_phase(engine, output, rng, args.samples, name, size, mode, "why_not, after evaluation"))
    before = (engine.heights.repaired, engine.heights.declined) if mode == "kept" else (0, 0)
    commits = [_timed(lambda: _update(engine, spec, rng), limit=None)[0] for _ in range(args.updates)]
    print(f"  {args.updates} commits in {sum(commits) / 1000:.1f} s; RSS growth of the first "
          f"why: {grown / 2 ** 20:.1f} MiB over {rss / 2 ** 20:.0f} MiB after evaluation", flush=True)
    kept = (f"; {engine.heights.repaired - before[0]} repaired at the commit, "
            f"{engine.heights.declined - before[1]} declined" if mode == "kept" else "")
    out.append([name, f"{size:,}", mode, f"commit, single tuple (x{args.updates}{kept})", len(commits),
                *_stats(commits), "", "", 0, ""])
    if mode == "kept":
        row = _sample(engine, output, rng, 1)[0]
        before = (engine.heights.repaired, engine.heights.recomputed)
        first = _timed(lambda: engine.explainer().why(output, row), limit=None)     # a recomputation is
                                                                                    # as long as it takes
        how = ("repairs" if engine.heights.repaired > before[0] else
               "recomputes" if engine.heights.recomputed > before[1] else "finds kept")
        out.append([name, f"{size:,}", mode, f"why, first after {args.updates} commits ({how} heights)", 1,
                    f"{first[0]:.1f}", "", "", first[1].height if first[1] is not None else "", "",
                    0 if first[1] is not None else 1, ""])
    out.append(_phase(engine, output, rng, args.samples, name, size, mode, f"why, after {args.updates} commits"))
    if mode == "kept":
        out.append(_interleaved(engine, spec, output, rng, args.interleaved, name, size))
    if mode == "search":
        out.append(_absent_phase(engine, output, rng, args.samples, name, size, mode,
                                 f"why_not, after {args.updates} commits"))
    return out


def _heights_pass(engine, name, size, evaluated: float) -> list:
    """Keep the heights of the evaluated engine (as run() does with provenance=True), measuring the
    pass's time and the memory the heights hold (tracemalloc: bytes still allocated after it)."""
    gc.collect()
    rss = M.rss_bytes()
    engine.provenance = True
    started = time.perf_counter()
    engine.heights.refresh()
    seconds = time.perf_counter() - started
    gc.collect()
    grown = M.rss_bytes() - rss
    held = _annotation_bytes(engine.heights)
    facts = engine.heights.size()
    memory = f"{held / 2 ** 20:.0f} MiB held ({held / max(facts, 1):.0f} B/fact), RSS +{grown / 2 ** 20:.0f} MiB"
    return [name, f"{size:,}", "kept", f"heights pass ({facts:,} facts; evaluation {evaluated:.1f} s)", 1,
            f"{seconds * 1000:.0f}", "", "", "", "", "", memory]


def _interleaved(engine, spec, relation, rng, samples, name, size) -> list:
    """One single-tuple commit, then one why (its time includes bringing the heights up to
    date), ``samples`` times: the interactive case."""
    times, heights, stopped, repaired = [], [], 0, engine.heights.repaired
    for _ in range(samples):
        _update(engine, spec, rng)
        row = _sample(engine, relation, rng, 1)[0]
        ms, proof = _timed(lambda: engine.explainer().why(relation, row), limit=None)
        times.append(ms)
        heights.append(proof.height)
    within = [t for t, h in zip(times, heights) if h <= TARGET_HEIGHT]
    fast = sum(1 for t in within if t < TARGET_MS)
    phase = f"commit, then why (x{samples}; {engine.heights.repaired - repaired} repaired)"
    return [name, f"{size:,}", "kept", phase, len(times), *_stats(times), max(heights, default=""),
            f"{fast}/{len(within)}", stopped, ""]


def _update(engine, spec, rng) -> None:
    rel, row = spec.fresh(rng)
    if rng.random() < 0.5 and len(engine.db[rel]):
        row = next(iter(engine.db[rel]))
        engine.commit(retracts={rel: [row]})
    else:
        engine.commit(inserts={rel: [row]})


def _annotation_bytes(kept) -> int:
    """The bytes the kept heights hold: their dicts and the row tuples they key (values are
    shared; the ints are small and cached)."""
    return sum(sys.getsizeof(h) + sum(sys.getsizeof(row) for row in h) for h in kept.heights.values())


def _phase(engine, relation, rng, samples, name, size, mode, phase) -> list:
    times, heights, stopped = [], [], 0
    for row in _sample(engine, relation, rng, samples):
        ms, proof = _timed(lambda: engine.explainer().why(relation, row))
        if proof is None:
            stopped += 1
            continue
        times.append(ms)
        heights.append(proof.height)
    within = [t for t, h in zip(times, heights) if h <= TARGET_HEIGHT]
    fast = sum(1 for t in within if t < TARGET_MS)
    return [name, f"{size:,}", mode, phase, len(times), *_stats(times), max(heights, default=""),
            f"{fast}/{len(within)}", stopped, ""]


def _absent_phase(engine, relation, rng, samples, name, size, mode, phase) -> list:
    values = sorted({v for row in _sample(engine, relation, rng, 200) for v in row}, key=repr)
    times, stopped = [], 0
    while len(times) + stopped < samples:
        row = tuple(rng.choice(values) for _ in range(engine.db[relation].arity))
        if row in engine.db[relation]:
            continue
        ms, report = _timed(lambda: engine.explainer().why_not(relation, row))
        if report is None:
            stopped += 1
        else:
            times.append(ms)
    return [name, f"{size:,}", mode, phase, len(times), *_stats(times), "", "", stopped, ""]


def _stats(times: list[float]) -> list[str]:
    if not times:
        return ["", "", ""]
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return [f"{statistics.median(ordered):.1f}", f"{p90:.1f}", f"{ordered[-1]:.1f}"]


def _sample(engine, relation, rng, k) -> list[tuple]:
    rows = sorted(engine.db[relation].tuples, key=repr)
    return rng.sample(rows, min(k, len(rows)))


TIMEOUT = 30.0


def _timed(fn, limit: float | None | bool = True):
    """(ms, result), or (ms, None) when it ran past TIMEOUT seconds (stopped by SIGALRM);
    ``limit=None``: not stopped."""
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT if limit is not None else 0)
    try:
        result = fn()
    except _Timeout:
        result = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return (time.perf_counter() - started) * 1000, result
