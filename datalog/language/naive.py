"""The slow, obviously correct reference evaluator: the test oracle for the engine.

No indexes, no semi-naive deltas, no join planning. Relations are Python sets of
tuples; strata are the strongly connected components of the dependency graph;
inside a stratum every rule is re-evaluated by nested loops over substitutions
until no rule derives a new tuple.

>>> from datalog.language.parser import parse
>>> db = evaluate(parse('''
...     edge(1, 2). edge(2, 3).
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... '''))
>>> sorted(db["path"])
[(1, 2), (1, 3), (2, 3)]

Semantics follow Soufflé; where the two could differ, the choice is stated in
the docstring of the function that makes it (see ``_aggregate``, ``_arith``,
the functors).
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Iterator

from datalog.language import ast
from datalog.language.ast import (Aggregate, Atom, BinaryOp, Comparison, Constant, Disjunction, Functor,
                         Negate, Negation, Rule, Variable, Wildcard)
from datalog.language.errors import (ArityMismatch, CyclicNegation, DivisionByZero, InvalidConversion,
                            TypeMismatch, UnboundVariable)

Row = tuple
Database = dict[str, set[Row]]
Subst = dict[str, object]  # variable name -> value


def evaluate(program: ast.Program, edb: dict[str, set[Row]] | None = None) -> Database:
    """Every relation of ``program`` (and of ``edb``) -> its set of tuples."""
    db: Database = {name: set() for name in _relations(program)}
    for name, rows in (edb or {}).items():
        db.setdefault(name, set()).update(tuple(row) for row in rows)
    rules = [split for rule in program.rules for split in _split_disjunctions(rule)]
    for stratum in stratify(program.rules, list(db)):
        _fixpoint([r for r in rules if any(h.relation in stratum for h in r.heads)], stratum, db)
    return db


def _fixpoint(rules: list[Rule], stratum: set[str], db: Database) -> None:
    """Re-evaluate every rule of the stratum on the whole database until nothing is new."""
    evaluators = [(rule, _RuleEvaluator(db, rule)) for rule in rules]
    while True:
        new: dict[str, set[Row]] = {name: set() for name in stratum}
        for rule, ev in evaluators:
            for subst in ev.solve(rule.body, {}):
                for head in rule.heads:  # h1, h2 :- body.  gives the tuple to every head
                    if head.relation in stratum:
                        row = ev.head_row(head, subst)
                        if row is not None and row not in db[head.relation]:
                            new[head.relation].add(row)
        if not any(new.values()):
            return
        for name, rows in new.items():
            db[name] |= rows


# ---------------------------------------------------------------- stratification

def stratify(rules: list[Rule], relations: list[str]) -> list[set[str]]:
    """The strongly connected components of the dependency graph, dependencies first.

    ``p :- q`` is an edge p -> q; it is negative when q is under ``!`` or inside an
    aggregate. A negative edge inside one component is cyclic negation.
    """
    edges: dict[str, set[str]] = {name: set() for name in relations}
    negative: set[tuple[str, str]] = set()
    for rule in rules:
        for head in rule.heads:
            for relation, is_negative in _dependencies(rule):
                edges.setdefault(head.relation, set()).add(relation)
                edges.setdefault(relation, set())
                if is_negative:
                    negative.add((head.relation, relation))
    reach = {name: _reachable(name, edges) for name in edges}
    component = {p: {p} | {q for q in reach[p] if p in reach[q]} for p in edges}
    for p, q in sorted(negative):
        if q in component[p]:
            raise CyclicNegation(f"{p} depends on {q} through negation or aggregation, "
                                 f"and {q} depends on {p}")
    order: list[set[str]] = []
    done: set[str] = set()
    while len(done) < len(edges):  # the first component whose dependencies are all done
        p = next(p for p in edges if p not in done and reach[p] <= done | component[p])
        order.append(component[p])
        done |= component[p]
    return order


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def _dependencies(rule: Rule) -> Iterator[tuple[str, bool]]:
    """(relation, negative) for each body atom; atoms under ``!`` or in an aggregate are negative."""
    def visit(node, negative: bool):
        if isinstance(node, Atom):
            yield node.relation, negative
        if isinstance(node, (Negation, Aggregate)):
            negative = True
        for child in _children(node):
            yield from visit(child, negative)
    yield from visit(rule.body, False)
    yield from visit(tuple(head.args for head in rule.heads), False)  # aggregates in a head


def _relations(program: ast.Program) -> list[str]:
    names = {d.relation: None for d in program.declarations}
    for node in _walk(program.rules):
        if isinstance(node, Atom):
            names[node.relation] = None
    return list(names)


def _children(node) -> tuple:
    if isinstance(node, tuple):
        return node
    if isinstance(node, list):
        return tuple(node)
    if isinstance(node, Rule):
        return (node.heads, node.body)
    if isinstance(node, (Atom, Functor)):
        return node.args
    if isinstance(node, Negation):
        return (node.atom,)
    if isinstance(node, (Comparison, BinaryOp)):
        return (node.left, node.right)
    if isinstance(node, Negate):
        return (node.operand,)
    if isinstance(node, Disjunction):
        return node.alternatives
    if isinstance(node, Aggregate):
        return (node.body,) if node.target is None else (node.target, node.body)
    return ()


def _walk(node) -> Iterator:
    yield node
    for child in _children(node):
        yield from _walk(child)


# ---------------------------------------------------------------- disjunction

def _dnf(literals: tuple) -> list[tuple]:
    """A body as a list of conjunctions: ``a, (b ; c), d`` -> ``[(a, b, d), (a, c, d)]``."""
    out: list[tuple] = [()]
    for literal in literals:
        if isinstance(literal, Disjunction):
            alternatives = [conj for alt in literal.alternatives for conj in _dnf(alt)]
            out = [prefix + alt for prefix in out for alt in alternatives]
        else:
            out = [prefix + (literal,) for prefix in out]
    return out


def _split_disjunctions(rule: Rule) -> list[Rule]:
    """``h :- a, (b ; c).`` is the two rules ``h :- a, b.`` and ``h :- a, c.`` (as in Soufflé)."""
    return [Rule(rule.heads, body, rule.span) for body in _dnf(rule.body)]


# ---------------------------------------------------------------- one rule

class _NoValue(Exception):
    """A term has no value (min, max or mean of nothing): the literal using it is false."""


class _RuleEvaluator:
    """Substitutions satisfying the body of one rule (without disjunctions) over ``db``."""

    def __init__(self, db: Database, rule: Rule):
        self.db = db
        # aggregate (by id) -> its variables that also occur outside it (Soufflé's "injected")
        everywhere = Counter(v.name for v in ast.variables((rule.heads, rule.body)))
        self.injected: dict[int, frozenset[str]] = {}
        for node in _walk(rule):
            if isinstance(node, Aggregate):
                inside = Counter(v.name for v in ast.variables(node))
                self.injected[id(node)] = frozenset(n for n in inside if everywhere[n] > inside[n])

    def head_row(self, head: Atom, subst: Subst) -> Row | None:
        try:
            return tuple(self.eval(arg, subst) for arg in head.args)
        except _NoValue:
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
        except _NoValue:
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
            plain = {a.name for a in literal.args if isinstance(a, Variable)}
            return 0 if all(isinstance(a, (Variable, Wildcard)) or self._computable(a, bound | plain)
                            for a in literal.args) else None
        if isinstance(literal, Negation):
            return 1 if all(isinstance(a, Wildcard) or self._computable(a, bound)
                            for a in literal.atom.args) else None
        if isinstance(literal, Comparison):
            if self._computable(literal.left, bound) and self._computable(literal.right, bound):
                return 1
            if literal.op == "=" and self._binding(literal, bound):
                return 2
            return None
        raise TypeError(f"unexpected literal {literal!r}")  # disjunctions were split off

    def _binding(self, comparison: Comparison, bound) -> tuple[str, ast.Term] | None:
        """``v = expr`` (either way round) with v unbound and expr computable: (v, expr)."""
        for var, expr in ((comparison.left, comparison.right), (comparison.right, comparison.left)):
            if isinstance(var, Variable) and var.name not in bound and self._computable(expr, bound):
                return var.name, expr
        return None

    def _computable(self, term, bound) -> bool:
        if isinstance(term, Variable):
            return term.name in bound
        if isinstance(term, Wildcard):
            return False
        if isinstance(term, Aggregate):
            return self.injected[id(term)] <= bound
        return all(self._computable(child, bound) for child in _children(term))

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
        elif self._computable(literal.left, set(subst)) and \
                self._computable(literal.right, set(subst)):  # a filter
            if _compare(literal.op, self.eval(literal.left, subst), self.eval(literal.right, subst)):
                yield subst
        else:  # v = expr binds v
            name, expr = self._binding(literal, set(subst))
            yield {**subst, name: self.eval(expr, subst)}

    def _match(self, atom: Atom, row: Row, subst: Subst) -> Subst | None:
        """``subst`` extended so that ``atom`` equals ``row``, or None."""
        if len(row) != len(atom.args):
            raise ArityMismatch(f"{atom.relation} has a tuple {row} of arity {len(row)}, "
                                f"used with {len(atom.args)} arguments")
        extended = dict(subst)
        later = []  # expressions such as x + 1, once the plain variables are bound
        for arg, value in zip(atom.args, row):
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Variable) and arg.name not in extended:
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
            return term.value
        if isinstance(term, Wildcard):
            raise UnboundVariable("_ has no value here")
        if isinstance(term, BinaryOp):
            return _arith(term.op, self.eval(term.left, subst), self.eval(term.right, subst))
        if isinstance(term, Negate):
            return -_number(self.eval(term.operand, subst), "unary -")
        if isinstance(term, Functor):
            return _functor(term.name, [self.eval(arg, subst) for arg in term.args])
        if isinstance(term, Aggregate):
            return self._aggregate(term, subst)
        raise TypeError(f"unexpected term {term!r}")

    def _aggregate(self, agg: Aggregate, subst: Subst):
        """``kind target : { body }`` for the variables of ``subst`` (those outside the aggregate).

        The aggregate ranges over the distinct satisfying assignments of the body's
        local variables (those not bound outside), as Soufflé's materialised body
        relation does. Soufflé materialises only bodies with more than one atom, a
        repeated variable in the atom, or a nested aggregate; a *simple* body (one atom)
        is scanned tuple by tuple, so there each ``_`` of the atom counts as a local
        variable of its own: ``count : { e(x, _) }`` is the number of e tuples with
        first column x, while ``count : { e(x, _), f(x) }`` is 0 or 1.

        count and sum of nothing are 0; min, max and mean of nothing have no value.
        """
        body = _name_wildcards(agg.body) if _simple(agg.body) else agg.body
        chosen: dict[tuple, object] = {}  # local assignment -> target value
        for conjunction in _dnf(body):
            for s in self.solve(conjunction, subst):
                local = tuple(sorted((k, v) for k, v in s.items() if k not in subst))
                chosen[local] = None if agg.target is None else self.eval(agg.target, s)
        values = list(chosen.values())
        if agg.kind == "count":
            return len(values)
        values = [_number(v, agg.kind) for v in values]
        if agg.kind == "sum":
            return sum(values)
        if not values:
            raise _NoValue
        if agg.kind == "min":
            return min(values)
        if agg.kind == "max":
            return max(values)
        if agg.kind == "mean":
            return sum(values) / len(values)
        raise TypeError(f"unknown aggregate {agg.kind}")


def _simple(body: tuple) -> bool:
    """A body Soufflé scans directly: one atom (and filters), no repeated variable in it, no aggregate."""
    atoms = tuple(lit for lit in body if isinstance(lit, Atom))
    if any(isinstance(lit, Disjunction) for lit in body) or len(atoms) > 1:
        return False
    if any(isinstance(node, Aggregate) for node in _walk(body)):
        return False
    names = [v.name for v in ast.variables(atoms)]
    return len(names) == len(set(names))


def _name_wildcards(body: tuple) -> tuple:
    """Each ``_`` of the body's atom becomes its own variable (named so no program can clash)."""
    counter = iter(range(1_000_000))

    def rename(lit):
        if not isinstance(lit, Atom):
            return lit
        args = tuple(Variable(f" _{next(counter)}") if isinstance(a, Wildcard) else a for a in lit.args)
        return Atom(lit.relation, args, lit.span)
    return tuple(rename(lit) for lit in body)


# ---------------------------------------------------------------- values

_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def _compare(op: str, left, right) -> bool:
    """Numbers with numbers, symbols with symbols (Python's ordering: by code point)."""
    if isinstance(left, str) != isinstance(right, str):
        raise TypeMismatch(f"cannot compare {left!r} {op} {right!r}")
    return _COMPARE[op](left, right)


def _number(value, what: str):
    if isinstance(value, str):
        raise TypeMismatch(f"{what} needs a number, got the symbol {value!r}")
    return value


def _arith(op: str, a, b):
    """Integer arithmetic as in C (Soufflé): ``/`` truncates toward zero, ``%`` takes the
    dividend's sign; ``x ^ -n`` is the truncated power (``2 ^ -1 = 0``). Ints do not wrap
    (Soufflé's 32-bit numbers would). A float operand makes it float arithmetic."""
    a, b = _number(a, op), _number(b, op)
    ints = isinstance(a, int) and isinstance(b, int)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%") and b == 0:
        raise DivisionByZero(f"{a} {op} {b}: division by zero")
    if op == "/":
        if ints:
            quotient = abs(a) // abs(b)
            return quotient if (a < 0) == (b < 0) else -quotient
        return a / b
    if op == "%":
        return a - b * _arith("/", a, b) if ints else math.fmod(a, b)
    if op == "^":
        if ints and b < 0:
            if a == 0:
                raise DivisionByZero(f"{a} ^ {b}: division by zero")
            return int(a ** b)
        return a ** b if ints else math.pow(a, b)
    raise TypeError(f"unknown operator {op}")


def _functor(name: str, args: list):
    if name in ("cat", "min", "max") and not args:
        raise ArityMismatch(f"{name} needs at least one argument")
    if name in _ARITY and len(args) != _ARITY[name]:
        raise ArityMismatch(f"{name} takes {_ARITY[name]} arguments, got {len(args)}")
    if name == "cat":
        return "".join(_symbol(a, name) for a in args)
    if name == "strlen":
        return len(_symbol(args[0], name))
    if name == "substr":
        return _substr(_symbol(args[0], name), args[1], args[2])
    if name == "to_number":
        return _to_number(args[0])
    if name == "to_string":
        return str(_number(args[0], name))  # repr of a float: to_string(1.5) = "1.5"
    if name == "to_float":
        return _to_float(args[0])
    if name in ("min", "max"):
        if len({isinstance(a, str) for a in args}) > 1:
            raise TypeMismatch(f"{name} mixes numbers and symbols: {args}")
        return min(args) if name == "min" else max(args)
    raise TypeError(f"unknown functor {name}")


_ARITY = {"strlen": 1, "substr": 3, "to_number": 1, "to_string": 1, "to_float": 1}


def _symbol(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeMismatch(f"{what} needs a symbol, got {value!r}")
    return value


def _substr(text: str, start, length) -> str:
    """``substr(s, i, n)`` = ``s[i:i+n]``; i outside 0..len(s) or n < 0 is an error
    (Soufflé prints a warning and gives "")."""
    start, length = _number(start, "substr"), _number(length, "substr")
    if not 0 <= start <= len(text) or length < 0:
        raise InvalidConversion(f"substr({text!r}, {start}, {length}): index out of range")
    return text[start:start + length]


_INTEGER = re.compile(r"[+-]?\d+")


def _to_number(value) -> int:
    """A symbol of decimal digits with an optional sign; a float is truncated."""
    if isinstance(value, str):
        if not _INTEGER.fullmatch(value.strip()):
            raise InvalidConversion(f"to_number: {value!r} is not a number")
        return int(value)
    return int(value)


def _to_float(value) -> float:
    try:
        return float(value)
    except ValueError:
        raise InvalidConversion(f"to_float: {value!r} is not a number") from None
