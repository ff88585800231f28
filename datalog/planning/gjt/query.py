"""GCQ: the generalized conjunctive query of the paper (Idris et al., §2, Eq. 1).

``Q = π_out( r1(x̄1) ⋈ … ⋈ rn(x̄n) | θ1 ∧ … ∧ θm )``.  Equi-joins are shared
variable names; every other comparison is a predicate ``left op right + offset``
(or ``left op offset`` when ``right`` is None, a one-variable filter).

>>> q = parse_gcq("r(x, y), s(y, z, w), t(u, v) | x < z, w < u", out="y z w u")
>>> str(q)
'π[y,z,w,u] r(x, y), s(y, z, w), t(u, v) | x < z, w < u'
>>> sorted(q.variables())
['u', 'v', 'w', 'x', 'y', 'z']
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt,
       "<=": operator.le, ">": operator.gt, ">=": operator.ge}
FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class Atom:
    """``relation(vars...)``; a variable may repeat (``r(x, x)``: an equality filter).

    Atoms are compared by identity: the same ``r(x, y)`` twice is a self-join of two atoms.
    """

    relation: str
    vars: tuple[str, ...]

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def hyperedge(self) -> frozenset[str]:
        return frozenset(self.vars)

    def binding(self, row: tuple) -> dict | None:
        """The variable binding of a relation row, or None when a repeated variable disagrees."""
        binding: dict = {}
        for var, value in zip(self.vars, row, strict=True):
            if binding.setdefault(var, value) != value:
                return None
        return binding

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(self.vars)})"


@dataclass(frozen=True)
class Predicate:
    """θ: ``left op right + offset``; with ``right`` None it is the filter ``left op offset``."""

    left: str
    op: str
    right: str | None
    offset: object = 0

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"unknown comparison {self.op!r} in a predicate")

    def variables(self) -> frozenset[str]:
        return frozenset(v for v in (self.left, self.right) if v is not None)

    def holds(self, binding: dict) -> bool:
        """θ on a binding that covers var(θ)."""
        if self.right is None:
            return OPS[self.op](binding[self.left], self.offset)
        return OPS[self.op](binding[self.left], shift(binding[self.right], self.offset))

    def __str__(self) -> str:
        if self.right is None:
            return f"{self.left} {self.op} {self.offset}"
        rhs = self.right if not self.offset else f"{self.right} {'+' if self.offset > 0 else '-'} {abs(self.offset)}"
        return f"{self.left} {self.op} {rhs}"


def shift(value, offset):
    """``value + offset``, leaving non-numbers alone when the offset is 0."""
    return value + offset if offset else value


@dataclass(frozen=True)
class GCQ:
    """atoms + predicates + out (the free variables); ``out=None`` means the full query."""

    atoms: tuple[Atom, ...]
    predicates: tuple[Predicate, ...] = ()
    out: frozenset[str] = field(default=None)

    def __post_init__(self):
        object.__setattr__(self, "predicates", tuple(dict.fromkeys(self.predicates)))
        if self.out is None:
            object.__setattr__(self, "out", self.variables())
        object.__setattr__(self, "out", frozenset(self.out))
        unknown = (self.out | {v for p in self.predicates for v in p.variables()}) - self.variables()
        if unknown:
            raise ValueError(f"variables {sorted(unknown)} are not in any atom")

    def variables(self) -> frozenset[str]:
        return frozenset(v for a in self.atoms for v in a.vars)

    def relations(self) -> frozenset[str]:
        return frozenset(a.relation for a in self.atoms)

    def is_full(self) -> bool:
        return self.out == self.variables()

    def __str__(self) -> str:
        body = ", ".join(map(str, self.atoms))
        if self.predicates:
            body += " | " + ", ".join(map(str, self.predicates))
        if self.is_full():
            return body
        order = [v for a in self.atoms for v in a.vars]
        return f"π[{','.join(dict.fromkeys(v for v in order if v in self.out))}] {body}"


_ATOM = re.compile(r"\s*(\w+)\s*\(([^)]*)\)\s*")
_PRED = re.compile(r"\s*(\w+)\s*(!=|<=|>=|=|<|>)\s*(\w+)?\s*(?:([+-])\s*(\d+))?\s*$")


def parse_gcq(text: str, out: str | None = None) -> GCQ:
    """``"r(x, y), s(y, z) | x < z, c < a + 10, amnt < 100"`` -> GCQ (a test helper)."""
    atoms_text, _, preds_text = text.partition("|")
    atoms = tuple(Atom(m.group(1), tuple(v.strip() for v in m.group(2).split(",") if v.strip()))
                  for m in _ATOM.finditer(atoms_text))
    predicates = tuple(_parse_predicate(p) for p in preds_text.split(",") if p.strip())
    return GCQ(atoms, predicates, None if out is None else frozenset(out.split()))


def _parse_predicate(text: str) -> Predicate:
    m = _PRED.match(text)
    if not m:
        raise ValueError(f"cannot read the predicate {text!r}")
    left, op, right, sign, number = m.groups()
    if right is not None and right.isdigit():
        return Predicate(left, op, None, int(right))
    offset = int(number) * (-1 if sign == "-" else 1) if number else 0
    return Predicate(left, op, right, offset)
