"""Relations as Arrow tables, and Arrow tables (pandas, Polars, anything with ``__arrow_c_stream__``)
as rows of a relation: the one module of the engine that imports pyarrow (imported when first
used, so that ``import datalog`` and ``datalog run`` do not pay for it).

Column types, by the type the ``.decl`` names (through ``.type`` aliases):

=============  =====================  ===================================================
``number``     ``int64``              integers of any Arrow width in, within the range
``unsigned``   ``uint64``             integers >= 0 in, within the engine's range
``float``      ``float64``            floats, or integers of the signed range (made the nearest float); NaN refused
``symbol``     ``string``             ``string``, ``large_string``, ``string_view``, dictionary of strings
records, ADTs  ``string``             their Soufflé text with symbols quoted: ``[1, "a"]``,
                                      ``$Circle(5)``, ``nil``; read back with the same grammar
mixed          ``string``             plain Datalog's columns of numbers and symbols: ``5``,
                                      ``"a"`` (symbols quoted); in, integers, or text read
                                      by :func:`datalog.language.mixed.from_text`
=============  =====================  ===================================================

Records and ADTs are text because their types may be recursive (``.type List = [h: number,
t: List]``), which no Arrow struct type can describe; symbols inside are quoted (``"a, b"``
stays one symbol), so the text reads back to the same value. A column still typed ``auto`` (an
undeclared relation without rows) takes what comes: integers, floats or strings.

Input is checked column by column before any row is built (``type_mismatch`` names the relation
and the column; a null, NaN or an integer out of range is refused as the tuple API refuses it),
then each column becomes Python values in one ``to_pylist()`` and the rows are their ``zip``.

>>> import pyarrow as pa
>>> kinds = [("a", "number"), ("b", "symbol")]
>>> table_of(kinds, [(1, "x"), (2, "y")]).to_pylist()
[{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
>>> rows_of("r", kinds, pa.table({"b": ["x"], "a": pa.array([7], pa.int8())}))
[(7, 'x')]
>>> rows_of("r", kinds, pa.table({"a": [1.5], "b": ["x"]}))
Traceback (most recent call last):
    ...
datalog.language.errors.TypeMismatch: error[type_mismatch]: r column a (1) holds numbers, got Arrow type double
"""

from __future__ import annotations

import functools
import io
from operator import itemgetter

import pyarrow as pa
import pyarrow.compute as pc

from datalog.engine.memory import paused_gc
from datalog.language import composites, numbers
from datalog.language.display import plural
from datalog.language.errors import ArityMismatch, NumberOutOfRange, TypeMismatch
from datalog.language.mixed import MIXED, MixedNumber, from_text, written
from datalog.language.types import PRIMITIVES
from datalog.sources.files import parse_value

Kinds = list[tuple[str, object]]     # (column name, kind): number, unsigned, float, symbol, auto, or a CompositeType

# ``unsigned`` is a ``number`` here (its values the signed range's non-negative ones) unless the
# language makes it a type of its own, 0 .. 2^64 - 1
UNSIGNED_MAX = 2 ** 64 - 1 if PRIMITIVES.get("unsigned") == "unsigned" else numbers.INT_MAX
_ARROW = {"number": pa.int64(), "unsigned": pa.uint64(), "float": pa.float64(), "symbol": pa.string()}


def arrow_type(kind) -> pa.DataType:
    """The Arrow type of a column of ``kind`` (records and ADTs as text)."""
    return _ARROW.get(kind, pa.string())


def schema_of(kinds: Kinds) -> pa.Schema:
    return pa.schema([(name, arrow_type(kind)) for name, kind in kinds])


def table_of(kinds: Kinds, rows, weights=None) -> pa.Table:
    """``rows`` (tuples of a relation with columns ``kinds``) as an Arrow table; with ``weights``
    (one int per row) a last column ``weight`` (int8)."""
    rows = rows if isinstance(rows, list) else list(rows)
    with paused_gc():                         # a list per column: the collector would rescan every row
        arrays = [pa.array(_out(list(map(itemgetter(i), rows)), kind), arrow_type(kind))
                  for i, (_, kind) in enumerate(kinds)]
    names = [name for name, _ in kinds]
    if weights is not None:
        arrays.append(pa.array(weights, pa.int8()))
        names.append("weight")
    if not arrays:                            # a nullary relation: no columns, its rows counted
        return pa.table({"_": pa.nulls(len(rows))}).drop_columns(["_"])
    return pa.Table.from_arrays(arrays, names=names)


def table_of_words(kinds: Kinds, words) -> pa.Table:
    """A relation of ``number`` columns as an Arrow table from its sorted int64 words (one 2-D
    array, ``Relation.current_words``): each column one contiguous copy, no Python int made
    (from buffers: ``pa.array`` of a numpy array imports pandas, 0.2 s)."""
    import numpy as np
    columns = [np.ascontiguousarray(words[:, c]) for c in range(len(kinds))]
    return pa.Table.from_arrays([pa.Array.from_buffers(pa.int64(), len(c), [None, pa.py_buffer(c)]) for c in columns],
                                names=[name for name, _ in kinds])


def _out(values, kind):
    if kind == MIXED:
        return list(map(written, values))
    if getattr(kind, "is_composite", False):
        return [composites.render(v, _quoted) for v in values]
    if kind == "auto" and values and not isinstance(values[0], (int, float, str)):
        return [str(v) for v in values]
    return values


def _quoted(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def sortable(kinds: Kinds) -> bool:
    """Whether Arrow's order of rows with columns ``kinds`` is the engine's: every column a
    number, float or symbol (UTF-8 bytes sort as the code points Python compares)."""
    return bool(kinds) and all(kind in _ARROW for _, kind in kinds)


def sorted_table(table: pa.Table, kinds: Kinds) -> pa.Table:
    """``table`` (columns :func:`sortable`) in ascending order, column by column."""
    return table.sort_by([(name, "ascending") for name, _ in kinds])


def patched(table: pa.Table, kinds: Kinds, inserted, retracted, ordered: bool) -> pa.Table | None:
    """``table`` (the rows of a relation with columns ``kinds``; in ascending order if
    ``ordered``) with the rows ``retracted`` taken out and ``inserted`` (rows it does not hold)
    put in, in order if ``ordered``: each row's place found by comparisons over the columns, the
    table between them sliced, not copied. None when a column is not a number, float or symbol
    (building the table again is then the way), or a row to take out is not there.

    >>> kinds = [("a", "number"), ("b", "symbol")]
    >>> table = table_of(kinds, [(1, "x"), (2, "x"), (2, "y"), (3, "z")])
    >>> patched(table, kinds, [(2, "a"), (0, "q"), (4, "a")], [(2, "y"), (3, "z")], True).to_pylist()
    [{'a': 0, 'b': 'q'}, {'a': 1, 'b': 'x'}, {'a': 2, 'b': 'a'}, {'a': 2, 'b': 'x'}, {'a': 4, 'b': 'a'}]
    """
    if not sortable(kinds):
        return None
    gone = [pc.index(_compared(table, kinds, row, pc.equal, None), True).as_py() for row in retracted]
    if -1 in gone:
        return None
    rows = sorted(inserted) if ordered else list(inserted)
    new = table_of(kinds, rows)
    # (place, 0, i): new row i goes before row ``place``; (place, 1, _): row ``place`` goes
    places = [(pc.sum(_compared(table, kinds, row, pc.less, pc.equal)).as_py() or 0 if ordered else table.num_rows,
               0, i) for i, row in enumerate(rows)]
    pieces, start = [], 0
    for place, kind, i in sorted(places + [(row, 1, 0) for row in gone]):
        pieces.append(table.slice(start, place - start))
        if kind == 0:
            pieces.append(new.slice(i, 1))
            start = place
        else:
            start = place + 1
    pieces.append(table.slice(start))
    table = pa.concat_tables([piece for piece in pieces if piece.num_rows] or [table.slice(0, 0)])
    return table.combine_chunks() if table.column(0).num_chunks > MAX_CHUNKS else table


MAX_CHUNKS = 32             # a patched table's pieces, beyond which they are made one again


def _compared(table: pa.Table, kinds: Kinds, row: tuple, compare, tie):
    """Per row of ``table``, whether it ``compare``-s to ``row`` column by column: with ``tie``
    (``pc.equal``) lexicographically, the first column that is not tied deciding (``less``: the
    rows before ``row``); without, in every column (``equal``: the row itself)."""
    out = None
    for i in reversed(range(len(kinds))):
        column, value = table.column(i), pa.scalar(row[i], arrow_type(kinds[i][1]))
        this = compare(column, value)
        if out is None:
            out = this
        elif tie is None:
            out = pc.and_(this, out)
        else:
            out = pc.or_(this, pc.and_(tie(column, value), out))
    return out


# ---------------------------------------------------------------- in

def as_table(data) -> pa.Table:
    """A pyarrow Table of a pandas or Polars DataFrame, a Table, RecordBatch or RecordBatchReader,
    or any object with ``__arrow_c_stream__``."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns"):
        return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(type(data), "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all()
    return pa.table(data)


def rows_of(name: str, kinds: Kinds, data) -> list[tuple]:
    """The rows of ``data`` (see :func:`as_table`) for relation ``name`` with columns ``kinds``,
    as the relation stores them; its columns matched by name when its names are the relation's
    columns, else by position. ``arity_mismatch``, ``type_mismatch``, ``number_out_of_range``."""
    try:
        table = as_table(data)
    except MemoryError:
        raise
    except Exception as exc:        # e.g. a pandas column of ints and strings, a Polars object column
        raise TypeMismatch(f"{name}: the table cannot be read as Arrow columns of one type each: {exc}") from None
    columns = _matched(name, kinds, table)
    with paused_gc():                         # millions of new values and tuples, none of them cyclic
        values = [_values(name, i, column_name, kind, column)
                  for i, ((column_name, kind), column) in enumerate(zip(kinds, columns))]
        if not values:
            return [()] * table.num_rows
        return list(zip(*values))


def _matched(name: str, kinds: Kinds, table: pa.Table) -> list:
    wanted, given = [n for n, _ in kinds], list(table.column_names)
    if set(wanted) <= set(given):
        extra = [g for g in given if g not in wanted]
        if extra:
            raise TypeMismatch(f"{name} has no column {extra[0]!r} (its columns: {', '.join(wanted)})")
        return [table.column(n) for n in wanted]
    if not set(wanted) & set(given) and len(given) == len(wanted):
        return list(table.columns)            # no names in common: by position
    if len(given) != len(wanted):
        raise ArityMismatch(f"{name} has arity {len(wanted)} ({', '.join(wanted)}), got a table of "
                            f"{plural(len(given), 'column')} ({', '.join(map(str, given))})")
    missing = [n for n in wanted if n not in given]
    raise TypeMismatch(f"{name} has columns {', '.join(wanted)}; the table has {', '.join(map(str, given))} "
                       f"(no {missing[0]!r}): name them all, or none, to match by position")


def _values(name: str, index: int, column_name: str, kind, column) -> list:
    """One column of a table as Python values of ``kind`` (the rules of
    :mod:`datalog.engine.admission`); an Arrow error on the way is a ``type_mismatch`` too."""
    where = f"{name} column {column_name} ({index + 1})"
    try:
        return _checked_values(where, kind, column)
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise TypeMismatch(f"{where}: its Arrow type {column.type} cannot be read as {_plural(kind)} "
                           f"({type(exc).__name__}: {exc})") from None


def _checked_values(where: str, kind, column) -> list:
    type_ = column.type
    if pa.types.is_dictionary(type_):                 # a categorical: its values, decoded
        column = _decoded(column)
        type_ = column.type
    if column.null_count:
        row = pc.index(pc.is_null(column), True).as_py()
        raise TypeMismatch(f"{where} holds a null (row {row + 1}), which a relation cannot hold")
    if kind == "auto":
        kind = ("number" if pa.types.is_integer(type_) else "float" if pa.types.is_floating(type_)
                else "symbol")
    if kind == MIXED and pa.types.is_integer(type_):         # a mixed column's numbers
        _check_range(where, "number", column)
        return [MixedNumber(v) for v in column.to_pylist()]
    if kind in ("number", "unsigned"):
        if not pa.types.is_integer(type_):
            raise TypeMismatch(f"{where} holds {_plural(kind)}, got Arrow type {type_}")
        _check_range(where, kind, column)
        return column.to_pylist()
    if kind == "float":
        if pa.types.is_integer(type_):                # as the tuple API: within the signed range,
            _check_range(where, "number", column)     # then the nearest float
            return column.cast(pa.float64(), safe=False).to_pylist()
        if not pa.types.is_floating(type_):
            hint = " (cast it to float64: a decimal is not converted, it could round)" \
                if pa.types.is_decimal(type_) else ""
            raise TypeMismatch(f"{where} holds floats, got Arrow type {type_}{hint}")
        column = column.cast(pa.float64())
        nan = pc.is_nan(column)
        if pc.any(nan).as_py():
            row = pc.index(nan, True).as_py()
            raise NumberOutOfRange(f"{where}: NaN is not a value (row {row + 1})")
        return column.to_pylist()
    if not (pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_string_view(type_)):
        raise TypeMismatch(f"{where} holds {_plural(kind)}, got Arrow type {type_}")
    texts = column.to_pylist()
    if kind == MIXED:                                          # its numbers and symbols, by their text
        return [from_text(text) for text in texts]
    if not getattr(kind, "is_composite", False):
        return texts
    out = []
    for row, text in enumerate(texts):
        try:
            out.append(composites.parse_value(text, kind, parse_value))
        except composites.TextError as exc:
            raise TypeMismatch(f"{where} holds {kind} values: row {row + 1}, {text!r}, is not one ({exc})") from None
    return out


def _decoded(column):
    """A dictionary-encoded column (pandas' or Polars' categorical) as its values. Arrow has no
    ``take`` of ``string_view`` values (Polars' strings): those are taken as ``large_string``."""
    value_type = column.type.value_type
    if pa.types.is_string_view(value_type):
        value_type = pa.large_string()
    return pa.chunked_array([pc.take(chunk.dictionary.cast(value_type), chunk.indices) for chunk in column.chunks],
                            value_type)


def _plural(kind) -> str:
    return {"number": "numbers", "unsigned": "unsigned numbers", "float": "floats", "symbol": "symbols (strings)",
            MIXED: 'numbers and symbols (integers, or their text: 5, "a")'}.get(
        kind, f"{kind} values (their text)")


def _check_range(where: str, kind: str, column) -> None:
    if len(column) == 0:
        return
    extremes = pc.min_max(column)
    low, high = extremes["min"].as_py(), extremes["max"].as_py()
    lowest, highest = (0, UNSIGNED_MAX) if kind == "unsigned" else (numbers.INT_MIN, numbers.INT_MAX)
    for value in (low, high):
        if not lowest <= value <= highest:
            row = pc.index(column, value).as_py()
            bound = "an unsigned number's range" if kind == "unsigned" else numbers.RANGE
            raise NumberOutOfRange(f"{where}: {value} is beyond {bound} (row {row + 1})")


# ---------------------------------------------------------------- files of changes

def warm(fmt: str) -> None:
    """Do once what the first change file would do besides its own work: pyarrow's first
    conversion imports pandas when it is installed (about 2 s), and its file writer is imported;
    for a caller that times each commit after it (``--changes``)."""
    file_bytes(table_of([("x", "number")], [], []), fmt)


def file_bytes(table: pa.Table, fmt: str) -> bytes:
    """``table`` as a Parquet file or a CSV file with a header line."""
    sink = io.BytesIO()
    if fmt == "parquet":
        import pyarrow.parquet as pq
        pq.write_table(table, sink)
    else:
        import pyarrow.csv as pcsv
        pcsv.write_csv(table, sink)
    return sink.getvalue()
