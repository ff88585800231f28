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
from datalog.language.ast import Atom, Comparison, Negation, Variable
from datalog.language.errors import DatalogError
from datalog.language.naive.aggregates import NoValue
from datalog.language.naive.rules import RuleEvaluator
from datalog.language.naive.values import Subst, Unsigned, compare


class Instances(RuleEvaluator):
    """The bindings of one clause over ``db`` (relation name -> :class:`lftj.relation.Relation`)."""

    def __init__(self, db: dict, clause):
        super().__init__(db, ast.Rule((clause.head,), clause.body, clause.rule.span))
        self.clause = clause
        self.fast = _flat(clause)
        if self.fast:      # a negated atom's variable found nowhere else in the rule is a wildcard
            elsewhere = {v.name for lit in (clause.head, *clause.body) if not isinstance(lit, Negation)
                         for v in ast.variables(lit)}
            self.needed = {id(lit): {v.name for v in ast.variables(lit)} & elsewhere
                           for lit in clause.body if isinstance(lit, Negation)}
        atoms = [lit for lit in clause.body if isinstance(lit, Atom)]
        if self.fast and all(isinstance(a, _TERMS) for lit in atoms for a in lit.args):
            shapes = [(lit.relation, tuple((True, a.name) if isinstance(a, Variable) else (False, _value(a, {}))
                                           for a in lit.args)) for lit in atoms]
            self.premise_rows = lambda s: [(name, tuple(s[v] if var else v for var, v in shape))
                                           for name, shape in shapes]
        else:
            self.premise_rows = lambda s: [(lit.relation, self.atom_row(lit, s)) for lit in atoms]

    def of(self, row: tuple) -> Iterator[Subst]:
        """Every binding of the body (its variables, the head's among them) whose head is ``row``."""
        head = self.clause.head
        start = self.head_binding(row)
        if start is None:
            return
        if self.fast:       # a head of variables and constants: bound from ``row``, it stays ``row``
            yield from self._flat_solve(list(self.clause.body), start)
            return
        for subst in self.solve(self.clause.body, start):
            if self.head_row(head, subst) == row:
                yield subst

    def using(self, atom: Atom, row: tuple) -> Iterator[tuple[tuple, Subst]]:
        """(head row, binding) of every binding of the body in which the positive body ``atom``
        (one of the clause's, by identity) is ``row``: the instances that read a fact."""
        start = _bind(atom.args, row, {})
        if start is None:
            return
        head = self.clause.head
        if self.fast:
            for subst in self._flat_solve(list(self.clause.body), start):
                yield self.head_row(head, subst), subst
            return
        for subst in self.solve(self.clause.body, start):
            if self.atom_row(atom, subst) == row:
                out = self.head_row(head, subst)
                if out is not None:
                    yield out, subst

    # ---- the fast path: a body of atoms, negations and comparisons of variables and constants
    # (the reference evaluator's loop without its generality; the property tests check the proofs)
    def prepare(self) -> None:
        """Build the trie indexes :meth:`of` and :meth:`using` read, which are otherwise built by
        the first question or repair that reads them: the lookups of a flat clause's pick order,
        walked over which variables are bound (the order depends on nothing else but the
        relations' sizes), from the head's variables and from each positive atom's."""
        if not self.fast:
            return
        body = list(self.clause.body)
        starts = [self.clause.head, *(lit for lit in body if isinstance(lit, Atom))]
        for start in starts:
            self._walk(list(body), {v.name for v in ast.variables(start)})

    def _walk(self, literals: list, bound: set[str]) -> None:
        while literals:
            literal = literals.pop(self._flat_pick(literals, dict.fromkeys(bound)))
            if isinstance(literal, Comparison):
                bound |= {t.name for t in (literal.left, literal.right) if isinstance(t, Variable)}
                continue
            atom = literal.atom if isinstance(literal, Negation) else literal
            relation = self.db.get(atom.relation)
            known = {i: None for i, arg in enumerate(atom.args)
                     if isinstance(arg, ast.Constant) or isinstance(arg, Variable) and arg.name in bound}
            if relation is not None and relation.stored and 0 < len(known) < relation.arity:
                relation.index(_order(relation, known)[0])          # as lookup() reads it
            if isinstance(literal, Atom):
                bound |= {v.name for v in ast.variables(atom)}

    def _flat_solve(self, literals: list, subst: Subst) -> Iterator[Subst]:
        if not literals:
            yield subst
            return
        i = self._flat_pick(literals, subst)
        literal, rest = literals[i], literals[:i] + literals[i + 1:]
        if isinstance(literal, Atom):
            for row in self.lookup(literal, subst):
                extended = _bind(literal.args, row, subst)
                if extended is not None:
                    yield from self._flat_solve(rest, extended)
        elif isinstance(literal, Negation):
            atom = literal.atom
            if not any(_bind(atom.args, row, subst) is not None for row in self.lookup(atom, subst)):
                yield from self._flat_solve(rest, subst)
        else:
            left, right = _value(literal.left, subst), _value(literal.right, subst)
            if left is _UNBOUND or right is _UNBOUND:      # v = bound value: binds v
                name, value = (literal.left.name, right) if left is _UNBOUND else (literal.right.name, left)
                yield from self._flat_solve(rest, {**subst, name: value})
            elif compare(literal.op, left, right):
                yield from self._flat_solve(rest, subst)

    def _flat_pick(self, literals: list, subst: Subst) -> int:
        """A comparison or negation that can be tested, else ``v = value``, else the atom with the
        most bound arguments (the smaller relation on a tie)."""
        best, choice = None, 0
        for i, literal in enumerate(literals):
            if isinstance(literal, Comparison):
                free = sum(1 for t in (literal.left, literal.right) if isinstance(t, Variable) and t.name not in subst)
                key = (0,) if free == 0 else (1,) if free == 1 and literal.op == "=" else None
            elif isinstance(literal, Negation):
                key = (0,) if self.needed[id(literal)] <= subst.keys() else None
            else:
                bound = sum(1 for a in literal.args if not isinstance(a, Variable) or a.name in subst)
                relation = self.db.get(literal.relation)
                key = (2, -bound, len(relation) if relation is not None else 0)
            if key is not None and (best is None or key < best):
                best, choice = key, i
        return choice

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
        order, depth = _order(relation, dict(bound))
        values = dict(bound)
        prefix = tuple(values[p] for p in order[:depth])
        node = relation.index(order).find(prefix)
        if node is None:
            return ()
        rows = _rows(node, order, prefix)
        if depth == len(bound):
            return rows
        rest = [(p, v) for p, v in bound if p not in order[:depth]]     # bound, but below the prefix
        return (row for row in rows if all(row[p] == v for p, v in rest))

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


_UNBOUND = object()


def _order(relation, bound: dict) -> tuple[tuple[int, ...], int]:
    """The index to read an atom with ``bound`` columns through, and how many of its first
    columns are bound: an index the relation has already whose longest bound prefix is longest
    (the rest of the bound columns are filtered), else a new one with every bound column first
    (built once over the whole relation, then kept up to date by its inserts and erases)."""
    best, depth = None, 0
    for order in relation.indexes:
        if len(order) != relation.arity:
            continue
        k = 0
        while k < len(order) and order[k] in bound:
            k += 1
        if k > depth:
            best, depth = order, k
    if best is not None:
        return best, depth
    positions = tuple(sorted(bound))
    return positions + tuple(p for p in range(relation.arity) if p not in bound), len(positions)


def _value(term, subst: Subst):
    if isinstance(term, Variable):
        return subst.get(term.name, _UNBOUND)
    return Unsigned(term.value) if term.unsigned else term.value


def _bind(args, row: tuple, subst: Subst) -> Subst | None:
    """``subst`` extended so that the plain arguments ``args`` equal ``row``, or None."""
    extended = None
    for arg, value in zip(args, row):
        if type(arg) is Variable:
            bound = subst.get(arg.name, _UNBOUND) if extended is None else extended.get(arg.name, _UNBOUND)
            if bound is _UNBOUND:
                if extended is None:
                    extended = dict(subst)
                extended[arg.name] = value
            elif bound != value:
                return None
        elif type(arg) is ast.Constant and arg.value != value:
            return None
    return extended if extended is not None else dict(subst)


_OPS = {"=", "!=", "<", "<=", ">", ">="}
_TERMS = (Variable, ast.Constant)


def _flat(clause) -> bool:
    """Whether the fast path evaluates the clause: a head of variables and constants; a body of
    atoms and negated atoms of variables, constants and ``_``, and comparisons of variables and
    constants."""
    if not all(isinstance(a, _TERMS) for a in clause.head.args):
        return False
    for literal in clause.body:
        if isinstance(literal, (Atom, Negation)):
            atom = literal.atom if isinstance(literal, Negation) else literal
            if not all(isinstance(a, (*_TERMS, ast.Wildcard)) for a in atom.args):
                return False
        elif not (isinstance(literal, Comparison) and literal.op in _OPS
                  and isinstance(literal.left, _TERMS) and isinstance(literal.right, _TERMS)):
            return False
    return True


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
