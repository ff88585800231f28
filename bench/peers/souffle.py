"""Soufflé, the engine whose language ours reads, as two peers when ``souffle`` is on PATH (or
$SOUFFLE_BIN names it):

    souffle            souffle -j1 -F <facts> -D <out> prog.dl      (the interpreter)
    souffle-compiled   the program compiled once by souffle -j1 -o (not timed: its compile time
                       is reported apart, :data:`COMPILE_SECONDS`), then the executable timed

Both are single-threaded (-j1), as ours is. docs/benchmarks.md says how to build Soufflé from
its public repository into ~/.local/souffle, where this module finds it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from .common import Unavailable

NAME = "souffle"
COMPILE_SECONDS: dict[str, float] = {}       # workload directory -> seconds souffle -o took


def executable() -> str:
    found = os.environ.get("SOUFFLE_BIN") or shutil.which("souffle") or \
        shutil.which("souffle", path=str(Path.home() / ".local" / "souffle" / "bin"))
    if not found:
        raise Unavailable("souffle not on PATH (docs/benchmarks.md says how to build it)")
    return found


def command(workdir: Path, outdir: Path) -> list[str]:
    return [executable(), "-j1", "-F", str(workdir), "-D", str(outdir), str(workdir / "prog.dl")]


class Compiled:
    """The compiled peer: compiles in :func:`command` (once per workload), times the executable."""

    NAME = "souffle-compiled"

    @staticmethod
    def command(workdir: Path, outdir: Path) -> list[str]:
        binary = workdir.parent / "souffle-compiled.bin"
        if not binary.exists():
            started = time.perf_counter()
            done = subprocess.run([executable(), "-j1", "-o", str(binary), str(workdir / "prog.dl")],
                                  capture_output=True, text=True, cwd=workdir.parent)
            if done.returncode != 0 or not binary.exists():
                raise Unavailable(f"souffle -o failed: {done.stderr.strip()[-300:]}")
            COMPILE_SECONDS[str(workdir)] = time.perf_counter() - started
        return [str(binary), "-j1", "-F", str(workdir), "-D", str(outdir)]
