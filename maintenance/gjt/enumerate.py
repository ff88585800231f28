"""Algorithm 1 (Idris et al., §5): enumerate Q(db) from a (T, N)-representation.

ENUM(n, t): at a frontier node of N yield (t, rho[n](t)); otherwise, for each child c,
iterate the compatible tuples ``rho[c] ⋈_pred(n->c) t`` through the index P_c and
combine the children's enumerations.  Every tuple visited leads to an output
(Lemma 6), so with one inequality per node the delay is constant (Prop. 5, Theorem 2).

Delta enumeration (§7, push mode): the same walk with Δ_n instead of rho[n] on the
nodes the update changed (the path from the updated atom to the root); each Δ_n
gets a fresh index shaped like P_n.
"""

from __future__ import annotations

from operator import itemgetter


def enumerate_full(reduct):
    """(tuple over reduct.output_vars, multiplicity) for every tuple of Q(db)."""
    root = reduct.gjt.root
    return _enumerate(reduct, reduct.rho[root.id], lambda c: reduct.P[c.id])


def index_deltas(reduct, deltas: dict[int, dict]) -> dict:
    """Index each Δ_c of a node c ∈ N like P_c, as part of the update (so ΔQ keeps the delay)."""
    return {c: reduct.P[c].over(gmr) for c, gmr in deltas.items() if c in reduct.P}


def enumerate_delta_pass(reduct, deltas: dict[int, dict], compatibles: dict):
    """ΔQ for one pass of Algorithm 2 that changed one atom with one sign (Δ_n per node, indexed)."""
    root = reduct.gjt.root
    return _enumerate(reduct, deltas.get(root.id, {}), lambda c: compatibles.get(c.id) or reduct.P[c.id])


def enumerate_last_delta(reduct):
    """ΔQ of the last update: lazily for one pass, from the materialized sum otherwise."""
    if reduct.last is None:
        raise RuntimeError("no delta to enumerate: the T-reduct was built with track_delta=False")
    kind, value = reduct.last
    if kind == "pass":
        return enumerate_delta_pass(reduct, *value)
    return iter(value.items())


def _enumerate(reduct, root_gmr: dict, compatible_of):
    frontier = reduct.frontier
    pick = _picker(reduct.output_vars)

    def enum(n, t, mult):                                        # ENUM(n, t, rho)
        if n.id in frontier:                                     # line 4
            yield dict(zip(n.vars, t)), mult
        elif len(n.children) == 1:                               # lines 5-6
            c = n.children[0]
            for s, mu in compatible_of(c).compatible(t):
                yield from enum(c, s, mu)
        else:                                                    # lines 7-12
            c1, c2 = n.children
            seconds = _Replay(compatible_of(c2).compatible(t))     # looked up once per t, not once per t1
            for t1, mu1 in compatible_of(c1).compatible(t):
                for t2, mu2 in seconds:
                    for s1, mu in enum(c1, t1, mu1):
                        for s2, nu in enum(c2, t2, mu2):
                            yield {**s1, **s2}, mu * nu

    root = reduct.gjt.root
    for t, mult in list(root_gmr.items()):                      # lines 1-2
        reduct.stats.touched += 1
        for binding, mu in enum(root, t, mult):
            yield pick(binding), mu


def _picker(names: tuple[str, ...]):
    """binding -> the tuple of ``names`` (itemgetter, which returns a bare value for one name)."""
    if len(names) > 1:
        return itemgetter(*names)
    return lambda binding: tuple(binding[v] for v in names)


class _Replay:
    """Iterate a generator any number of times: the first pass pulls lazily (constant delay is
    kept), later passes replay what was pulled and continue where the first one stopped."""

    __slots__ = ("source", "seen")

    def __init__(self, source):
        self.source, self.seen = source, []

    def __iter__(self):
        seen, i = self.seen, 0
        while True:
            if i < len(seen):
                yield seen[i]
                i += 1
            elif self.source is None:
                return
            else:
                item = next(self.source, None)
                if item is None:
                    self.source = None
                    return
                seen.append(item)
