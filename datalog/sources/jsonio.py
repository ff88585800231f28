"""``IO=jsonfile`` (a file, in and out) and ``IO=json`` (printed): relations as JSON, as Soufflé
2.x writes and reads them (``src/include/souffle/io/*StreamJSON.h``).

A relation is one JSON array holding a row per tuple, ``",\\n"`` between rows: with
``format=list`` (the default) each row is an array of its values, with ``format=object`` an
object keyed by the ``.decl``'s column names. A nullary relation that holds is ``[null\\n]``.
Symbols are JSON strings, numbers JSON numbers; floats are printed as C++'s stream prints
them by default (6 significant digits: Soufflé sets no precision for JSON), so infinity is
``inf``, which is not JSON. Reading takes an array of arrays or of objects (then each value is
found by its column's name). Records and ADTs wrap :func:`json_value` and :func:`from_json`.

>>> format_json([(1, 'a "q"'), (2, "b")], ["n", "s"], objects=False)
'[[1, "a \\\\"q\\\\""],\\n[2, "b"]]\\n'
>>> format_json([(0.1,)], ["x"], objects=True)
'[{"x": 0.1}]\\n'
"""

from __future__ import annotations

import json

from datalog.language import composites

from datalog.language import numbers
from datalog.language.display import plural


def json_value(value, type_=None, objects: bool = False) -> str:
    """One value as Soufflé's JSON writer prints it: a record as a list (as an object of its
    field names when ``objects`` and its RecordType ``type_`` is known), nil as ``null``."""
    if isinstance(value, composites.Record):
        if not value:
            return "null"
        fields = getattr(type_, "fields", None)
        parts = [json_value(v, fields[i] if fields else None, objects) for i, v in enumerate(value)]
        if objects and fields:
            names = (json.dumps(n, ensure_ascii=False) for n in type_.field_names)
            return "{" + ", ".join(f"{n}: {p}" for n, p in zip(names, parts)) + "}"
        return "[" + ", ".join(parts) + "]"
    if isinstance(value, composites.Branch):
        return json.dumps(composites.render(value), ensure_ascii=False)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def format_json(rows, columns: list[str], objects: bool, types=None) -> str:
    """A relation's JSON text (``types``: the column types, for records' field names)."""
    rows = list(rows)
    if rows and not rows[0]:
        return "[null\n]\n"
    types = list(types or []) + [None] * (len(rows[0]) if rows else 0)
    if objects:
        keys = [json.dumps(c, ensure_ascii=False) for c in columns]
        items = ["{" + ", ".join(f"{k}: {json_value(v, t, True)}" for k, v, t in zip(keys, row, types)) + "}"
                 for row in rows]
    else:
        items = ["[" + ", ".join(json_value(v, t) for v, t in zip(row, types)) + "]" for row in rows]
    return "[" + ",\n".join(items) + "]\n"


def from_json(item, type_: str):
    """One JSON value as a value of ``type_``; None if it is not one. A record is read as Soufflé's
    JSON reader reads it: ``null`` is nil, an array holds its fields, an object names them.

    >>> from datalog.language.parser import parse
    >>> from datalog.language.checks import check
    >>> types = check(parse(".type L = [head: number, tail: L]\\n.decl a(x: L)")).schema["a"].types
    >>> from_json([2, [3, None]], types[0]), from_json({"head": 1, "tail": None}, types[0])
    ([2, [3, nil]], [1, nil])
    >>> from_json([2, "x"], types[0]) is None
    True
    """
    if isinstance(type_, composites.RecordType):
        return _record_from_json(item, type_)
    if type_ in ("symbol", "auto"):
        return item if isinstance(item, str) and composites.utf8(item) else None     # ("\ud800": none)
    if isinstance(item, bool) or not isinstance(item, (int, float)):
        return None
    if type_ == "float":
        return float(item)
    if type_ == "unsigned":
        return item if numbers.in_unsigned_range(item) else None
    if isinstance(item, int) and numbers.in_range(item):
        return item
    return None


def _record_from_json(item, type_: "composites.RecordType"):
    if item is None:
        return composites.NIL
    if isinstance(item, dict):
        if set(item) != set(type_.field_names):
            return None
        item = [item[name] for name in type_.field_names]
    if not isinstance(item, list) or len(item) != len(type_.fields):
        return None
    values = [from_json(v, t) for v, t in zip(item, type_.fields)]
    return None if any(v is None for v in values) else composites.Record(values)


def parse_json(text: str, types: list[str], columns: list[str]) -> list[tuple]:
    """The rows of a relation's JSON text; ``ValueError`` naming the first bad row."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, list):
        raise ValueError("a relation in JSON is an array of rows")
    if not types:
        return [()] if data else []
    return [_row(item, types, columns, number) for number, item in enumerate(data, 1)]


def _no_constant(name: str):
    raise ValueError(f"{name} is not a value")


def _row(item, types, columns, number) -> tuple:
    if isinstance(item, dict):
        missing = [c for c in columns if c not in item]
        if missing or len(columns) != len(types):
            raise ValueError(f"row {number} has no value for {missing[0] if missing else 'its columns'}")
        item = [item[c] for c in columns]
    if not isinstance(item, list) or len(item) < len(types):
        raise ValueError(f"row {number} is not an array of {plural(len(types), 'value')}")
    values = [from_json(v, t) for v, t in zip(item, types)]
    for i, (value, type_) in enumerate(zip(values, types)):
        if value is None:
            raise ValueError(f"row {number}: value {i + 1} is {json.dumps(item[i])}, not a {type_}")
    return tuple(values)
