"""The layout of a fact or output file as Soufflé's CSV reader and writer lay it out: which
delimiter, whether a header line comes first, whether fields are quoted (RFC 4180), whether the
file is gzip-compressed. Values themselves are read and printed by :mod:`datalog.sources.files`.

Parameters of ``.input``/``.output`` (Soufflé 2.x, ``src/include/souffle/io/*StreamCSV.h``):

- ``delimiter=S``: any string between fields; a tab by default, a comma with ``rfc4180=true``.
- ``headers=true``: on input the first line is skipped whatever it holds; on output a first
  line of the column names joined by the delimiter (``attributeNames=`` replaces them).
- ``rfc4180=true``: on input a field that starts with ``"`` runs to the next lone ``"``, ``""``
  inside it is one ``"``, and it may span lines; on output every symbol is quoted so.
  (Soufflé's writer puts a backslash before an inner quote, ``\\""``, which its own reader then
  reads as ``\\"``; we write RFC 4180's ``""`` so that a written file reads back as it was.)
- ``compress=true``: the output file is gzip (Python's :mod:`gzip`); an input file that starts
  with gzip's magic bytes is decompressed whatever the parameter says, as Soufflé's reader does.

>>> list(records('a,"b ""c"" d",e\\n"x\\ny",z\\n', TextFormat(",", rfc4180=True)))
[(1, ['a', 'b "c" d', 'e']), (2, ['x\\ny', 'z'])]
>>> quote('a "b" c')
'"a ""b"" c"'
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterator

GZIP_MAGIC = b"\x1f\x8b"
MAX_INFLATED = 1 << 31          # a fact file inflating past 2 GiB is refused, not built in memory


@dataclass(frozen=True)
class TextFormat:
    delimiter: str = "\t"
    headers: bool = False
    rfc4180: bool = False
    compress: bool = False

    @classmethod
    def of(cls, directive, stdout: bool = False) -> "TextFormat":
        """The layout a directive names; ``stdout`` (``-D -``) forces the header line, as Soufflé does."""
        rfc4180 = _flag(directive.param("rfc4180"))
        return cls(directive.param("delimiter") or ("," if rfc4180 else "\t"),
                   stdout or _flag(directive.param("headers")), rfc4180,
                   _flag(directive.param("compress")))


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() == "true"


class Unbalanced(ValueError):
    """A quoted field whose closing quote never comes (``line`` is where it opened), or a quoted
    field followed by something other than the delimiter."""

    def __init__(self, message: str, line: int, column: int = 1):
        super().__init__(message)
        self.line, self.column = line, column


def inflate(data: bytes) -> bytes:
    """``data`` itself, or its gzip content when it starts with gzip's magic bytes; a corrupt or
    oversized stream is ``ValueError``."""
    if not data.startswith(GZIP_MAGIC):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)     # gzip framing, members one after another
    out, rest = [], data
    try:
        while rest:
            out.append(inflater.decompress(rest, MAX_INFLATED - sum(map(len, out)) + 1))
            if inflater.unconsumed_tail:
                raise ValueError("the gzip content is larger than 2 GiB")
            rest = inflater.unused_data
            if rest:
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if not inflater.eof:
            raise ValueError("the gzip stream is truncated")
    except zlib.error as exc:
        raise ValueError(f"not a valid gzip file ({exc})") from None
    return b"".join(out)


def deflate(data: bytes) -> bytes:
    """gzip of ``data`` with no timestamp, so the same relation gives the same bytes."""
    import gzip                                   # (for compress=true only: start-up)
    return gzip.compress(data, mtime=0)


def lines(text: str) -> list[str]:
    """The lines of ``text`` (a final newline ends the last line, it does not start one)."""
    out = text.split("\n")
    if out[-1] == "":
        out.pop()
    return out


def split_fields(line: str, delimiter: str) -> list[str]:
    """The fields of a line without rfc4180. As in Soufflé, when the delimiter holds a comma a
    delimiter inside brackets (a record such as ``[1, a]``) does not split; a bracket left open
    at the line's end is :class:`Unbalanced` (its ``line`` is 0: the caller knows the line)."""
    if "," not in delimiter or "[" not in line:
        return line.split(delimiter)
    fields, start, depth, i = [], 0, 0, 0
    while i < len(line):
        if depth == 0 and line.startswith(delimiter, i):
            fields.append(line[start:i])
            i = start = i + len(delimiter)
            continue
        depth += {"[": 1, "]": -1 if depth else 0}.get(line[i], 0)
        i += 1
    if depth:
        raise Unbalanced("a record's bracket is never closed", 0)
    fields.append(line[start:])
    return fields


def records(text: str, fmt: TextFormat, first_line: int = 1) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each record of an RFC 4180 file: a quoted field may span
    lines (its ``\\r\\n`` or ``\\n`` is kept), ``""`` in it is ``"``; an unquoted field runs to
    the delimiter. A ``\\r`` before a line's end is dropped."""
    all_lines = lines(text)
    i = 0
    while i < len(all_lines):
        number = first_line + i
        fields, i = _record(all_lines, i, fmt.delimiter, first_line)
        yield number, fields


def _record(all_lines: list[str], i: int, delimiter: str, first_line: int) -> tuple[list[str], int]:
    """The fields of the record starting at line ``i`` and the index of the line after it."""
    line, crlf = _strip_cr(all_lines[i])
    fields, start = [], 0
    while True:
        if line.startswith('"', start):
            field, line, i, crlf, start = _quoted(all_lines, i, line, crlf, start + 1, first_line)
            if start < len(line) and not line.startswith(delimiter, start):
                raise Unbalanced("a quoted field must be followed by the delimiter or the line's end",
                                 first_line + i, start + 1)
        else:
            end = line.find(delimiter, start)
            end = len(line) if end < 0 else end
            field = line[start:end]
            start = end
        fields.append(field)
        if start >= len(line):
            return fields, i + 1
        start += len(delimiter)


def _quoted(all_lines, i, line, crlf, pos, first_line):
    """A quoted field from ``pos`` (after its opening quote): its text, and where reading goes on."""
    opened, column, out = first_line + i, pos, []
    while True:
        close = line.find('"', pos)
        if close < 0:
            out.append(line[pos:])
            if i + 1 >= len(all_lines):
                raise Unbalanced("a quoted field is never closed", opened, column)
            out.append("\r\n" if crlf else "\n")
            i += 1
            line, crlf = _strip_cr(all_lines[i])
            pos = 0
        elif line.startswith('""', close):
            out.append(line[pos:close] + '"')
            pos = close + 2
        else:
            out.append(line[pos:close])
            return "".join(out), line, i, crlf, close + 1


def _strip_cr(line: str) -> tuple[str, bool]:
    return (line[:-1], True) if line.endswith("\r") else (line, False)


def quote(text: str) -> str:
    """A symbol as an RFC 4180 field: in quotes, an inner quote doubled."""
    return '"' + text.replace('"', '""') + '"'

