"""Types: the column types of undeclared relations inferred from facts, heads and uses, every
rule type-checked, and the types of ``auto`` columns settled by loaded values.

Types are ``number``, ``unsigned``, ``float`` and ``symbol`` (:mod:`datalog.language.types`);
numbers and floats mix (the result is a float), symbols only with symbols. ``unsigned`` mixes
with nothing, as in Soufflé (``x + y`` or ``x < y`` of a number and an unsigned is a type
error), except that an unsuffixed literal such as ``1`` is polymorphic there: it is an unsigned
where it stands next to one (``x + 1``, ``x > 0``, an unsigned column). A column nothing
constrains is ``auto`` until values are loaded (:func:`settle_types`). :func:`mark_unsigned`
then marks the operations on unsigned values (``BinaryOp.unsigned`` ...), which the evaluators
compute modulo 2^64.

>>> from datalog.language.parser import parse
>>> from datalog.language.checks import check
>>> checked = check(parse('e(1, "a"). p(x, y) :- e(x, y), x > 0.'))
>>> checked.schema["p"].types
['number', 'symbol']
>>> checked = check(parse('.input e p(x) :- e(x).'))         # e's column: nothing says
>>> checked.schema["p"].types, settle_types(checked, {"e": ["symbol"]}).schema["p"].types
(['auto'], ['symbol'])
"""

from __future__ import annotations

from dataclasses import replace

from datalog.language import ast, recordtypes
from datalog.language.errors import NumberOutOfRange, TypeMismatch
from datalog.language.mixed import MIXED, mixed_constants, widen
from datalog.language.numbers import INT_MAX, INT_MIN
from datalog.language.rewrites import dnf
from datalog.language.types import AUTO, compatible, value_type
from datalog.language.variables import assignment_target


def infer_types(ctx) -> None:
    """Column types of undeclared relations, from facts, heads and uses; unknown ones are auto.
    An undeclared column given a number and a symbol is mixed (:mod:`datalog.language.mixed`)."""
    for _ in range(1 + 2 * sum(info.arity for info in ctx.schema.values())):
        if not any([_infer_clause(ctx, clause) for clause in ctx.clauses]):
            break
    for info in ctx.schema.values():
        info.types = [t or AUTO for t in info.types]


def _infer_clause(ctx, clause) -> bool:
    changed = False
    env = _atom_types(ctx, clause.body, {}, lenient=True)
    negated = [lit.atom for lit in clause.body if isinstance(lit, ast.Negation)]
    for atom in _positive_atoms(clause.body) + [clause.head] + negated:
        info = ctx.schema[atom.relation]
        for i, arg in enumerate(atom.args):
            t = _type_of(ctx, arg, env, lenient=True)
            if t in (None, AUTO):
                continue
            if info.types[i] is None and atom not in negated:
                info.types[i] = t
                changed = True
            elif not info.declared and info.types[i] != MIXED and widen(info.types[i], t):
                info.types[i] = MIXED
                changed = True
    return changed


def settle_types(checked, settled: dict[str, list[str]]):
    """The checked program again, with the ``auto`` columns that loaded values fixed
    (``settled``: relation -> its column types) and the types inferred and checked again with
    them. ``checked`` is not changed (so on a type error nothing is)."""
    schema = {name: replace(info, types=settled.get(name) or [None if t == AUTO else t for t in info.types])
              for name, info in checked.schema.items()}
    ctx = replace(checked, schema=schema, clauses=list(checked.clauses))
    infer_types(ctx)
    check_types(ctx)
    mixed_constants(ctx)
    return ctx


def check_types(ctx) -> None:
    for clause in ctx.clauses:
        env = _atom_types(ctx, clause.body, {}, lenient=False)
        _check_literals(ctx, clause.body, env)
        info = ctx.schema[clause.head.relation]
        for column, arg in zip(info.types, clause.head.args):
            _expect(ctx, arg, column, env, f"column of {info}")


def _atom_types(ctx, body, env, lenient) -> dict[str, str]:
    env = dict(env)
    for atom in _positive_atoms(body):
        info = ctx.schema[atom.relation]
        for column, arg in zip(info.types, atom.args):
            _bind_pattern(ctx, arg, column, env, lenient)
            if isinstance(arg, ast.Variable) and column not in (None, AUTO):
                previous = env.get(arg.name)
                if previous is not None and not compatible(previous, column) and not lenient:
                    raise TypeMismatch(f"variable {arg.name} is {_a(previous)} elsewhere but {_a(column)} in "
                                       f"{info}", arg.span)
                if lenient and not info.declared and previous not in (None, MIXED) and widen(previous, column):
                    env[arg.name] = MIXED             # p(x), s(x): a number and a symbol column
                elif previous is None or previous == "number" or column == MIXED:
                    env[arg.name] = column
    # a target is typed once, so passes stop when one types nothing new (linear for a body
    # without assignments: a rule of 300 atoms was 3 s of quadratic passes, issue 23)
    assignments = [lit for lit in body if isinstance(lit, ast.Comparison) and lit.op == "="]
    for _ in range(len(assignments) + 1):
        typed = len(env)
        for literal in assignments:
            target = assignment_target(literal, env, body)
            if target is not None:
                expr = literal.right if isinstance(literal.left, ast.Variable) and \
                    literal.left.name == target else literal.left
                t = _type_of(ctx, expr, env, lenient)
                if t is not None:
                    env[target] = t
        for literal in assignments:
            for pattern, other in ((literal.left, literal.right), (literal.right, literal.left)):
                _bind_pattern(ctx, pattern, _type_of(ctx, other, env, True), env, lenient)
                if isinstance(pattern, ast.Variable) and isinstance(other, ast.Variable) and \
                        env.get(other.name) == MIXED and env.get(pattern.name) != MIXED:
                    env[pattern.name] = MIXED        # x = y where y is mixed: so is x
                    typed = -1
        if len(env) == typed:
            break
    return env


def _bind_pattern(ctx, term, column, env, lenient) -> None:
    """Records (issue 18): the variables of ``[x, y]`` or ``$B(x)`` in a typed place take the
    types of its fields."""
    if not isinstance(term, ast.STRUCTURED):
        return
    try:
        recordtypes.bind_pattern(term, column, ctx.aliases, env)
    except TypeMismatch:
        if not lenient:
            raise


def _check_literals(ctx, body, env) -> None:
    for literal in body:
        if isinstance(literal, ast.Comparison):
            left, right = (_type_of(ctx, s, env, False) for s in (literal.left, literal.right))
            if left and right and not (_fits(literal.left, left, right) or _fits(literal.right, right, left)):
                raise TypeMismatch(f"cannot compare {_a(left)} with {_a(right)} in {literal}", literal.span)
            for side, other in ((literal.left, right), (literal.right, left)):
                if other and isinstance(side, (ast.Nil, *ast.STRUCTURED)):      # records (issue 18)
                    _expect(ctx, side, other, env, "other side")
            if MIXED in (left, right):
                _check_mixed_comparison(literal, left, right)
            if literal.op in _CONSTRAINTS and {left, right} - {"symbol", None}:
                raise TypeMismatch(f"{literal.op.removeprefix('not_')} takes two symbols: {literal}", literal.span)
            if literal.op not in ("=", "!=") and "symbol" in (left, right) and False:
                pass
        atoms = [literal.atom] if isinstance(literal, ast.Negation) else \
            [literal] if isinstance(literal, ast.Atom) else []
        for atom in atoms:
            info = ctx.schema[atom.relation]
            for column, arg in zip(info.types, atom.args):
                _expect(ctx, arg, column, env, f"column of {info}")
                if column == MIXED and not (isinstance(arg, (ast.Constant, ast.Wildcard)) or
                                              isinstance(arg, ast.Variable) and env.get(arg.name) == MIXED):
                    raise TypeMismatch(f"{arg} is {_a(_type_of(ctx, arg, env, True))} computed in the rule, but the "
                                       f"column of {info} holds numbers and symbols: a rule looks up a mixed column "
                                       "by a variable that stands in mixed columns, or a constant", arg.span)


def _check_mixed_comparison(literal, left, right) -> None:
    """A value of a mixed column is compared with = and != only, and equated with a variable or
    a constant only (a computed value would then be looked up in a mixed column)."""
    side = literal.left if left == MIXED else literal.right
    other = literal.right if left == MIXED else literal.left
    if literal.op not in ("=", "!="):
        raise TypeMismatch(f"{side} holds numbers and symbols (a mixed column), which are compared with "
                           f"= and != only, not with {literal.op}", literal.span)
    if literal.op == "=" and not isinstance(other, (ast.Variable, ast.Constant)):
        raise TypeMismatch(f"{side} holds numbers and symbols (a mixed column); equate it with a variable or "
                           f"a constant, not with {other}", literal.span)


def _no_mixed(operands, types, term, what: str) -> None:
    """Arithmetic and functors take numbers or symbols, not the values of a mixed column."""
    for operand, t in zip(operands, types):
        if t == MIXED:
            raise TypeMismatch(f"{what} on {operand}, which may be a number or a symbol (it stands in a mixed "
                               f"column): {term}", getattr(term, "span", None))


def _a(type_) -> str:
    """A type with its article: "a number", "an unsigned"."""
    return f"{'an' if str(type_)[:1] in 'aeiou' else 'a'} {type_}"


def _adapts(term) -> bool:
    """An unsuffixed non-negative integer literal, or an integer operation on such literals only
    (``1 + 0b1``, ``bnot(1)``): Soufflé's numeric constants are polymorphic, so ``1`` is an
    unsigned where an unsigned is wanted, and ``1 + 0b1`` is then an unsigned addition."""
    if isinstance(term, ast.Constant):
        return type(term.value) is int and not term.unsigned and term.value >= 0
    if isinstance(term, ast.BinaryOp):
        return _adapts(term.left) and _adapts(term.right)
    if isinstance(term, ast.Functor) and term.name in ("bnot", "lnot", "min", "max"):
        return bool(term.args) and all(map(_adapts, term.args))
    return False


def _fits(term, t, want) -> bool:
    """Whether ``term``, of type ``t``, may stand where a ``want`` is expected (a mixed column
    takes numbers and symbols; a mixed value goes only where a mixed one may)."""
    if MIXED in (t, want):
        return want == MIXED and t in (MIXED, "number", "symbol")
    return compatible(t, want) or (want == "unsigned" and _adapts(term))


def _expect(ctx, term, column, env, what) -> None:
    if isinstance(term, (ast.Nil, *ast.STRUCTURED)):     # records (issue 18): field by field
        for arg, field in recordtypes.parts(term, column, ctx.aliases):
            _expect(ctx, arg, field, env, f"field of {column}")
        return
    t = _type_of(ctx, term, env, False)
    if t and column and not _fits(term, t, column):
        raise TypeMismatch(f"{term} is {_a(t)} but the {what} is {_a(column)}", getattr(term, "span", None))


_FUNCTORS = {  # name: (argument type, result type); "numeric": number or float; "any": any type
    "cat": ("symbol", "symbol"), "strlen": ("symbol", "number"), "to_number": ("any", "number"),
    "to_string": ("any", "symbol"), "to_float": ("any", "float"),
    # ---- functors (issue 18): conversions and ord (bnot and lnot are typed as operators)
    "ord": ("any", "number"),
    "itof": ("integer", "float"), "utof": ("unsigned", "float"), "ftoi": ("numeric", "number"),
    "ftou": ("numeric", "unsigned"), "itou": ("integer", "unsigned"), "utoi": ("unsigned", "number"),
    "to_unsigned": ("any", "unsigned"), "autoinc": ("number", "number"),
}


_ARITY = {"strlen": (1, 1), "to_number": (1, 1), "to_string": (1, 1), "to_float": (1, 1),
          "substr": (3, 3), "cat": (1, 99), "min": (1, 99), "max": (1, 99), "range": (2, 3), "autoinc": (0, 0),
          **{name: (1, 1) for name in ("ord", "bnot", "lnot", "itof", "utof", "ftoi", "ftou", "itou", "utoi",
                                       "to_unsigned")}}

_CONSTRAINTS = ("match", "contains", "not_match", "not_contains")

# Soufflé's bitwise and logical operators: on integers only, an integer result
_INTEGER_OPS = ("band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor")


def _type_of(ctx, term, env, lenient) -> str | None:
    """The type of a term, or None if not yet known; raises TypeMismatch on misuse."""
    if isinstance(term, ast.Constant):
        return "unsigned" if term.unsigned else value_type(term.value)
    if isinstance(term, ast.Variable):
        return env.get(term.name)
    if isinstance(term, ast.Wildcard):
        return None
    if isinstance(term, ast.Negate):
        if _type_of(ctx, term.operand, env, lenient) == "unsigned" and not lenient:
            raise TypeMismatch(f"unary minus of an unsigned in {term} (Soufflé negates numbers and floats only)",
                               term.span)
        return _numeric(ctx, [term.operand], env, lenient, term)
    if isinstance(term, ast.BinaryOp):
        if term.op in _INTEGER_OPS:
            return _integer(ctx, [term.left, term.right], env, lenient, term)
        if term.op == "+" and _joins_symbols(ctx, term, env):
            return "symbol"
        return _numeric(ctx, [term.left, term.right], env, lenient, term)
    if isinstance(term, ast.Functor):
        return _functor_type(ctx, term, env, lenient)
    if isinstance(term, ast.Aggregate):
        return _aggregate_type(ctx, term, env, lenient)
    return _record_type(ctx, term, lenient)


def _record_type(ctx, term, lenient) -> str | None:
    """Records (issue 18): a branch term is of its ADT, ``as(x, T)`` of T; a record term and
    nil take the type of where they stand."""
    try:
        if isinstance(term, ast.BranchTerm):
            return recordtypes.branch_type(ctx.aliases, term)
        if isinstance(term, ast.Cast):
            return recordtypes.cast_type(ctx.aliases, term)
    except TypeMismatch:
        if not lenient:
            raise
    return None


def _numeric(ctx, operands, env, lenient, term) -> str | None:
    types = [_type_of(ctx, o, env, lenient) for o in operands]
    if not lenient:
        _no_mixed(operands, types, term, "arithmetic")
    composite = [t for t in types if recordtypes.is_composite(t)]
    if composite and not lenient:
        raise TypeMismatch(f"arithmetic on a value of the {composite[0]} type in {term}", term.span)
    if "symbol" in types and not lenient:
        raise TypeMismatch(f"arithmetic on a symbol in {term}; use cat() to join symbols", term.span)
    if _unsigned_operands(operands, types, lenient, term):
        return "unsigned"
    if "float" in types:
        return "float"
    return "number" if all(types) else None


def _unsigned_operands(operands, types, lenient, term) -> bool:
    """Whether the operation is on unsigned values: an operand is an unsigned (the others are
    too, or literals that adapt); mixing unsigned with a number or a float is Soufflé's type
    error (convert with itou/utoi/utof/ftou)."""
    fixed = [t for o, t in zip(operands, types) if t and not _adapts(o)]
    if "unsigned" not in fixed:
        return False
    other = [t for t in fixed if t != "unsigned"]
    if other and not lenient:
        raise TypeMismatch(f"{term} mixes an unsigned and {_a(other[0])}; convert one with "
                           f"{'itou or utoi' if other[0] == 'number' else 'utof or ftou'}", term.span)
    return True


def _joins_symbols(ctx, term, env) -> bool:
    """``"a" + s``: Soufflé's + of two symbols is their concatenation."""
    types = [_type_of(ctx, side, env, True) for side in (term.left, term.right)]
    return "symbol" in types and all(t in ("symbol", None) for t in types)


def _integer(ctx, operands, env, lenient, term) -> str | None:
    types = [_type_of(ctx, o, env, lenient) for o in operands]
    if not lenient:
        _no_mixed(operands, types, term, "an integer operation")
    wrong = [t for t in types if t in ("symbol", "float")]
    if wrong and not lenient:
        raise TypeMismatch(f"{getattr(term, 'op', None) or term.name} needs integers, got a {wrong[0]} "
                           f"in {term}", term.span)
    return "unsigned" if _unsigned_operands(operands, types, lenient, term) else "number"


def _functor_type(ctx, term: ast.Functor, env, lenient) -> str | None:
    low, high = _ARITY[term.name]
    if not low <= len(term.args) <= high and not lenient:
        raise TypeMismatch(f"{term.name} takes {low if low == high else f'{low} or more'} arguments, "
                           f"got {len(term.args)}", term.span)
    types = [_type_of(ctx, a, env, lenient) for a in term.args]
    if not lenient and _FUNCTORS.get(term.name, (None,))[0] != "any":
        _no_mixed(term.args, types, term, term.name)
    if term.name in ("bnot", "lnot"):
        return _integer(ctx, list(term.args), env, lenient, term)
    if term.name in ("min", "max"):
        known = [t for t in types if t]
        if _unsigned_operands(term.args, types, lenient, term):
            return "unsigned"
        if not lenient and any(not compatible(known[0], t) for t in known):
            raise TypeMismatch(f"{term.name} of mixed types in {term}", term.span)
        return "float" if "float" in known else (known[0] if known and len(known) == len(types) else None)
    if term.name == "range":
        if not lenient and "symbol" in types:
            raise TypeMismatch(f"range needs numbers, got a symbol in {term}", term.span)
        if _unsigned_operands(term.args, types, lenient, term):
            return "unsigned"
        return "float" if "float" in types else ("number" if all(types) else None)
    if term.name == "substr":
        expected = ["symbol", "number", "number"]
        result = "symbol"
    else:
        arg, result = _FUNCTORS[term.name]
        expected = [arg] * len(types)
    for want, got, node in zip(expected, types, term.args):
        ok = got is None or want == "any" or \
            (want == "numeric" and got != "symbol" and not recordtypes.is_composite(got)) or \
            (want == "integer" and got == "number") or _fits(node, got, want)
        if not ok and not lenient:
            raise TypeMismatch(f"{term.name} expects {_a(want if want in _TYPES else 'number')} here, "
                               f"got {_a(got)}", getattr(node, "span", None) or term.span)
    return result


_TYPES = ("number", "unsigned", "float", "symbol")


def _aggregate_type(ctx, agg: ast.Aggregate, env, lenient) -> str | None:
    target_type = None
    for alternative in dnf(agg.body):
        inner = _atom_types(ctx, alternative, env, lenient)
        if not lenient:
            _check_literals(ctx, alternative, inner)
        if agg.target is not None:
            target_type = _type_of(ctx, agg.target, inner, lenient) or target_type
    if agg.kind == "count":
        return "number"
    if not lenient:
        _no_mixed([agg.target], [target_type], agg, agg.kind)
    if agg.kind == "mean":
        return "float"
    if agg.kind == "sum" and target_type == "symbol" and not lenient:
        raise TypeMismatch(f"sum of a symbol in {agg}", agg.span)
    if recordtypes.is_composite(target_type) and not lenient:       # records (issue 18)
        raise TypeMismatch(f"{agg.kind} of a value of the {target_type} type in {agg}", agg.span)
    return target_type


def _positive_atoms(body) -> list[ast.Atom]:
    return [lit for lit in body if isinstance(lit, ast.Atom)]


# ---- unsigned (issue 18): the operations on unsigned values, marked for the evaluators

def mark_unsigned(ctx) -> None:
    """Mark, in every clause, the operations whose values are unsigned (``BinaryOp.unsigned``,
    ``bnot``'s ``Functor.unsigned``, the ``Aggregate.unsigned`` of a sum, min or max of unsigned
    values): the compiled evaluator and maintenance compute those modulo 2^64. Run after
    :func:`check_types`, so the types are known and consistent; a clause without an unsigned
    operation is kept as it is. An unsuffixed literal beyond the number range (2^63 .. 2^64-1)
    is refused here where no unsigned is wanted (``number_out_of_range``, as any literal beyond
    the range is)."""
    columns = any("unsigned" in info.types for info in ctx.schema.values())
    for i, clause in enumerate(ctx.clauses):
        if not columns and not _unsigned_constants((clause.head, clause.body)):
            continue                    # nothing unsigned in it: nothing to mark (the common case)
        env = _atom_types(ctx, clause.body, {}, lenient=True)
        head = _mark_literal(ctx, clause.head, env)
        body = tuple(_mark_literal(ctx, lit, env) for lit in clause.body)
        if head != clause.head or body != clause.body:
            ctx.clauses[i] = replace(clause, head=head, body=body)


def _unsigned_constants(node) -> bool:
    """Whether ``node`` (AST nodes, tuples of them) holds an unsigned literal or an unsuffixed
    one beyond the number range."""
    if isinstance(node, ast.Constant):
        return node.unsigned or (type(node.value) is int and node.value > INT_MAX)
    if isinstance(node, tuple):
        return any(map(_unsigned_constants, node))
    if hasattr(node, "__dataclass_fields__"):
        return any(_unsigned_constants(getattr(node, name)) for name in node.__dataclass_fields__ if name != "span")
    return False


def _mark_literal(ctx, literal, env):
    if isinstance(literal, ast.Atom):
        info = ctx.schema.get(literal.relation)
        types = info.types if info else [None] * len(literal.args)
        return replace(literal, args=tuple(_mark_term(ctx, a, env, t == "unsigned") for a, t in zip(literal.args, types)))
    if isinstance(literal, ast.Negation):
        return replace(literal, atom=_mark_literal(ctx, literal.atom, env))
    if isinstance(literal, ast.Comparison):
        left, right = (_type_of(ctx, side, env, True) for side in (literal.left, literal.right))
        wanted = "unsigned" in (left, right)
        return replace(literal, left=_mark_term(ctx, literal.left, env, wanted),
                       right=_mark_term(ctx, literal.right, env, wanted))
    if isinstance(literal, ast.Disjunction):
        return replace(literal, alternatives=tuple(tuple(_mark_literal(ctx, lit, env) for lit in alt)
                                                   for alt in literal.alternatives))
    return literal


def _mark_term(ctx, term, env, wanted: bool = False):
    """``term`` with its unsigned operations marked; ``wanted``: an unsigned is expected where it
    stands (an unsigned column, the other side of a comparison, an operand of an unsigned
    operation), the one place an unsuffixed literal beyond the number range may be."""
    if isinstance(term, ast.Constant):
        if type(term.value) is int and not term.unsigned and term.value > INT_MAX and not wanted:
            raise NumberOutOfRange(f"the integer {term.value} is beyond the signed 64-bit range "
                                   f"({INT_MIN} .. {INT_MAX})", term.span)
        return term
    if isinstance(term, ast.BinaryOp):
        unsigned = _type_of(ctx, term, env, True) == "unsigned" or (wanted and _adapts(term))
        shift = term.op in ("bshl", "bshr", "bshru")        # a shift count of any integer type
        return replace(term, left=_mark_term(ctx, term.left, env, unsigned),
                       right=_mark_term(ctx, term.right, env, unsigned and not shift), unsigned=unsigned)
    if isinstance(term, ast.Negate):
        return replace(term, operand=_mark_term(ctx, term.operand, env))
    if isinstance(term, ast.Functor):
        unsigned = _type_of(ctx, term, env, True) == "unsigned" or (wanted and _adapts(term))
        inner = term.name in ("utoi", "utof") or (unsigned and term.name in ("bnot", "lnot", "min", "max", "range"))
        return replace(term, args=tuple(_mark_term(ctx, a, env, inner) for a in term.args),
                       unsigned=unsigned and term.name == "bnot")
    if isinstance(term, ast.Aggregate):
        inner = dict(env)
        for alternative in dnf(term.body):
            for name, t in _atom_types(ctx, alternative, env, True).items():
                inner.setdefault(name, t)
        target = None if term.target is None else _mark_term(ctx, term.target, inner)
        unsigned = term.kind in ("sum", "min", "max") and target is not None and \
            _type_of(ctx, target, inner, True) == "unsigned"
        return replace(term, target=target, body=tuple(_mark_literal(ctx, lit, inner) for lit in term.body),
                       unsigned=unsigned)
    if isinstance(term, (ast.RecordTerm, ast.BranchTerm)):
        return replace(term, args=tuple(_mark_term(ctx, a, env) for a in term.args))
    if isinstance(term, ast.Cast):
        return replace(term, term=_mark_term(ctx, term.term, env))
    return term


def unsigned_ranges(ctx) -> None:
    """``x = range(1, 10)`` with unsuffixed bounds reads the hidden relation ``_range_1_10``
    (rewrites.expand_ranges) whose facts are numbers; where x stands in a declared ``unsigned``
    column (of the head or of a body atom), Soufflé's range is its unsigned one (URANGE): the
    clause reads the unsigned twin ``_range_u1_10`` instead, made here from the same values
    (non-negative ones only). Run before the types are inferred."""
    made: dict[str, list] = {}
    for i, clause in enumerate(list(ctx.clauses)):
        ranges = [lit for lit in clause.body if isinstance(lit, ast.Atom) and lit.relation.startswith("_range_")
                  and not lit.relation.startswith("_range_u") and isinstance(lit.args[0], ast.Variable)]
        if not ranges:
            continue
        wanted = _in_unsigned_columns(ctx, clause)
        body = list(clause.body)
        for lit in ranges:
            if lit.args[0].name not in wanted:
                continue
            facts = [c for c in ctx.clauses if c.head.relation == lit.relation and not c.body]
            values = [c.head.args[0].value for c in facts]
            if not all(type(v) is int and v >= 0 for v in values):
                continue
            twin = "_range_u" + lit.relation[len("_range_"):]
            if twin not in ctx.schema and twin not in made:
                made[twin] = [replace(c, head=ast.Atom(twin, (ast.Constant(v, c.head.span, unsigned=True),), c.head.span))
                              for c, v in zip(facts, values)]
                ctx.schema[twin] = replace(ctx.schema[lit.relation], name=twin, types=[None])
            body[body.index(lit)] = replace(lit, relation=twin)
        ctx.clauses[i] = replace(clause, body=tuple(body))
    for twin_facts in made.values():
        for fact in twin_facts:
            ctx.clauses.append(replace(fact, index=len(ctx.clauses)))


def _in_unsigned_columns(ctx, clause) -> set[str]:
    """The variables of ``clause`` that are unsigned by where they stand: in the arithmetic of an
    argument of a declared ``unsigned`` column, or of a comparison with an unsigned literal."""
    out = set()
    for atom in [clause.head] + [lit for lit in clause.body if isinstance(lit, ast.Atom)]:
        info = ctx.schema.get(atom.relation)
        if info is None or not info.declared:
            continue
        for arg, type_ in zip(atom.args, info.types):
            if type_ == "unsigned":
                out |= _arithmetic_variables(arg)
    for lit in clause.body:
        if isinstance(lit, ast.Comparison) and _unsigned_constants((lit.left, lit.right)):
            out |= _arithmetic_variables(lit.left) | _arithmetic_variables(lit.right)
    return out


def _arithmetic_variables(term) -> set[str]:
    """The variables of ``term`` reached through arithmetic (whose type is the term's), not
    through a conversion or another functor."""
    if isinstance(term, ast.Variable):
        return {term.name}
    if isinstance(term, ast.BinaryOp):
        return _arithmetic_variables(term.left) | _arithmetic_variables(term.right)
    if isinstance(term, ast.Functor) and term.name in ("bnot", "lnot", "min", "max"):
        return set().union(*map(_arithmetic_variables, term.args)) if term.args else set()
    return set()
