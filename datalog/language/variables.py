"""Which variables a conjunctive body binds, and which an aggregate shares with its rule.

A body binds the variables of its positive atoms, then those of ``v = expr`` assignments whose
expression is computable from bound variables (an aggregate's, once its group-by is bound).
The group-by of an aggregate is the set of its variables that occur in the rule outside it.

>>> from datalog.language.parser import parse
>>> body = parse('p(x, n) :- e(x, y), z = y + 1, n = count : { f(x, _) }.').rules[0].body
>>> sorted(bound_variables(body)), [v.name for v in aggregate_outer_variables(body[2].right, body)]
(['n', 'x', 'y', 'z'], ['x'])
"""

from __future__ import annotations

import dataclasses

from datalog.language import ast


def bound_variables(body, outer: frozenset | set = frozenset()) -> set[str]:
    """Variables a conjunctive body binds: positive atom arguments, then ``v = expr`` assignments."""
    bound = set(outer)
    for literal in body:
        if isinstance(literal, ast.Atom):
            bound |= {name for a in literal.args for name in pattern_variables(a)}
    changed = True
    while changed:
        changed = False
        for literal in body:
            target = assignment_target(literal, bound, body)
            if target is not None:
                bound.add(target)
                changed = True
            unpacked = set(unpacked_variables(literal, bound, body)) - bound
            if unpacked:
                bound |= unpacked
                changed = True
    return bound


# ---- records (issue 18): a record or branch term in an atom, or compared with a known
# value, takes the value apart: r([x, [y, _]]) binds x and y, as does p = [x, [y, _]].

def pattern_variables(term) -> list[str]:
    """The variables a term binds when matched against a value: itself if a variable, those
    standing as fields of a record or branch term (not those inside arithmetic)."""
    if isinstance(term, ast.Variable):
        return [term.name]
    if isinstance(term, ast.STRUCTURED):
        return [name for arg in term.args for name in pattern_variables(arg)]
    return []


def unpacked_variables(literal, bound, body) -> list[str]:
    """The variables of ``[x, y] = e`` (either side) that it binds once ``e`` is computable."""
    if not isinstance(literal, ast.Comparison) or literal.op != "=":
        return []
    out = []
    for pattern, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if isinstance(pattern, ast.STRUCTURED) and _computable(expr, bound, body):
            out += pattern_variables(pattern)
    return out


def assignment_target(literal, bound, body) -> str | None:
    """The variable ``v`` if ``literal`` is ``v = expr`` (either side) binding a new variable."""
    if not isinstance(literal, ast.Comparison) or literal.op != "=":
        return None
    for var, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if isinstance(var, ast.Variable) and var.name not in bound and _computable(expr, bound, body):
            return var.name
    return None


def _computable(expr, bound, body) -> bool:
    if isinstance(expr, ast.Aggregate):
        return all(v.name in bound for v in aggregate_outer_variables(expr, body))
    if any(isinstance(t, ast.Wildcard) for t in ast.subterms(expr)):
        return False
    return all(v.name in bound for v in free_variables(expr))


def aggregate_outer_variables(agg: ast.Aggregate, body) -> list[ast.Variable]:
    """Variables of an aggregate that also occur in the clause body outside it: its group-by."""
    outside = {v.name for lit in body for v in _variables_outside(lit, agg)}
    return [v for v in ast.variables(agg.body) + ast.variables(agg.target) if v.name in outside]


def _variables_outside(node, agg):
    if node is agg:
        return []
    if isinstance(node, ast.Comparison):
        # `a = max a : { r(a) }`: the a the aggregate assigns is not its group-by (Soufflé)
        if node.op == "=" and (node.left is agg or node.right is agg):
            return []
        return _variables_outside(node.left, agg) + _variables_outside(node.right, agg)
    if isinstance(node, ast.Aggregate):
        # another aggregate's variables are its own: `t = sum a : {s(a)}, m = min a : {s(a)}`
        # shares no a between the two (a variable outside both is found where it occurs)
        return []
    if isinstance(node, (ast.Atom, ast.Functor)):
        return [v for a in node.args for v in _variables_outside(a, agg)]
    if isinstance(node, ast.BinaryOp):
        return _variables_outside(node.left, agg) + _variables_outside(node.right, agg)
    if isinstance(node, ast.Negate):
        return _variables_outside(node.operand, agg)
    return ast.variables(node)


def free_variables(term) -> list[ast.Variable]:
    """Variables of a term outside any aggregate body (an aggregate's group-by variables excepted)."""
    return [t for t in ast.subterms(term) if isinstance(t, ast.Variable)]


def substituted(node, replace_variable):
    """``node`` (any AST node or tuple of them) with every variable ``v`` replaced by
    ``replace_variable(v)``, in aggregate bodies, records and branches too. Constants are left
    whole (a record constant is a tuple of values, not of terms)."""
    if isinstance(node, ast.Variable):
        return replace_variable(node)
    if type(node) is tuple:
        return tuple(substituted(child, replace_variable) for child in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, ast.Constant)):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name != "span" and (type(value) is tuple or dataclasses.is_dataclass(value)):
            changes[f.name] = substituted(value, replace_variable)
    return dataclasses.replace(node, **changes)
