"""How a maintenance rule reads each trie level of an atom, and the paths its filters look up.

Levels of an atom's index:
  * ``const``: a constant column; a lookup of that key (its region: the whole rule);
  * ``var``: the first column of a variable; joined at that variable's depth.
    When the atom's columns up to here are exactly the first variables of the
    order, no index is kept: a surgery at ``alpha + (key,)`` is itself the region
    (the trace node at path ``alpha``, interval ``[key, key]``) -- the paper's
    dropped indices;
  * ``repeat``: a variable seen at an earlier level of the same atom; a lookup;
  * ``wild``: a trailing wildcard column; never opened, changes there do not matter.

A filter that looks something up (``!r(x, _)``, ``r(1, _)``, an aggregate view's group) is
sensitive to the existence of one trie path: its :class:`LookupPath`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Callable

from datalog.planning.plan import Lookup


@dataclass(frozen=True)
class LookupPath:
    """The trie path a filter looks up: in ``relation``'s index ``order``, the values ``path``
    gives under a binding (a negation's or an ``r(1, _)``'s; an aggregate view's group)."""

    relation: str
    order: tuple[int, ...]
    path: tuple[Callable, ...]


def lookup_path(compiled) -> LookupPath | None:
    """The path a compiled filter looks up, if it is a Lookup."""
    f = compiled.filter
    return LookupPath(f.relation, f.order, compiled.path) if isinstance(f, Lookup) else None


class AtomLevels:
    """How each level of one atom's index is read."""

    def __init__(self, atom_plan, relation_arity: int, drop_prefix: bool = True):
        self.relation, self.order = atom_plan.relation, atom_plan.order
        self.kinds: list[tuple] = []                      # (kind, value) per level
        consts = list(atom_plan.prefix)
        seen = set()
        for j in range(relation_arity):
            if j < len(consts):
                self.kinds.append(("const", consts[j]([])))
            elif j - len(consts) < len(atom_plan.depths):
                d = atom_plan.depths[j - len(consts)]
                self.kinds.append(("repeat" if d in seen else "var", d))
                seen.add(d)
            else:
                self.kinds.append(("wild", None))
        depths = [v for k, v in self.kinds if k in ("var", "repeat")]
        self.dropped = [drop_prefix and not consts and depths[:j + 1] == list(range(j + 1))
                        for j in range(len(depths))]
        self.consts = len(consts)
        self.alphas = [_alpha_of(self.kinds[:j]) for j in range(relation_arity + 1)]

    def alpha(self, j: int, binding) -> tuple:
        """The keys of the levels above ``j`` under ``binding``: where level ``j``'s entries go."""
        return self.alphas[j](binding)


def _alpha_of(kinds: list[tuple]):
    """binding -> the keys of ``kinds``' levels (constants, or the binding at a variable's depth)."""
    if all(kind == "const" for kind, _ in kinds):
        fixed = tuple(value for _, value in kinds)
        return lambda b: fixed
    if all(kind in ("var", "repeat") for kind, _ in kinds):
        depths = [d for _, d in kinds]
        if len(depths) == 1:
            (d,) = depths
            return lambda b: (b[d],)
        return itemgetter(*depths)
    return lambda b: tuple(value if kind == "const" else b[value] for kind, value in kinds)
