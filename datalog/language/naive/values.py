"""Values and what the naive evaluator does with them: rows, databases and substitutions;
comparisons, arithmetic and functors with Soufflé's semantics.

A value is an int, a float or a symbol (a Python str). Where Soufflé and Python could
differ, the docstring of the function that makes the choice says which it follows.

>>> arith("/", -7, 2), arith("%", -7, 2), functor("substr", ["datalog", 0, 4])
(-3, -1, 'data')
"""

from __future__ import annotations

import math
import operator
import re

from datalog.language import numbers
from datalog.language.errors import ArityMismatch, DivisionByZero, InvalidConversion, TypeMismatch

Row = tuple
Database = dict[str, set[Row]]
Subst = dict[str, object]  # variable name -> value


_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def compare(op: str, left, right) -> bool:
    """Numbers with numbers, symbols with symbols (Python's ordering: by code point)."""
    if isinstance(left, str) != isinstance(right, str):
        raise TypeMismatch(f"cannot compare {left!r} {op} {right!r}")
    return _COMPARE[op](left, right)


def number(value, what: str):
    if isinstance(value, str):
        raise TypeMismatch(f"{what} needs a number, got the symbol {value!r}")
    return value


def arith(op: str, a, b):
    """Integer arithmetic as in C (Soufflé): ``/`` truncates toward zero, ``%`` takes the
    dividend's sign; ``x ^ -n`` is the truncated power (``2 ^ -1 = 0``). Ints do not wrap
    (Soufflé's 32-bit numbers would). A float operand makes it float arithmetic."""
    a, b = number(a, op), number(b, op)
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
        return a - b * arith("/", a, b) if ints else math.fmod(a, b)
    if op == "^":
        if ints and b < 0:
            if a == 0:
                raise DivisionByZero(f"{a} ^ {b}: division by zero")
            return int(a ** b)
        return a ** b if ints else math.pow(a, b)
    raise TypeError(f"unknown operator {op}")


def functor(name: str, args: list):
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
        return numbers.to_string(number(args[0], name))   # std::to_string: "%f" of a float
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
    start, length = number(start, "substr"), number(length, "substr")
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
