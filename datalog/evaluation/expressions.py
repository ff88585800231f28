"""Terms -> Python closures over a binding (a list indexed by variable slot).

Arithmetic follows Soufflé: integer ``/`` truncates toward zero, ``%`` takes
the sign of the dividend, division by zero is a ``division_by_zero`` error and
a failed conversion an ``invalid_conversion`` error, each naming the rule.

>>> from datalog.language.parser import parse
>>> term = parse('p(x) :- q(x), x = -7 / 2 + 7 % -3.').rules[0].body[1].right
>>> compile_term(term, {}, "p")([])
-2
"""

from __future__ import annotations

import math

from datalog.language import ast
from datalog.language.errors import DivisionByZero, InvalidConversion, Span


def compile_term(term, slots: dict[str, int], rule: str, span: Span | None = None):
    """A function binding -> value. ``slots`` maps variable names to binding positions."""
    span = getattr(term, "span", None) or span
    if isinstance(term, ast.Constant):
        value = term.value
        return lambda b: value
    if isinstance(term, ast.Variable):
        slot = slots[term.name]
        return lambda b: b[slot]
    if isinstance(term, ast.Negate):
        inner = compile_term(term.operand, slots, rule, span)
        return lambda b: -inner(b)
    if isinstance(term, ast.BinaryOp):
        left = compile_term(term.left, slots, rule, span)
        right = compile_term(term.right, slots, rule, span)
        op = _binary(term.op, rule, span)
        return lambda b: op(left(b), right(b))
    if isinstance(term, ast.Functor):
        args = [compile_term(a, slots, rule, span) for a in term.args]
        fn = _functor(term.name, rule, span)
        return lambda b: fn(*[a(b) for a in args])
    raise TypeError(f"cannot compile {term!r}")  # aggregates are planned, not compiled here


def _binary(op: str, rule: str, span):
    def div(a, b):
        if b == 0:
            raise DivisionByZero(f"division by zero in a rule for {rule} ({a} / {b})", span)
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    def mod(a, b):
        if b == 0:
            raise DivisionByZero(f"modulo by zero in a rule for {rule} ({a} % {b})", span)
        if isinstance(a, float) or isinstance(b, float):
            return math.fmod(a, b)
        r = abs(a) % abs(b)
        return r if a >= 0 else -r

    def power(a, b):
        if isinstance(a, int) and isinstance(b, int) and b < 0:   # integer result, truncated
            if a == 0:
                raise DivisionByZero(f"0 ^ {b} in a rule for {rule}", span)
            return int(1 / a ** -b) if abs(a) == 1 else 0
        return a ** b

    return {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": div, "%": mod, "^": power}[op]


def _functor(name: str, rule: str, span):
    def to_number(s):
        try:
            return int(s.strip(), 10)
        except ValueError:
            raise InvalidConversion(f'to_number("{s}") in a rule for {rule}: not an integer', span) from None

    def to_float(x):
        try:
            return float(x)
        except ValueError:
            raise InvalidConversion(f'to_float("{x}") in a rule for {rule}: not a number', span) from None

    def substr(s, start, length):
        if start < 0 or length < 0 or start > len(s):
            raise InvalidConversion(f'substr("{s}", {start}, {length}) in a rule for {rule}: out of range',
                                    span)
        return s[start:start + length]

    return {"cat": lambda *a: "".join(a), "strlen": len, "substr": substr, "to_number": to_number,
            "to_string": lambda x: repr(x) if isinstance(x, float) else str(x), "to_float": to_float,
            "min": lambda *a: min(a), "max": lambda *a: max(a)}[name]
