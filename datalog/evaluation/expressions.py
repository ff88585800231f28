"""Terms -> Python closures over a binding (a list indexed by variable slot).

Arithmetic follows Soufflé: integer ``/`` truncates toward zero, ``%`` takes
the sign of the dividend, division by zero is a ``division_by_zero`` error and
a failed conversion an ``invalid_conversion`` error, each naming the rule.
Numbers are those of :mod:`datalog.language.numbers`: an integer result beyond
the signed 64-bit range is ``number_out_of_range`` (Soufflé's C++ would wrap),
floats follow IEEE 754 (``inf + 1`` is ``inf``) except that a NaN result
(``inf - inf``, ``inf * 0``) is ``invalid_arithmetic``, each at the operation. An operation
the type check marked unsigned (``BinaryOp.unsigned``) is C++'s on uint64: modulo 2^64, never
out of range (``0u - 1u`` is ``2^64 - 1``); its division by zero is ``division_by_zero`` too.

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
from datalog.evaluation.records import compile_record


def compile_term(term, slots: dict[str, int], rule: str, span: Span | None = None):
    """A function binding -> value. ``slots`` maps variable names to binding positions."""
    if numbers.WIDTH[0] == 32 and isinstance(term, (ast.BinaryOp, ast.Negate)) and not getattr(term, "unsigned", False):
        return _wrapped(term, slots, rule, span)
    return _compile(term, slots, rule, span)


def _wrapped(term, slots, rule, span):
    """Width 32: the operation on its operands' 32-bit values, wrapped to 32 bits (operands are
    32-bit, so + - * stay far inside 64 bits; ^ is taken modulo 2^32; shifts count modulo 32)."""
    if isinstance(term, ast.Negate):
        inner = compile_term(term.operand, slots, rule, span)
        return lambda b: numbers.wrap(-inner(b), 32)
    if term.op in _SHIFTS32 or term.op == "^":
        left, right = compile_term(term.left, slots, rule, span), compile_term(term.right, slots, rule, span)
        exact = _compile(term, slots, rule, span)
        op = _SHIFTS32.get(term.op, _power32)

        def shifted(b):
            a, c = left(b), right(b)
            return exact(b) if isinstance(a, float) or isinstance(c, float) else op(a, c)
        return shifted
    exact = _compile(term, slots, rule, span)          # its operands compiled (and wrapped) alike
    return lambda b: numbers.wrap(exact(b), 32)


def _power32(a: int, b: int) -> int:
    if b < 0:
        return 0 if abs(a) != 1 else int(1 / a ** -b)
    return numbers.wrap(pow(a, b, 1 << 32), 32)


_M32 = (1 << 32) - 1
_SHIFTS32 = {
    "bshl": lambda a, b: numbers.wrap(((a & _M32) << (b & 31)) & _M32, 32),
    "bshr": lambda a, b: a >> (b & 31),
    "bshru": lambda a, b: numbers.wrap((a & _M32) >> (b & 31), 32),
}


def _compile(term, slots: dict[str, int], rule: str, span: Span | None = None):
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
        if term.unsigned:
            return _unsigned_binary(term.op, left, right, rule, span)
        if term.op in _STEP and isinstance(term.left, ast.Variable) and isinstance(term.right, ast.Constant) \
                and type(term.right.value) is int:
            return _STEP[term.op](slots[term.left.name], term.right.value, _settler(term.op, rule, span))
        if term.op in _FUSED:
            return _FUSED[term.op](left, right, _settler(term.op, rule, span))
        if term.op in _BITWISE:
            op = _BITWISE[term.op]
            return lambda b: op(left(b), right(b))
        op = _binary(term.op, rule, span)
        return lambda b: op(left(b), right(b))
    if isinstance(term, ast.Functor) and term.name == "autoinc":
        return lambda b: next_autoinc()
    if isinstance(term, ast.Functor) and term.unsigned and term.name == "bnot":
        (arg,) = [compile_term(a, slots, rule, span) for a in term.args]
        mask = (1 << numbers.unsigned_bits()) - 1
        return lambda b: arg(b) ^ mask
    if isinstance(term, ast.Functor):
        args = [compile_term(a, slots, rule, span) for a in term.args]
        fn = _functor(term.name, rule, span)
        return lambda b: fn(*[a(b) for a in args])
    if isinstance(term, (ast.RecordTerm, ast.BranchTerm, ast.Nil, ast.Cast)):     # records (issue 18)
        return compile_record(term, lambda t: compile_term(t, slots, rule, span))
    raise TypeError(f"cannot compile {term!r}")  # aggregates are planned, not compiled here


# ---- functors (issue 18): autoinc() (bare $), Soufflé's counter: 0, 1, 2, ... one value per
# evaluation, over the whole program run (reset when a program is evaluated from scratch).
_AUTOINC = [0]


def next_autoinc() -> int:
    value = _AUTOINC[0]
    _AUTOINC[0] = value + 1
    return value


def reset_autoinc() -> None:
    _AUTOINC[0] = 0


def _negate(inner, settle, lo=INT_MIN, hi=INT_MAX):
    def negate(b):
        value = -inner(b)
        return value if lo <= value <= hi else settle(value, None, inner(b))
    return negate


def _fused_add(left, right, settle, lo=INT_MIN, hi=INT_MAX):
    # "a" + "b" is "ab" in Soufflé (cat); the typecheck lets + join two symbols only
    def add(b):
        value = left(b) + right(b)
        try:
            return value if lo <= value <= hi else settle(value, left(b), right(b))
        except TypeError:
            return value
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


def _step_add(slot: int, step: int, settle, lo=INT_MIN, hi=INT_MAX):
    # x + 1: the counter of a recursion (b(x + 1) :- a(x), x < n.), its operands read in place
    def add(b):
        value = b[slot] + step
        return value if lo <= value <= hi else settle(value, b[slot], step)
    return add


def _step_sub(slot: int, step: int, settle, lo=INT_MIN, hi=INT_MAX):
    def sub(b):
        value = b[slot] - step
        return value if lo <= value <= hi else settle(value, b[slot], step)
    return sub


_STEP = {"+": _step_add, "-": _step_sub}


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
        raise range_error(a, op, b, rule, span)
    return settle


def range_error(a, op: str, b, rule: str, span) -> NumberOutOfRange:
    """The coded error of ``a op b`` beyond the integer range (``a`` None: ``-b``)."""
    return NumberOutOfRange(f"{_show(a, op, b)} is beyond {numbers.RANGE} in a rule for {rule}", span)


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
        # "0xcafe" and "0b100" are numbers too, as Soufflé reads them (strtoll of base 0)
        value = numbers.parse_int(s)
        if value is not None:
            return value
        if numbers.int_syntax(s):
            raise NumberOutOfRange(f'to_number("{_clip(s)}") in a rule for {rule}: beyond {numbers.RANGE}', span)
        raise InvalidConversion(f'to_number("{_clip(s)}") in a rule for {rule}: not an integer', span)

    def substr(s, start, length):
        # substr("abc", 5, 1) is "" in Soufflé (with a warning at run time); not an error
        if start < 0 or length < 0 or start > len(s):
            return ""
        return s[start:start + length]

    def polymorphic_number(x):
        # to_number of a float truncates (Soufflé's ftoi), of a number is the number
        if isinstance(x, str):
            return to_number(x)
        # an unsigned is taken as the number of its bits (utoi); a number is itself
        return _truncate(x, "to_number", rule, span) if isinstance(x, float) else numbers.to_signed(x)

    def polymorphic_float(x):
        if isinstance(x, str):
            value = numbers.parse_float(x)
            if value is None:
                raise InvalidConversion(f'to_float("{_clip(x)}") in a rule for {rule}: not a float', span)
            return value
        return float(x)

    def unsigned(x, what):
        # C++'s static_cast to uint64: a number wraps (itou(-1) is 2^64 - 1); a float is truncated
        # toward zero, then wraps, if its integer part is a 64-bit value (signed or unsigned);
        # a symbol (to_unsigned) is read as Soufflé's stoull reads it, so "-1" wraps too
        if isinstance(x, str):
            value = numbers.parse_int(x)
            value = numbers.parse_unsigned(x) if value is None else value
            if value is None:
                if numbers.int_syntax(x):
                    raise NumberOutOfRange(f'{what}("{_clip(x)}") in a rule for {rule}: beyond '
                                           f'{numbers.URANGE}', span)
                raise InvalidConversion(f'{what}("{_clip(x)}") in a rule for {rule}: not an integer', span)
            return numbers.wrap_unsigned(value)
        if isinstance(x, float):
            if not math.isfinite(x) or not INT_MIN <= int(x) <= numbers.UINT_MAX:
                raise NumberOutOfRange(f"{what}({x!r}) in a rule for {rule}: beyond {numbers.URANGE}", span)
            x = int(x)
        return numbers.wrap_unsigned(x)

    return {"cat": lambda *a: "".join(a), "strlen": len, "substr": substr, "to_number": polymorphic_number,
            "to_string": numbers.to_string, "to_float": polymorphic_float,
            "min": lambda *a: min(a), "max": lambda *a: max(a),
            "ord": lambda x: numbers.symbol_ordinal(x) if isinstance(x, str) else
            (numbers.to_signed(x) if isinstance(x, int) else x),
            "bnot": lambda x: ~x, "lnot": lambda x: int(x == 0),
            "itof": float, "utof": float, "ftoi": lambda x: _truncate(x, "ftoi", rule, span),
            "ftou": lambda x: unsigned(x, "ftou"), "itou": lambda x: unsigned(x, "itou"),
            "utoi": numbers.to_signed, "to_unsigned": lambda x: unsigned(x, "to_unsigned")}[name]


def _truncate(x: float, what: str, rule: str, span) -> int:
    """A float's integer part (C's cast toward zero), within the range."""
    if not math.isfinite(x) or not INT_MIN <= int(x) <= INT_MAX:
        raise NumberOutOfRange(f"{what}({x!r}) in a rule for {rule}: beyond {numbers.RANGE}", span)
    return int(x)


# ---- functors (issue 18): Soufflé's bitwise and logical operators on 64-bit integers.
# Left shift is done unsigned and wraps (Java's <<), bshr sign-extends, bshru shifts in zeros;
# the shift count is taken modulo 64 as Soufflé masks it.
_MASK = 2 ** 64 - 1


def _signed(value: int) -> int:
    return value - 2 ** 64 if value > INT_MAX else value


_BITWISE = {
    "band": lambda a, b: a & b, "bor": lambda a, b: a | b, "bxor": lambda a, b: a ^ b,
    "bshl": lambda a, b: _signed(((a & _MASK) << (b & 63)) & _MASK),
    "bshr": lambda a, b: a >> (b & 63),
    "bshru": lambda a, b: _signed((a & _MASK) >> (b & 63)),
    "land": lambda a, b: int(a != 0 and b != 0), "lor": lambda a, b: int(a != 0 or b != 0),
    "lxor": lambda a, b: int((a != 0) != (b != 0)),
}


def _clip(text: str) -> str:
    """A string argument for a message, shortened if long."""
    return text if len(text) <= 40 else f"{text[:37]}..."


# ---- unsigned (issue 18): Soufflé's U-operators (UADD, USUB, ... UBSHIFT_R) on uint64: results
# modulo 2^64; / and % are unsigned division; ^ is the power modulo 2^64 (Soufflé computes it as
# a double and casts, which agrees wherever the power is below 2^53); a shift counts modulo 64;
# bshr and bshru both shift in zeros (an unsigned has no sign bit to repeat).
def _unsigned_binary(op: str, left, right, rule: str, span):
    bits = numbers.unsigned_bits()
    mask, count = (1 << bits) - 1, bits - 1
    if op == "+":
        return lambda b: (left(b) + right(b)) & mask
    if op == "-":
        return lambda b: (left(b) - right(b)) & mask
    if op == "*":
        return lambda b: (left(b) * right(b)) & mask

    def div(x, y):
        if y == 0:
            raise DivisionByZero(f"division by zero in a rule for {rule} ({x}u / {y}u)", span)
        return x // y

    def mod(x, y):
        if y == 0:
            raise DivisionByZero(f"modulo by zero in a rule for {rule} ({x}u % {y}u)", span)
        return x % y
    op_fn = {"/": div, "%": mod, "^": lambda x, y: pow(x, y, mask + 1),
             "band": lambda x, y: x & y, "bor": lambda x, y: x | y, "bxor": lambda x, y: x ^ y,
             "bshl": lambda x, y: (x << (y & count)) & mask,
             "bshr": lambda x, y: x >> (y & count), "bshru": lambda x, y: x >> (y & count),
             "land": lambda x, y: int(x != 0 and y != 0), "lor": lambda x, y: int(x != 0 or y != 0),
             "lxor": lambda x, y: int((x != 0) != (y != 0))}[op]
    return lambda b: op_fn(left(b), right(b))
