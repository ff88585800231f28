"""One value entering a relation from Python, against its column's type: the value the column
stores, or a :class:`Refusal` saying why it is none and what to pass instead (the rules are
:mod:`datalog.engine.admission`'s, which makes refusals errors naming the relation and column).

>>> convert("number", __import__("fractions").Fraction(3, 2))
Traceback (most recent call last):
    ...
datalog.language.values.Refusal: a Fraction is not a number (pass int(x) or float(x): a Fraction is not converted, it could round)
>>> convert("float", 2), convert("symbol", "x"), kind_of(True)
(2.0, 'x', None)
"""

from __future__ import annotations

import operator
from numbers import Integral, Rational, Real

from datalog.language.composites import NIL, Branch, Record
from datalog.language.errors import NumberOutOfRange, TypeMismatch
from datalog.language.mixed import MIXED, MixedNumber, MixedSymbol
from datalog.language.numbers import INT_MAX, INT_MIN, UINT_MAX, describe
from datalog.language.types import AUTO

PLURAL = {"number": "numbers", "unsigned": "unsigned numbers", "float": "floats", "symbol": "symbols",
          MIXED: "numbers and symbols",
          AUTO: "numbers, floats or symbols"}
RANGES = {"number": (INT_MIN, INT_MAX, "the signed 64-bit range"),
          "unsigned": (0, UINT_MAX, "the unsigned 64-bit range")}


class Refusal(Exception):
    """Why a value is no value of a column (``out_of_range``: its type fits, its value does not)."""

    def __init__(self, reason: str, out_of_range: bool = False):
        super().__init__(reason)
        self.reason, self.out_of_range = reason, out_of_range

    def error(self, where: str, kind, value, row: int | None = None, span=None):
        at = f" (row {row + 1})" if row is not None else ""
        if self.out_of_range:
            return NumberOutOfRange(f"{where}: {self.reason}{at}", span)
        plural = PLURAL.get(kind, f"{kind} values")
        return TypeMismatch(f"{where} holds {plural}, got {shown(value)}{at}: {self.reason}", span)


def convert(kind, value):
    """``value`` as a column of ``kind`` stores it; :class:`Refusal` if it is none of its values."""
    if kind in _CONVERT:
        return _CONVERT[kind](value)
    if getattr(kind, "is_composite", False):
        return _composite(kind, value)
    if kind == AUTO:
        settled = kind_of(value)
        if settled is None:
            raise Refusal(f"{a_kind(value)} is not a number, float or symbol")
        return _CONVERT[settled](value)
    raise Refusal(f"the column's type {kind} is unknown")


def kind_of(value) -> str | None:
    """The primitive type an ``auto`` column takes from ``value``: None if it is none."""
    value = _unwrapped(value)
    if _is_bool(value):
        return None
    if isinstance(value, str):
        return "symbol"
    if isinstance(value, Integral):
        return "number"
    if isinstance(value, Real) and not isinstance(value, Rational):
        return "float"
    return None


def _integer(kind: str):
    low, high, bound = RANGES[kind]

    def integer(value) -> int:
        if type(value) is not int:
            value = _int(_unwrapped(value), kind)
        if not low <= value <= high:
            raise Refusal(f"{describe(value)} is beyond {bound}", out_of_range=True)
        return value
    return integer


def _int(value, kind: str) -> int:
    if _is_bool(value):
        raise Refusal(f"a bool is not {_article(kind)} (pass int(flag) for 0 or 1)")
    if isinstance(value, Integral):
        return operator.index(value)
    if isinstance(value, (float, Real)) and not isinstance(value, Rational):
        raise Refusal(f"{a_kind(value)} is not {_article(kind)} (pass int(x), or declare the column float)")
    raise Refusal(f"{a_kind(value)} is not {_article(kind)} ({_hint(value, 'an int')})")


def _float(value) -> float:
    if type(value) is not float:
        value = _unwrapped(value)
        if _is_bool(value):
            raise Refusal("a bool is not a float (pass float(flag))")
        if isinstance(value, Integral):
            value = float(_CONVERT["number"](value))
        elif isinstance(value, Real) and not isinstance(value, Rational):
            exact = float(value)
            if exact != value and value == value:
                raise Refusal(f"{a_kind(value)} has more precision than a float holds (pass float(x) to round it)")
            value = exact
        else:
            raise Refusal(f"{a_kind(value)} is not a float ({_hint(value, 'a float')})")
    if value != value:
        raise Refusal("NaN is not a value (it has no place in the order of a relation's values)",
                      out_of_range=True)
    return value


def _symbol(value) -> str:
    if type(value) is not str:
        value = _unwrapped(value)
        if not isinstance(value, str):
            raise Refusal(f"{a_kind(value)} is not a symbol ({_hint(value, 'a str')})")
        value = str.__str__(value)                 # numpy's str_, any str subclass: a plain str
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise Refusal(f"it holds the lone surrogate U+{ord(value[exc.start]):04X} at {exc.start}, which "
                          f"UTF-8 cannot write (a symbol is text)") from None
    return value


def _mixed(value):
    """A value of a mixed column (:mod:`datalog.language.mixed`): a number or a symbol."""
    settled = kind_of(value)
    if settled == "symbol":
        return MixedSymbol(_symbol(value))
    if settled == "number":
        return MixedNumber(_CONVERT["number"](value))
    if _is_bool(_unwrapped(value)):
        raise Refusal("a bool is neither a number nor a symbol (pass int(flag) for 0 or 1)")
    raise Refusal(f"{a_kind(value)} is neither a number nor a symbol")


_CONVERT = {"number": _integer("number"), "unsigned": _integer("unsigned"), "float": _float, "symbol": _symbol,
            MIXED: _mixed}


def _composite(type_, value):
    """A record or ADT value of ``type_``, its fields converted (recursively)."""
    if type_.kind == "record":
        if type(value) is not Record:
            raise Refusal(f"{a_kind(value)} is not a record of {type_} (pass Record((field, ...)) or NIL)")
        if not value:
            return NIL
        if len(value) != len(type_.fields):
            raise Refusal(f"{type_} has {len(type_.fields)} fields, got a record of {len(value)}")
        return Record(_fields(type_, type_.fields, value, 0))
    if type(value) is not Branch or not value or value[0] not in type_.branches:
        names = ", ".join(sorted(type_.branches))
        raise Refusal(f"{a_kind(value)} is not a value of {type_} (pass Branch((name, argument, ...)), name one "
                      f"of {names})")
    types = type_.branches[value[0]]
    if len(value) != len(types) + 1:
        raise Refusal(f"${value[0]} of {type_} has {len(types)} arguments, got {len(value) - 1}")
    return Branch((value[0], *_fields(f"${value[0]}", types, value, 1)))


def _fields(owner, types, value, start: int) -> list:
    out = []
    for i, (part, kind) in enumerate(zip(value[start:], types)):
        try:
            out.append(convert(kind, part))
        except Refusal as refusal:
            reason = f"field {i + 1} of {owner}: {refusal.reason}"
            raise Refusal(reason if refusal.out_of_range else f"{reason}, got {shown(part)}",
                          refusal.out_of_range) from None
    return out


def _unwrapped(value):
    """An Arrow scalar as its Python value (None for a null); anything else as it is."""
    if type(value).__module__ == "pyarrow.lib" and hasattr(value, "as_py"):
        return value.as_py()
    return value


def _is_bool(value) -> bool:
    kind = type(value)
    return kind is bool or (kind.__module__ == "numpy" and kind.__name__.startswith("bool"))


def _hint(value, wanted: str) -> str:
    if value is None:
        return "a relation holds no nulls"
    if (isinstance(value, Rational) and not isinstance(value, Integral)) or type(value).__name__ == "Decimal":
        return f"pass int(x) or float(x): {a_kind(value)} is not converted, it could round"
    if isinstance(value, (bytes, bytearray)):
        return "pass a str: x.decode()" if wanted == "a str" else f"pass {wanted}"
    return f"pass {wanted}"


def a_kind(value) -> str:
    if value is None:
        return "None"
    name = type(value).__name__
    if isinstance(value, (bytes, bytearray)):
        return f"a {name} object"
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _article(kind: str) -> str:
    return "an unsigned" if kind == "unsigned" else f"a {kind}"


def shown(value) -> str:
    text = describe(value) if type(value) is int else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
