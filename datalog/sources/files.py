"""Fact files in and output files out, as Soufflé 2.x reads and writes them.

Input: ``.input r`` reads ``<facts_dir>/r.facts`` (or ``filename=``), UTF-8 (a
byte-order mark at its start is dropped; a gzip file is read through), one row per
line, laid out as its parameters say (:mod:`datalog.sources.textformat`: delimiter,
headers, rfc4180). A row's fields beyond the relation's arity are ignored, as
Soufflé ignores them; a nullary relation holds its tuple if the file has any line.
Values are read by :func:`parse_value`, as Soufflé reads them, ASCII only
(:mod:`datalog.language.numbers`): integers ``[-+]?digits`` or ``0x``/``0b``
prefixed within the signed 64-bit range, floats decimal with an optional
exponent or ``inf``; never ``nan``. Symbols are the raw text.
Output: ``.output r`` writes ``<out_dir>/r.csv`` (or ``filename=``), the same
format, rows in ascending order, each value by :func:`format_value`; a nullary
relation that holds is the line ``()``. ``IO=stdout`` (and every output under
``-D -``) prints instead, ``IO=sqlite`` goes through :mod:`datalog.sources.sqlite`,
``IO=json``/``jsonfile`` through :mod:`datalog.sources.jsonio`, ``IO=stdin`` reads
the standard input. Every file of a run is written to a temporary name first
(:mod:`datalog.sources.atomic`) and they are renamed together at the end: a reader
never sees half a file, and a failed output leaves every file as it was.
A ``filename`` (or SQLite ``dbname``) stays under its directory unless the user
allows paths (:mod:`datalog.sources.paths`).
"""

from __future__ import annotations

import functools
import itertools
import sys
from pathlib import Path
from typing import Callable, Iterable

from datalog.language import ast, composites, numbers
from datalog.language.display import FLOAT_DIGITS
from datalog.language.errors import (BadFactFile, DatalogError, InputPath, MissingInput, OutputError, OutputPath, Source,
                                     Span)
from datalog.language.mixed import MIXED, from_text, is_mixed, written
from datalog.language.types import AUTO
from datalog.sources import atomic, jsonio, numberfile, paths, textformat
from datalog.sources.textformat import TextFormat


def io_name(directive: ast.Directive) -> str:
    """The name a directive's file, table or printed block goes by: ``name=`` or the relation's."""
    return directive.param("name") or directive.relation


def input_path(directive: ast.Directive, facts_dir: str | Path, allow_paths: bool = False) -> Path:
    """The file an ``.input`` reads; one whose real path leaves ``facts_dir`` is ``input_path``
    unless ``allow_paths``."""
    name = _file_name(directive, "facts")
    if not allow_paths and not paths.inside(facts_dir, name):
        raise InputPath(f"input file {name!r} of relation {directive.relation} leads out of the fact "
                        f"directory {facts_dir}; pass --allow-paths to read it", directive.span)
    return paths.joined(facts_dir, name)


SOURCE_SCAN_LIMIT = 8 << 20        # bytes of a fact file searched for a row's line (provenance)


def row_source(directive: ast.Directive, facts_dir: str | Path, row: tuple, allow_paths: bool = False) -> str:
    """Where an ``.input`` file gives ``row``: ``name.facts:LINE`` for a plain delimited file of at
    most SOURCE_SCAN_LIMIT bytes that has it on one line, else the file's name."""
    name = _file_name(directive, "facts")
    try:
        path = input_path(directive, facts_dir, allow_paths)
        fmt = TextFormat.of(directive)
        if directive.io != "file" or fmt.rfc4180 or fmt.compress or path.stat().st_size > SOURCE_SCAN_LIMIT:
            return name
        fields = [format_value(v) for v in row]
        with open(path, encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, 1):
                if line.rstrip("\r\n").split(fmt.delimiter) == fields:
                    return f"{name}:{number}"
    except (OSError, DatalogError):
        pass
    return name


def _file_name(directive: ast.Directive, suffix: str) -> str:
    """``filename=`` (for SQLite also ``dbname=``, a ``file:`` URI's path), else the name and
    the suffix Soufflé gives: ``r.facts``, ``r.csv``, ``r.csv.gz`` when compressed, ``r.sqlite``."""
    if directive.io == "sqlite":
        from datalog.sources import sqlite       # (imported by the programs that use it: start-up)
        return sqlite.file_name(directive.param("filename") or directive.param("dbname")
                                or f"{io_name(directive)}.sqlite")
    if directive.io == "jsonfile":
        suffix = "json"
    if suffix == "csv" and TextFormat.of(directive).compress:
        suffix = "csv.gz"
    return directive.param("filename") or f"{io_name(directive)}.{suffix}"


def read_input(directive: ast.Directive, path: Path, types: list[str], columns: list[str] = ()) -> list[tuple]:
    """The rows of an ``.input``'s file (CSV text, SQLite or JSON, as its ``IO`` says; JSON
    objects find values by the ``columns``' names)."""
    if directive.io == "sqlite":
        from datalog.sources import sqlite
        return sqlite.read_relation(path, io_name(directive), types, sqlite_value, directive)
    if directive.io == "jsonfile":
        return _read_json(path, types, list(columns), directive)
    return read_facts(path, types, TextFormat.of(directive), directive)


def _read_json(path: Path, types: list[str], columns: list[str], directive) -> list[tuple]:
    data = _read_bytes(path, directive)
    text = _decode(data, path)
    try:
        return jsonio.parse_json(text, types, columns)
    except ValueError as exc:
        raise BadFactFile(f"{exc}", Span(Source(str(path), text), 1, 1, 1, 2)) from None


def read_facts(path: Path, types: list[str], fmt: str | TextFormat = "\t", directive=None) -> list[tuple]:
    """Parse a fact file laid out as ``fmt`` says (a delimiter, or a whole :class:`TextFormat`);
    a malformed row is a ``bad_fact_file`` error naming file:line."""
    fmt = fmt if isinstance(fmt, TextFormat) else TextFormat(fmt)
    return parse_facts(_read_bytes(path, directive), types, fmt, path)


def read_stdin(directive: ast.Directive, types: list[str]) -> list[tuple]:
    """``.input r(IO=stdin)``: the rows of the standard input, laid out as a fact file."""
    return parse_facts(sys.stdin.buffer.read(), types, TextFormat.of(directive), Path("<stdin>"))


def parse_facts(data: bytes, types: list[str], fmt: TextFormat, path: Path) -> list[tuple]:
    """The rows of a fact file's bytes (gzip or not); errors name ``path``."""
    try:
        data = textformat.inflate(data)
    except ValueError as exc:
        raise BadFactFile(f"{exc}", Span(Source(str(path), ""), 1, 1, 1, 2)) from None
    if (words := numberfile.read_numbers(data, types, fmt)) is not None:
        return words                       # a large plain file of numbers, read in C
    text = _decode(data, path)
    source = Source(str(path), text)
    first = 1
    if fmt.headers:                        # Soufflé skips the first line, whatever it holds
        text, first = text.partition("\n")[2], 2
    if not types:                          # nullary: each line, even a blank one, is the one tuple
        return [()] if textformat.lines(text) else []
    if not fmt.rfc4180:
        rows = _read_fast(text, types, fmt.delimiter)
        if rows is not None:
            return _settle_auto_columns(rows, types)
    return _read_careful(text, types, fmt, source, first)


def _read_bytes(path: Path, directive) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        span = directive.span if directive else None
        raise MissingInput(f"input file {path} for relation "
                           f"{directive.relation if directive else '?'} does not exist", span) from None
    except (IsADirectoryError, PermissionError) as exc:
        raise MissingInput(f"cannot read input file {path}: {exc}") from None


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
    if "," in delimiter and "[" in text:                     # records' commas: see split_fields
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


def _read_careful(text: str, types: list[str], fmt: TextFormat, source: Source, first: int) -> list[tuple]:
    """Row by row, reporting the first bad one. As Soufflé's reader, a row's first
    ``len(types)`` fields are its values and any further ones are ignored; fewer is an error.
    A blank line is skipped (or is the empty symbol of a one-column relation, but for the last)."""
    rows = []
    for number, line, fields in _rows_of_text(text, fmt, source, first):
        if not line and (len(types) != 1 or number == first + text.count("\n")):
            continue
        if len(fields) < len(types):
            raise BadFactFile(f"expected {len(types)} field{'s' * (len(types) != 1)} separated by "
                              f"{fmt.delimiter!r}, found {len(fields)}",
                              Span(source, number, 1, number, len(line) + 1))
        values = tuple(map(_value, fields, types))           # the first len(types) fields
        if None in values:
            _bad_field(fields, types, values.index(None), fmt, source, number)
        rows.append(values)
    return _settle_auto_columns(rows, types)


def _rows_of_text(text: str, fmt: TextFormat, source: Source, first: int):
    """``(line number, line text, fields)`` of each row: split at the delimiter, or as RFC 4180
    quoting says (an unclosed quote is ``bad_fact_file`` at the line that opened it)."""
    if not fmt.rfc4180:
        for number, line in enumerate(text.split("\n"), first):
            line = line.rstrip("\r")
            try:
                yield number, line, textformat.split_fields(line, fmt.delimiter)
            except textformat.Unbalanced as exc:
                raise BadFactFile(str(exc), Span(source, number, 1, number, len(line) + 1)) from None
        return
    try:
        for number, fields in textformat.records(text, fmt, first):
            yield number, source.line(number), fields
    except textformat.Unbalanced as exc:
        raise BadFactFile(str(exc), Span(source, exc.line, exc.column, exc.line, exc.column)) from None


def _columns(fields: list[str], delimiter: str) -> list[int]:
    """The 1-based column where each field starts."""
    out, at = [], 1
    for f in fields:
        out.append(at)
        at += len(f) + len(delimiter)
    return out


def parse_value(text: str, type_: str):
    """One primitive value of a fact file (``number``, ``unsigned``, ``float``, ``symbol``) as
    Soufflé reads it; None if ``text`` is not one. (Records and ADTs wrap this.)"""
    if type_ == "symbol" or type_ == AUTO:
        return text
    if type_ == MIXED:                      # plain Datalog's numbers and symbols: by the field's text
        return from_text(text)
    if type_ == "float":
        return numbers.parse_float(text)
    if type_ == "unsigned":                 # 0 .. 2^64-1 (Soufflé's uint64; a sign is refused)
        return numbers.parse_unsigned(text)
    return numbers.parse_int(text)


def sqlite_value(text: str, type_: str):
    """:func:`parse_value` of a SQLite field: an unsigned is stored as the signed 64-bit integer of
    its bits (SQLite's INTEGER is signed; Soufflé binds the bits with sqlite3_bind_int64 and reads
    them back alike), so ``-1`` there is ``2^64 - 1``."""
    if type_ == "unsigned":
        value = numbers.parse_int(text)
        return numbers.wrap_unsigned(value) if value is not None else numbers.parse_unsigned(text)
    return parse_value(text, type_)


def _value(text: str, type_: str):
    """:func:`parse_value`, and a record or ADT (issue 18) read by composites around it; None if
    ``text`` is not a value of ``type_``."""
    if not getattr(type_, "is_composite", False):
        return parse_value(text, type_)
    try:
        return composites.parse_value(text, type_, parse_value)
    except composites.TextError:
        return None


def _bad_field(fields: list[str], types: list[str], index: int, fmt: TextFormat, source: Source, number: int):
    """``bad_fact_file`` at field ``index`` of line ``number``, saying why it is no value of its type."""
    text, type_ = fields[index], types[index]
    column = _columns(fields, fmt.delimiter)[index] if not fmt.rfc4180 else 1
    span = Span(source, number, column, number, column + max(len(text), 1))
    if getattr(type_, "is_composite", False):
        try:
            composites.parse_value(text, type_, parse_value)
        except composites.TextError as exc:       # a record's or ADT's own position of the fault
            at = column + exc.position
            raise BadFactFile(f"field {index + 1} is not a {type_}: {exc}",
                              Span(source, number, at, number, at + 1)) from None
    if type_ == "unsigned" and text.strip().startswith("-"):
        why = "negative, not an unsigned number"
    elif type_ in ("number", "unsigned"):
        beyond = numbers.URANGE if type_ == "unsigned" else numbers.RANGE
        why = f"beyond {beyond}" if numbers.int_syntax(text) else f"not {_ARTICLE[type_]}"
    else:
        why = numbers.float_problem(text)
    shown = text if len(text) <= 40 else f"{text[:37]}..."
    raise BadFactFile(f"field {index + 1} is {shown!r}, {why}", span)


_ARTICLE = {"number": "a number", "unsigned": "an unsigned number"}


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


# Soufflé prints a float with ``std::setprecision(max_digits10)`` in C++'s default float format
# (``%g``: shortest of fixed and exponent form, trailing zeros dropped), since 2.0.2 (its PR
# #1546). Our floats are doubles, as in Soufflé built with 64-bit values, where max_digits10 is 17:
# ``0.5``, ``3`` (not ``3.0``), ``1e+17``, ``0.10000000000000001``, ``inf``, ``-inf``. (The
# default build holds 32-bit floats and prints 9 digits of those; no width of ours matches it.)
# (FLOAT_DIGITS, from datalog.language.display: every float a person reads is printed so.)


def format_value(value) -> str:
    """One primitive value as Soufflé prints it: integers in decimal, symbols raw, floats as
    ``%.17g``. (Records and ADTs wrap this; a mixed column's symbol is quoted.)"""
    if isinstance(value, tuple):            # a record or ADT value (issue 18)
        return composites.render(value, format_value)
    if is_mixed(value):                     # plain Datalog's numbers and symbols: "5" quoted
        return written(value)
    if isinstance(value, float):
        return f"{value:.{FLOAT_DIGITS}g}"
    return str(value)


def format_field(value, fmt: TextFormat) -> str:
    """A value as an output field: with ``rfc4180`` a symbol is quoted, and so is a record or ADT,
    its symbols in quotes inside (``"$Couple(""a"", ""b"")"``, as Soufflé's writer gives it)."""
    if fmt.rfc4180 and isinstance(value, tuple):
        return textformat.quote(composites.render(value, _quoted_symbol))
    return textformat.quote(value) if fmt.rfc4180 and isinstance(value, str) else format_value(value)


def _quoted_symbol(value) -> str:
    """A primitive inside a record or ADT of an rfc4180 field: a symbol in quotes (its quotes
    escaped with a backslash, as Soufflé prints a symbol in a record), else as ever."""
    return '"' + value.replace('"', '\\"') + '"' if isinstance(value, str) else format_value(value)


def format_rows(rows, fmt: str | TextFormat = "\t") -> str:
    """Rows as text lines; a nullary relation that holds is the line ``()``. A column holds one
    type (floats are converted on insert), so a relation whose first row holds only integers
    and symbols holds nothing else: its values print with plain ``str`` (unless symbols are
    quoted); any other value (a float, a record) goes through :func:`format_value`."""
    fmt = fmt if isinstance(fmt, TextFormat) else TextFormat(fmt)
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return ""
    if not rows[0]:
        return "()\n"
    if fmt.rfc4180:
        fmt_one = functools.partial(format_field, fmt=fmt)
    else:
        plain = all(type(v) in (int, str) for v in rows[0])
        fmt_one = str if plain else format_value
    join = fmt.delimiter.join
    return "".join([join(map(fmt_one, row)) + "\n" for row in rows])


def header(directive: ast.Directive, columns: list[str], fmt: TextFormat) -> str:
    """The header line's text: ``attributeNames=`` as given, else the column names joined by the
    delimiter."""
    given = directive.param("attributeNames")
    return given if given is not None else fmt.delimiter.join(columns)


def write_outputs(directives: list[ast.Directive], rows_of: Callable[[str], list], out_dir: str | None,
                  allow_paths: bool = False, columns_of: Callable[[str], list[str]] | None = None,
                  types_of: Callable[[str], list[str]] | None = None,
                  text_of: Callable[[str, TextFormat], Iterable[bytes] | None] | None = None) -> None:
    """Write each directive's relation (``rows_of(relation)``; ``columns_of`` gives the column
    names for headers and SQLite views, ``types_of`` the column types for SQLite; ``text_of``,
    if it gives them, a delimited file's lines in pieces, as :func:`format_rows` would make them): printed when
    ``out_dir`` is ``-`` (Soufflé then prints every output, with its header line) or its IO is
    ``stdout``, else to its file under ``out_dir``, all or none: every path is checked, then
    every file written to a temporary name (a SQLite database is copied there and changed),
    then all are renamed, then the printed ones printed. On a failure the temporaries are
    removed and no file has changed (``output_path``, ``output_error``)."""
    columns_of = columns_of or (lambda name: [])
    printed = [d for d in directives if out_dir == "-" or d.io in PRINTED]
    targets = [(d, *_output_path(d, out_dir or ".", allow_paths)) for d in directives
               if not (out_dir == "-" or d.io in PRINTED)]
    staged: list[atomic.Staged] = []
    try:
        for directive, shown, real in targets:
            if directive.io != "sqlite":
                fmt = TextFormat.of(directive)
                text = text_of(directive.relation, fmt) if text_of and directive.io == "file" else None
                rows = rows_of(directive.relation) if text is None else ()
                staged.append(_stage(directive, rows, columns_of(directive.relation),
                                     shown, real, types_of(directive.relation) if types_of else None, text))
        staged.extend(_stage_databases([t for t in targets if t[0].io == "sqlite"], rows_of, columns_of,
                                       types_of))
        atomic.commit_all(staged)
    except OSError as exc:                       # a rename, or the directory's fsync
        atomic.discard_all(staged)
        raise OutputError(f"cannot write the output files into {out_dir or '.'}: "
                          f"{exc.strerror or exc} ({exc.filename2 or exc.filename})") from None
    except BaseException:
        atomic.discard_all(staged)
        raise
    for directive in printed:
        rows, columns = rows_of(directive.relation), columns_of(directive.relation)
        if directive.io == "json" and out_dir != "-":
            types = types_of(directive.relation) if types_of else None
            sys.stdout.write(jsonio.format_json(rows, columns, _objects(directive), types))
        else:
            _print(directive, rows, columns, out_dir == "-")


PRINTED = ("stdout", "json")             # IO= values printed rather than written to a file


def _objects(directive: ast.Directive) -> bool:
    """JSON rows as objects (``format=object``) rather than arrays (``format=list``)."""
    return (directive.param("format") or "list").lower() == "object"


def _output_path(directive: ast.Directive, out_dir: str, allow_paths: bool) -> tuple[Path, Path]:
    """The file of an ``.output`` as the user names it and its real path, where it is written;
    one that leads out of ``out_dir`` is ``output_path`` unless ``allow_paths``."""
    name = _file_name(directive, "csv")
    shown = paths.joined(out_dir, name)
    if not allow_paths and not paths.inside(out_dir, name):
        raise OutputPath(f"output file {name!r} of relation {directive.relation} leads out of the output "
                         f"directory {out_dir}; pass --allow-paths to write it", directive.span)
    real = paths.real(out_dir, name)
    if real.is_dir():
        raise OutputError(f"cannot write {shown} for relation {directive.relation}: it is a directory",
                          directive.span)
    return shown, real


def _stage(directive: ast.Directive, rows, columns: list[str], shown: Path, real: Path,
           types=None, text: Iterable[bytes] | None = None) -> atomic.Staged:
    """The relation's text (gzip-compressed with ``compress``) in a temporary file beside
    ``real``, its lines the pieces ``text`` when given (written as they come, unless
    compressed); ``output_error`` naming ``shown``."""
    fmt = TextFormat.of(directive)
    if text is not None:
        pieces = itertools.chain(_header_line(directive, columns, fmt), text)
        if fmt.compress:
            return _staged(directive, shown, real, b"".join(pieces), fmt)
        return _staged_pieces(directive, shown, real, pieces)
    if directive.io == "jsonfile":
        text = jsonio.format_json(rows, columns, _objects(directive), types)
    elif hasattr(rows, "chunks") and not fmt.compress:     # streamed (the Spark-resident evaluator's)
        pieces = (format_rows(chunk, fmt).encode("utf-8") for chunk in rows.chunks())
        return _staged_pieces(directive, shown, real, itertools.chain(_header_line(directive, columns, fmt), pieces))
    else:
        text = format_rows(rows, fmt)
        if fmt.headers:
            text = header(directive, columns, fmt) + "\n" + text
    return _staged(directive, shown, real, text.encode("utf-8"), fmt)


def _header_line(directive: ast.Directive, columns: list[str], fmt: TextFormat) -> list[bytes]:
    """The header line as the first piece of a file, if ``headers=true``."""
    return [(header(directive, columns, fmt) + "\n").encode("utf-8")] if fmt.headers else []


def _staged(directive: ast.Directive, shown: Path, real: Path, data: bytes, fmt: TextFormat) -> atomic.Staged:
    return _staged_pieces(directive, shown, real, [textformat.deflate(data) if fmt.compress else data])


def _staged_pieces(directive: ast.Directive, shown: Path, real: Path, pieces: Iterable[bytes]) -> atomic.Staged:
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        return atomic.stage(real, pieces)
    except OSError as exc:
        raise OutputError(f"cannot write {shown} for relation {directive.relation}: {exc.strerror or exc}",
                          directive.span) from None


def _stage_databases(targets, rows_of, columns_of, types_of) -> list[atomic.Staged]:
    """Each SQLite database named by ``targets`` copied to a temporary file, every relation
    written into it there (several relations may share one database)."""
    from datalog.sources import sqlite
    by_file: dict[Path, list] = {}
    for directive, shown, real in targets:
        by_file.setdefault(real, []).append((directive, shown))
    staged = []
    for real, group in by_file.items():
        tables = [sqlite.Table(io_name(d), rows_of(d.relation), columns_of(d.relation),
                               types_of(d.relation) if types_of else None) for d, _ in group]
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            staged.append(sqlite.stage_database(real, tables))
        except (OSError, sqlite.Error) as exc:
            directive, shown = group[0]
            raise OutputError(f"cannot write {shown} for relation {directive.relation}: "
                              f"{getattr(exc, 'strerror', None) or exc}", directive.span) from None
    return staged


def _print(directive: ast.Directive, rows, columns: list[str], headers: bool) -> None:
    """A relation printed as Soufflé prints it: its name (and header line), its rows, between rules."""
    fmt = TextFormat.of(directive, stdout=headers)
    top = f"---------------\n{io_name(directive)}"
    if fmt.headers:
        top += "\n" + header(directive, columns, fmt)
    if hasattr(rows, "chunks"):                           # streamed (the Spark-resident evaluator's)
        sys.stdout.write(top + "\n===============\n")
        for chunk in rows.chunks():
            sys.stdout.write(format_rows(chunk, fmt))
        sys.stdout.write("===============\n")
        return
    sys.stdout.write(top + "\n===============\n" + format_rows(rows, fmt) + "===============\n")
