"""Our engine, through the command a user would run (its Soufflé-style CLI):

    datalog run prog.dl -F <facts dir> -D <output dir>

The executable is $DATALOG_BIN if set, else <repo>/.venv/bin/datalog, else
`datalog` on PATH, else `python -m datalog` with the harness's interpreter.
Timing covers the whole process: start-up, imports, loading, evaluation, output.
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

NAME = "ours"
REPO = Path(__file__).resolve().parents[2]


def executable() -> list[str]:
    if os.environ.get("DATALOG_BIN"):
        return shlex.split(os.environ["DATALOG_BIN"])
    venv = REPO / ".venv" / "bin" / "datalog"
    found = str(venv) if os.access(venv, os.X_OK) else shutil.which("datalog")
    return [found] if found else [sys.executable, "-m", "datalog"]


def command(workdir: Path, outdir: Path) -> list[str]:
    return [*executable(), "run", str(workdir / "prog.dl"), "-F", str(workdir), "-D", str(outdir)]
