r"""Decimal text in and out of int64 rows, compiled: output lines written, fact files read, without objects.

* :func:`delimited` -- rows of words as lines of text (an output file's): a number column in
  decimal, an unsigned one as the unsigned value of its word, a symbol column as its symbol's
  UTF-8 bytes from a :class:`datalog.evaluation.symbols.SymbolTable`'s text (one byte string of
  every symbol, and where each starts); one delimiter between two values, a newline after a row.
* :func:`parse_decimal` -- the other way, for a fact file that holds nothing but integers.

One source, two builds, as :mod:`lftj.kernel`: compiled at install into the extension module
``lftj.text``; run by the plain interpreter it is the twin the tests compare it with. Inputs are
checked before anything indexes with them (a symbol column's words against the text's number of
symbols), so the loops run without bounds checks.

>>> import numpy as np
>>> delimited(np.array([[0, -1, 7], [1, 2, -3]]), b",", [SYMBOL, UNSIGNED, NUMBER],
...           np.frombuffer("héllo".encode(), np.uint8), np.array([0, 3, 6]))
b'h\xc3\xa9,18446744073709551615,7\nllo,2,-3\n'
"""

import cython
import numpy as np

from lftj.kernel_input import check_rows

COMPILED = cython.compiled
NUMBER, UNSIGNED, SYMBOL = 0, 1, 2              # a column's kind, for delimited
WIDEST = 20                                     # characters of -9223372036854775808 and of 2**64 - 1


def delimited(words, delimiter, kinds=None, text=None, starts=None):
    r"""The rows of a 2-D int64 array as lines of text, as bytes: one ``delimiter`` (a single
    ASCII byte) between two values, a newline after each row. ``kinds`` per column (default: all
    :data:`NUMBER`): :data:`NUMBER` in decimal, :data:`UNSIGNED` the word's unsigned value,
    :data:`SYMBOL` the bytes ``text[starts[w]:starts[w + 1]]`` of word ``w``.

    >>> delimited(np.array([[1, -2], [-2**63, 2**63 - 1]]), b"\t")
    b'1\t-2\n-9223372036854775808\t9223372036854775807\n'
    """
    rows = check_rows("the rows", words, ordered=False)
    if not isinstance(delimiter, bytes) or len(delimiter) != 1 or delimiter[0] > 127:
        raise ValueError(f"the delimiter must be one ASCII byte, not {delimiter!r}")
    if rows.shape[1] == 0:
        raise ValueError("rows of no column have no values to write")
    kinds = np.zeros(rows.shape[1], np.uint8) if kinds is None else np.asarray(kinds)
    if kinds.shape != (rows.shape[1],) or not np.isin(kinds, (NUMBER, UNSIGNED, SYMBOL)).all():
        raise ValueError(f"kinds must name each of the {rows.shape[1]} column(s) NUMBER, UNSIGNED or SYMBOL, "
                         f"not {kinds.tolist()!r:.80}")
    kinds = np.ascontiguousarray(kinds, np.uint8)
    symbols = [c for c in range(rows.shape[1]) if kinds[c] == SYMBOL]
    text, starts = _checked_text(text, starts, rows, symbols)
    # at most WIDEST characters a number and one after it, each symbol's bytes and one after
    # it: pages of the buffer past the text written are never touched, so never resident
    size = len(rows) * (rows.shape[1] - len(symbols)) * (WIDEST + 1) + len(rows) * len(symbols)
    lengths = np.diff(starts)
    size += sum(int(lengths[rows[:, c]].sum()) for c in symbols)
    out = np.empty(size, np.uint8)
    return out[:_delimited(rows, kinds, text, starts, out, delimiter[0])].tobytes()


def _checked_text(text, starts, rows, symbols: list):
    """The symbols' text and starts as arrays the loop may index with every symbol word of ``rows``."""
    if not symbols:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    if not isinstance(text, np.ndarray) or text.dtype != np.uint8 or text.ndim != 1 \
            or not isinstance(starts, np.ndarray) or starts.dtype != np.int64 or starts.ndim != 1:
        raise ValueError("a symbol column needs the symbols' text (1-D uint8) and starts (1-D int64)")
    if len(starts) == 0 or starts[0] != 0 or starts[-1] != len(text) or (np.diff(starts) < 0).any():
        raise ValueError("the symbols' starts must rise from 0 to the text's length")
    for c in symbols:
        if len(rows) and (rows[:, c].min() < 0 or rows[:, c].max() >= len(starts) - 1):
            raise ValueError(f"column {c} holds a word that is no symbol of the {len(starts) - 1} given")
    return np.ascontiguousarray(text), np.ascontiguousarray(starts)


@cython.cfunc
def _delimited(rows: cython.longlong[:, ::1], kinds: cython.uchar[::1], text: "const unsigned char[::1]",
               starts: cython.longlong[::1], out: cython.uchar[::1], delimiter: cython.uchar) -> cython.Py_ssize_t:
    i: cython.Py_ssize_t
    c: cython.Py_ssize_t
    k: cython.Py_ssize_t
    v: cython.longlong
    u: cython.ulonglong
    n: cython.Py_ssize_t = 0
    for i in range(rows.shape[0]):
        for c in range(rows.shape[1]):
            v = cython.cast(cython.longlong, rows[i, c])        # (the twin: a Python int)
            if kinds[c] == 2:                                  # SYMBOL: its bytes
                for k in range(starts[v], starts[v + 1]):
                    out[n] = text[k]
                    n += 1
            elif kinds[c] == 1 and v < 0:                      # UNSIGNED: 2**64 + v
                if cython.compiled:
                    u = cython.cast(cython.ulonglong, v)       # (C: modulo 2**64)
                else:
                    u = v + 2**64
                n = _digits(u, out, n)
            else:
                n = _decimal(v, out, n)
            out[n] = delimiter if c + 1 < rows.shape[1] else 10      # "\n" after the last
            n += 1
    return n


@cython.cfunc
def _decimal(v: cython.longlong, out: cython.uchar[::1], n: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """``v`` in decimal into ``out`` from ``n``; the position after it. The magnitude is
    unsigned, so -2**63 has one too."""
    u: cython.ulonglong
    if v < 0:
        out[n] = 45                               # "-"
        n += 1
        u = -(v + 1)
        u += 1
    else:
        u = v
    return _digits(u, out, n)


@cython.cfunc
def _digits(u: cython.ulonglong, out: cython.uchar[::1], n: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """``u``'s decimal digits into ``out`` from ``n``, written least first, then turned round."""
    start: cython.Py_ssize_t = n
    end: cython.Py_ssize_t
    t: cython.uchar
    while True:
        out[n] = 48 + u % 10
        n += 1
        u //= 10
        if u == 0:
            break
    end = n - 1
    while start < end:
        t = out[start]
        out[start] = out[end]
        out[end] = t
        start += 1
        end -= 1
    return n


def parse_decimal(data, delimiter, n_columns):
    r"""The rows of a fact file of integers as a 2-D int64 array, in the file's order (duplicates
    kept); or None when the text is anything but lines of exactly ``n_columns`` values
    ``-?[0-9]+`` within int64, one ``delimiter`` between two, each line ended by a newline (the
    last may not be), so that the caller reads it the careful way (which reports what is wrong).

    >>> parse_decimal(b"1\t-2\n3\t9223372036854775807\n", b"\t", 2).tolist()
    [[1, -2], [3, 9223372036854775807]]
    >>> parse_decimal(b"1\t2\n\n", b"\t", 2), parse_decimal(b"9223372036854775808\n", b"\t", 1)
    (None, None)
    """
    if not isinstance(data, bytes) or not isinstance(delimiter, bytes) or len(delimiter) != 1 \
            or delimiter in b"-0123456789\n" or delimiter[0] > 127:
        raise ValueError(f"parse_decimal reads bytes at one ASCII delimiter (no digit, '-' or newline), "
                         f"not {type(data).__name__} at {delimiter!r}")
    if not isinstance(n_columns, int) or n_columns < 1:
        raise ValueError(f"a row has at least one column, not {n_columns!r}")
    out = np.empty((data.count(b"\n") + 1, n_columns), np.int64)
    n = _parse_decimal(np.frombuffer(data, np.uint8), delimiter[0], out)
    return None if n < 0 else out[:n]


@cython.cfunc
def _parse_decimal(text: "const unsigned char[::1]", delimiter: cython.int, out: cython.longlong[:, ::1]) -> cython.Py_ssize_t:
    """The rows read into ``out`` (which has a row for each line), or -1 at the first thing that
    is not as :func:`parse_decimal` says."""
    i: cython.Py_ssize_t = 0
    row: cython.Py_ssize_t = 0
    column: cython.Py_ssize_t = 0
    start: cython.Py_ssize_t
    ch: cython.int
    digit: cython.ulonglong
    magnitude: cython.ulonglong
    limit: cython.ulonglong
    negative: cython.bint
    while i < text.shape[0]:
        negative = cython.cast(cython.int, text[i]) == 45          # "-"
        i += negative
        limit = 9223372036854775808 if negative else 9223372036854775807
        magnitude, start = 0, i
        while i < text.shape[0]:
            ch = cython.cast(cython.int, text[i])
            if ch < 48 or ch > 57:
                break
            digit = ch - 48
            if magnitude > (limit - digit) // 10:
                return -1                          # beyond int64
            magnitude = magnitude * 10 + digit
            i += 1
        if i == start or row == out.shape[0]:
            return -1                              # no digit (a blank line, a sign alone, a space)
        if negative and magnitude > 0:
            out[row, column] = -cython.cast(cython.longlong, magnitude - 1) - 1
        else:
            out[row, column] = magnitude
        column += 1
        if column < out.shape[1]:
            if i == text.shape[0] or cython.cast(cython.int, text[i]) != delimiter:
                return -1                          # too few fields, or another character
            i += 1
        else:
            if i < text.shape[0]:
                if cython.cast(cython.int, text[i]) != 10:
                    return -1                      # too many fields, "\r", a space
                i += 1
            row, column = row + 1, 0
    return row if column == 0 else -1


