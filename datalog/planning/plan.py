"""RulePlan: how one rule is evaluated, as data.

A plan fixes the variable order, gives every positive atom an index (a column permutation:
constants first, then variables in the variable order, wildcards last), and places every
other literal as a filter at the first depth where its variables are bound. It holds terms
of the AST, no functions: :mod:`datalog.evaluation.compile` turns it into closures over a
binding, and ``datalog explain`` prints it (:meth:`RulePlan.describe`).

A binding is a list indexed by slot: the variables of the order first (slot ``d`` is bound
at depth ``d``), then the parameters bound before the body (an aggregate's group-by), then
the variables that assignments bind.

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> from datalog.planning.planner import plan_clause
>>> c = check(parse('.decl e(a: number, b: number)\\n.decl t(x: number, y: number, z: number)\\n'
...             't(x, y, z) :- e(x, y), e(y, z), e(z, x), x < z.'))
>>> print(plan_clause(c.clauses[0], c.schema, 0).describe())
order [x, y, z]; indexes e[0, 1], e[0, 1], e[1, 0]; filters x < z after z
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

from datalog.language import ast
from datalog.language.rewrites import Clause


@dataclass(frozen=True)
class AtomPlan:
    """A positive atom read through one trie index of its relation. Invariant: ``order`` lists
    the constant (or parameter) columns, then the variable columns by depth, then the wildcard
    columns; ``prefix`` holds the terms of the first, ``depths`` the depth of each of the second."""

    relation: str
    order: tuple[int, ...]
    prefix: tuple[ast.Term, ...]     # a Constant, or a Variable bound before the body (a parameter)
    depths: tuple[int, ...]
    atom: ast.Atom

    @property
    def opened(self) -> bool:
        """Whether the atom has a variable level to join on (else it is a Lookup)."""
        return bool(self.depths)


@dataclass(frozen=True)
class Filter:
    """A literal evaluated once depth ``depth`` is bound (-1: before any variable)."""

    depth: int
    literal: ast.Literal


@dataclass(frozen=True)
class AggregatePlan:
    """``kind target : { body }`` grouped by ``outer``, the variables its body shares with the
    rule: one plan per alternative of the body, each with ``outer`` as its parameters. Several
    alternatives range over their distinct assignments (``distinct``)."""

    aggregate: ast.Aggregate
    outer: tuple[str, ...]
    bodies: tuple["RulePlan", ...]

    @property
    def distinct(self) -> bool:
        return len(self.bodies) > 1


Value = Union[ast.Term, AggregatePlan]     # a side of a comparison or assignment


@dataclass(frozen=True)
class Compare(Filter):
    """``left op right``: the binding passes if it holds (an aggregate of nothing fails)."""

    op: str
    left: Value
    right: Value


@dataclass(frozen=True)
class Assign(Filter):
    """``target = value``: binds the slot of ``target`` (an aggregate of nothing fails)."""

    target: str
    value: Value


@dataclass(frozen=True)
class Unpack(Assign):
    """Records (issue 18): ``value = pattern`` (``_e0 = [x, [y, _]]``) takes the value apart,
    binding the slots of ``targets`` (``target`` is the first); the binding fails if the value
    does not have the pattern's shape or a part of it differs."""

    pattern: ast.Term = None
    targets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lookup(Filter):
    """``!r(x, _)`` (``negated``) or ``r(1, _)``: whether ``relation``'s index ``order`` holds
    the path of ``path``'s values (the bound columns, a prefix of the order)."""

    relation: str
    order: tuple[int, ...]
    path: tuple[ast.Term, ...]
    negated: bool
    patterns: tuple[ast.Term, ...] = ()   # records (issue 18): `!r([x, _])`, matched below the path


@dataclass(frozen=True)
class Generator:
    """``x = range(lo, hi[, step])`` with variable bounds: depth ``depth`` binds ``target`` to each
    value of the range (no atom joins there); ``args`` are its bounds, bound before."""

    depth: int
    literal: ast.Comparison
    target: str
    args: tuple[ast.Term, ...]


@dataclass(frozen=True)
class RulePlan:
    """How one rule (or an aggregate's body) is evaluated by leapfrog triejoin. Invariant:
    every variable of the body has a slot; every filter's variables are bound by its depth;
    depths from ``needed`` on bind variables that neither the head nor an assignment it reads
    uses (the triejoin stops at their first witness)."""

    clause: Clause | None
    index: int | None                     # the clause's position in the program (None: a body, a variant)
    variable_order: list[str]              # (not changed after planning)
    slots: Mapping[str, int]
    atoms: tuple[AtomPlan, ...]           # the atoms the triejoin opens, in body order
    filters: tuple[Filter, ...]
    head: ast.Atom | None                 # None: an aggregate's body
    head_types: tuple[str, ...] = ()      # the head relation's column types
    needed: int = 0
    params: tuple[str, ...] = ()
    backend: object = None                # datalog.planning.backend.Backend (for a rule of the program)
    generators: tuple[Generator, ...] = ()   # depths bound by a range with variable bounds (issue 18)

    @property
    def depth(self) -> int:
        return len(self.variable_order)

    def describe(self) -> str:
        indexes = ", ".join(f"{a.relation}{list(a.order)}" for a in self.atoms)
        text = f"order [{', '.join(self.variable_order)}]; indexes {indexes or '-'}"
        if self.generators:
            text += "; generated " + ", ".join(str(g.literal) for g in self.generators)
        if self.filters:
            text += "; filters " + ", ".join(f"{f.literal} {self._when(f.depth)}" for f in self.filters)
        return text if self.backend is None else f"{text}\n      {self.backend.describe()}"

    def _when(self, depth: int) -> str:
        return "first" if depth < 0 else f"after {self.variable_order[depth]}"


def filters_of(plan: RulePlan, kind: type) -> list:
    """The plan's filters of one kind (Compare, Assign or Lookup)."""
    return [f for f in plan.filters if isinstance(f, kind)]

