"""Admission of a row into a relation: its arity, its column types, and its values as the relation stores them.

A value fits a column of its own type, a column still typed ``auto``, and a ``float`` column if it is a
number (stored as a float); an ``unsigned`` column takes integers (an int is both). Integers beyond
the signed 64-bit range (for an ``unsigned`` column: outside 0 .. 2^64-1) and NaN are no values of
the engine (:mod:`datalog.language.numbers`): ``number_out_of_range``.

>>> from datalog.language.types import RelationInfo
>>> info = RelationInfo("r", 2, ["float", "symbol"])
>>> admit(info, (1, "a"))
(1.0, 'a')
>>> admit(info, (1, 2))
Traceback (most recent call last):
    ...
datalog.language.errors.TypeMismatch: error[type_mismatch]: r expects a symbol, got 2
>>> misfit(info, (1, 2))
1
"""

from __future__ import annotations

from datalog.language import numbers
from datalog.language.composites import conforms
from datalog.language.display import fact_text, value_text
from datalog.language.errors import ArityMismatch, NumberOutOfRange, TypeMismatch
from datalog.language.types import AUTO, RelationInfo, convert, value_type


def admit(info: RelationInfo, row: tuple, span=None) -> tuple:
    """``row`` converted for the relation of ``info`` (a number into a ``float`` column becomes a
    float); ``arity_mismatch`` or ``type_mismatch``, pointing at ``span``, if it does not fit."""
    if len(row) != info.arity:
        raise ArityMismatch(f"{info.name} has arity {info.arity}, got a row of {len(row)}: "
                            f"{fact_text(info.name, row)}", span)
    column = misfit(info, row)
    if column is not None:
        raise TypeMismatch(f"{info.name} expects a {info.types[column]}, got {value_text(row[column])}", span)
    for i, (value, type_) in enumerate(zip(row, info.types)):
        problem = numbers.value_problem(value, type_)
        if problem is not None:
            raise NumberOutOfRange(f"{info.name} column {i + 1}: {problem}", span)
    return tuple(convert(v, t) for v, t in zip(row, info.types))


def misfit(info: RelationInfo, row) -> int | None:
    """The culprit of a type mismatch: the index of the first value of ``row`` whose type does not fit
    its column, ``None`` if every one fits (values past the relation's arity are not looked at)."""
    for i, (value, type_) in enumerate(zip(row, info.types)):
        got = value_type(value)
        if type_ not in (AUTO, got) and not (type_ in ("float", "unsigned") and got == "number"):
            # records (issue 18): a record or ADT value of the column's composite type
            if not (got == "record" and getattr(type_, "is_composite", False) and conforms(value, type_)):
                return i
    return None
