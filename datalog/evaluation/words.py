r"""A stratum's rows as 64-bit words and back: the edges of the columnar evaluator.

:func:`encode` turns a relation's tuples into a 2-D int64 array (numbers as they are, unsigned
columns as their two's complement, symbols as their words in the evaluation's
:class:`~datalog.evaluation.symbols.SymbolTable`), :func:`decode` the other way. What the
kernel derived goes back into a relation as :class:`DecodedRows`, the source of a relation
that holds its rows as words (:meth:`lftj.relation.Relation.hold`) and makes tuples of them
only when something first reads them as tuples; :meth:`DecodedRows.lines` writes them out
without. :func:`hold_numbers` does the same for a fact file of numbers read in C
(:mod:`datalog.sources.numberfile`).

>>> import numpy as np
>>> from datalog.evaluation.symbols import SymbolTable
>>> table = SymbolTable()
>>> words = encode([("b", 3), ("a", 1)], ["symbol", "number"], table)
>>> words.tolist(), list(decode([words], ["symbol", "number"], table))
([[1, 3], [0, 1]], [('b', 3), ('a', 1)])
>>> held = DecodedRows(words[::-1].copy(), ["symbol", "number"], table)
>>> held.rows(), b"".join(held.lines(","))
([('a', 1), ('b', 3)], b'a,1\nb,3\n')
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lftj.csr import as_rows, distinct_rows
from lftj.relation import Relation
from datalog.evaluation.symbols import SymbolTable

CHUNK = 1 << 16                 # rows decoded at a time
TOP = np.int64(-2**63)          # an unsigned word's top bit


def hold_numbers(relation: Relation, rows: np.ndarray) -> None:
    """An empty relation of numbers holds ``rows`` (2-D int64, any order, duplicates allowed) as
    its sorted words, decoded into tuples only when first read."""
    words = distinct_rows(rows)
    relation.hold(DecodedRows(words, ("number",) * relation.arity))
    relation.keep_words(words)


class DecodedRows:
    """A relation's rows as the kernel left them, sorted int64 words, turned into tuples only
    when first read (the source of an :class:`lftj.relation.LazyRelation`): a relation that is
    only counted or written out (from its words, :mod:`datalog.engine.outputs`) never is. The
    tuples come in ascending order (``ordered``, so ``by_first`` too): words of symbols are
    sorted by the symbols' ranks first, and unsigned ones as unsigned (:func:`in_value_order`)."""

    ordered = by_first = True

    def __init__(self, words: np.ndarray, types, symbols: SymbolTable | None = None):
        self.words, self.types, self.symbols = words, types, symbols     # (symbols: for a symbol column)
        self.count = len(words)
        self.in_order = False                 # words sorted as the values are (in_value_order)
        self.decoded: list | None = None
        self.shared = False                   # words another reader holds: sorted in a copy

    def ordered_words(self) -> np.ndarray:
        """The words in the order of their values, sorted once (for the lines and the rows); the
        words given are this object's to sort in place, unless another reader holds them
        (``shared``: a stratum on the kernel read them as they are)."""
        if not self.in_order:
            words = self.words
            if not words.flags.writeable or self.shared:
                words = words.copy()
            self.words, self.in_order = in_value_order(words, self.types, self.symbols), True
        return self.words

    def lines(self, delimiter: str, chunk: int = 1 << 16) -> Iterable[bytes]:
        """The rows in ascending order as an output file's lines, in pieces: each value as ``str``
        gives it (a symbol raw, a number in decimal), ``delimiter`` between two (as
        :func:`datalog.sources.files.format_rows` writes rows of numbers and symbols). Written in C
        ``chunk`` rows at a time (:func:`lftj.text.delimited`) for a one-byte ASCII delimiter, so
        that no Python object is made a value and the text is never held whole; else a column at a
        time over numpy arrays of objects."""
        ordered = self.ordered_words()
        if not len(ordered):
            return []
        byte = delimiter.encode("utf-8")
        if len(byte) != 1 or byte[0] > 127:
            return [self._lines_of_objects(ordered, delimiter)]
        from lftj.kernels import text              # loaded already: the kernel made the words
        kinds = [text.SYMBOL if t == "symbol" else text.UNSIGNED if t == "unsigned" else text.NUMBER
                 for t in self.types]
        symbols, starts = self.symbols.text() if "symbol" in self.types else (None, None)
        return (text.delimited(ordered[at:at + chunk], byte, kinds, symbols, starts)
                for at in range(0, len(ordered), chunk))

    def _lines_of_objects(self, ordered: np.ndarray, delimiter: str) -> bytes:
        strings = np.array(self.symbols.symbols, dtype=object) if "symbol" in self.types else None
        line = None
        for c, type_ in enumerate(self.types):
            column = ordered[:, c]
            if type_ == "symbol":
                text = strings[column]
            else:
                text = (column.view(np.uint64) if type_ == "unsigned" else column).astype(str).astype(object)
            line = text if line is None else line + delimiter + text
        return "".join((line + "\n").tolist()).encode("utf-8")

    def rows(self) -> list:
        if self.decoded is None:
            self.decoded = list(decode([self.ordered_words()], self.types, self.symbols))
        return self.decoded


def in_value_order(words: np.ndarray, types, symbols: SymbolTable) -> np.ndarray:
    """Sorted distinct rows of words in the order of the values they stand for (as Python orders
    the tuples): the same rows where every column is a number; else the rows as keys that order
    as the values do (a symbol's rank among the table's symbols; an unsigned word with its top
    bit flipped, so that it orders as a signed one), sorted (:func:`lftj.csr.distinct_rows`: the
    radix sort where the keys pack into one word, 5x ``np.lexsort`` on Andersen's 405k rows),
    and back to words. ``words`` is overwritten with the keys (a relation's output is then made
    without a third copy of its rows): the caller's own array, which it replaces by the result."""
    if all(t == "number" for t in types) or not len(words):
        return words
    ranks = symbols.ranks() if "symbol" in types else None
    for c, t in enumerate(types):
        if t == "symbol":
            words[:, c] = ranks[words[:, c]]
        elif t == "unsigned":
            words[:, c] ^= TOP
    keys = distinct_rows(words)
    if "symbol" in types:
        by_rank = np.empty_like(ranks)
        by_rank[ranks] = np.arange(len(ranks), dtype=np.int64)
    for c, t in enumerate(types):
        if t == "symbol":
            keys[:, c] = by_rank[keys[:, c]]
        elif t == "unsigned":
            keys[:, c] ^= TOP
    return keys


def encode(tuples, types, symbols: SymbolTable | None = None) -> np.ndarray:
    """Rows as a 2-D int64 array: numbers as they are, unsigned columns as their two's complement
    words, symbols as their words in ``symbols``."""
    arity = len(types)
    if all(t == "number" for t in types):
        return as_rows(np.array(list(tuples), dtype=np.int64).reshape(len(tuples), arity), arity)
    columns = list(zip(*tuples)) or [()] * arity
    out = np.empty((len(tuples), arity), np.int64)
    for c, (values, type_) in enumerate(zip(columns, types)):
        if type_ == "symbol":
            out[:, c] = np.fromiter(symbols.words(values), np.int64, len(values))
        else:
            out[:, c] = np.array(values, dtype=np.uint64 if type_ == "unsigned" else np.int64).view(np.int64)
    return out


def decode(arrays: list, types, symbols: SymbolTable | None = None):
    """The rows of the arrays back as tuples of Python values, an iterator (the inverse of
    :func:`encode`); made :data:`CHUNK` rows at a time, a column at a time, zipped (3x faster
    than ``map(tuple)``; the chunks keep the lists small beside the tuples). A column of a narrow
    range (node numbers) takes its ints from one table, so that equal values are one object, as
    on the tuple path (2.5M pairs of tc n=2k: 140 MB less); a symbol column takes its strings
    from the symbol table (the very objects that went in)."""
    strings = np.array(symbols.symbols, dtype=object) if "symbol" in types else None
    tables = [(0, strings) if t == "symbol" else _int_table(arrays, c, t == "unsigned") for c, t in enumerate(types)]
    for rows in arrays:
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start:start + CHUNK]
            yield from zip(*[_ints(chunk[:, c], t == "unsigned", table) for c, (t, table) in enumerate(zip(types, tables))])


def _int_table(arrays: list, column: int, unsigned: bool):
    """``(least value, an object array of the ints from it to the greatest)`` when the range holds
    fewer values than there are rows (the table then makes fewer ints than the rows would), else None."""
    n = sum(len(a) for a in arrays)
    if not n:
        return None
    columns = [a[:, column].view(np.uint64) if unsigned else a[:, column] for a in arrays if len(a)]
    low, high = min(int(c.min()) for c in columns), max(int(c.max()) for c in columns)
    if high - low + 1 > n:
        return None
    return low, np.array(range(low, high + 1), dtype=object)


def _ints(column: np.ndarray, unsigned: bool, table) -> list:
    values = column.view(np.uint64) if unsigned else column
    if table is None:
        return values.tolist()
    low, ints = table
    return ints[(values - values.dtype.type(low)).astype(np.intp)].tolist()
