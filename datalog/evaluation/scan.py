"""A body of one atom, read by scanning its relation's rows instead of a trie.

``query(x) :- a(x), x < 10.`` binds x from each row of ``a`` and tests it: one pass over the
rows. The triejoin would first build ``a``'s trie (a dict of every key, then its keys sorted:
most of the rule's time at 1M rows of ``a``, Soufflé's independent_body3) only to visit each
key once. A join needs the trie; one atom does not.

When the atom's columns are the plan's slots in order (``a(x, y)`` with x, y the only slots) and
no filter binds a slot, the row itself is the binding: the checks and the head read it as it is.
"""

from __future__ import annotations

from typing import Callable

from datalog.language import ast
from datalog.planning.plan import Assign
from datalog.planning.planner import counts


class RowReader:
    """How one atom's row binds a plan: ``names`` of its variables, ``params`` (slot, column) of
    their first occurrences, ``constants`` (column, value) its row must hold, ``same`` (column, column) pairs
    of a repeated variable that must agree."""

    def __init__(self, atom: ast.Atom, slots: dict[str, int]):
        first: dict[str, int] = {}
        self.constants: list[tuple[int, object]] = []
        self.same: list[tuple[int, int]] = []
        for c, a in enumerate(atom.args):
            if isinstance(a, ast.Constant):
                self.constants.append((c, a.value))
            elif isinstance(a, ast.Variable):
                if a.name in first:
                    self.same.append((first[a.name], c))
                else:
                    first[a.name] = c
        self.names = list(first)
        self.params = [(slots[name], c) for name, c in first.items()]

    def fits(self, row) -> bool:
        """Whether the row has the atom's constants and its repeated variables' equal columns."""
        return all(row[c] == value for c, value in self.constants) and \
            all(row[c] == row[d] for c, d in self.same)

    def is_binding(self, size: int) -> bool:
        """Whether a row is already the binding of a plan of ``size`` slots (column c: slot c)."""
        return not self.constants and not self.same and len(self.params) == size and \
            all(slot == c for slot, c in self.params)


def scannable(plan) -> bool:
    """Whether ``derive`` may scan the plan's one atom: no trie level to open at a parameter, no
    generator, no autoinc() (a scan may meet a binding twice, through a wildcard column), and
    only variables, constants and wildcards in the atom."""
    if len(plan.atoms) != 1 or plan.generators or plan.clause is None or counts(plan.clause):
        return False
    atom = plan.atoms[0].atom
    bound_early = any(isinstance(t, ast.Variable) for t in plan.atoms[0].prefix)
    return not bound_early and all(isinstance(a, (ast.Variable, ast.Constant, ast.Wildcard)) for a in atom.args)


def scan(plan, relation, db) -> set:
    """The head tuples of the plan over the rows of ``relation`` (its one atom's), its filters
    read over ``db``."""
    reader = RowReader(plan.atoms[0].atom, plan.slots)
    checks = [f.make(db) for f in sorted(plan.filters, key=lambda f: f.depth)]
    head, rows = plan.head, relation.tuples
    if reader.is_binding(len(plan.slots)) and not any(isinstance(f.filter, Assign) for f in plan.filters):
        # p(x, y) :- e(x, y), x < y.   the row is the binding
        if plan.head_slots == list(range(relation.arity)):
            return set(filter(_all(checks), rows)) if checks else set(rows)
        return set(map(head, filter(_all(checks), rows))) if checks else set(map(head, rows))
    out: set = set()
    add, size, params, fits = out.add, len(plan.slots), reader.params, reader.fits
    tested = reader.constants or reader.same
    for row in rows:
        if tested and not fits(row):
            continue
        binding = [None] * size
        for slot, c in params:
            binding[slot] = row[c]
        if all(check(binding) for check in checks):
            add(head(binding))
    return out


def _all(checks: list[Callable]) -> Callable:
    """One test of every check (a single check as it is)."""
    if len(checks) == 1:
        return checks[0]
    return lambda b: all(check(b) for check in checks)
