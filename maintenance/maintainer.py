"""Maintainer: brings every IDB relation up to date after a transaction, stratum by stratum.

Strategies: ``incremental`` (the paper's method: sensitivity indices, change
oracle, maintenance rule; DRed for recursive strata) and ``recompute`` (the
from-scratch twin, :mod:`maintenance.recompute`).
"""

from __future__ import annotations

from maintenance.recompute import RecomputeMaintainer


def make_maintainer(program, db, strategy: str, budget=None):
    """The maintainer of ``strategy`` for the planned program and its relations ``db``; ``budget``
    (:class:`maintenance.budget.MemoryBudget`): what the incremental one's state may take."""
    if strategy == "recompute":
        return RecomputeMaintainer(program, db)
    if strategy == "incremental":
        from maintenance.incremental import IncrementalMaintainer   # (a build may leave it out)
        return IncrementalMaintainer(program, db, budget=budget)
    raise ValueError(f"unknown maintenance strategy {strategy!r} (incremental or recompute)")
