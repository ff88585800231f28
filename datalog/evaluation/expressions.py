"""Terms -> Python closures over a binding (a list indexed by variable slot).

Arithmetic follows Soufflé: integer ``/`` truncates toward zero, ``%`` takes
the sign of the dividend, division by zero is a ``division_by_zero`` error and
a failed conversion an ``invalid_conversion`` error, each naming the rule.
Numbers are those of :mod:`datalog.language.numbers`: an integer result beyond
the signed 64-bit range is ``number_out_of_range`` (Soufflé's C++ would wrap),
floats follow IEEE 754 (``inf + 1`` is ``inf``) except that a NaN result
(``inf - inf``, ``inf * 0``) is ``invalid_arithmetic``, each at the operation.

>>> from datalog.language.parser import parse
>>> term = parse('p(x) :- q(x), x = -7 / 2 + 7 % -3.').rules[0].body[1].right
>>> compile_term(term, {}, "p")([])
-2
"""

from __future__ import annotations

import math

from datalog.language import ast, numbers
from datalog.language.errors import DivisionByZero, InvalidArithmetic, InvalidConversion, NumberOutOfRange, Span
from datalog.language.numbers import INT_MAX, INT_MIN


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
        return _negate(inner, _settler("-", rule, span))
    if isinstance(term, ast.BinaryOp):
        left = compile_term(term.left, slots, rule, span)
        right = compile_term(term.right, slots, rule, span)
        if term.op in _FUSED:
            return _FUSED[term.op](left, right, _settler(term.op, rule, span))
        op = _binary(term.op, rule, span)
        return lambda b: op(left(b), right(b))
    if isinstance(term, ast.Functor):
        args = [compile_term(a, slots, rule, span) for a in term.args]
        fn = _functor(term.name, rule, span)
        return lambda b: fn(*[a(b) for a in args])
    raise TypeError(f"cannot compile {term!r}")  # aggregates are planned, not compiled here


def _negate(inner, settle, lo=INT_MIN, hi=INT_MAX):
    def negate(b):
        value = -inner(b)
        return value if lo <= value <= hi else settle(value, None, inner(b))
    return negate


def _fused_add(left, right, settle, lo=INT_MIN, hi=INT_MAX):
    def add(b):
        value = left(b) + right(b)
        return value if lo <= value <= hi else settle(value, left(b), right(b))
    return add


def _fused_sub(left, right, settle, lo=INT_MIN, hi=INT_MAX):
    def sub(b):
        value = left(b) - right(b)
        return value if lo <= value <= hi else settle(value, left(b), right(b))
    return sub


def _fused_mul(left, right, settle, lo=INT_MIN, hi=INT_MAX):
    def mul(b):
        value = left(b) * right(b)
        return value if lo <= value <= hi else settle(value, left(b), right(b))
    return mul


# + - * are the common operations: one closure each computes and checks (no call of an operator
# function); the range check is a chained comparison that an int in range or a float no larger
# passes, and NaN fails. The slow path evaluates the operands again (terms are pure) for the message.
_FUSED = {"+": _fused_add, "-": _fused_sub, "*": _fused_mul}


def _binary(op: str, rule: str, span):
    # Each operation checks its result with one chained comparison, as the fused ones do.
    settle = _settler(op, rule, span)

    def div(a, b):
        if b == 0:
            raise DivisionByZero(f"division by zero in a rule for {rule} ({a} / {b})", span)
        if isinstance(a, float) or isinstance(b, float):
            value = a / b
        else:
            q = abs(a) // abs(b)
            value = q if (a >= 0) == (b >= 0) else -q
        return value if INT_MIN <= value <= INT_MAX else settle(value, a, b)

    def mod(a, b):
        if b == 0:
            raise DivisionByZero(f"modulo by zero in a rule for {rule} ({a} % {b})", span)
        if isinstance(a, float) or isinstance(b, float):
            value = math.fmod(a, b) if math.isfinite(a) else math.nan     # fmod(inf, b) is NaN
            return value if value == value else settle(value, a, b)
        r = abs(a) % abs(b)
        return r if a >= 0 else -r

    def power(a, b):
        if isinstance(a, int) and isinstance(b, int):
            if b < 0:                                   # integer result, truncated
                if a == 0:
                    raise DivisionByZero(f"0 ^ {b} in a rule for {rule}", span)
                return int(1 / a ** -b) if abs(a) == 1 else 0
            if abs(a) > 1 and b >= 64:                  # at least 2^64: out of range, not computed
                settle(2 ** 64, a, b)
            value = a ** b
        else:
            value = _float_power(a, b, rule, span)
        return value if INT_MIN <= value <= INT_MAX else settle(value, a, b)

    return {"/": div, "%": mod, "^": power}[op]


def _settler(op: str, rule: str, span):
    """The slow path of an operation's result ``value`` of ``a op b``: a float that is not NaN
    (inf, or finite beyond the integer range) is the result; an int there is out of range."""
    def settle(value, a, b):
        if isinstance(value, float):
            if value == value:
                return value
            raise InvalidArithmetic(f"{_show(a, op, b)} is not a number (NaN) in a rule for {rule}", span)
        raise NumberOutOfRange(f"{_show(a, op, b)} is beyond {numbers.RANGE} in a rule for {rule}", span)
    return settle


def _show(a, op: str, b) -> str:
    if a is None:                                               # unary minus
        return f"-({numbers.describe(b)})"
    return f"{numbers.describe(a)} {op} {numbers.describe(b)}"


def _float_power(a, b, rule: str, span) -> float:
    """``a ^ b`` with a float operand, as IEEE 754's pow: an overflow is ±inf, a negative base
    with a fractional exponent is NaN (Python's ``**`` would give a complex number)."""
    try:
        return math.pow(a, b)
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -math.inf if a < 0 and odd else math.inf
    except ValueError:                                  # 0 ^ negative, or negative ^ fraction
        if a == 0:
            raise DivisionByZero(f"{a} ^ {b} in a rule for {rule}", span) from None
        return math.nan


def _functor(name: str, rule: str, span):
    def to_number(s):
        value = numbers.parse_int(s, prefixed=False)
        if value is not None:
            return value
        if numbers.int_syntax(s, prefixed=False):
            raise NumberOutOfRange(f'to_number("{_clip(s)}") in a rule for {rule}: beyond {numbers.RANGE}', span)
        raise InvalidConversion(f'to_number("{_clip(s)}") in a rule for {rule}: not an integer', span)

    def substr(s, start, length):
        if start < 0 or length < 0 or start > len(s):
            raise InvalidConversion(f'substr("{s}", {start}, {length}) in a rule for {rule}: out of range',
                                    span)
        return s[start:start + length]

    return {"cat": lambda *a: "".join(a), "strlen": len, "substr": substr, "to_number": to_number,
            "to_string": numbers.to_string, "to_float": float,
            "min": lambda *a: min(a), "max": lambda *a: max(a)}[name]


def _clip(text: str) -> str:
    """A string argument for a message, shortened if long."""
    return text if len(text) <= 40 else f"{text[:37]}..."
