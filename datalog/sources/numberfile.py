"""A fact file of numbers read in C into int64 words, without a Python tuple per row.

A relation whose columns are all ``number`` is read in compiled code
(:func:`lftj.text.parse_decimal`) when its file is large and plain: ASCII lines of exactly
one decimal integer per column (``-?[0-9]+``, within int64), one delimiter between two, no
blank line, ``\\r``, blank or sign but ``-``. Anything else (and a file of fewer than
:data:`FROM_BYTES` bytes, a kernel that is not compiled, an ``rfc4180`` format, a delimiter of
more than one byte) returns None, and the careful reader of :mod:`datalog.sources.files` reads
the file as before and reports what is wrong: what is read here is exactly what it would read.

The rows are :class:`NumberRows`: a sequence of tuples of ints to any reader, and to the
engine's loader (:func:`datalog.engine.pipeline.fill`) the array itself, which an empty
relation then holds as its words (:meth:`lftj.relation.Relation.hold`): a binary relation
of 1M rows costs 16 MB, not about 150 MB of tuples, until something reads them as tuples.
"""

from __future__ import annotations

from collections.abc import Sequence

FROM_BYTES = 64 << 10              # smaller files: importing numpy and the kernel costs more than it saves


class NumberRows(Sequence):
    """The rows of a fact file of numbers, in the file's order (duplicates kept), as ``words``:
    a 2-D int64 array; read as a sequence, tuples of Python ints."""

    def __init__(self, words) -> None:
        self.words = words

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [tuple(row) for row in self.words[i].tolist()]
        return tuple(self.words[i].tolist())

    def __iter__(self):
        for start in range(0, len(self.words), 1 << 16):
            chunk = self.words[start:start + (1 << 16)]
            yield from zip(*(chunk[:, c].tolist() for c in range(chunk.shape[1])))


def read_numbers(data: bytes, types: list[str], fmt) -> NumberRows | None:
    """The rows of ``data`` (a fact file's bytes, inflated) when every column is a number and the
    file is plain (see the module docstring); None to read it the careful way."""
    if len(data) < FROM_BYTES or not types or any(t != "number" for t in types) or fmt.rfc4180 \
            or len(fmt.delimiter) != 1 or not fmt.delimiter.isascii() or fmt.delimiter in "-0123456789\n" \
            or not data.isascii():
        return None
    try:
        from lftj.kernels import text, which
    except ImportError:                          # not built: no C compiler at install
        return None
    if which() != "compiled":                    # the twin reads a byte at a time in Python
        return None
    if fmt.headers:                              # Soufflé skips the first line, whatever it holds
        data = data.partition(b"\n")[2]
    words = text.parse_decimal(data, fmt.delimiter.encode("ascii"), len(types))
    return None if words is None else NumberRows(words)
