"""Queries as the REPL takes them (``?- body.``) and their answers as a table.

One path answers every query, from the REPL, a notebook cell, ``datalog query`` and Python:
the text is parsed by :func:`parsed` (:func:`~datalog.language.parser.parse_query`) and the body
answered by :meth:`Engine.ask <datalog.engine.engine.Engine.ask>` (a rule of its own, evaluated
and undone; a one-atom query is read off its relation). The answers are an :class:`Answers`: the
query's variables in the order they first appear, their distinct rows sorted, and the table
conversions under DuckDB's names (``df()``, ``pl()``, ``arrow()``). A wrong query is a coded
error (``syntax_error``, ``undefined_relation``, ``arity_mismatch``, ``type_mismatch``,
``unbound_variable``, ...) with a caret into the query's text; nothing changes.

>>> from datalog import Engine
>>> engine = Engine.from_source('''
...     .decl edge(a: number, b: number)
...     .decl name(a: number, s: symbol)
...     .decl path(a: number, b: number)
...     edge(1, 2). edge(2, 3). name(1, "one"). name(3, "three").
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''')
>>> result = engine.query('?- path(x, y), x < y, !edge(x, y), name(y, s).')
>>> result.columns, result.rows, len(result)
(['x', 'y', 's'], [(1, 3, 'three')], 1)
>>> engine.query("?- n = count : { path(_, _) }.").rows
[(3,)]
>>> engine.query("?- path(1, 3).").rows, engine.query("?- path(3, 1).").rows    # no variables
([()], [])
>>> print(engine.query("?- path(x, y), x > z.").rows)
Traceback (most recent call last):
    ...
datalog.language.errors.UnboundVariable: <query>:1:20: error[unbound_variable]: variable z in x > z is not bound by a positive atom
  ?- path(x, y), x > z.
                     ^
"""

from __future__ import annotations

from typing import Iterator

from datalog.engine import display
from datalog.language import numbers
from datalog.language.errors import DatalogError, Source, Span, SyntaxError_
from datalog.language.parser import parse_atom, parse_query
from datalog.language.mixed import MIXED, is_mixed
from datalog.language.types import AUTO, PRIMITIVES, value_type

PREFIX = "?-"


def is_query(text) -> bool:
    """Whether ``text`` is a query of the REPL's form (it starts with ``?-``)."""
    return isinstance(text, str) and text.lstrip().startswith(PREFIX)


def parsed(text: str, name: str = "<query>") -> tuple:
    """The body of the query ``text`` (``?- path(1, x), x > 0.``; the final ``.`` may be left out)."""
    stripped = text.rstrip()
    return parse_query(stripped if stripped.endswith(".") else stripped + ".", name)


def atom(text: str, name: str = "<query>"):
    """The atom of a query without ``?-`` (``path(1, X)``); a body of several literals without it is
    a ``syntax_error`` that shows the ``?-`` form."""
    try:
        return parse_atom(text, name)
    except SyntaxError_ as err:
        try:
            parsed(f"{PREFIX} {text}", name)
        except DatalogError:
            raise err from None
        raise SyntaxError_(f"without {PREFIX} a query is one atom; a query of several literals starts "
                           f"with {PREFIX}: {PREFIX} {title(text)}.", Span(Source(name, text), 1, 1)) from None


def title(text: str) -> str:
    """A query as its answers' title: ``path(1, X)`` of ``?- path(1, X).``"""
    words = " ".join(text.split())
    words = words[len(PREFIX):].lstrip() if words.startswith(PREFIX) else words
    return words[:-1] if words.endswith(".") else words


def answers(engine, body: tuple, name: str = "answers") -> "Answers":
    """The answers of the query ``body`` (parsed) on ``engine``, titled ``name``."""
    columns, rows = engine.ask(body)
    return Answers(columns, rows, name)


def run(engine, text: str, name: str = "<query>") -> "Answers":
    """The answers of the query ``text`` (from ``name``, for its errors) on ``engine``."""
    return answers(engine, parsed(text, name), title(text))


class Answers:
    """The answers of a query: its variables (``columns``, in the order they first appear) and
    their distinct rows (``rows``: tuples of Python values, sorted). A table like
    :class:`~datalog.engine.tables.Relation`: ``len()``, iteration, ``df()`` (pandas), ``pl()``
    (Polars), ``arrow()`` (a pyarrow Table; also ``to_pandas()``, ``to_polars()``,
    ``to_arrow()``), ``__arrow_c_stream__``, shown as an HTML or rich table. Column types are
    those of the values (an integer column beyond ``number``'s range is ``unsigned``; a column
    without rows is ``string``). A query without variables has no columns and one empty row if it
    holds, none if not.

    >>> answers = Answers(["X", "name"], [(1, "a"), (2, "b")])
    >>> answers, answers.arrow().schema.types
    (<Answers X, name: 2 rows>, [DataType(int64), DataType(string)])
    """

    def __init__(self, columns: list[str], rows: list[tuple], title: str = "answers"):
        self.columns, self.rows, self.title = list(columns), list(rows), title

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def kinds(self) -> list[tuple[str, object]]:
        """(column, kind) of each column, told from its values."""
        return [(name, _kind_of([row[i] for row in self.rows])) for i, name in enumerate(self.columns)]

    def arrow(self):
        """The answers as a pyarrow Table."""
        from datalog.engine import arrow            # pyarrow, imported when first needed
        return arrow.table_of(self.kinds(), self.rows)

    def df(self):
        """The answers as a pandas DataFrame."""
        return self.arrow().to_pandas()

    def pl(self):
        """The answers as a Polars DataFrame."""
        import polars
        return polars.from_arrow(self.arrow())

    to_arrow, to_pandas, to_polars = arrow, df, pl      # the names of Relation and TableChange

    def __arrow_c_stream__(self, requested_schema=None):
        return self.arrow().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"<Answers {', '.join(self.columns)}: {len(self)} row{'s' * (len(self) != 1)}>"

    def _repr_html_(self) -> str:
        return display.html(self.title, self.columns, self.rows, len(self))

    def __rich__(self):
        return display.rich_table(self.title, self.columns, self.rows, len(self))


def _kind_of(values: list):
    """The kind of a column holding ``values`` (``auto`` without any: a string column)."""
    if not values:
        return AUTO
    if is_mixed(values[0]):
        return MIXED                        # plain Datalog's numbers and symbols in one column
    kind = value_type(values[0])
    if kind == "number" and max(values) > numbers.INT_MAX:
        return "unsigned"
    return kind if kind in PRIMITIVES else AUTO      # a record or ADT: its text
