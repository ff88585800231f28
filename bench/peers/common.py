"""Helpers shared by the Python peers' subprocess entry points."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ..workloads import load_meta, read_facts


def python_command(module: str, workdir: Path, outdir: Path, needs: str) -> list[str]:
    """argv running bench.peers.<module>.main in a fresh interpreter; Unavailable
    if the engine's Python package `needs` is not installed."""
    if importlib.util.find_spec(needs) is None:
        raise Unavailable(f"python package {needs} not installed "
                          "(pip install -e '.[bench]')")
    return [sys.executable, "-m", "bench.peers._worker", module, str(workdir), str(outdir)]


def load(workdir: str):
    """-> (meta, {input relation: rows})"""
    meta = load_meta(Path(workdir))
    facts = {rel: read_facts(Path(workdir), rel, meta["decls"][rel]) for rel in meta["inputs"]}
    return meta, facts


def write_rows(outdir: str, rel: str, rows) -> None:
    with open(Path(outdir) / f"{rel}.csv", "w") as f:
        f.writelines("\t".join(map(str, r)) + "\n" for r in rows)


def variables(rule) -> list[str]:
    seen: dict[str, None] = {}
    for atom in [rule[0], *rule[1]]:
        for v in atom[1:]:
            seen.setdefault(v, None)
    return list(seen)


class Unavailable(Exception):
    """Raised by a peer's command() when the engine cannot be run here."""
