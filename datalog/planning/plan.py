"""RulePlan: how one clause is evaluated by leapfrog triejoin.

The planner fixes a variable order, gives every positive atom an index (a
column permutation: constants first, then variables in the variable order,
wildcards last), and places every other literal as a check at the first depth
where its variables are bound: comparisons, negations (anti-join probes),
assignments ``v = expr`` and aggregates (sub-evaluations by triejoin, grouped by
the outer variables they use).

Variable order heuristic (documented in the README; override per rule with a
``// @order x, y, z`` comment on the line before it):
  1. start with the variable that occurs in the most positive atoms
     (ties: the one in an atom with constants, then the first in the body);
  2. then repeatedly take, among the variables that share an atom with one
     already chosen, the one in the most atoms (ties: first in the body);
     if none is connected, fall back to rule 1 (a cross product).

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> c = check(parse('.decl e(a: number, b: number)\\nt(x, y, z) :- e(x, y), e(y, z), e(z, x).'))
>>> p = plan_clause(c.clauses[0], c.schema)
>>> p.variable_order, [a.order for a in p.atoms]
(['x', 'y', 'z'], [(0, 1), (0, 1), (1, 0)])
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from itertools import product
from typing import Callable

from datalog.language import ast
from datalog.language.checks import aggregate_outer_variables
from datalog.language.errors import BadPragma
from datalog.evaluation.expressions import compile_term
from datalog.language.normalize import Clause, dnf
from datalog.language.types import convert
from datalog.planning.backend import pragma_backend

_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


@dataclass
class AtomPlan:
    """A positive atom: its index order and the values of its leading constant levels."""

    relation: str
    order: tuple[int, ...]
    prefix: list[Callable]          # binding -> value, one per constant/parameter level
    depths: list[int]               # depth of each variable level, in index order
    atom: ast.Atom

    @property
    def opened(self) -> bool:
        return bool(self.depths)


@dataclass
class Placed:
    """A literal evaluated as a check once ``depth`` is bound (-1: before any variable)."""

    depth: int
    kind: str                       # compare | assign | negation | exists | aggregate
    literal: object
    make: Callable                  # (database) -> check(binding) -> bool
    probe: "Probe | None" = None    # negation / exists: the trie path it looks up


@dataclass(frozen=True)
class Probe:
    """A lookup of the path ``[f(binding) for f in path]`` in ``relation``'s index ``order``."""

    relation: str
    order: tuple[int, ...]
    path: tuple[Callable, ...]


@dataclass
class RulePlan:
    clause: Clause | None
    variable_order: list[str]
    slots: dict[str, int]
    atoms: list[AtomPlan]           # opened atoms, in triejoin order
    placed: list[Placed]
    head: Callable | None           # binding -> head tuple
    needed: int
    params: list[str] = field(default_factory=list)   # outer variables (aggregate sub-plans)
    head_slots: list[int] | None = None               # the head as binding slots, if it is just variables
    route: object = None                              # datalog.planning.backend.Route (set by the engine)

    @property
    def depth(self) -> int:
        return len(self.variable_order)

    def describe(self) -> str:
        indexes = ", ".join(f"{a.relation}{list(a.order)}" for a in self.atoms)
        text = f"order [{', '.join(self.variable_order)}]; indexes {indexes or '-'}"
        return text if self.route is None else f"{text}\n      {self.route.describe()}"


def plan_clause(clause: Clause, schema, pragma_order: list[str] | None = None) -> RulePlan:
    order = pragma_order if pragma_order is not None else _pragma_order(clause)
    pragma_backend(clause)                            # // @backend thetajoin | lftj, checked here
    head_info = schema[clause.head.relation]
    plan = plan_body(clause.body, schema, [], order, clause, clause.head.relation)
    head_fns = [compile_term(t, plan.slots, clause.head.relation, clause.head.span) for t in clause.head.args]
    plan.head = _head_function(clause.head, head_fns, plan.slots, head_info.types)
    if all(isinstance(a, ast.Variable) for a in clause.head.args) and "float" not in head_info.types:
        plan.head_slots = [plan.slots[a.name] for a in clause.head.args]
    plan.needed = _needed_depth(plan, {v.name for v in ast.variables(clause.head)})
    return plan


def plan_body(body, schema, params: list[str], order: list[str] | None, clause, rule_name) -> RulePlan:
    """Plan a conjunctive body; ``params`` are variables bound before it (an aggregate's group-by)."""
    body = _lift_atom_expressions(body)
    atoms = [lit for lit in body if isinstance(lit, ast.Atom)]
    atom_vars = [v for a in atoms for v in a.args if isinstance(v, ast.Variable) and v.name not in params]
    variable_order = _variable_order(atoms, atom_vars, params, order, clause)
    slots = {v: i for i, v in enumerate(variable_order)}
    plan = RulePlan(clause, variable_order, slots, [], [], None, len(variable_order), list(params))
    for name in params:
        slots[name] = len(slots)
    depth_of = {v: i for i, v in enumerate(variable_order)}
    depth_of.update({p: -1 for p in params})
    for atom in atoms:
        _plan_atom(plan, atom, depth_of)
    _place_literals(plan, body, depth_of, schema, rule_name)
    return plan


# ---------------------------------------------------------------- variable order

def _pragma_order(clause: Clause) -> list[str] | None:
    for key, value in clause.rule.pragma if clause else ():
        if key == "order":
            return [v.strip() for v in value.replace(",", " ").split()]
    return None


def _variable_order(atoms, atom_vars, params, forced, clause) -> list[str]:
    names = list(dict.fromkeys(v.name for v in atom_vars))
    if forced is not None:
        unknown = [v for v in forced if v not in names]
        if unknown:
            raise BadPragma(f"@order names {', '.join(unknown)}, which no positive atom of this rule binds "
                            f"(its variables: {', '.join(names)})", clause.rule.span if clause else None)
        chosen = list(dict.fromkeys(forced))
    else:
        chosen = []
    occurrences = {n: sum(1 for a in atoms if any(isinstance(t, ast.Variable) and t.name == n for t in a.args))
                   for n in names}
    with_constants = {t.name for a in atoms if any(not isinstance(x, (ast.Variable, ast.Wildcard))
                                                   or (isinstance(x, ast.Variable) and x.name in params)
                                                   for x in a.args)
                      for t in a.args if isinstance(t, ast.Variable)}
    while len(chosen) < len(names):
        remaining = [n for n in names if n not in chosen]
        connected = [n for n in remaining if any(_shares_atom(atoms, n, c) for c in chosen)]
        pool = connected or remaining
        best = max(pool, key=lambda n: (occurrences[n], n in with_constants, -names.index(n)))
        chosen.append(best)
    return chosen


def _shares_atom(atoms, a: str, b: str) -> bool:
    for atom in atoms:
        present = {t.name for t in atom.args if isinstance(t, ast.Variable)}
        if a in present and b in present:
            return True
    return False


# ---------------------------------------------------------------- atoms

def _lift_atom_expressions(body):
    """Atoms hold only variables, constants and _, and an aggregate is a whole side of ``v = agg``:
    ``r(x + 1, y)`` becomes ``r(_e0, y), _e0 = x + 1``; ``n = count : {..} + 1`` becomes
    ``n = _e0 + 1, _e0 = count : {..}``."""
    extra, counter = [], iter(range(10**9))

    def fresh(term) -> ast.Variable:
        var = ast.Variable(f"_e{next(counter)}", term.span)
        extra.append(ast.Comparison("=", var, term, term.span))
        return var

    def lift_aggregates(term):
        if isinstance(term, ast.Aggregate):
            return fresh(term)
        if isinstance(term, ast.BinaryOp):
            return ast.BinaryOp(term.op, lift_aggregates(term.left), lift_aggregates(term.right), term.span)
        if isinstance(term, ast.Negate):
            return ast.Negate(lift_aggregates(term.operand), term.span)
        if isinstance(term, ast.Functor):
            return ast.Functor(term.name, tuple(map(lift_aggregates, term.args)), term.span)
        return term

    def side(term):
        return term if isinstance(term, ast.Aggregate) else lift_aggregates(term)

    out = []
    for literal in body:
        if isinstance(literal, ast.Atom) and not all(isinstance(a, _ATOM_ARGS) for a in literal.args):
            args = tuple(a if isinstance(a, _ATOM_ARGS) else fresh(lift_aggregates(a)) for a in literal.args)
            literal = ast.Atom(literal.relation, args, literal.span)
        elif isinstance(literal, ast.Comparison):
            literal = ast.Comparison(literal.op, side(literal.left), side(literal.right), literal.span)
        out.append(literal)
    return tuple(out + extra)


_ATOM_ARGS = (ast.Variable, ast.Constant, ast.Wildcard)


def _plan_atom(plan: RulePlan, atom: ast.Atom, depth_of) -> None:
    prefix_cols, var_cols, wild_cols, prefix = [], [], [], []
    for col, arg in enumerate(atom.args):
        if isinstance(arg, ast.Constant):
            prefix_cols.append(col)
            value = arg.value
            prefix.append(lambda b, value=value: value)
        elif isinstance(arg, ast.Variable) and depth_of[arg.name] < 0:
            prefix_cols.append(col)
            slot = plan.slots[arg.name]
            prefix.append(lambda b, slot=slot: b[slot])
        elif isinstance(arg, ast.Variable):
            var_cols.append(col)
        else:
            wild_cols.append(col)
    var_cols.sort(key=lambda c: (depth_of[atom.args[c].name], c))
    order = tuple(prefix_cols + var_cols + wild_cols)
    depths = [depth_of[atom.args[c].name] for c in var_cols]
    atom_plan = AtomPlan(atom.relation, order, prefix, depths, atom)
    if atom_plan.opened:
        plan.atoms.append(atom_plan)
    else:
        probe = Probe(atom.relation, order, tuple(prefix))
        plan.placed.append(Placed(-1, "exists", atom, _exists_check(atom_plan), probe))


def _exists_check(atom_plan: AtomPlan):
    """``r(1, _)`` or ``r()``: no variable to open, so a probe for the bound prefix."""
    prefix = atom_plan.prefix

    def make(db):
        relation = db[atom_plan.relation]
        if len(prefix) == relation.arity:
            tuples = relation.tuples
            return lambda b: tuple(f(b) for f in prefix) in tuples
        root = relation.index(atom_plan.order)
        return lambda b: root.has_extension([f(b) for f in prefix])
    return make


# ---------------------------------------------------------------- other literals

def _place_literals(plan: RulePlan, body, depth_of, schema, rule_name) -> None:
    pending = [lit for lit in body if not isinstance(lit, ast.Atom)]
    for _ in range(len(pending) + 1):
        if not pending:
            return
        later = []
        for literal in pending:
            if not _place(plan, literal, depth_of, schema, rule_name, body):
                later.append(literal)
        pending = later
    raise AssertionError(f"unplaceable literals {pending}: the safety check should have caught them")


def _place(plan, literal, depth_of, schema, rule_name, body) -> bool:
    if isinstance(literal, ast.Negation):
        names = [v.name for v in ast.variables(literal.atom)]
        if any(n not in depth_of for n in names):
            return False
        make, probe = _negation_check(literal.atom, plan.slots, rule_name)
        plan.placed.append(Placed(_depth(names, depth_of), "negation", literal, make, probe))
        return True
    assert isinstance(literal, ast.Comparison)
    for var, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if literal.op == "=" and isinstance(var, ast.Variable) and var.name not in depth_of:
            deps = _term_dependencies(expr, body, plan)
            if any(n not in depth_of for n in deps):
                return False
            depth = _depth(deps, depth_of)
            plan.slots[var.name] = len(plan.slots)
            depth_of[var.name] = depth
            plan.placed.append(Placed(depth, "assign", literal,
                                      _value_check(expr, plan, schema, rule_name, body, target=var.name)))
            return True
    deps = _term_dependencies(literal.left, body, plan) + _term_dependencies(literal.right, body, plan)
    if any(n not in depth_of for n in deps):
        return False
    plan.placed.append(Placed(_depth(deps, depth_of), "compare", literal,
                              _compare_check(literal, plan, schema, rule_name, body)))
    return True


def _depth(names, depth_of) -> int:
    return max((depth_of[n] for n in names), default=-1)


def _term_dependencies(term, body, plan) -> list[str]:
    """Variables a term needs bound: its own, and an aggregate's group-by variables."""
    if isinstance(term, ast.Aggregate):
        return [v.name for v in aggregate_outer_variables(term, body)]
    out = []
    for node in ast.subterms(term):
        if isinstance(node, ast.Variable):
            out.append(node.name)
        elif isinstance(node, ast.Aggregate):
            out.extend(v.name for v in aggregate_outer_variables(node, body))
    return out


def _negation_check(atom: ast.Atom, slots, rule_name):
    """``!r(x, _, 3)``: probe r's index (bound columns first) for the bound prefix."""
    bound_cols = [i for i, a in enumerate(atom.args) if not isinstance(a, ast.Wildcard)]
    order = tuple(bound_cols + [i for i, a in enumerate(atom.args) if isinstance(a, ast.Wildcard)])
    fns = [compile_term(atom.args[i], slots, rule_name, atom.span) for i in bound_cols]

    def make(db):
        relation = db[atom.relation]
        if len(bound_cols) == len(atom.args):
            tuples = relation.tuples
            if all(isinstance(a, ast.Variable) for a in atom.args):
                getter = _slot_getter([slots[a.name] for a in atom.args])
                return lambda b: getter(b) not in tuples
            return lambda b: tuple(f(b) for f in fns) not in tuples
        root = relation.index(order)
        return lambda b: not root.has_extension([f(b) for f in fns])
    return make, Probe(atom.relation, order, tuple(fns))


def _slot_getter(slots: list[int]):
    if not slots:
        return lambda b: ()
    if len(slots) == 1:
        slot = slots[0]
        return lambda b: (b[slot],)
    return operator.itemgetter(*slots)


def _compare_check(literal: ast.Comparison, plan, schema, rule_name, body):
    compare = _COMPARE[literal.op]
    left = _value_fn(literal.left, plan, schema, rule_name, body, literal.span)
    right = _value_fn(literal.right, plan, schema, rule_name, body, literal.span)

    def make(db):
        lf, rf = left(db), right(db)
        return lambda b: _present(lf(b), rf(b), compare)
    return make


def _present(a, b, compare) -> bool:
    if a is _NONE or b is _NONE:
        return False
    return compare(a, b)


def _value_check(expr, plan, schema, rule_name, body, target: str):
    slot = plan.slots[target]
    value = _value_fn(expr, plan, schema, rule_name, body, getattr(expr, "span", None))

    def make(db):
        fn = value(db)

        def assign(b):
            v = fn(b)
            if v is _NONE:
                return False
            b[slot] = v
            return True
        return assign
    return make


def _value_fn(term, plan, schema, rule_name, body, span):
    """(database) -> (binding -> value); aggregates become memoized sub-evaluations."""
    if isinstance(term, ast.Aggregate):
        return _aggregate_fn(term, plan, schema, rule_name, body)
    fn = compile_term(term, plan.slots, rule_name, span)
    return lambda db: fn


# ---------------------------------------------------------------- aggregates

class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"

    def __reduce__(self) -> str:
        return "_NONE"          # pickled by name: a plan shipped to Spark executors keeps ``is _NONE``


_NONE = _NoValue()   # min/max/mean of nothing: the literal fails


def _aggregate_fn(agg: ast.Aggregate, plan: RulePlan, schema, rule_name, body):
    """``v = kind target : { body }`` grouped by the outer variables the body shares with the clause."""
    outer = list(dict.fromkeys(v.name for v in aggregate_outer_variables(agg, body)))
    alternatives = dnf(agg.body)
    if _scanned(alternatives):
        alternatives = [_name_wildcards(alternatives[0])]
    subplans = [plan_body(alt, schema, outer, None, plan.clause, rule_name) for alt in alternatives]
    targets = [compile_term(agg.target, sp.slots, rule_name, agg.span) if agg.target is not None else None
               for sp in subplans]
    outer_slots = [plan.slots[n] for n in outer]

    def make(db):
        from datalog.evaluation.evaluate import run_plan  # evaluation imports planning, not the other way round
        memo: dict[tuple, object] = {}

        def value(b):
            key = tuple(b[s] for s in outer_slots)
            if key not in memo:
                rows = []
                for sp, target in zip(subplans, targets):
                    params = [None] * (len(sp.slots))
                    for name, v in zip(outer, key):
                        params[sp.slots[name]] = v
                    local = list(range(sp.depth)) + list(range(sp.depth + len(outer), len(sp.slots)))
                    collect = _collector(rows, local, target, distinct=len(subplans) > 1)
                    run_plan(sp, db, collect, binding=params)
                memo[key] = _reduce(agg.kind, rows, len(subplans) > 1)
            return memo[key]
        return value
    return make


def _collector(rows: list, local_slots, target, distinct: bool):
    if distinct:
        return lambda b: rows.append((tuple(b[s] for s in local_slots), target(b) if target else None))
    if target is None:
        return lambda b: rows.append(None)
    return lambda b: rows.append(target(b))


def _reduce(kind: str, rows: list, distinct: bool):
    if distinct:
        rows = [value for _, value in dict.fromkeys(rows)]
    if kind == "count":
        return len(rows)
    if kind == "sum":       # exact: math.fsum of the contributions, as maintenance keeps it
        return math.fsum(rows) if any(isinstance(r, float) for r in rows) else sum(rows)
    if not rows:
        return _NONE
    if kind == "min":
        return min(rows)
    if kind == "max":
        return max(rows)
    total = math.fsum(rows) if any(isinstance(r, float) for r in rows) else sum(rows)
    return total / len(rows)   # mean


def _scanned(alternatives) -> bool:
    """Soufflé scans a one-atom aggregate body tuple by tuple (no repeated variable, no nested
    aggregate); any other body it materializes as the distinct assignments of its named variables.
    So ``count : { e(x, _) }`` counts e tuples, while ``count : { e(x, _), f(x) }`` is 0 or 1."""
    if len(alternatives) != 1:
        return False
    atoms = [lit for lit in alternatives[0] if isinstance(lit, ast.Atom)]
    if len(atoms) != 1 or any(_aggregates_in(lit) for lit in alternatives[0]):
        return False
    names = [a.name for a in atoms[0].args if isinstance(a, ast.Variable)]
    return len(names) == len(set(names))


def _aggregates_in(literal) -> bool:
    if isinstance(literal, ast.Comparison):
        terms = (literal.left, literal.right)
    else:
        terms = (literal.atom if isinstance(literal, ast.Negation) else literal).args
    return any(isinstance(t, ast.Aggregate) for term in terms for t in ast.subterms(term))


def _name_wildcards(body) -> tuple:
    """In a scanned aggregate body every wildcard is its own variable, so each tuple counts."""
    counter = iter(range(10**9))

    def rename(atom: ast.Atom) -> ast.Atom:
        args = tuple(ast.Variable(f"_w{next(counter)}", a.span) if isinstance(a, ast.Wildcard) else a
                     for a in atom.args)
        return ast.Atom(atom.relation, args, atom.span)
    return tuple(rename(lit) if isinstance(lit, ast.Atom) else lit for lit in body)


# ---------------------------------------------------------------- head

def _head_function(head: ast.Atom, fns, slots, types):
    floats = [i for i, t in enumerate(types) if t == "float"]
    if all(isinstance(a, ast.Variable) for a in head.args) and not floats:
        return _slot_getter([slots[a.name] for a in head.args]) if head.args else (lambda b: ())
    if floats:
        return lambda b: tuple(convert(f(b), t) for f, t in zip(fns, types))
    return lambda b: tuple(f(b) for f in fns)


def bulk_emitter(plan: RulePlan, add_many):
    """``emit_last(binding, keys)``: every head tuple for the last depth's keys, in one call.

    For ``path(x, z) :- path(x, y), edge(y, z).`` with order y, x, z it adds
    ``(x, k)`` for each key ``k`` of ``edge[y]`` at once."""
    slots, last = plan.head_slots, plan.depth - 1
    if slots is None or last < 0 or last not in slots:
        return None
    where = [i for i, s in enumerate(slots) if s == last]
    if len(where) > 1:
        return None
    i = where[0]
    before, after = slots[:i], slots[i + 1:]
    if not after and len(before) == 1:
        (s0,) = before
        return lambda b, keys: add_many([(b[s0], k) for k in keys])
    if not before and len(after) == 1:
        (s1,) = after
        return lambda b, keys: add_many([(k, b[s1]) for k in keys])
    if not before and not after:
        return lambda b, keys: add_many([(k,) for k in keys])

    def emit_last(b, keys):
        pre, post = tuple(b[s] for s in before), tuple(b[s] for s in after)
        add_many([pre + (k,) + post for k in keys])
    return emit_last


def product_emitter(plan: RulePlan, add_many, first: int):
    """``emit_product(binding, levels)``: head tuples for every combination of a product tail.

    ``levels[j]`` holds the keys of depth ``first + j``. For
    ``path(x, z) :- path(x, y), edge(y, z).`` with order y, x, z the tail is x, z:
    ``add_many(product(path[y], edge[y]))``."""
    slots = plan.head_slots
    if slots is None:
        return None
    source = [("tail", s - first) if first <= s < plan.depth else ("fixed", s) for s in slots]
    tail_positions = [j for kind, j in source if kind == "tail"]
    if tail_positions == list(range(len(tail_positions))) and len(tail_positions) == len(slots):
        return lambda b, levels: add_many(product(*levels))
    fixed_slots = [j for kind, j in source if kind == "fixed"]
    if source == [("fixed", s) for s in fixed_slots] + [("tail", j) for j in range(len(tail_positions))]:
        def emit_prefixed(b, levels):
            pre = tuple(b[s] for s in fixed_slots)
            add_many([pre + combo for combo in product(*levels)])
        return emit_prefixed

    def emit_general(b, levels):
        add_many([tuple(combo[j] if kind == "tail" else b[j] for kind, j in source)
                  for combo in product(*levels)])
    return emit_general


def _needed_depth(plan: RulePlan, head_names: set[str]) -> int:
    """1 + the deepest depth the head depends on (through assignments too)."""
    needed = {n for n in head_names if n in plan.slots}
    depth_of = {v: i for i, v in enumerate(plan.variable_order)}
    for placed in plan.placed:
        if placed.kind == "assign":
            target = placed.literal.left if isinstance(placed.literal.left, ast.Variable) and \
                placed.literal.left.name not in depth_of else placed.literal.right
            depth_of[target.name] = placed.depth
    deepest = -1
    for name in needed:
        deepest = max(deepest, depth_of.get(name, -1))
    for placed in plan.placed:
        if placed.kind == "assign" and any(v.name in needed for v in ast.variables(placed.literal)):
            deepest = max(deepest, placed.depth)
    return deepest + 1
