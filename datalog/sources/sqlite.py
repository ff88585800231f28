"""``IO=sqlite``: relations read from and written to SQLite databases (Python's :mod:`sqlite3`),
in the layout of Soufflé 2.x (``src/include/souffle/io/*StreamSQLite.h``).

The database is ``filename=``, else ``dbname=``, else ``<name>.sqlite``, under the fact or output
directory (a ``file:`` prefix, which Soufflé passes to SQLite as a URI, is dropped: the path
policy of :mod:`datalog.sources.paths` holds for it as for any file). ``name=`` (default: the
relation) names the table or view.

- Output: a table ``_<name>`` with columns ``'0'``, ``'1'``, ... holding numbers as they are and
  each symbol as its id in the table ``__SymbolTable(id INTEGER PRIMARY KEY, symbol TEXT
  UNIQUE)``, and a view ``<name>`` that joins them back and names the columns as the ``.decl``
  does. The table is emptied first (replaced if it has another number of columns), the view
  made anew; other tables of the database stay, so several relations may
  share one database. An ``unsigned`` is stored as the signed 64-bit integer of its bits (SQLite's
  INTEGER is signed; so does Soufflé), read back as the unsigned. Floats are stored as SQLite REALs (Soufflé stores their bit pattern as an
  integer, which its own reader does not read back as the float).
- Input: ``SELECT * FROM <name>`` (a table or a view: a Soufflé output, or any table), each
  value's text read as the column's type, the first ``arity`` columns used.

The database is written beside its destination as a temporary copy and renamed over it with the
other outputs (:mod:`datalog.sources.atomic`): all or none.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from datalog.language.errors import BadFactFile, MissingInput
from datalog.sources import atomic
from datalog.language.display import plural

Error = sqlite3.Error
SYMBOLS = "__SymbolTable"


def file_name(name: str) -> str:
    """The database's file name: a ``file:`` URI's path (its query dropped), else ``name``."""
    if name.startswith("file:"):
        return urllib.parse.unquote(name[len("file:"):].split("?", 1)[0])
    return name


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Table:
    name: str
    rows: list
    columns: list[str]
    types: list[str] | None = None

    def symbol_columns(self) -> list[bool]:
        """Which columns hold symbols: as the first row's values say, else as the types say."""
        arity = len(self.rows[0]) if self.rows else len(self.types or self.columns)
        if self.rows:
            return [isinstance(v, str) for v in self.rows[0]]
        return [(self.types or ["number"] * arity)[i] == "symbol" for i in range(arity)]

    def view_columns(self, arity: int) -> list[str]:
        names = list(self.columns)
        ok = len(names) == arity and len(set(names)) == arity
        return names if ok else [str(i) for i in range(arity)]


def stage_database(real: Path, tables: list[Table]) -> atomic.Staged:
    """A temporary copy of the database at ``real`` (or a new one) with ``tables`` written in."""
    existing = real.read_bytes() if real.is_file() else b""
    staged = atomic.stage(real, [existing])
    try:
        con = sqlite3.connect(staged.tmp, isolation_level=None)
        try:
            con.execute("BEGIN")
            for table in tables:
                _write(con, table)
            con.execute("COMMIT")
        finally:
            con.close()
        fd = os.open(staged.tmp, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        staged.discard()
        raise
    return staged


def _write(con: sqlite3.Connection, table: Table) -> None:
    """One relation: its table emptied and filled, the symbol table and the view made if missing."""
    symbols = table.symbol_columns()
    arity = len(symbols)
    if arity == 0:
        raise sqlite3.OperationalError("a nullary relation has no column to store in SQLite")
    data = _ident("_" + table.name)
    # a table left by an earlier program of another arity is replaced (Soufflé would fail on it)
    if len(con.execute(f"PRAGMA table_info({data})").fetchall()) not in (0, arity):
        con.execute(f"DROP TABLE {data}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {data} ("
                + ",".join(f"{_ident(str(i))} INTEGER" for i in range(arity)) + ")")
    con.execute(f"DELETE FROM {data}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {_ident(SYMBOLS)} (id INTEGER PRIMARY KEY, symbol TEXT UNIQUE)")
    _create_view(con, table, symbols)
    ids = _symbol_ids(con, {row[i] for row in table.rows for i in range(arity) if symbols[i]})
    unsigned = [t == "unsigned" for t in (table.types or [])] + [False] * arity
    con.executemany(f"INSERT INTO {data} VALUES ({','.join('?' * arity)})",
                    [tuple(ids[v] if symbols[i] else _bits(v) if unsigned[i] else v for i, v in enumerate(row))
                     for row in table.rows])


def _bits(value: int) -> int:
    """An unsigned as the signed 64-bit integer of its bits."""
    return value - 2 ** 64 if value >= 2 ** 63 else value


def _symbol_ids(con: sqlite3.Connection, texts: set[str]) -> dict[str, int]:
    con.executemany(f"INSERT OR IGNORE INTO {_ident(SYMBOLS)} (symbol) VALUES (?)", [(t,) for t in sorted(texts)])
    return {t: i for i, t in con.execute(f"SELECT id, symbol FROM {_ident(SYMBOLS)}") if t in texts}


def _create_view(con: sqlite3.Connection, table: Table, symbols: list[bool]) -> None:
    """``<name>``: the table's columns under the ``.decl``'s names, each symbol id replaced by its text."""
    data = _ident("_" + table.name)
    select, sources, joins = [], [data], []
    for i, (column, symbol) in enumerate(zip(table.view_columns(len(symbols)), symbols)):
        if symbol:
            alias = _ident(f"_symtab_{i}")
            select.append(f"{alias}.symbol AS {_ident(column)}")
            sources.append(f"{_ident(SYMBOLS)} AS {alias}")
            joins.append(f"{data}.{_ident(str(i))} = {alias}.id")
        else:
            select.append(f"{data}.{_ident(str(i))} AS {_ident(column)}")
    where = f" WHERE {' AND '.join(joins)}" if joins else ""
    con.execute(f"DROP VIEW IF EXISTS {_ident(table.name)}")       # its columns may have changed
    con.execute(f"CREATE VIEW {_ident(table.name)} AS SELECT {', '.join(select)} "
                f"FROM {', '.join(sources)}{where}")


def read_relation(path: Path, name: str, types: list[str], parse: Callable, directive) -> list[tuple]:
    """The rows of table or view ``name`` of the database at ``path``, each value's text read by
    ``parse(text, type)``; a missing database or table is ``missing_input``, a value that is
    not of its column's type ``bad_fact_file``."""
    span = directive.span if directive is not None else None
    if not path.is_file():
        raise MissingInput(f"SQLite database {path} for relation {name} does not exist", span)
    try:
        con = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True)
        try:
            found = con.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') "
                                "AND name = ?", (name,)).fetchone()[0]
            if not found:
                raise MissingInput(f"SQLite database {path} has no table or view {name}", span)
            raw = con.execute(f"SELECT * FROM {_ident(name)}").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise BadFactFile(f"cannot read SQLite database {path}: {exc}", span) from None
    return [_row(values, types, parse, path, number, span) for number, values in enumerate(raw, 1)]


def _row(values, types, parse, path, number, span) -> tuple:
    if len(values) < len(types):
        raise BadFactFile(f"row {number} of {path} has {plural(len(values), 'column')}, the relation {len(types)}", span)
    out = []
    for i, (value, type_) in enumerate(zip(values, types)):
        parsed = parse(_text(value), type_)
        if parsed is None:
            raise BadFactFile(f"row {number} of {path}: column {i + 1} holds {value!r}, not a {type_}", span)
        out.append(parsed)
    return tuple(out)


def _text(value) -> str:
    """A value as SQLite's ``sqlite3_column_text`` gives it to Soufflé."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float):
        return repr(value)
    return str(value)
