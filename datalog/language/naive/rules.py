"""One rule: the substitutions that satisfy its body, found by nested loops over the database,
and the head tuples they give.

>>> from datalog.language.parser import parse
>>> rule = parse("p(x, z) :- e(x, y), e(y, z), z != x.").rules[0]
>>> evaluator = RuleEvaluator({"e": {(1, 2), (2, 3), (3, 1), (2, 1)}}, rule)
>>> sorted(evaluator.head_row(rule.heads[0], s) for s in evaluator.solve(rule.body, {}))
[(1, 3), (2, 1), (3, 2)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from datalog.language import ast
from datalog.language.ast import (STRUCTURED, Aggregate, Atom, BinaryOp, BranchTerm, Cast, Comparison, Constant,
                                  Functor, Negate, Negation, Nil, RecordTerm, Rule, Variable, Wildcard)
from datalog.language.composites import NIL, Branch, Record
from datalog.language.variables import pattern_variables
from datalog.language.errors import ArityMismatch, TypeMismatch, UnboundVariable
from datalog.language.naive.aggregates import NoValue, aggregate
from datalog.language.naive.nodes import children
from datalog.language.naive.values import Database, Row, Subst, Unsigned, arith, compare, functor, number, range_of
from datalog.language.display import plural


def _is_range(term) -> bool:
    return isinstance(term, Functor) and term.name == "range"


def _walk_scope(node):
    """The nodes of a scope, an aggregate but not its inside."""
    yield node
    if not isinstance(node, Aggregate) and node is not None:
        for child in children(node):
            yield from _walk_scope(child)


class RuleEvaluator:
    """Substitutions satisfying the body of one rule (without disjunctions) over ``db``."""

    def __init__(self, db: Database, rule: Rule, unsigned: dict | None = None):
        self.db = db
        self.unsigned = unsigned or {}        # relation -> its unsigned columns (an empty sum's type)
        # aggregate (by id) -> its variables that also occur outside it (Soufflé's "injected"):
        # outside means in its scope (the rule's body, or the enclosing aggregate) but in no
        # other aggregate, and not as the v of `v = <this aggregate>`
        self.injected: dict[int, frozenset[str]] = {}
        self._scope(rule.body, frozenset())
        # a variable that occurs once in the rule, under a negation, is a wildcard (Soufflé)
        counts = Counter(v.name for v in ast.variables((rule.heads, rule.body)))
        self.singletons = frozenset(name for name, k in counts.items() if k == 1)

    def _scope(self, nodes, inherited: frozenset) -> None:
        aggregates = [n for n in _walk_scope(nodes) if isinstance(n, Aggregate)]
        names = Counter(n.name for n in _walk_scope(nodes) if isinstance(n, Variable))
        for agg in aggregates:
            outside = Counter(names)
            for node in _walk_scope(nodes):
                if isinstance(node, Comparison) and node.op == "=" and (node.left is agg or node.right is agg):
                    other = node.right if node.left is agg else node.left
                    if isinstance(other, Variable):
                        outside[other.name] -= 1
            visible = inherited | {n for n, k in outside.items() if k > 0}
            self.injected[id(agg)] = frozenset(v.name for v in ast.variables(agg)) & visible
            self._scope((agg.target, agg.body), visible)

    def head_row(self, head: Atom, subst: Subst) -> Row | None:
        try:
            return tuple(self.eval(arg, subst) for arg in head.args)
        except NoValue:
            return None

    # -- conjunctions ---------------------------------------------------------
    def solve(self, literals: tuple, subst: Subst) -> Iterator[Subst]:
        """Every extension of ``subst`` that satisfies all ``literals`` (a conjunction)."""
        if not literals:
            yield subst
            return
        i = self._pick(literals, subst)
        rest = literals[:i] + literals[i + 1:]
        try:
            extensions = list(self._satisfy(literals[i], subst))
        except NoValue:
            return
        for extended in extensions:
            yield from self.solve(rest, extended)

    def _pick(self, literals: tuple, subst: Subst) -> int:
        """The literal to do next: atoms first, then filters and negations, then ``v = expr``.

        Within a kind, source order. Filters go before bindings so that ``y != 0``
        is checked before ``z = x / y`` is computed.
        """
        ranked = [(rank, i) for i, lit in enumerate(literals)
                  if (rank := self._rank(lit, set(subst))) is not None]
        if not ranked:
            names = sorted({v.name for v in ast.variables(literals)} - subst.keys())
            raise UnboundVariable(f"variables {', '.join(names)} are not bound by a positive atom "
                                  f"in: {', '.join(map(str, literals))}")
        return min(ranked)[1]

    def _rank(self, literal, bound) -> int | None:
        """0, 1, 2 for an atom, filter or binding that can be evaluated now; None if not yet."""
        if isinstance(literal, Atom):
            plain = {name for a in literal.args for name in pattern_variables(a)}
            return 0 if all(self._matchable(a, bound | plain) for a in literal.args) else None
        if isinstance(literal, Negation):
            return 1 if all(self._negatable(a, bound) or (isinstance(a, Variable) and a.name in self.singletons)
                            for a in literal.atom.args) else None
        if isinstance(literal, Comparison):
            if self._computable(literal.left, bound) and self._computable(literal.right, bound):
                return 1
            if literal.op == "=" and (self._binding(literal, bound) or self._unpacking(literal, bound)):
                return 2
            return None
        raise TypeError(f"unexpected literal {literal!r}")  # disjunctions were split off

    def _binding(self, comparison: Comparison, bound) -> tuple[str, ast.Term] | None:
        """``v = expr`` (either way round) with v unbound and expr computable: (v, expr)."""
        for var, expr in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
            if isinstance(var, Variable) and var.name not in bound and self._computable(expr, bound):
                return var.name, expr
        return None

    # ---- records (issue 18): a record or branch term with variables not yet bound, in an atom
    # or compared with a value, is a pattern: the value is taken apart (unify) to bind them.
    def _matchable(self, term, bound) -> bool:
        """Whether a pattern can be matched once ``bound`` are: its fields are variables, ``_``,
        patterns, or computable."""
        if isinstance(term, (Variable, Wildcard)):
            return True
        if isinstance(term, STRUCTURED):
            return all(self._matchable(arg, bound) for arg in term.args)
        return self._computable(term, bound)

    def _negatable(self, term, bound) -> bool:
        """Whether a negated atom's argument can be tested: ``_``, or computable, or a pattern
        (``[x, _]``) whose variables are all bound."""
        if isinstance(term, Wildcard):
            return True
        if isinstance(term, STRUCTURED):
            return all(self._negatable(arg, bound) for arg in term.args)
        return self._computable(term, bound)

    def _unpacking(self, comparison: Comparison, bound) -> tuple | None:
        """``e = pattern`` (either way round) with ``e`` computable: (pattern, e)."""
        for pattern, expr in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
            if isinstance(pattern, (Wildcard, *STRUCTURED)) and self._computable(expr, bound):
                inside = bound | set(pattern_variables(pattern))
                if self._matchable(pattern, inside):
                    return pattern, expr
        return None

    def unify(self, term, value, subst: Subst) -> Subst | None:
        """``subst`` extended so that the pattern ``term`` equals ``value``, or None."""
        later: list = []
        extended = self._unify(term, value, dict(subst), later)
        if extended is None or any(self.eval(t, extended) != v for t, v in later):
            return None
        return extended

    def _unify(self, term, value, subst: Subst, later: list) -> Subst | None:
        if isinstance(term, Wildcard):
            return subst
        if isinstance(term, Variable):
            if term.name not in subst:
                subst[term.name] = value
                return subst
            return subst if subst[term.name] == value else None
        if isinstance(term, RecordTerm):            # a record of as many fields (nil has none)
            if type(value) is not Record or not value or len(value) != len(term.args):
                return None
            return self._unify_all(term.args, value, subst, later)
        if isinstance(term, BranchTerm):            # a value of the same branch
            if type(value) is not Branch or value[0] != term.name or len(value) != len(term.args) + 1:
                return None
            return self._unify_all(term.args, value[1:], subst, later)
        later.append((term, value))                 # computed once the pattern's variables are bound
        return subst

    def _unify_all(self, terms, values, subst: Subst, later: list) -> Subst | None:
        for term, value in zip(terms, values):
            subst = self._unify(term, value, subst, later)
            if subst is None:
                return None
        return subst

    def _computable(self, term, bound) -> bool:
        if isinstance(term, Variable):
            return term.name in bound
        if isinstance(term, Wildcard):
            return False
        if isinstance(term, Aggregate):
            return self.injected[id(term)] <= bound
        return all(self._computable(child, bound) for child in children(term))

    # -- literals -------------------------------------------------------------
    def _satisfy(self, literal, subst: Subst) -> Iterator[Subst]:
        if isinstance(literal, Atom):  # every tuple of the relation that unifies
            for row in self.db.get(literal.relation, ()):
                extended = self._match(literal, row, subst)
                if extended is not None:
                    yield extended
        elif isinstance(literal, Negation):  # no tuple unifies
            atom = literal.atom
            if not any(self._match(atom, row, subst) is not None
                       for row in self.db.get(atom.relation, ())):
                yield subst
        elif _is_range(literal.left) or _is_range(literal.right):  # x = range(...): one x per value
            var, expr = (literal.left, literal.right) if _is_range(literal.right) else (literal.right, literal.left)
            for value in range_of(*[self.eval(a, subst) for a in expr.args]):
                if var.name not in subst:
                    yield {**subst, var.name: value}
                elif compare("=", subst[var.name], value):
                    yield subst
        elif self._computable(literal.left, set(subst)) and \
                self._computable(literal.right, set(subst)):  # a filter
            if compare(literal.op, self.eval(literal.left, subst), self.eval(literal.right, subst)):
                yield subst
        elif self._binding(literal, set(subst)):  # v = expr binds v
            name, expr = self._binding(literal, set(subst))
            yield {**subst, name: self.eval(expr, subst)}
        else:  # pattern = expr takes the value apart
            pattern, expr = self._unpacking(literal, set(subst))
            extended = self.unify(pattern, self.eval(expr, subst), subst)
            if extended is not None:
                yield extended

    def _match(self, atom: Atom, row: Row, subst: Subst) -> Subst | None:
        """``subst`` extended so that ``atom`` equals ``row``, or None."""
        if len(row) != len(atom.args):
            raise ArityMismatch(f"{atom.relation} has a tuple {row} of arity {len(row)}, "
                                f"used with {plural(len(atom.args), 'argument')}")
        extended = dict(subst)
        later = []  # expressions such as x + 1, once the plain variables are bound
        for arg, value in zip(atom.args, row):
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, STRUCTURED):
                extended = self._unify(arg, value, extended, later)
                if extended is None:
                    return None
            elif isinstance(arg, Variable) and arg.name not in extended:
                extended[arg.name] = value
            elif isinstance(arg, Variable):
                if extended[arg.name] != value:
                    return None
            else:
                later.append((arg, value))
        if all(self.eval(arg, extended) == value for arg, value in later):
            return extended
        return None

    # -- terms ----------------------------------------------------------------
    def eval(self, term, subst: Subst):
        if isinstance(term, Variable):
            if term.name not in subst:
                raise UnboundVariable(f"variable {term.name} is not bound by a positive atom")
            return subst[term.name]
        if isinstance(term, Constant):
            return Unsigned(term.value) if term.unsigned else term.value
        if isinstance(term, Wildcard):
            raise UnboundVariable("_ has no value here")
        if isinstance(term, BinaryOp):
            return arith(term.op, self.eval(term.left, subst), self.eval(term.right, subst))
        if isinstance(term, Negate):
            value = number(self.eval(term.operand, subst), "unary -")
            if isinstance(value, Unsigned):
                raise TypeMismatch(f"unary minus of the unsigned {value!r}")
            return -value
        if isinstance(term, Functor):
            return functor(term.name, [self.eval(arg, subst) for arg in term.args])
        if isinstance(term, Aggregate):
            return aggregate(self, term, subst)
        if isinstance(term, RecordTerm):
            return Record(self.eval(arg, subst) for arg in term.args)
        if isinstance(term, Nil):
            return NIL
        if isinstance(term, BranchTerm):
            return Branch([term.name] + [self.eval(arg, subst) for arg in term.args])
        if isinstance(term, Cast):
            return self.eval(term.term, subst)
        raise TypeError(f"unexpected term {term!r}")
