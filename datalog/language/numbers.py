"""The engine's numbers: signed and unsigned 64-bit integers and IEEE 754 doubles without NaN.

``number`` holds the integers of Soufflé built with ``-DRAM_DOMAIN_SIZE=64``:
``-2^63 .. 2^63 - 1``. Where Soufflé's C++ silently wraps a signed result (undefined behaviour
in C++), this engine stops: a literal, a fact, an inserted value or an arithmetic result outside
the range is a ``number_out_of_range`` error at its position, so every answer it gives is the
one Soufflé gives whenever Soufflé does not overflow. (Checking the bound also keeps
``2 ^ 40000000000`` and a 5,000-digit literal from costing memory or time: nothing beyond 64
bits is ever built.)

``unsigned`` is a type of its own, Soufflé's ``RamUnsigned`` (``uint64``): ``0 .. 2^64 - 1``,
held as non-negative Python ints (so relations, tries and joins order them unsigned as they
are). Its arithmetic (``+ - * ^``, the bitwise and logical operators, ``sum``) wraps modulo
2^64 as C++'s unsigned arithmetic does (that wrap is defined behaviour in C++, so it is
Soufflé's answer, not an accident of it): ``0u - 1u`` is ``18446744073709551615``. Conversions
wrap as C++'s ``static_cast`` does: ``itou(-1)`` is ``2^64 - 1``, ``utoi(2^63)`` is ``-2^63``.
Literals (``7u``), facts and inserted values of an unsigned column must lie in ``0 .. 2^64-1``:
outside is ``number_out_of_range`` (or ``bad_fact_file`` in a file), as for number.

``float`` holds IEEE 754 doubles, ``inf`` and ``-inf`` included, with IEEE's arithmetic
(``1e308 * 10`` is ``inf``, ``inf + 1`` is ``inf``). NaN is not a value: its ``NaN != NaN``
would break the total order that sorted relations and the leapfrog join rely on (a join on a
NaN key never advances), and ``nan``/``NaN`` would be rows that print alike. So a fact file,
an updates file, an insert or a Spark source holding NaN is refused (``bad_fact_file``,
``type_mismatch``), and an operation whose IEEE result is NaN (``inf - inf``, ``inf * 0``,
``inf / inf``, ``sum`` over ``inf`` and ``-inf``) is an ``invalid_arithmetic`` error at the rule.

Text is read as Soufflé reads it, in ASCII only: integers ``[-+]?digits``, ``0x``/``0b``
prefixed; floats decimal with an optional exponent, or ``inf``/``infinity``. Python's own
``int()``/``float()`` would also take ``1_0``, Arabic-Indic digits and ``nan``.

>>> parse_int("-0x1f"), parse_int("1_0"), parse_int("\u0661\u0662"), parse_int(str(2 ** 63))
(-31, None, None, None)
>>> parse_float("2.5e3"), parse_float("-Inf"), parse_float("nan"), parse_float("1e400")
(2500.0, -inf, None, None)
"""

from __future__ import annotations

import hashlib
import math
import re

INT_MIN = -2 ** 63
INT_MAX = 2 ** 63 - 1
RANGE = "the signed 64-bit range"
UINT_MAX = 2 ** 64 - 1
URANGE = "the unsigned 64-bit range"

_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)", re.ASCII)
_DECIMAL = re.compile(r"[-+]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_INFINITY = re.compile(r"[-+]?(?:inf|infinity)", re.ASCII | re.IGNORECASE)
_NAN = re.compile(r"[-+]?nan", re.ASCII | re.IGNORECASE)
_DIGITS = 64        # more digits than any 64-bit integer has, even in binary: out of range unparsed


# ---- functors (issue 18): Soufflé's number width. Soufflé's `number` is 32-bit by default and its
# arithmetic wraps; with width 32 (`datalog run --number-width 32`) the integer results of
# + - * ^, unary minus, the bitwise operators and sum wrap to 32 bits as Soufflé's do. Values read
# (literals, facts) keep the 64-bit range. The default, 64, is Soufflé's -DRAM_DOMAIN_SIZE=64
# without its wrap: an overflow is number_out_of_range.
WIDTH = [64]


def set_width(bits: int) -> None:
    if bits not in (32, 64):
        raise ValueError(f"number width {bits} (use 32 or 64)")
    WIDTH[0] = bits


def wrap(value, bits: int):
    """An integer as a signed ``bits``-bit two's complement value (a float unchanged)."""
    if isinstance(value, float) or isinstance(value, str):
        return value
    half = 1 << (bits - 1)
    return ((value + half) % (1 << bits)) - half


def unsigned_bits() -> int:
    """The width of ``unsigned``: 64 bits (Soufflé's RamUnsigned of -DRAM_DOMAIN_SIZE=64), also
    under ``--number-width 32``, which narrows only number's arithmetic."""
    return 64


def wrap_unsigned(value: int) -> int:
    """An integer as an unsigned value: modulo 2^64 (C++'s static_cast to uint64)."""
    return value & UINT_MAX


def to_signed(value: int) -> int:
    """An unsigned value as the signed number of the same 64 bits (C++'s static_cast of uint64
    to int64): ``2^64 - 1`` is ``-1``; a number is itself."""
    return value - 2 ** 64 if value > INT_MAX else value


def in_unsigned_range(value) -> bool:
    return type(value) is int and 0 <= value <= UINT_MAX


def parse_unsigned(text: str, prefixed: bool = True) -> int | None:
    """The unsigned integer ``text`` spells (``0x``/``0b`` unless not ``prefixed``; no sign but an
    optional ``+``), None if it is none or beyond ``0 .. 2^64-1``.

    >>> parse_unsigned(str(2 ** 64 - 1)), parse_unsigned(str(2 ** 64)), parse_unsigned("-1"), parse_unsigned("0x1f")
    (18446744073709551615, None, None, 31)
    """
    text = text.strip()
    if text.startswith("-") or not (_INT if prefixed else _DECIMAL).fullmatch(text):
        return None
    value = _magnitude(text.lstrip("+"))
    return value if value is not None and value <= UINT_MAX else None


def _magnitude(body: str) -> int | None:
    """The value of unsigned digits (``0x``/``0b`` prefixed or decimal) that the caller matched;
    None past :data:`_DIGITS` digits, which no 64-bit value has (never built: no cost)."""
    base = {"0x": 16, "0X": 16, "0b": 2, "0B": 2}.get(body[:2], 10)
    digits = (body[2:] if base != 10 else body).lstrip("0") or "0"
    return None if len(digits) > _DIGITS else int(digits, base)


def symbol_ordinal(text: str) -> int:
    """``ord("abc")``: Soufflé gives a symbol's index in its symbol table, which depends on the order
    it met its symbols in; here a symbol's number is a 63-bit BLAKE2 digest of its UTF-8 text:
    the same in every run, process and evaluator, distinct for distinct symbols (a collision is
    a 2^-63 chance per pair), so ord(a) < ord(b) orders symbols, as programs use it for, though
    not in Soufflé's order."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def in_range(value: int) -> bool:
    return INT_MIN <= value <= INT_MAX


def parse_int(text: str, prefixed: bool = True) -> int | None:
    """The integer ``text`` spells (surrounding blanks allowed; ``0x``/``0b`` unless not
    ``prefixed``), None if it is not an integer or is beyond the range (tell them apart with
    :func:`int_syntax`)."""
    text = text.strip()
    if not (_INT if prefixed else _DECIMAL).fullmatch(text):
        return None
    value = _magnitude(text.lstrip("+-"))
    if value is None:
        return None
    value = -value if text.startswith("-") else value
    return value if in_range(value) else None


_SHORT = re.compile(r"-?[0-9]{1,18}", re.ASCII)     # at most 18 digits: always within the range


def parse_ints(texts: list[str]) -> list[int] | None:
    """:func:`parse_int` of every text, None if one is not an integer within the range; the
    common plain decimals go through int() in bulk.

    >>> parse_ints(["1", "-20", "0x10"]), parse_ints(["1", "x"])
    ([1, -20, 16], None)
    """
    if all(map(_SHORT.fullmatch, texts)):
        return list(map(int, texts))
    values = [parse_int(t) for t in texts]
    return None if None in values else values


def int_syntax(text: str, prefixed: bool = True) -> bool:
    """Whether ``text`` is spelled as an integer (in range or not)."""
    return (_INT if prefixed else _DECIMAL).fullmatch(text.strip()) is not None


def parse_float(text: str) -> float | None:
    """The double ``text`` spells (an integer too), None if it is not a float, is NaN or a
    finite decimal beyond the largest double."""
    text = text.strip()
    if _INFINITY.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if not _FLOAT.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def float_problem(text: str) -> str:
    """Why :func:`parse_float` refused ``text``: a phrase for an error message."""
    text = text.strip()
    if _NAN.fullmatch(text):
        return "not a value: NaN is refused (it has no place in the order of a relation's values)"
    if _FLOAT.fullmatch(text):
        return "beyond the largest double"
    return "not a float"


def to_string(value) -> str:
    """``to_string(x)`` as Soufflé computes it, C++'s ``std::to_string``: an integer in decimal, a
    float as ``%f`` (six decimals: ``to_string(1.5)`` is ``"1.500000"``, ``1e20`` is
    ``"100000000000000000000.000000"``, infinity ``"inf"``).

    >>> to_string(7), to_string(0.1), to_string(-2.0), to_string(float("-inf"))
    ('7', '0.100000', '-2.000000', '-inf')
    """
    return f"{value:f}" if isinstance(value, float) else str(value)


def value_problem(value, type_: str | None = None) -> str | None:
    """What makes ``value`` (from an insert, a source, a computation) no value of this engine
    (of a column of ``type_``): an integer beyond the range (for ``unsigned``: outside
    0 .. 2^64-1) or a NaN; None if it is one."""
    if type_ == "unsigned" and isinstance(value, int) and not isinstance(value, bool):
        return None if 0 <= value <= UINT_MAX else f"{_short(value)} is beyond {URANGE}"
    if isinstance(value, float):
        return "NaN is not a value" if value != value else None
    if isinstance(value, int) and not in_range(value):
        return f"{_short(value)} is beyond {RANGE}"
    return None


def _short(value: int) -> str:
    """An integer for a message: its digits when few, else its size (str() of a huge int is slow
    and, past 4,300 digits, raises)."""
    if value.bit_length() <= 200:
        return str(value)
    return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"


def describe(value) -> str:
    """``value`` for an error message, whatever its size."""
    return _short(value) if isinstance(value, int) else repr(value)
