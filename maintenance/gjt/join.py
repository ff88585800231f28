"""Line 10 of Algorithm 2: Δ_p += π_var(p)(rho[m] ⋈_pred(p) Δ_n), m the sibling of n.

Two ways, same result:

* :func:`nested_loop` - index nested loop through S_m (Theorem 1): for each s in Δ_n,
  the compatible tuples of rho[m].  Any predicates.
* :func:`merge` - the hybrid sort-merge / index nested loop join of §4 and of the proof
  of Theorem 2, when pred(p) is a single inequality between a variable x of n only
  and a variable y of m only.  Both sides are walked in one order in which the
  compatible sets grow, and a running sum of multiplicities replaces the inner loop:
  the guard side's tuple t gets multiplicity mult(t) · Σ_{s compatible with t} mult(s).
"""

from __future__ import annotations

from collections import defaultdict

from datalog.planning.gjt.query import FLIP, OPS, shift
from datalog.planning.gjt.tree import Node

INEQUALITIES = ("<", "<=", ">", ">=")


def join_into(reduct, n: Node, d_n: dict, target: dict) -> None:
    p, m = n.parent, n.sibling()
    theta = single_inequality(p, n, m) if reduct.merge_joins else None
    if theta is None:
        nested_loop(reduct.S[n.id], p, n, m, d_n, target)
    else:
        merge(reduct.S[n.id], p, n, m, d_n, target, *theta)


def single_inequality(p: Node, n: Node, m: Node):
    """pred(p) = {θ}, θ an inequality of x ∈ var(n)∖var(m) and y ∈ var(m)∖var(n), as (x, REL, y, off)
    meaning ``y REL x + off``; else None."""
    preds = p.pred()
    if len(preds) != 1 or preds[0].op not in INEQUALITIES or preds[0].right is None:
        return None
    theta = preds[0]
    only_n, only_m = n.varset - m.varset, m.varset - n.varset
    if theta.left in only_m and theta.right in only_n:
        return theta.right, theta.op, theta.left, theta.offset
    if theta.left in only_n and theta.right in only_m:     # x op y + off  <=>  y flip(op) x - off
        return theta.left, FLIP[theta.op], theta.right, -theta.offset if theta.offset else 0
    return None


def nested_loop(compat, p: Node, n: Node, m: Node, d_n: dict, target: dict) -> None:
    make = projector(p.vars, n.vars, m.vars)
    for s, d in d_n.items():
        for t, mu in compat.compatible(s):
            target[make(s, t)] += d * mu


def projector(out_vars, left_vars, right_vars):
    """π_out(s ∪ t) for s over left_vars and t over right_vars."""
    where = [(0, left_vars.index(v)) if v in left_vars else (1, right_vars.index(v)) for v in out_vars]
    return lambda s, t: tuple((s, t)[side][i] for side, i in where)


def merge(compat, p: Node, n: Node, m: Node, d_n: dict, target: dict, x, rel, y, off) -> None:
    """§4's hybrid join, per group of Δ_n (the hash part), for ``y rel x + off``."""
    xi = n.vars.index(x)
    groups = defaultdict(list)
    for s, d in d_n.items():
        groups[tuple(s[i] for i in compat.group_from)].append((s[xi], s, d))
    stats = compat.index.stats
    for key, items in groups.items():
        group = compat.index.group(key)
        if group is None:
            continue
        if p.is_guarded_by(n):          # the Δ side is the guard: outer = Δ_n
            _delta_outer(group, items, rel, off, projector(p.vars, n.vars, ()), target, stats)
        else:                           # m is the guard: outer = rho[m]
            _rho_outer(group, items, rel, off, projector(p.vars, m.vars, ()), target, stats)


def _delta_outer(group, items, rel, off, make, target, stats) -> None:
    ascending = rel in ("<", "<=")      # y < x+off: the compatible y grow with x
    outer = [(xv, (s, d)) for xv, s, d in sorted(items, key=lambda e: e[0], reverse=not ascending)]
    keys = group.keys() if ascending else reversed(group.keys())
    inner = ((k[0], group[k].total) for k in keys)
    holds = lambda xv, yv: OPS[rel](yv, shift(xv, off))
    for (s, d), weight in walk(outer, inner, holds, stats):
        target[make(s, ())] += d * weight


def _rho_outer(group, items, rel, off, make, target, stats) -> None:
    ascending = rel in (">", ">=")      # y > x+off: the compatible x grow with y
    inner = sorted(((xv, d) for xv, _, d in items), key=lambda e: e[0], reverse=not ascending)
    if ascending:                       # start at the first y compatible with the smallest x
        keys = group.irange(minimum=(shift(inner[0][0], off),), inclusive=(rel == ">=", True))
    else:
        keys = group.irange(maximum=(shift(inner[0][0], off),), inclusive=(True, rel == "<="), reverse=True)
    outer = ((k[0], k) for k in keys)
    holds = lambda yv, xv: OPS[rel](yv, shift(xv, off))
    for k, weight in walk(outer, inner, holds, stats):
        for t, mu in group[k].items():
            target[make(t, ())] += mu * weight


def walk(outer, inner, holds, stats):
    """Running sum: for each outer (o, payload) in order, Σ weights of inner values v with holds(o, v).

    Precondition: both sequences are ordered so that the compatible inner values of
    later outers include those of earlier ones (the nesting of Theorem 2's proof);
    the inner cursor never moves back.
    """
    inner = iter(inner)
    pending, weight = next(inner, None), 0
    for o, payload in outer:
        stats.touched += 1
        while pending is not None and holds(o, pending[0]):
            stats.touched += 1
            weight += pending[1]
            pending = next(inner, None)
        if weight:
            yield payload, weight
