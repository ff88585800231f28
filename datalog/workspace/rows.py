"""Row blocks: a relation's rows as they travel inside a workspace record (snapshot, log),
``{"arity": k, "count": n, "values": [the n * k values, row after row]}``, and read back checked."""

from __future__ import annotations

from itertools import chain

from datalog.language.errors import WorkspaceCorrupt


def pack(rows, arity: int | None = None) -> dict:
    """Rows as ``{"arity": k, "count": n, "values": [the n * k values, row after row]}``.

    >>> pack([(1, "a"), (2, "b")]), sorted(unpack(pack([(1, "a"), (2, "b")]), "f"))
    ({'arity': 2, 'count': 2, 'values': [1, 'a', 2, 'b']}, [(1, 'a'), (2, 'b')])
    """
    rows = rows if isinstance(rows, list) else list(rows)
    arity = len(rows[0]) if arity is None and rows else arity or 0
    return {"arity": arity, "count": len(rows), "values": list(chain.from_iterable(rows))}


def unpack(packed: dict, where, columns=None, name: str | None = None, record: str = "a record") -> set[tuple]:
    return set(unpack_list(packed, where, columns, name, record))


def unpack_list(packed: dict, where, columns=None, name: str | None = None, record: str = "a record") -> list[tuple]:
    """The rows of :func:`pack`, in their stored order; with ``columns``
    (:class:`datalog.workspace.validate.Columns`) checked to be rows of relation ``name``
    (``record`` names the record in the error)."""
    arity, count, values = packed.get("arity"), packed.get("count"), packed.get("values")
    if not (type(arity) is int and type(count) is int and isinstance(values, list)
            and arity >= 0 and 0 <= count and len(values) == arity * count and (arity or count <= 1)):
        raise WorkspaceCorrupt(f"workspace file {where}: {record}: a block of rows is malformed")
    if columns is not None:
        columns.check(name, values, arity, where, record)
    if arity == 0:
        return [()] if count else []
    return list(zip(*[iter(values)] * arity))


def add(tables: dict[str, set], name: str, rows: set, where) -> None:
    """Rows into ``tables[name]``; every row of a relation must have one arity."""
    table = tables.get(name)
    if table is None:
        tables[name] = rows
        return
    check_arity(table, rows, name, where)
    table |= rows


def check_arity(table, rows, name: str, where) -> None:
    """Rows about to join ``table`` (a set or a list) have its arity."""
    if rows and table and len(next(iter(rows))) != len(next(iter(table))):
        raise WorkspaceCorrupt(f"workspace file {where}: rows of {name} with different arities")
