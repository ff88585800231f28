"""Engines under comparison.  Each peer module exposes

    NAME                      short engine name used in tables / --engines
    command(workdir, outdir)  argv that evaluates the workload in `workdir` and
                              writes <outdir>/<output>.csv (tab-separated), or
                              raises Unavailable(reason)

Python peers run themselves in a fresh interpreter (`python -m
bench.peers._worker <mod> WORKDIR OUTDIR` calls <mod>.main), so every engine
pays its own start-up, import and fact-loading time.  `run()` times the whole
engine process (through _launch.py, which also reports its peak RSS).
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import clingo, duckdb, ours, pydatalog, souffle
from .common import Unavailable


PEERS = {m.NAME: m for m in (ours, souffle, souffle.Compiled, pydatalog, clingo, duckdb)}


@dataclass
class Result:
    status: str                  # ok | timeout | error | unavailable
    seconds: float | None = None
    rows: int | None = None
    digest: str | None = None    # sha256 of the sorted output lines
    rss_mb: float | None = None  # peak resident set size of the engine process
    cpu_seconds: float | None = None  # user + system CPU time of the engine process
    note: str = ""


LAUNCH = Path(__file__).with_name("_launch.py")


def run(peer, workdir: Path, outdir: Path, output: str, timeout: float) -> Result:
    try:
        argv = peer.command(workdir, outdir)
    except Unavailable as e:
        return Result("unavailable", note=str(e))
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.iterdir():
        old.unlink()
    log = outdir.parent / f"{outdir.name}.log"
    stats = outdir.parent / f"{outdir.name}.stats.json"
    stats.unlink(missing_ok=True)
    with open(log, "w") as logf:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(LAUNCH), str(stats), *argv],
                                stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # launcher + engine: our own session
            proc.wait()
            return Result("timeout", time.perf_counter() - t0, note=f"killed after {timeout:g}s")
    if proc.returncode != 0 or not stats.exists():
        return Result("error", time.perf_counter() - t0, note=f"launcher exit {proc.returncode}")
    st = json.loads(stats.read_text())
    seconds, rss, cpu = st["seconds"], st["rss_mb"], st.get("cpu_seconds")
    if st["exitcode"] != 0:
        return Result("error", seconds, rss_mb=rss, cpu_seconds=cpu,
                      note=f"exit {st['exitcode']}: {tail(log)}  (log: {log})")
    out = outdir / f"{output}.csv"
    if not out.exists():
        return Result("error", seconds, rss_mb=rss, cpu_seconds=cpu, note=f"no output file {out}")
    rows, digest = digest_rows(out)
    return Result("ok", seconds, rows, digest, rss, cpu)


def digest_rows(path: Path) -> tuple[int, str]:
    with open(path) as f:
        lines = [ln.rstrip("\r\n") for ln in f]
    lines.sort()
    h = hashlib.sha256()
    for ln in lines:
        h.update(ln.encode())
        h.update(b"\n")
    return len(lines), h.hexdigest()


def tail(path: Path, n: int = 3) -> str:
    lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[-400:]
