"""Values and what the naive evaluator does with them: rows, databases and substitutions;
comparisons, arithmetic and functors with Soufflé's semantics.

A value is an int, a float or a symbol (a Python str); a value of Soufflé's ``unsigned`` type is
an :class:`Unsigned`, an int that knows its type (the engine learns it from the type check; here
it travels with the value), so an operation with an unsigned operand is C++'s on uint64. Where
Soufflé and Python could differ, the docstring of the function that makes the choice says which
it follows.

>>> arith("/", -7, 2), arith("%", -7, 2), functor("substr", ["datalog", 0, 4])
(-3, -1, 'data')
"""

from __future__ import annotations

import math
import operator
import re

from datalog.language.errors import ArityMismatch, DivisionByZero, InvalidConversion, NumberOutOfRange, TypeMismatch
from datalog.language.numbers import symbol_ordinal
from datalog.language.regex import matches
from datalog.language.display import plural

Row = tuple
Database = dict[str, set[Row]]
Subst = dict[str, object]  # variable name -> value


_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def compare(op: str, left, right) -> bool:
    """Numbers with numbers, symbols with symbols (Python's ordering: by code point);
    ``match(p, s)``: s is wholly matched by the regular expression p (none if p is not one);
    ``contains(t, s)``: t occurs in s. A number and a symbol (plain Datalog's mixed columns) are
    never equal, and not ordered."""
    if isinstance(left, str) != isinstance(right, str):
        if op in ("=", "!="):
            return op == "!="
        raise TypeMismatch(f"cannot compare {left!r} {op} {right!r}")
    if isinstance(left, Unsigned) or isinstance(right, Unsigned):
        left, right = as_unsigned(left), as_unsigned(right)
    if op in ("match", "not_match"):      # a pattern that is no regex: both false (Soufflé)
        return matches(left, right) is (op == "match")
    if op == "contains":
        return right.find(left) >= 0
    if op == "not_contains":
        return right.find(left) < 0
    return _COMPARE[op](left, right)


TWO64 = 2 ** 64


class Unsigned(int):
    """A value of type ``unsigned``: 0 .. 2^64-1, equal to (and hashed as) the same int, so rows
    compare with the engine's. Arithmetic on it is written out below (:func:`_unsigned_arith`),
    not inherited: ``int`` would give a plain, unbounded int."""

    __slots__ = ()

    def __new__(cls, value: int):
        if not 0 <= value < TWO64:
            raise NumberOutOfRange(f"{value} is no unsigned value")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"{int(self)}u"


def as_unsigned(value):
    """A plain int where an unsigned is wanted (read from or stored into an ``unsigned`` column,
    or met by an unsigned in an operation, a comparison, min or max), as an :class:`Unsigned`:
    C++ converts a signed value it mixes with an unsigned so, modulo 2^64. A plain int can only
    be an unsuffixed literal or an operation on literals there (``0 - 1``: the type check
    allows nothing else), which Soufflé types unsigned in that place."""
    return Unsigned(value % TWO64) if type(value) is int else value


def number(value, what: str):
    if isinstance(value, str):
        raise TypeMismatch(f"{what} needs a number, got the symbol {value!r}")
    return value


def arith(op: str, a, b):
    """Integer arithmetic as in C (Soufflé): ``/`` truncates toward zero, ``%`` takes the
    dividend's sign; ``x ^ -n`` is the truncated power (``2 ^ -1 = 0``). Ints do not wrap
    (Soufflé's 32-bit numbers would). A float operand makes it float arithmetic."""
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b                                # Soufflé's + of two symbols joins them
    a, b = number(a, op), number(b, op)
    if isinstance(a, Unsigned) or isinstance(b, Unsigned):
        return _unsigned_arith(op, a, b)
    ints = isinstance(a, int) and isinstance(b, int)
    if op in _LOGICAL:
        return int(_LOGICAL[op](a != 0, b != 0))
    if op in _BITS:
        return _bits(op, a, b)
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
        return a - b * arith("/", a, b) if ints else math.fmod(a, b)
    if op == "^":
        if ints and b < 0:
            if a == 0:
                raise DivisionByZero(f"{a} ^ {b}: division by zero")
            return int(a ** b)
        return a ** b if ints else math.pow(a, b)
    raise TypeError(f"unknown operator {op}")


# ---- functors (issue 18): logical operators on truth values, bitwise ones on the 64 bits
# of two's complement (written with explicit bit strings, unlike the engine's masks).
_LOGICAL = {"land": operator.and_, "lor": operator.or_, "lxor": operator.ne}
_BITS = ("band", "bor", "bxor", "bshl", "bshr", "bshru")


def _bits_of(value: int) -> str:
    return format(value % 2 ** 64, "064b")


def _from_bits(bits: str) -> int:
    value = int(bits, 2)
    return value - 2 ** 64 if bits[0] == "1" else value


def _bits(op: str, a: int, b: int) -> int:
    """Soufflé's bitwise operators; a shift count is taken modulo 64 (Soufflé masks it), bshl
    drops the bits shifted out, bshr repeats the sign bit, bshru shifts in zeros."""
    x, y = _bits_of(a), _bits_of(b)
    if op in ("band", "bor", "bxor"):
        pick = {"band": lambda p, q: p & q, "bor": lambda p, q: p | q, "bxor": lambda p, q: p ^ q}[op]
        return _from_bits("".join(str(pick(int(p), int(q))) for p, q in zip(x, y)))
    n = b % 64
    if op == "bshl":
        return _from_bits(x[n:] + "0" * n)
    fill = x[0] if op == "bshr" else "0"
    return _from_bits(fill * n + x[:64 - n])


def _unsigned_arith(op: str, a: int, b: int) -> Unsigned:
    """Soufflé's operators on unsigned (UADD ... ULXOR), as C++ computes them on uint64: the
    exact result reduced modulo 2^64; ``/`` and ``%`` of non-negative ints; ``^`` the power
    modulo 2^64; the bitwise ones on the 64 bits, a shift counting modulo 64 and shifting in
    zeros either way (an unsigned has no sign bit). The other operand is an unsigned too, or an
    unsuffixed literal (the type check allows nothing else)."""
    if isinstance(a, float) or isinstance(b, float):
        raise TypeMismatch(f"{a!r} {op} {b!r} mixes an unsigned and a float")
    a, b = as_unsigned(a), as_unsigned(b)
    if op in _LOGICAL:
        return Unsigned(int(_LOGICAL[op](a != 0, b != 0)))
    if op in ("/", "%") and b == 0:
        raise DivisionByZero(f"{a} {op} {b}: division by zero")
    exact = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
             "%": lambda: a % b, "^": lambda: pow(a, b, TWO64)}
    if op in exact:
        return Unsigned(exact[op]() % TWO64)
    x, y = _bits_of(a), _bits_of(b)
    if op in ("band", "bor", "bxor"):
        pick = {"band": lambda p, q: p & q, "bor": lambda p, q: p | q, "bxor": lambda p, q: p ^ q}[op]
        return Unsigned(int("".join(str(pick(int(p), int(q))) for p, q in zip(x, y)), 2))
    n = b % 64
    if op == "bshl":
        return Unsigned(int(x[n:] + "0" * n, 2))
    return Unsigned(int("0" * n + x[:64 - n], 2))           # bshr, bshru


def range_of(lo, hi, step=None) -> list:
    """Soufflé's ``range(lo, hi[, step])``: lo, lo + step, ... while before hi (hi excluded);
    without a step it counts by one toward hi; a zero step gives lo alone (none if lo = hi).
    Floats if any bound is a float."""
    if any(isinstance(v, float) for v in (lo, hi, step)):
        lo, hi = float(lo), float(hi)
        step = None if step is None else float(step)
    if step is None:
        step = (1 if hi >= lo else -1) * (1.0 if isinstance(lo, float) else 1)
    if step == 0:
        return [] if lo == hi else [lo]
    values = []
    while (step > 0 and lo < hi) or (step < 0 and lo > hi):
        values.append(lo)
        lo = lo + step
    if any(isinstance(v, Unsigned) for v in (lo, hi, step)) or (values and isinstance(values[0], Unsigned)):
        return [Unsigned(v) for v in values]                # Soufflé's URANGE
    return values


def functor(name: str, args: list):
    if name in ("cat", "min", "max") and not args:
        raise ArityMismatch(f"{name} needs at least one argument")
    if name in _ARITY and len(args) != _ARITY[name]:
        raise ArityMismatch(f"{name} takes {plural(_ARITY[name], 'argument')}, got {len(args)}")
    if name == "cat":
        return "".join(_symbol(a, name) for a in args)
    if name == "strlen":
        return len(_symbol(args[0], name))
    if name == "substr":
        return _substr(_symbol(args[0], name), args[1], args[2])
    if name == "to_number":
        return _signed(args[0]) if isinstance(args[0], Unsigned) else _to_number(args[0])
    if name == "to_string":
        value = args[0]   # a float as C's "%f" prints it (6 decimals), a symbol unchanged
        return "%f" % value if isinstance(value, float) else str(int(value)) if isinstance(value, int) else str(value)
    if name == "to_float":
        return _to_float(args[0])
    if name == "autoinc":   # its numbers depend on the order of evaluation: no reference for them
        raise TypeError("autoinc() has no reference semantics here (the engine numbers bindings in its "
                        "own order)")
    if name in _CONVERSIONS:
        return _CONVERSIONS[name](args[0])
    if name in ("min", "max"):
        if len({isinstance(a, str) for a in args}) > 1:
            raise TypeMismatch(f"{name} mixes numbers and symbols: {args}")
        if any(isinstance(a, Unsigned) for a in args):
            args = [as_unsigned(a) for a in args]
        return min(args) if name == "min" else max(args)
    raise TypeError(f"unknown functor {name}")


_ARITY = {"strlen": 1, "substr": 3, "to_number": 1, "to_string": 1, "to_float": 1, "ord": 1, "bnot": 1,
          "lnot": 1, "itof": 1, "ftoi": 1, "itou": 1, "utoi": 1, "ftou": 1, "utof": 1, "to_unsigned": 1}


def _unsigned(value) -> Unsigned:
    """itou, ftou, to_unsigned: C++'s static_cast to uint64 (two's complement: -1 is 2^64 - 1);
    a float is truncated toward zero first and must lie in -2^63 .. 2^64 - 1; a symbol is read
    as an integer (with a sign, as stoull reads it)."""
    if isinstance(value, float) and math.isfinite(value) and not -2 ** 63 <= int(value) < TWO64:
        raise NumberOutOfRange(f"{value} has no unsigned value")
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        magnitude = _to_number(value)
        if not -2 ** 63 <= magnitude < TWO64:
            raise NumberOutOfRange(f"{value!r} has no unsigned value")
        return Unsigned(magnitude % TWO64)
    return Unsigned(_to_number(value) % TWO64)


def _signed(value) -> int:
    """utoi (and to_number, ord of an unsigned): the int64 of the same 64 bits."""
    value = int(value)
    return value - TWO64 if value >= 2 ** 63 else value


def _bnot(value):
    flipped = "".join("10"[int(c)] for c in _bits_of(value))
    return Unsigned(int(flipped, 2)) if isinstance(value, Unsigned) else _from_bits(flipped)


def _lnot(value):
    result = 1 if value == 0 else 0
    return Unsigned(result) if isinstance(value, Unsigned) else result


_CONVERSIONS = {
    "ord": lambda x: symbol_ordinal(x) if isinstance(x, str) else (_signed(x) if isinstance(x, Unsigned) else x),
    "bnot": _bnot, "lnot": _lnot, "itof": lambda x: float(x), "utof": lambda x: float(x),
    "ftoi": lambda x: _to_number(x), "utoi": _signed, "itou": _unsigned, "ftou": _unsigned,
    "to_unsigned": _unsigned,
}


def _symbol(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeMismatch(f"{what} needs a symbol, got {value!r}")
    return value


def _substr(text: str, start, length) -> str:
    """``substr(s, i, n)`` = ``s[i:i+n]``; i outside 0..len(s) or n < 0 gives "" (as Soufflé,
    which also prints a warning)."""
    start, length = number(start, "substr"), number(length, "substr")
    if not 0 <= start <= len(text) or length < 0:
        return ""
    return text[start:start + length]


_INTEGER = re.compile(r"([+-]?)(0x[0-9a-fA-F]+|0b[01]+|\d+)")


def _to_number(value) -> int:
    """A symbol of digits with an optional sign (0x hex, 0b binary); a float is truncated
    toward zero; a number is itself."""
    if isinstance(value, str):
        found = _INTEGER.fullmatch(value.strip())
        if not found:
            raise InvalidConversion(f"to_number: {value!r} is not a number")
        digits = found.group(2)
        base = 16 if digits[:2] == "0x" else 2 if digits[:2] == "0b" else 10
        magnitude = int(digits[2:] if base != 10 else digits, base)
        return -magnitude if found.group(1) == "-" else magnitude
    if isinstance(value, float) and not math.isfinite(value):
        raise NumberOutOfRange(f"to_number({value}) is no integer")
    return int(value)


def _to_float(value) -> float:
    try:
        return float(value)
    except ValueError:
        raise InvalidConversion(f"to_float: {value!r} is not a number") from None
