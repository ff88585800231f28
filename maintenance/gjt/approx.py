"""Acyclic but not free-connex queries: the free-connex approximation (Idris et al., §7).

Algorithm 3 returns (T, N) with var(N) = var(hyp(I)) ⊋ out(Q), the smallest
free-connex extension Q_F of Q (Theorem 4).  A :class:`ProjectedView` maintains the
T-reduct of Q_F, delta-enumerates ΔQ_F after each update, projects it on out(Q)
and materializes both ΔQ and Q(db) (projection creates duplicates, so they are
summed in a GMR).  Space Ω(|Q(db)|), like (H)IVM, but no partial join is stored.
"""

from __future__ import annotations

from collections import defaultdict

from datalog.planning.gjt.build import build_gjt
from datalog.planning.gjt.gyo import Cyclic
from datalog.planning.gjt.query import GCQ
from .reduct import TReduct
from datalog.planning.gjt.tree import GJT


class ProjectedView:
    """Q(db) = π_out Q_F(db), materialized; invariant: ``result`` = the oracle's Q(db)."""

    def __init__(self, query: GCQ, gjt: GJT):
        self.reduct = TReduct(gjt, track_delta=True)
        self.output_vars = tuple(dict.fromkeys(v for a in query.atoms for v in a.vars if v in query.out))
        self._pick = [self.reduct.output_vars.index(v) for v in self.output_vars]
        self.result: dict[tuple, int] = {}
        self.last: dict[tuple, int] = {}

    def update(self, relation: str, row: tuple, multiplicity: int = 1) -> None:
        self.update_batch([(relation, row, multiplicity)])

    def update_batch(self, changes) -> None:
        self.reduct.update_batch(changes)
        delta: dict[tuple, int] = defaultdict(int)
        for t, d in self.reduct.enumerate_delta_bulk():      # ΔQ_F, then π_out
            delta[tuple(t[i] for i in self._pick)] += d
        self.last = {t: d for t, d in delta.items() if d}
        for t, d in self.last.items():
            m = self.result.get(t, 0) + d
            if m:
                self.result[t] = m
            else:
                del self.result[t]

    def enumerate(self):
        return iter(list(self.result.items()))

    enumerate_bulk = enumerate

    def enumerate_delta(self):
        return iter(list(self.last.items()))

    enumerate_delta_bulk = enumerate_delta


def maintain(query: GCQ) -> TReduct | ProjectedView | Cyclic:
    """The maintained view of ``query``: a TReduct if free-connex, else a ProjectedView."""
    gjt = build_gjt(query)
    if isinstance(gjt, Cyclic):
        return gjt
    if gjt.connex_vars() == query.out:
        return TReduct(gjt)
    return ProjectedView(query, gjt)
