"""Admission: every value that enters a relation through the API is checked against its column's
type and made the value the relation stores, before anything changes. One set of rules for every
way in: ``Engine.insert``, ``Transaction.insert``/``retract``, ``Engine.commit`` (so a
workspace's engine commits too), the program's facts, and tables (pandas, Polars, Arrow, whose
columns :mod:`datalog.engine.arrow` checks by the same rules). A value's own check is
:func:`datalog.language.values.convert`; this module checks rows and columns with it. What
admission lets in, a workspace's reader (:mod:`datalog.workspace.validate`) reads back.

=============  ==============================================================================
column         takes (anything else is ``type_mismatch``)
=============  ==============================================================================
``number``     ``int`` (not ``bool``), numpy and Arrow integer scalars (any ``Integral``), made
               an ``int``: -2^63 .. 2^63-1 (under ``--number-width 32`` too, as fact files)
``unsigned``   the same, 0 .. 2^64-1
``float``      ``float``, numpy floats (a ``longdouble`` only if a double holds it exactly),
               Arrow float scalars, made a ``float``; an integer of the signed 64-bit range
               becomes the nearest float (as a fact file's integer does)
``symbol``     ``str`` (numpy ``str_`` and Arrow string scalars made a ``str``) that UTF-8 can
               write: a lone surrogate such as ``"\\ud800"`` is refused
record, ADT    ``Record``, ``NIL`` or ``Branch`` (``from datalog import Record, Branch, NIL``)
               of the column's type: its arity or branch, each field by these rules
``auto``       (a column nothing types yet) a number, float or symbol as above; its rows, or
               else the first value given, settle which: the others must be of that type
=============  ==============================================================================

Refused with a message saying what to pass: ``bool`` and numpy ``bool_`` (a bool is no number:
``int(flag)``), ``Fraction`` and ``Decimal`` (``int(x)`` or ``float(x)``: nothing that could round
is converted silently), ``None`` (a relation has no nulls), ``bytes``, ``complex`` and any other
object. An integer beyond its column's range and NaN are ``number_out_of_range``. A row is a
tuple or list of its relation's arity (any other iterable of values but a string, a mapping, a
set or a record); ``arity_mismatch`` otherwise.

>>> from datalog.language.types import RelationInfo
>>> info = RelationInfo("r", 2, ["float", "symbol"])
>>> admit(info, (1, "a"))
(1.0, 'a')
>>> admit(info, (1, 2))
Traceback (most recent call last):
    ...
datalog.language.errors.TypeMismatch: error[type_mismatch]: r column 2 holds symbols, got 2: an int is not a symbol (pass a str)
>>> misfit(info, (1, 2))
1
>>> rows("n", [("x", "number")], [(True,)])
Traceback (most recent call last):
    ...
datalog.language.errors.TypeMismatch: error[type_mismatch]: n column 1 (x) holds numbers, got True (row 1): a bool is not a number (pass int(flag) for 0 or 1)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from operator import itemgetter

from datalog.engine.memory import paused_gc
from datalog.language.composites import Branch, Record
from datalog.language.display import fact_text
from datalog.language.errors import ArityMismatch, TypeMismatch
from datalog.language.types import AUTO
from datalog.language.values import RANGES, Refusal, a_kind, convert, kind_of, shown

# ---------------------------------------------------------------- rows

def admit(info, row: tuple, span=None) -> tuple:
    """``row`` as the relation of ``info`` (a RelationInfo) stores it: ``arity_mismatch``,
    ``type_mismatch`` or ``number_out_of_range``, pointing at ``span``, if it does not fit."""
    if len(row) != info.arity:
        raise ArityMismatch(f"{info.name} has arity {info.arity}, got a row of {len(row)}: "
                            f"{fact_text(info.name, row)}", span)
    out = []
    for i, (value, kind) in enumerate(zip(row, info.types)):
        try:
            out.append(convert(kind, value))
        except Refusal as refusal:
            raise refusal.error(_where(info.name, i, _names(info)), kind, value, span=span) from None
    return tuple(out)


def misfit(info, row) -> int | None:
    """The culprit of a type mismatch: the index of the first value of ``row`` that its column
    refuses, ``None`` if every one fits (values past the relation's arity are not looked at)."""
    for i, (value, kind) in enumerate(zip(row, info.types)):
        try:
            convert(kind, value)
        except Refusal:
            return i
    return None


def rows(name: str, kinds, data, requested=()) -> list[tuple]:
    """The rows of ``data`` (an iterable of tuples, or a table: :func:`is_tabular`) as relation
    ``name`` with columns ``kinds`` ((column name, kind) pairs) stores them, every one checked
    before any is returned. An ``auto`` column still untyped takes the type of the first row of
    ``requested`` (rows already requested in the same transaction), else of ``data``'s first."""
    first = next(iter(requested), None)
    if first is not None:
        kinds = [(n, kind_of(first[i]) or k if k == AUTO else k) for i, (n, k) in enumerate(kinds)]
    if is_tabular(data):
        from datalog.engine import arrow              # pyarrow, imported when first needed
        return arrow.rows_of(name, kinds, data)
    with paused_gc():                                 # millions of new tuples, none of them cyclic
        listed = _listed(name, len(kinds), data)
        if not listed or not kinds:
            return listed
        columns = [list(map(itemgetter(i), listed)) for i in range(len(kinds))]
        checked = [_column(_where(name, i, [n for n, _ in kinds]), kind, column)
                   for i, ((_, kind), column) in enumerate(zip(kinds, columns))]
        if all(new is old for new, old in zip(checked, columns)):
            return listed
        return list(zip(*checked))


def is_tabular(data) -> bool:
    """Whether ``data`` is a table (:func:`datalog.engine.arrow.as_table` takes it) rather than an
    iterable of tuples: a pandas or Polars DataFrame, a pyarrow Table, RecordBatch or
    RecordBatchReader, or anything with ``__arrow_c_stream__`` (told without importing pyarrow)."""
    kind = type(data)
    return hasattr(kind, "__arrow_c_stream__") or kind.__module__.split(".")[0] in ("pyarrow", "pandas", "polars")


def _column(where: str, kind, column: list) -> list:
    """The values of one column, checked: ``column`` itself when every value is stored as it is
    (one pass or two in C for the common cases), else the converted values."""
    if kind == AUTO:
        kind = kind_of(column[0]) or AUTO             # the first value settles the column's type
    kinds = set(map(type, column))
    if len(kinds) == 1:
        only = next(iter(kinds))
        if only is int and kind in RANGES:
            low, high, _ = RANGES[kind]
            if low <= min(column) and max(column) <= high:
                return column
        elif only is float and kind == "float" and not any(map(math.isnan, column)):
            return column
        elif only is str and kind == "symbol" and all(map(str.isascii, column)):
            return column
    out = []
    for row, value in enumerate(column):
        try:
            out.append(convert(kind, value))
        except Refusal as refusal:
            raise refusal.error(where, kind, value, row) from None
        except RecursionError:
            raise Refusal("it is nested too deeply").error(where, kind, value, row) from None
    return out


def _listed(name: str, arity: int, data) -> list[tuple]:
    """``data`` as a list of tuples of ``arity`` values."""
    if isinstance(data, (str, bytes, bytearray)):
        raise TypeMismatch(f"the rows of {name} are an iterable of tuples, got {shown(data)} ({a_kind(data)})")
    try:
        iterator = iter(data)
    except TypeError:
        raise TypeMismatch(f"the rows of {name} are an iterable of tuples, got {shown(data)} "
                           f"({a_kind(data)})") from None
    listed = list(iterator)
    if set(map(type, listed)) - {tuple}:
        listed = [row if type(row) is tuple else _row(name, arity, row, n) for n, row in enumerate(listed)]
    if set(map(len, listed)) - {arity}:
        row = next(row for row in listed if len(row) != arity)
        raise ArityMismatch(f"{name} has arity {arity}, got a row of {len(row)}: {fact_text(name, row)}")
    return listed


def _row(name: str, arity: int, row, number: int) -> tuple:
    """A row given as a list or another iterable of values, as a tuple."""
    if not isinstance(row, (str, bytes, bytearray, Mapping, set, frozenset, Record, Branch)):
        try:
            return tuple(row)
        except TypeError:
            pass
    example = f" such as ({shown(row)},)" if arity == 1 else ""
    raise TypeMismatch(f"row {number + 1} of {name} is {shown(row)} ({a_kind(row)}): a row is a tuple of its "
                       f"{arity} value{'s' * (arity != 1)}{example}")


def _names(info) -> list[str]:
    return list(info.column_names) if len(info.column_names) == info.arity else []


def _where(name: str, index: int, names: list[str]) -> str:
    named = f" ({names[index]})" if index < len(names) else ""
    return f"{name} column {index + 1}{named}"
