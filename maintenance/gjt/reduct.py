"""T-reduct and its (T, N)-representation under updates (Idris et al., §4-5, Def. 6-8, Algorithm 2).

Invariant: ``rho[n]`` = π_var(n) Q_n(db) (Lemma 5), a GMR (tuple over ``n.vars`` ->
non-zero int); the root is labelled ∅, so ``rho[root]`` holds ``()`` with the
number of results of the full query (counted with multiplicities), or nothing.

Indexes (Definition 8, IEDyn instantiation):
* ``P[n]`` for n ∈ N with a parent p: rho[n] grouped by var(n) ∩ var(p), sorted on
  the variables of pred(p -> n) - used by enumeration (Algorithm 1).
* ``S[n]`` for n with a sibling m: rho[n] grouped by var(n) ∩ var(m), sorted on the
  variables of pred(p) - used by update propagation (Algorithm 2, line 10).

Lifecycle: ``TReduct(gjt)`` starts from the empty database; :meth:`update` /
:meth:`update_batch` apply signed changes; afterwards :meth:`enumerate` lists
Q(db) and :meth:`enumerate_delta` lists ΔQ of the last update (see enumerate.py).
"""

from __future__ import annotations

from collections import defaultdict

from .bulk import enumerate_bulk, enumerate_delta_bulk
from .enumerate import enumerate_full, enumerate_last_delta, index_deltas
from .index import GroupIndex, Compatible, Stats
from .join import join_into
from datalog.planning.gjt.tree import GJT, Node


class TReduct:
    """A (T, N)-representation of a database over the atoms of ``gjt.query`` (§4).

    Invariants: ``rho[n]`` equals the projection onto ``var(n)`` of the join of the subtree
    below ``n`` (guards included), each tuple with the summed multiplicity of the assignments
    that project to it, and holds no tuple of multiplicity 0; every index over ``rho[n]`` holds
    exactly its tuples. Applying a batch and then the batch negated restores every ``rho`` and
    index."""

    def __init__(self, gjt: GJT, track_delta: bool = True, merge_joins: bool = True):
        self.gjt, self.track_delta, self.merge_joins = gjt, track_delta, merge_joins
        self.stats = Stats()
        self.nodes = gjt.nodes()
        self.rho: dict[int, dict[tuple, int]] = {n.id: {} for n in self.nodes}
        self.indexes: dict[int, list[GroupIndex]] = defaultdict(list)
        self.P: dict[int, Compatible] = {}          # P[c]: compatible tuples of rho[c] given a parent tuple
        self.S: dict[int, Compatible] = {}          # S[n]: compatible tuples of rho[sibling] given a tuple of n
        self.leaves: dict[str, list[Node]] = defaultdict(list)
        self.bottom_up = list(gjt.root.bottom_up())
        self.frontier = frozenset(n.id for n in gjt.frontier())     # F(N): where enumeration stops
        self.bulk_lists: dict[tuple, tuple] = {}   # bulk.py's lists of rows, by (node id, group)
        self.bulk_rows = 0                         # rows they hold
        for n in self.nodes:
            self._build_indexes(n)
        self.last = None                       # what enumerate_delta needs about the last update

    def _build_indexes(self, n: Node) -> None:
        if n.atom is not None:
            self.leaves[n.atom.relation].append(n)
        p = n.parent
        if p is None:
            return
        if self.gjt.in_connex(n):
            self.P[n.id] = self.compatible(n, p.varset, n.pred_in, p.vars)
        m = n.sibling()
        if m is not None:   # S_m serves deltas arriving at n
            self.S[n.id] = self.compatible(m, n.varset, p.pred(), n.vars)

    def compatible(self, n: Node, other_vars, preds, known_vars) -> Compatible:
        """An IEDyn index on rho[n] grouped by var(n) ∩ other, sorted on pred vars (``Compatible.over``
        gives the same lookup over a Δ_n)."""
        group_vars = [v for v in n.vars if v in other_vars]
        sort_vars = sorted({v for p in preds for v in p.variables() if v in n.varset} - set(group_vars))
        index = GroupIndex(n.vars, group_vars, sort_vars, self.stats)
        self.indexes[n.id].append(index)
        return Compatible(index, n.vars, tuple(preds), known_vars)

    # -- updates ---------------------------------------------------------------------------

    def update(self, relation: str, row: tuple, multiplicity: int = 1) -> None:
        """db[relation](row) += multiplicity (negative: a retraction); then ΔQ is enumerable."""
        self.update_batch([(relation, row, multiplicity)])

    def update_batch(self, changes) -> None:
        """Apply many (relation, row, multiplicity) changes at once.

        One pass of Algorithm 2 per affected atom and sign, so that enumerate_delta
        can walk each pass's deltas: with one atom and one sign nothing cancels on
        the way up (rho is positive), so no Δ_n tuple dangles.  Several passes
        (a self-join, retractions mixed with inserts, several atoms) make ΔQ a
        telescoping sum, materialized here.  With ``track_delta=False`` the whole
        update u goes through one pass of Algorithm 2 and no delta is kept.
        """
        u = self._atom_updates(changes)
        if not self.track_delta:
            self.propagate(u)
            self.last = None
            return
        passes = [{leaf: part} for leaf, gmr in u.items() for part in _by_sign(gmr)] or [{}]
        if len(passes) == 1:
            deltas = self.propagate(passes[0])
            self.last = ("pass", (deltas, index_deltas(self, deltas)))
        else:
            self.last = ("materialized", self._materialized_delta(passes))

    def _materialized_delta(self, passes) -> dict[tuple, int]:
        """ΔQ = Σ over passes of the pass's delta enumeration (each right after its pass)."""
        total: dict[tuple, int] = defaultdict(int)
        for one in passes:
            deltas = self.propagate(one)
            for t, d in enumerate_delta_bulk(self, deltas, index_deltas(self, deltas)):
                total[t] += d
        return {t: d for t, d in total.items() if d}

    def _atom_updates(self, changes) -> dict[Node, dict[tuple, int]]:
        """u: one GMR per atom (leaf), from changes to relations."""
        u: dict[Node, dict[tuple, int]] = {}
        for relation, row, d in changes:
            for leaf in self.leaves.get(relation, ()):
                binding = leaf.atom.binding(tuple(row))
                if binding is not None and d:
                    gmr = u.setdefault(leaf, defaultdict(int))
                    gmr[tuple(binding[v] for v in leaf.vars)] += d
        return {leaf: {t: d for t, d in gmr.items() if d} for leaf, gmr in u.items()}

    def propagate(self, u: dict[Node, dict[tuple, int]]) -> dict[int, dict[tuple, int]]:
        """Algorithm 2: bottom-up, rho[n] += Δ_n, then Δ_p += π_var(p)(rho[m] ⋈_pred(p) Δ_n).

        Returns every node's Δ_n (non-zero entries only).
        """
        delta: dict[int, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
        for leaf, gmr in u.items():                                  # lines 3-4
            delta[leaf.id] = defaultdict(int, gmr)
        done = {}
        for n in self.bottom_up:                                      # line 7
            d_n = {t: d for t, d in delta.pop(n.id, {}).items() if d}
            if not d_n:
                continue
            self._add(n, d_n)                                         # line 8
            done[n.id] = d_n
            p = n.parent
            if p is None:
                continue
            target = delta[p.id]
            if n.sibling() is not None:                               # lines 9-10
                join_into(self, n, d_n, target)
            else:                                                     # lines 11-12
                _select_project(n, p, d_n, target)
        return done

    def restore(self, rho: list[dict[tuple, int]]) -> None:
        """rho[n] of every node (in ``self.nodes`` order) set, with its indexes, from stored rows
        (a workspace restoring its maintainer); the T-reduct must be empty."""
        if len(rho) != len(self.nodes) or any(self.rho[n.id] for n in self.nodes):
            raise ValueError("stored rho does not match this T-reduct")
        for n, gmr in zip(self.nodes, rho):
            self._add(n, gmr)

    def _add(self, n: Node, d_n: dict[tuple, int]) -> None:
        rho, indexes = self.rho[n.id], self.indexes.get(n.id, ())
        for t, d in d_n.items():
            m = rho.get(t, 0) + d
            if m:
                rho[t] = m
            else:
                del rho[t]
            for index in indexes:
                index.add(t, d)

    # -- reading -----------------------------------------------------------------------

    def enumerate(self):
        """Algorithm 1: (output tuple over ``output_vars``, multiplicity) for Q(db)."""
        return enumerate_full(self)

    def enumerate_bulk(self):
        """Q(db) as :meth:`enumerate` gives it, built in blocks by C-level iterators (bulk.py):
        for whole scans; the delay between outputs is a block, not a constant."""
        return enumerate_bulk(self)

    def enumerate_delta(self):
        """ΔQ of the last update or batch: (output tuple, signed multiplicity)."""
        return enumerate_last_delta(self)

    def enumerate_delta_bulk(self):
        """ΔQ as :meth:`enumerate_delta` gives it, built in blocks (bulk.py)."""
        if self.last is None:
            raise RuntimeError("no delta to enumerate: the T-reduct was built with track_delta=False")
        kind, value = self.last
        return enumerate_delta_bulk(self, *value) if kind == "pass" else iter(value.items())

    def delta_of(self, n: Node) -> dict[tuple, int]:
        """Δ_n of the last single-atom update (Algorithm 2's Δρ at node n)."""
        kind, value = self.last
        assert kind == "pass", "Δ per node is kept for single-atom updates only"
        return value[0].get(n.id, {})

    @property
    def output_vars(self) -> tuple[str, ...]:
        """var(N) in order of first appearance in the query's atoms."""
        connex = self.gjt.connex_vars()
        return tuple(dict.fromkeys(v for a in self.gjt.query.atoms for v in a.vars if v in connex))

    def count(self) -> int:
        """|Q_full(db)| with multiplicities: the multiplicity of () at the ∅-root."""
        return self.rho[self.gjt.root.id].get((), 0)

    def size(self) -> int:
        """Σ_n |rho[n]|: linear in |db| (§4)."""
        return sum(len(r) for r in self.rho.values())


def _by_sign(gmr: dict[tuple, int]) -> list[dict[tuple, int]]:
    parts = ({t: d for t, d in gmr.items() if d > 0}, {t: d for t, d in gmr.items() if d < 0})
    return [part for part in parts if part]


def _select_project(n: Node, p: Node, d_n: dict, target: dict) -> None:
    """Δ_p += π_var(p) σ_pred(p) Δ_n (n is p's only child, hence its guard)."""
    at = [n.vars.index(v) for v in p.vars]
    for t, d in d_n.items():
        binding = dict(zip(n.vars, t))
        if all(theta.holds(binding) for theta in n.pred_in):
            target[tuple(t[i] for i in at)] += d
