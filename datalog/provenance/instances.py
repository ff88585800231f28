"""Rule instances over the current relations: the bindings of a clause's body that give one head
tuple, found tuple at a time through the relations' trie indexes.

The reference evaluator (:class:`datalog.language.naive.rules.RuleEvaluator`) gives the semantics
of every literal, term and aggregate; here only the lookup of an atom changes: instead of a scan
of the relation, the atom's bound arguments are a prefix of a trie index in a column order that
puts them first (:meth:`lftj.relation.Relation.index`, built on first use and from then on kept up
to date by the relation's inserts and erases). Nothing is cached between calls: every answer is
read off the relations as they are now.

>>> from lftj.relation import Relation
>>> from datalog.language.parser import parse
>>> from datalog.language.rewrites import Clause
>>> rule = parse("path(x, z) :- path(x, y), edge(y, z).").rules[0]
>>> db = {"edge": Relation("edge", 2, [(1, 2), (2, 3)]), "path": Relation("path", 2, [(1, 2), (1, 3), (2, 3)])}
>>> [s for s in Instances(db, Clause(rule.heads[0], rule.body, rule)).of((1, 3))]
[{'x': 1, 'z': 3, 'y': 2}]
"""

from __future__ import annotations

from collections.abc import Iterator

from datalog.language import ast
from datalog.language.ast import Atom, Negation, Variable
from datalog.language.errors import DatalogError
from datalog.language.naive.aggregates import NoValue
from datalog.language.naive.rules import RuleEvaluator
from datalog.language.naive.values import Subst


class Instances(RuleEvaluator):
    """The bindings of one clause over ``db`` (relation name -> :class:`lftj.relation.Relation`)."""

    def __init__(self, db: dict, clause):
        super().__init__(db, ast.Rule((clause.head,), clause.body, clause.rule.span))
        self.clause = clause

    def of(self, row: tuple) -> Iterator[Subst]:
        """Every binding of the body (its variables, the head's among them) whose head is ``row``."""
        head = self.clause.head
        start = self.head_binding(row)
        if start is None:
            return
        for subst in self.solve(self.clause.body, start):
            if self.head_row(head, subst) == row:
                yield subst

    def head_binding(self, row: tuple) -> Subst | None:
        """The head's plain variables bound to ``row`` (its constants checked); expressions such as
        ``x + 1`` are checked once the body is solved. None if the head cannot give ``row``."""
        subst: Subst = {}
        for arg, value in zip(self.clause.head.args, row):
            if isinstance(arg, Variable):
                if subst.setdefault(arg.name, value) != value:
                    return None
            elif isinstance(arg, ast.Constant) and arg.value != value:
                return None
        return subst

    # ---- literals: an atom read through an index instead of a scan
    def _satisfy(self, literal, subst: Subst) -> Iterator[Subst]:
        if isinstance(literal, Atom):
            for row in self.lookup(literal, subst):
                extended = self._match(literal, row, subst)
                if extended is not None:
                    yield extended
        elif isinstance(literal, Negation):
            atom = literal.atom
            if not any(self._match(atom, row, subst) is not None for row in self.lookup(atom, subst)):
                yield subst
        else:
            yield from super()._satisfy(literal, subst)

    def lookup(self, atom: Atom, subst: Subst):
        """The rows of ``atom``'s relation that agree with its constants and bound variables."""
        relation = self.db.get(atom.relation)
        if relation is None:
            return ()
        bound = self.bound_positions(atom, subst)
        if not relation.stored or not bound:
            return iter(relation)
        if len(bound) == relation.arity:
            row = tuple(value for _, value in sorted(bound))
            return (row,) if row in relation.tuples else ()
        positions = tuple(p for p, _ in bound)
        order = positions + tuple(p for p in range(relation.arity) if p not in positions)
        prefix = tuple(v for _, v in bound)
        node = relation.index(order).find(prefix)
        if node is None:
            return ()
        return _rows(node, order, prefix)

    def bound_positions(self, atom: Atom, subst: Subst) -> list[tuple[int, object]]:
        """(position, value) of the arguments that are constants or bound variables."""
        out = []
        for i, arg in enumerate(atom.args):
            if isinstance(arg, Variable) and arg.name in subst:
                out.append((i, subst[arg.name]))
            elif isinstance(arg, ast.Constant):
                out.append((i, self.eval(arg, subst)))
        return out

    def _pick(self, literals: tuple, subst: Subst) -> int:
        """Cheap first: filters and negations that can be tested, then ``v = expr``, then the atom
        with the most bound arguments (the smaller relation on a tie)."""
        bound = set(subst)
        best, choice = None, None
        for i, literal in enumerate(literals):
            rank = self._rank(literal, bound)
            if rank is None:
                continue
            if isinstance(literal, Atom):
                relation = self.db.get(literal.relation)
                key = (2, -len(self.bound_positions(literal, subst)), len(relation) if relation is not None else 0)
            else:
                key = (0 if rank == 1 else 1, 0, 0)
            if best is None or key < best:
                best, choice = key, i
        if choice is None:
            return super()._pick(literals, subst)       # raises unbound_variable
        return choice

    def holds(self, literal, subst: Subst) -> bool:
        """Whether a literal is true under a complete binding (no error escapes: false)."""
        try:
            return any(True for _ in self._satisfy(literal, subst))
        except (NoValue, DatalogError, ArithmeticError, TypeError, ValueError):
            return False

    def atom_row(self, atom: Atom, subst: Subst) -> tuple | None:
        """The tuple an atom denotes under a binding (None if an argument is ``_`` or has no value)."""
        try:
            return tuple(self.eval(arg, subst) for arg in atom.args)
        except (NoValue, DatalogError):
            return None


def _rows(node, order: tuple[int, ...], prefix: tuple):
    """The rows under the trie node reached by ``prefix`` (the first columns of ``order``), in
    the relation's own column order."""
    where = [order.index(i) for i in range(len(order))]
    for rest in _paths(node, len(order) - len(prefix)):
        ordered = prefix + rest
        yield tuple(ordered[w] for w in where)


def _paths(node, levels: int):
    if levels == 0:
        yield ()
        return
    for key, child in node.children.items():
        if levels == 1:
            yield (key,)
        else:
            for rest in _paths(child, levels - 1):
                yield (key, *rest)
