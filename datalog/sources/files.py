"""Fact files in and output files out, in Soufflé's text format.

Input: ``.input r`` reads ``<facts_dir>/r.facts`` (or ``filename=``), UTF-8 (a
byte-order mark at its start is dropped), one row per line, fields separated by a
tab (or ``delimiter=``). Numbers are read as Soufflé reads them, ASCII only
(:mod:`datalog.language.numbers`): integers ``[-+]?digits`` or ``0x``/``0b``
prefixed within the signed 64-bit range, floats decimal with an optional
exponent or ``inf``; never ``nan``. Symbols are the raw text.
Output: ``.output r`` writes ``<out_dir>/r.csv`` (or ``filename=``), the same
format, rows in ascending order. Every file of a run is written to a temporary
name first (:mod:`datalog.sources.atomic`) and they are renamed together at the
end: a reader never sees half a file, and a failed output leaves every file as
it was.
A ``filename`` stays under its directory unless the user allows paths
(:mod:`datalog.sources.paths`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from datalog.language import ast, composites, numbers
from datalog.language.errors import BadFactFile, InputPath, MissingInput, OutputError, OutputPath, Source, Span
from datalog.language.types import AUTO
from datalog.sources import atomic, paths


def input_path(directive: ast.Directive, facts_dir: str | Path, allow_paths: bool = False) -> Path:
    """The file an ``.input`` reads; one whose real path leaves ``facts_dir`` is ``input_path``
    unless ``allow_paths``."""
    name = directive.param("filename") or f"{directive.relation}.facts"
    if not allow_paths and not paths.inside(facts_dir, name):
        raise InputPath(f"input file {name!r} of relation {directive.relation} leads out of the fact "
                        f"directory {facts_dir}; pass --allow-paths to read it", directive.span)
    return paths.joined(facts_dir, name)


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
        fields = _split(line, delimiter, types)
        if len(fields) != len(types):
            raise BadFactFile(f"expected {len(types)} field{'s' * (len(types) != 1)} separated by "
                              f"{delimiter!r}, found {len(fields)}", Span(source, number, 1, number, len(line) + 1))
        rows.append(tuple(_field(f, t, source, number, line, i, delimiter) for i, (f, t) in
                          enumerate(zip(fields, types))))
    return _settle_auto_columns(rows, types)


def _split(line: str, delimiter: str, types) -> list[str]:
    if any(getattr(t, "is_composite", False) for t in types):       # records (issue 18)
        return composites.split_fields(line, delimiter)
    return line.split(delimiter)


def _composite(text: str, type_, source, number, line, index, delimiter):
    """A record or ADT field (issue 18), as Soufflé's ReadStream reads it."""
    try:
        return composites.parse_value(text, type_, _primitive)
    except composites.TextError as exc:
        column = sum(len(f) + len(delimiter) for f in _split(line, delimiter, [type_])[:index]) + 1
        raise BadFactFile(f"field {index + 1} is not a {type_}: {exc}",
                          Span(source, number, column + exc.position, number, column + exc.position + 1)) from None


def _primitive(text: str, type_: str):
    """A number, float or symbol inside a record or ADT field; None if it is not one."""
    if type_ == "symbol":
        return text
    return numbers.parse_int(text) if type_ == "number" else numbers.parse_float(text)


def _field(text: str, type_: str, source, number, line, index, delimiter):
    if getattr(type_, "is_composite", False):
        return _composite(text, type_, source, number, line, index, delimiter)
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
    if isinstance(value, tuple):            # a record or ADT value (issue 18)
        return composites.render(value, format_value)
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
    fmt = format_value if any(isinstance(v, (float, tuple)) for v in rows[0]) else str
    join = delimiter.join
    return "".join([join(map(fmt, row)) + "\n" for row in rows])


def write_outputs(directives: list[ast.Directive], rows_of: Callable[[str], list], out_dir: str | None,
                  allow_paths: bool = False) -> None:
    """Write each directive's relation (``rows_of(relation)``): printed when ``out_dir`` is ``-``
    or its IO is ``stdout``, else to its file under ``out_dir``, all or none: every path is
    checked, then every file written to a temporary name, then all are renamed, then the
    printed ones printed. On a failure the temporaries are removed and no file has changed
    (``output_path``, ``output_error``)."""
    printed = [d for d in directives if out_dir == "-" or d.io == "stdout"]
    targets = [(d, *_output_path(d, out_dir or ".", allow_paths)) for d in directives
               if not (out_dir == "-" or d.io == "stdout")]
    staged: list[atomic.Staged] = []
    try:
        for directive, shown, real in targets:
            staged.append(_stage(directive, rows_of(directive.relation), shown, real))
        atomic.commit_all(staged)
    except OSError as exc:                       # a rename, or the directory's fsync
        atomic.discard_all(staged)
        raise OutputError(f"cannot write the output files into {out_dir or '.'}: "
                          f"{exc.strerror or exc} ({exc.filename2 or exc.filename})") from None
    except BaseException:
        atomic.discard_all(staged)
        raise
    for directive in printed:
        _print(directive, rows_of(directive.relation))


def _output_path(directive: ast.Directive, out_dir: str, allow_paths: bool) -> tuple[Path, Path]:
    """The file of an ``.output`` as the user names it and its real path, where it is written;
    one that leads out of ``out_dir`` is ``output_path`` unless ``allow_paths``."""
    name = directive.param("filename") or f"{directive.relation}.csv"
    shown = paths.joined(out_dir, name)
    if not allow_paths and not paths.inside(out_dir, name):
        raise OutputPath(f"output file {name!r} of relation {directive.relation} leads out of the output "
                         f"directory {out_dir}; pass --allow-paths to write it", directive.span)
    real = paths.real(out_dir, name)
    if real.is_dir():
        raise OutputError(f"cannot write {shown} for relation {directive.relation}: it is a directory",
                          directive.span)
    return shown, real


def _stage(directive: ast.Directive, rows, shown: Path, real: Path) -> atomic.Staged:
    """The relation's text in a temporary file beside ``real``; ``output_error`` naming ``shown``."""
    text = format_rows(rows, directive.param("delimiter") or "\t")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        return atomic.stage(real, [text.encode("utf-8")])
    except OSError as exc:
        raise OutputError(f"cannot write {shown} for relation {directive.relation}: {exc.strerror or exc}",
                          directive.span) from None


def _print(directive: ast.Directive, rows) -> None:
    sys.stdout.write(f"---------------\n{directive.relation}\n===============\n")
    sys.stdout.write(format_rows(rows, directive.param("delimiter") or "\t"))
    sys.stdout.write("===============\n")
