"""What was measured, where and when: git commit, engine source digest, dates,
machine and its load (one line).  Take it before the run; `changed()` tells
whether the engine's source moved while the run went on."""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENGINE_DIRS = ("datalog", "lftj", "maintenance")


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def source_digest() -> str:
    """sha256 of the engine's working-tree source (what `datalog run` executes)."""
    h = hashlib.sha256()
    for d in ENGINE_DIRS:
        for f in sorted((REPO / d).rglob("*")):
            if f.suffix in (".py", ".lark") and "__pycache__" not in f.parts:
                h.update(f"{f.relative_to(REPO)}\0".encode() + f.read_bytes())
    return h.hexdigest()[:12]


def state() -> tuple[str, str]:
    return git("rev-parse", "HEAD") or "unknown", source_digest()


def line(st: tuple[str, str]) -> str:
    commit, src = st
    date = git("show", "-s", "--format=%ci", commit)
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *ENGINE_DIRS)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"commit {commit} ({date}){' + uncommitted engine changes' if dirty else ''}, "
            f"engine source sha {src}; run {time.strftime('%Y-%m-%d %H:%M:%S %z')}; "
            f"{platform.machine()}, {os.cpu_count()} cores, load {load}, "
            f"Python {platform.python_version()}")


def changed(st: tuple[str, str]) -> str:
    """'' if HEAD and the engine source are as in `st`, else a warning."""
    now = state()
    return "" if now == st else (f"WARNING: engine changed during the run "
                                 f"(now commit {now[0][:10]}, source sha {now[1]}); "
                                 "timings may mix versions")
