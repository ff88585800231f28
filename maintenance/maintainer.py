"""Maintainer: brings every IDB relation up to date after a transaction, stratum by stratum.

Strategies: ``incremental`` (the paper's method: sensitivity indices, change
oracle, maintenance rule; DRed for recursive strata) and ``recompute`` (the
from-scratch twin, :mod:`maintenance.recompute`).
"""

from __future__ import annotations

from maintenance.recompute import RecomputeMaintainer


def make_maintainer(engine, strategy: str):
    if strategy == "recompute":
        return RecomputeMaintainer(engine)
    if strategy == "incremental":
        from maintenance.incremental import IncrementalMaintainer
        return IncrementalMaintainer(engine)
    raise ValueError(f"unknown maintenance strategy {strategy!r} (incremental or recompute)")
