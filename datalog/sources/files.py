"""Fact files in and output files out, in Soufflé's text format.

Input: ``.input r`` reads ``<facts_dir>/r.facts`` (or ``filename=``), UTF-8 (a
byte-order mark at its start is dropped), one row per line, fields separated by a
tab (or ``delimiter=``). Numbers are read as Soufflé reads them, ASCII only
(:mod:`datalog.language.numbers`): integers ``[-+]?digits`` or ``0x``/``0b``
prefixed within the signed 64-bit range, floats decimal with an optional
exponent or ``inf``; never ``nan``. Symbols are the raw text.
Output: ``.output r`` writes ``<out_dir>/r.csv`` (or ``filename=``), the same
format, rows in ascending order; the file is written to a temporary name and
renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from datalog.language import ast, numbers
from datalog.language.errors import BadFactFile, MissingInput, OutputError, Source, Span
from datalog.language.types import AUTO


def input_path(directive: ast.Directive, facts_dir: str | Path) -> Path:
    name = directive.param("filename") or f"{directive.relation}.facts"
    return Path(facts_dir) / name


def read_facts(path: Path, types: list[str], delimiter: str = "\t", directive=None) -> list[tuple]:
    """Parse a fact file; a malformed row is a ``bad_fact_file`` error naming file:line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        span = directive.span if directive else None
        raise MissingInput(f"input file {path} for relation "
                           f"{directive.relation if directive else '?'} does not exist", span) from None
    except (IsADirectoryError, PermissionError) as exc:
        raise MissingInput(f"cannot read input file {path}: {exc}") from None
    text = _decode(data, path)
    rows = _read_fast(text, types, delimiter)
    if rows is not None:
        return _settle_auto_columns(rows, types)
    return _read_careful(text, types, delimiter, path)


def _decode(data: bytes, path: Path) -> str:
    """The text of a fact file: UTF-8 without its byte-order mark; invalid UTF-8 is a
    ``bad_fact_file`` error at the line and column of the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[start:exc.start].decode("utf-8", "replace")) + 1
        source = Source(str(path), data.decode("utf-8", "replace"))
        raise BadFactFile(f"invalid UTF-8 (byte 0x{data[exc.start]:02x}): fact files are UTF-8 text",
                          Span(source, line, column, line, column + 1)) from None
    return text[1:] if text.startswith("\ufeff") else text


def _read_fast(text: str, types: list[str], delimiter: str) -> list[tuple] | None:
    """The common case in bulk; None if any row is unusual (then the careful reader reports it).
    Python's int() also takes what a fact file must not hold (non-ASCII digits, values beyond 64
    bits): a file with numbers is fast only if it is ASCII and its numbers are in range."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if any(t not in ("number", "symbol", "auto") for t in types) or "\r" in text or "_" in text:
        return None
    if "number" in types and not text.isascii():
        return None
    try:
        if types == ["number", "number"]:
            rows = [(int(a), int(b)) for a, b in (line.split(delimiter) for line in lines)]
        elif all(t == "number" for t in types):
            rows = [tuple(map(int, line.split(delimiter))) for line in lines]
        else:
            numeric = [i for i, t in enumerate(types) if t == "number"]
            rows = []
            for line in lines:
                fields = line.split(delimiter)
                for i in numeric:
                    fields[i] = int(fields[i])
                rows.append(tuple(fields))
    except (ValueError, IndexError):
        return None
    if any(len(row) != len(types) for row in rows) or (len(types) != 1 and "" in lines):
        return None
    if any(line.strip() != line for line in lines) and "number" in types:
        return None
    if not _in_range(rows, [i for i, t in enumerate(types) if t == "number"]):
        return None
    return rows


def _in_range(rows: list[tuple], columns: list[int]) -> bool:
    """Whether every integer of ``columns`` is within the signed 64-bit range."""
    return all(numbers.in_range(min(r[i] for r in rows)) and numbers.in_range(max(r[i] for r in rows))
               for i in columns) if rows else True


def _read_careful(text: str, types: list[str], delimiter: str, path: Path) -> list[tuple]:
    source = Source(str(path), text)
    rows = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line and len(types) != 1:
            continue
        if not line and number == text.count("\n") + 1:
            continue
        fields = line.split(delimiter)
        if len(fields) != len(types):
            raise BadFactFile(f"expected {len(types)} field{'s' * (len(types) != 1)} separated by "
                              f"{delimiter!r}, found {len(fields)}", Span(source, number, 1, number, len(line) + 1))
        rows.append(tuple(_field(f, t, source, number, line, i, delimiter) for i, (f, t) in
                          enumerate(zip(fields, types))))
    return _settle_auto_columns(rows, types)


def _field(text: str, type_: str, source, number, line, index, delimiter):
    if type_ == "symbol" or type_ == AUTO:
        return text
    value = numbers.parse_int(text) if type_ == "number" else numbers.parse_float(text)
    if value is not None:
        return value
    column = sum(len(f) + len(delimiter) for f in line.split(delimiter)[:index]) + 1
    if type_ == "number":
        why = f"beyond {numbers.RANGE}" if numbers.int_syntax(text) else "not a number"
    else:
        why = numbers.float_problem(text)
    shown = text if len(text) <= 40 else f"{text[:37]}..."
    raise BadFactFile(f"field {index + 1} is {shown!r}, {why}",
                      Span(source, number, column, number, column + max(len(text), 1)))


def _settle_auto_columns(rows, types):
    """An ``auto`` column holds numbers if every value is an integer, else symbols."""
    for i, t in enumerate(types):
        if t != AUTO or not rows:
            continue
        values = numbers.parse_ints([r[i] for r in rows])
        if values is None:
            continue
        rows = [r[:i] + (v,) + r[i + 1:] for r, v in zip(rows, values)]
    return rows


def format_value(value) -> str:
    """Soufflé's text: integers in decimal, symbols raw, floats shortest round-trip (``3`` not ``3.0``)."""
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def format_rows(rows, delimiter: str = "\t") -> str:
    """Rows as text lines. A column holds one type (floats are converted on insert), so a
    relation whose first row has no float has none: its values print with plain ``str``."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return ""
    fmt = format_value if any(isinstance(v, float) for v in rows[0]) else str
    join = delimiter.join
    return "".join([join(map(fmt, row)) + "\n" for row in rows])


def write_output(directive: ast.Directive, rows, out_dir: str | None) -> None:
    delimiter = directive.param("delimiter") or "\t"
    if out_dir == "-" or directive.io == "stdout":
        sys.stdout.write(f"---------------\n{directive.relation}\n===============\n")
        sys.stdout.write(format_rows(rows, delimiter))
        sys.stdout.write("===============\n")
        return
    path = Path(out_dir or ".") / (directive.param("filename") or f"{directive.relation}.csv")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(format_rows(rows, delimiter))
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path} for relation {directive.relation}: {exc.strerror or exc}",
                          directive.span) from None
