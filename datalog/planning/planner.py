"""The planner: a clause (or an aggregate's body) -> its :class:`RulePlan`.

Steps, in order: lift expressions out of atoms (:func:`lift_atom_expressions`), choose the
variable order (:mod:`datalog.planning.order`), give each positive atom its index (an atom
with no variable to open becomes a Lookup), place every other literal as a filter at the
first depth where its variables are bound -- negations as Lookups, ``v = expr`` as an
Assign, the rest as a Compare; an aggregate side is planned as an AggregatePlan -- and find
the depth from which variables are existential.

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> c = check(parse('.decl e(a: number, b: number)\\n.decl t(x: number, y: number, z: number)\\n'
...             't(x, y, z) :- e(x, y), e(y, z), e(z, x).'))
>>> p = plan_clause(c.clauses[0], c.schema, 0)
>>> p.variable_order, [a.order for a in p.atoms]
(['x', 'y', 'z'], [(0, 1), (0, 1), (1, 0)])
"""

from __future__ import annotations

from dataclasses import replace

from datalog.language import ast
from datalog.language.variables import aggregate_outer_variables, pattern_variables
from datalog.language.rewrites import Clause, dnf, lift_atom_expressions, name_wildcards
from datalog.planning.backend import choose_backend, pragma_backend
from datalog.planning.order import pragma_order, variable_order
from datalog.planning.plan import AggregatePlan, Assign, AtomPlan, Compare, Generator, Lookup, RulePlan, Unpack


def plan_clause(clause: Clause, schema, index: int | None = None, pragma: list[str] | None = None,
                backend=None) -> RulePlan:
    """The plan of a clause with a body; ``pragma`` forces a variable order (else its rule's
    ``// @order``), ``backend`` is the one chosen for it (:mod:`datalog.planning.backend`)."""
    order = pragma if pragma is not None else pragma_order(clause)
    pragma_backend(clause)                            # // @backend thetajoin | lftj, checked here
    body = plan_body(clause.body, schema, [], order, clause)
    head_names = {v.name for v in ast.variables(clause.head)}
    return replace(body, index=index, head=clause.head, head_types=tuple(schema[clause.head.relation].types),
                   needed=_needed_depth(body, head_names), backend=backend)


def plan_body(body: tuple, schema, params: list[str], order: list[str] | None, clause) -> RulePlan:
    """Plan a conjunctive body; ``params`` are variables bound before it (an aggregate's group-by)."""
    semis = semijoin_atoms(body) if order is None else []     # a forced order names its atoms' variables
    body = lift_atom_expressions(body)
    atoms = [lit for lit in body if isinstance(lit, ast.Atom) and lit not in semis]
    variables = variable_order(atoms, params, order, clause)
    ranges = _generated(body, set(variables) | set(params))
    body = tuple(lit for lit in body if all(lit is not g for g, _, _ in ranges))
    generators = tuple(Generator(len(variables) + i, literal, target, args)
                       for i, (literal, target, args) in enumerate(_generation_order(ranges, body, variables, params)))
    variables = variables + [g.target for g in generators]
    slots = {v: i for i, v in enumerate(variables)}
    for name in params:
        slots[name] = len(slots)
    depth_of = {v: i for i, v in enumerate(variables)}
    depth_of.update({p: -1 for p in params})
    opened, filters = [], []
    for atom in atoms:
        planned = _plan_atom(atom, depth_of)
        (opened if isinstance(planned, AtomPlan) else filters).append(planned)
    filters += _place_literals(body, depth_of, slots, schema, clause, semis)
    return RulePlan(clause, None, variables, slots, tuple(opened), tuple(filters), None,
                    needed=len(variables), params=tuple(params), generators=generators)



def plan_delta(plan: RulePlan, position: int) -> RulePlan | None:
    """The rule of ``plan`` with its ``position``-th opened atom given: the body without that
    atom, whose variables are parameters (bound from one of its tuples before the body), the
    same head. ``path(x, z) :- path(x, y), edge(y, z).`` given path(x, y) is ``edge(y, z)``
    read at the prefix y. None when the atom holds a term other than a variable, constant or
    wildcard (a record pattern), or appears in the body twice."""
    given = plan.atoms[position].atom
    body = lift_atom_expressions(plan.clause.body)
    if not all(isinstance(a, (ast.Variable, ast.Constant, ast.Wildcard)) for a in given.args) or \
            sum(literal == given for literal in body) != 1:
        return None
    rest = tuple(literal for literal in body if literal != given)
    params = list(dict.fromkeys(a.name for a in given.args if isinstance(a, ast.Variable)))
    delta = plan_body(rest, None, params, None, plan.clause)
    head_names = {v.name for v in ast.variables(plan.head)}
    return replace(delta, index=plan.index, head=plan.head, head_types=plan.head_types,
                   needed=_needed_depth(delta, head_names), backend=plan.backend)

# ---- functors (issue 18): ranges with variable bounds

def _generated(body, bound: set[str]) -> list[tuple]:
    """The ``x = range(...)`` of the body whose x no atom binds: (literal, x, bounds) each."""
    out = []
    for lit in body:
        if isinstance(lit, ast.Comparison) and lit.op == "=":
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, ast.Variable) and var.name not in bound and \
                        isinstance(expr, ast.Functor) and expr.name == "range":
                    out.append((lit, var.name, expr.args))
                    break
    return out


def _generation_order(ranges, body, variables, params) -> list[tuple]:
    """The generated variables after the atoms', each once its bounds can be computed (through
    assignments too: ``z = v * 4, y = range(z, z + 3)``)."""
    known, ordered, pending = set(variables) | set(params), [], list(ranges)
    assigns = [lit for lit in body if isinstance(lit, ast.Comparison) and lit.op == "="]
    while pending:
        _close(known, assigns, body)
        ready = [r for r in pending if all(v.name in known for v in ast.variables(r[2]))]
        if not ready:
            ordered += pending                    # the safety check refused such a rule before
            break
        ordered.append(ready[0])
        known.add(ready[0][1])
        pending.remove(ready[0])
    return ordered


def _close(known: set[str], assigns, body) -> None:
    """Add the targets of the assignments computable from ``known``."""
    changed = True
    while changed:
        changed = False
        for lit in assigns:
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, ast.Variable) and var.name not in known and \
                        all(n in known for n in _term_dependencies(expr, body)):
                    known.add(var.name)
                    changed = True
                    break


# ---------------------------------------------------------------- atoms

def semijoin_atoms(body: tuple) -> list[ast.Atom]:
    """Records (issue 18): the atoms whose variables a pattern in another atom binds -- ``q(x)``
    in ``p([x, _]), q(x)`` -- tested as lookups once the pattern is matched rather than joined
    (a join level over q under every p tuple made the rule a product: 30 s at 1,000 rows each).
    Also through the equalities that follow from the pattern: ``p([a, _]), [a] = [x], y = x + 1,
    q(x, y)`` (what inlining a relation with record arguments writes: Soufflé's inline_nqueens)."""
    unpacked = {n for lit in body if isinstance(lit, ast.Atom) for arg in lit.args
                if isinstance(arg, ast.STRUCTURED) for n in pattern_variables(arg)}
    _follow_equalities(unpacked, body)
    out = []
    for lit in body:
        if isinstance(lit, ast.Atom) and all(isinstance(a, _PLAIN) for a in lit.args):
            names = {a.name for a in lit.args if isinstance(a, ast.Variable)}
            if names and names <= unpacked:
                out.append(lit)
    return out


def _follow_equalities(known: set[str], body: tuple) -> None:
    """Add to ``known`` what the body's equalities bind from it: the fields of a pattern matched
    against a value computed from known variables, the variable assigned such a value. (From
    known variables only: ``u(v), v = 3`` stays a join, its plan as before.)"""
    equalities = [lit for lit in body if isinstance(lit, ast.Comparison) and lit.op == "="]
    grown = bool(known)
    while grown:
        before = len(known)
        for lit in equalities:
            for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                names = {v.name for v in ast.variables(other)}
                if names and names <= known and _computed(other):
                    known.update(pattern_variables(side))
        grown = len(known) != before


def _computed(term) -> bool:
    """Whether a term is a value to compute (``$B(_, z)`` is a pattern, an aggregate is planned)."""
    return not any(isinstance(node, (ast.Aggregate, ast.Wildcard)) for node in ast.walk(term))


_PLAIN = (ast.Variable, ast.Wildcard, ast.Constant)


def _plan_atom(atom: ast.Atom, depth_of) -> AtomPlan | Lookup:
    """The atom's index: constant (and parameter) columns, variables by depth, wildcards; an
    atom without a variable to open (``r(1, _)``, ``r()``) is a Lookup before any depth."""
    prefix_cols, var_cols, wild_cols = [], [], []
    for col, arg in enumerate(atom.args):
        if isinstance(arg, ast.Constant) or (isinstance(arg, ast.Variable) and depth_of[arg.name] < 0):
            prefix_cols.append(col)
        elif isinstance(arg, ast.Variable):
            var_cols.append(col)
        else:
            wild_cols.append(col)
    var_cols.sort(key=lambda c: (depth_of[atom.args[c].name], c))
    order = tuple(prefix_cols + var_cols + wild_cols)
    prefix = tuple(atom.args[c] for c in prefix_cols)
    if not var_cols:
        return Lookup(-1, atom, atom.relation, order, prefix, negated=False)
    return AtomPlan(atom.relation, order, prefix, tuple(depth_of[atom.args[c].name] for c in var_cols), atom)


# ---------------------------------------------------------------- other literals

def _place_literals(body, depth_of, slots, schema, clause, semis=()) -> list:
    """Every literal that is not a positive atom (and every atom of ``semis``), as a filter at
    its depth; an assignment binds a new slot, so literals that read its variable wait for it
    (the safety check made sure every one can be placed)."""
    pending, placed = [lit for lit in body if not isinstance(lit, ast.Atom)] + list(semis), []
    for _ in range(len(pending) + 1):
        if not pending:
            return placed
        later = []
        for literal in pending:
            filter_ = _place(literal, depth_of, slots, schema, clause, body)
            if filter_ is None:
                later.append(literal)
            else:
                placed.append(filter_)
        pending = later
    raise AssertionError(f"unplaceable literals {pending}: the safety check should have caught them")


def _place(literal, depth_of, slots, schema, clause, body):
    """The literal's filter, or None while a variable it reads is not bound yet."""
    if isinstance(literal, ast.Atom):                   # a semijoin atom: q(x) once x is unpacked
        names = [v.name for v in ast.variables(literal)]
        if any(n not in depth_of for n in names):
            return None
        lookup = _negation(ast.Negation(literal, literal.span), _depth(names, depth_of))
        return replace(lookup, literal=literal, negated=False)
    if isinstance(literal, ast.Negation):
        names = [v.name for v in ast.variables(literal.atom)]
        if any(n not in depth_of for n in names):
            return None
        return _negation(literal, _depth(names, depth_of))
    assert isinstance(literal, ast.Comparison)
    unpack = _unpack(literal, depth_of, slots, body)
    if unpack is not _NOT_A_PATTERN:
        return unpack
    for var, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if literal.op == "=" and isinstance(var, ast.Variable) and var.name not in depth_of:
            deps = _term_dependencies(expr, body)
            if any(n not in depth_of for n in deps):
                return None
            depth = _depth(deps, depth_of)
            value = _value(expr, slots, schema, clause, body, depth_of)
            slots[var.name] = len(slots)
            depth_of[var.name] = depth
            return Assign(depth, literal, var.name, value)
    deps = _term_dependencies(literal.left, body) + _term_dependencies(literal.right, body)
    if any(n not in depth_of for n in deps):
        return None
    return Compare(_depth(deps, depth_of), literal, literal.op,
                   _value(literal.left, slots, schema, clause, body, depth_of),
                   _value(literal.right, slots, schema, clause, body, depth_of))


_NOT_A_PATTERN = object()


def _unpack(literal, depth_of, slots, body):
    """Records (issue 18): ``e = [x, y]`` (either way round) whose pattern has variables not yet
    bound is an Unpack once ``e`` and the rest of the pattern are computable (None until
    then); any other comparison is _NOT_A_PATTERN."""
    if literal.op != "=":
        return _NOT_A_PATTERN
    for pattern, expr in ((literal.right, literal.left), (literal.left, literal.right)):
        if isinstance(pattern, ast.Wildcard):               # `_ = e`: e is computed, and holds
            deps = _term_dependencies(expr, body)
            return None if any(n not in depth_of for n in deps) else \
                Unpack(_depth(deps, depth_of), literal, None, expr, pattern, ())
        if not isinstance(pattern, ast.STRUCTURED):
            continue
        targets = list(dict.fromkeys(n for n in pattern_variables(pattern) if n not in depth_of))
        if not targets and not _has_wildcard(pattern):
            continue                    # a value to build and compare
        deps = _term_dependencies(expr, body) + [n for n in _term_dependencies(pattern, body) if n not in targets]
        if any(n not in depth_of for n in deps):
            return None
        depth = _depth(deps, depth_of)
        for name in targets:
            slots[name] = len(slots)
            depth_of[name] = depth
        return Unpack(depth, literal, targets[0] if targets else None, expr, pattern, tuple(targets))
    return _NOT_A_PATTERN


def _has_wildcard(pattern) -> bool:
    """Whether ``_`` stands as a field of the pattern (it matches anything there)."""
    return any(isinstance(arg, ast.Wildcard) or (isinstance(arg, ast.STRUCTURED) and _has_wildcard(arg))
               for arg in pattern.args)


def _negation(literal: ast.Negation, depth: int) -> Lookup:
    """``!r(x, _, 3)``: a lookup of r's index with the bound columns first."""
    atom = literal.atom
    # records (issue 18): a pattern with `_` ([x, _]) is no key; its rows below the path are matched
    partial = [i for i, a in enumerate(atom.args) if isinstance(a, ast.STRUCTURED) and _has_wildcard(a)]
    bound = [i for i, a in enumerate(atom.args) if not isinstance(a, ast.Wildcard) and i not in partial]
    order = tuple(bound + partial + [i for i, a in enumerate(atom.args) if isinstance(a, ast.Wildcard)])
    return Lookup(depth, literal, atom.relation, order, tuple(atom.args[i] for i in bound), negated=True,
                  patterns=tuple(atom.args[i] for i in partial))


def _depth(names, depth_of) -> int:
    return max((depth_of[n] for n in names), default=-1)


def _term_dependencies(term, body) -> list[str]:
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


def _value(term, slots, schema, clause, body, depth_of=None):
    """A side of a comparison: the term itself, or an aggregate's plan (``depth_of``: what is
    bound where it is placed; depth -1 marks the enclosing aggregate's group-by)."""
    if isinstance(term, ast.Aggregate):
        enclosing = {n for n, d in (depth_of or {}).items() if d == -1}
        return plan_aggregate(term, schema, clause, body, enclosing)
    return term


# ---------------------------------------------------------------- aggregates

def plan_aggregate(agg: ast.Aggregate, schema, clause, body, enclosing=frozenset()) -> AggregatePlan:
    """``v = kind target : { body }`` grouped by the outer variables the body shares with the clause
    and, for an aggregate nested in another's body, with the enclosing one's group-by
    (``enclosing``: ``p(x, m) :- q(x), m = min c : { r(c), s = sum v : { t(x, v) }, ... }``: the
    inner sum is per x, though x occurs nowhere else in the outer aggregate's body)."""
    outer = list(dict.fromkeys([v.name for v in aggregate_outer_variables(agg, body)] +
                               [v.name for v in ast.variables(agg) if v.name in enclosing]))
    alternatives = dnf(agg.body)
    if scanned(alternatives):
        alternatives = [name_wildcards(alternatives[0])]
    return AggregatePlan(agg, tuple(outer), tuple(plan_body(alt, schema, outer, None, clause)
                                                  for alt in alternatives))


def scanned(alternatives) -> bool:
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


# ---------------------------------------------------------------- existential depths

def _needed_depth(plan: RulePlan, head_names: set[str]) -> int:
    """1 + the deepest depth the head depends on (through assignments too); every depth when the
    rule counts with autoinc() (each binding is a tuple of its own)."""
    if counts(plan.clause):
        return plan.depth
    needed = {n for n in head_names if n in plan.slots}
    depth_of = {v: i for i, v in enumerate(plan.variable_order)}
    assigns = [f for f in plan.filters if isinstance(f, Assign)]
    for f in assigns:
        depth_of[f.target] = f.depth
    deepest = max((depth_of.get(name, -1) for name in needed), default=-1)
    for f in assigns:
        if any(v.name in needed for v in ast.variables(f.literal)):
            deepest = max(deepest, f.depth)
    return deepest + 1


def counts(clause) -> bool:
    """Whether the clause uses autoinc() (or $): each of its bindings takes a fresh number."""
    return clause is not None and any(isinstance(t, ast.Functor) and t.name == "autoinc"
                                      for lit in (clause.head, *clause.body) for t in _terms_of(lit))


def generates(clause) -> bool:
    """Whether the clause (an aggregate body in it too) generates a range with variable bounds
    (constant ranges were made facts by the rewrite)."""
    return clause is not None and _has_range((clause.head, clause.body))


def _has_range(node) -> bool:
    if isinstance(node, ast.Functor) and node.name == "range":
        return True
    if isinstance(node, tuple):
        return any(_has_range(n) for n in node)
    if isinstance(node, ast.Aggregate):
        return _has_range((node.target, node.body))
    if isinstance(node, (ast.Atom, ast.Functor)):
        return _has_range(node.args)
    if isinstance(node, (ast.Comparison, ast.BinaryOp)):
        return _has_range((node.left, node.right))
    if isinstance(node, ast.Negate):
        return _has_range(node.operand)
    return False


def _terms_of(literal):
    atoms = (literal.atom,) if isinstance(literal, ast.Negation) else (literal,)
    for node in atoms:
        sides = node.args if isinstance(node, ast.Atom) else (node.left, node.right)
        for side in sides:
            yield from ast.subterms(side)


# ---------------------------------------------------------------- the program

def plan_program(clauses: list[Clause], strata, schema) -> dict[int, RulePlan]:
    """The plan of every clause with a body, keyed by the clause's index, each with its backend
    (chosen per stratum: a recursive one is DRed's)."""
    plans = {c.index: plan_clause(c, schema, c.index) for c in clauses if c.body}
    for stratum in strata:
        for clause in stratum.clauses:
            if clause.body:
                plans[clause.index] = replace(plans[clause.index],
                                              backend=choose_backend(clause, stratum.recursive))
    return plans
