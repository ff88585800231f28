"""The slow twin: Q(db) by brute force over the cross product of the atoms (GMR semantics, §2).

>>> from datalog.planning.gjt.query import parse_gcq
>>> q = parse_gcq("r(x, y), s(y, z) | x < z", out="x z")
>>> evaluate(q, {"r": {(1, 2): 2}, "s": {(2, 3): 3, (2, 0): 1}}, ("x", "z"))
{(1, 3): 6}
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from datalog.planning.gjt.query import GCQ


def evaluate(query: GCQ, db: dict[str, dict[tuple, int]], out_vars) -> dict[tuple, int]:
    """Join every atom's GMR, select on every predicate, project on out_vars summing multiplicities."""
    result: dict[tuple, int] = defaultdict(int)
    per_atom = [list(db.get(a.relation, {}).items()) for a in query.atoms]
    for combination in itertools.product(*per_atom):
        binding, mult = {}, 1
        for atom, (row, m) in zip(query.atoms, combination):
            b = atom.binding(row)
            if b is None or any(binding.setdefault(v, x) != x for v, x in b.items()):
                break
            mult *= m
        else:
            if all(p.holds(binding) for p in query.predicates):
                result[tuple(binding[v] for v in out_vars)] += mult
    return {t: m for t, m in result.items() if m}


def difference(new: dict, old: dict) -> dict:
    """new - old as a GMR (zeros dropped)."""
    keys = set(new) | set(old)
    return {t: new.get(t, 0) - old.get(t, 0) for t in keys if new.get(t, 0) != old.get(t, 0)}
