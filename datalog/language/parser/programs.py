"""Programs, queries and atoms from text: the entry points :func:`parse` (with the ``// @pragma``
comments that go with rules), :func:`parse_file`, :func:`parse_atom` and :func:`parse_query`;
:func:`read_file` is shared with updates files.

>>> print(parse('// @order y, x\\np(x, y) :- e(x, y).').rules[0].pragma)
(('order', 'y, x'),)
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from datalog.language import ast, components
from datalog.language.errors import DatalogError, MissingInput, Source, Span, SyntaxError_
from datalog.language.parser import includes, preprocessor
from datalog.language.parser.lalr import parse_tree, transform
from datalog.language.parser.options import DEFAULT, ParseOptions
from datalog.language.parser.to_ast import ToAst, ToQuery

_PRAGMA = re.compile(r"^\s*//\s*@(\w+)\s*(.*?)\s*$")


def parse(text: str, name: str = "<input>", options: ParseOptions = DEFAULT) -> ast.Program:
    """Parse a whole program: preprocessed (when it has a ``#`` directive), its ``.include``s
    read, its components expanded; raises DatalogError(syntax_error) on bad text."""
    return components.expand(parse_unexpanded(text, name, options))


def parse_unexpanded(text: str, name: str = "<input>", options: ParseOptions = DEFAULT) -> ast.Program:
    """The program as written: components and their ``.init``s still there (``.include``s read)."""
    places = None
    if preprocessor.needed(text, options):
        parsed, places = preprocessor.preprocess(text, name, options)
    else:
        parsed = text
    program = _attach_pragmas(_parse_text(parsed, Source(name, text), places), text, places)
    return includes.resolve(program, name, options, lambda t, n: _attach_pragmas(_parse_text(t, Source(n, t)), t))


def _parse_text(text: str, source: Source, places=None) -> ast.Program:
    """lark's parse of ``text``; with ``places``, every span (an error's too) in the original file."""
    try:
        return transform(ToAst(Source(source.name, text) if places is None else source, places),
                         parse_tree(text, Source(source.name, text)),
                         "the program nests expressions too deeply to parse; split the expression "
                         "with intermediate variables")
    except DatalogError as error:
        if places is not None and error.span is not None and error.span.source is not None \
                and error.span.source.text == text:
            origin, line = places.place(error.span.line)
            error.span = Span(origin, line, error.span.column, line, error.span.end_column)
        raise


def parse_file(path: str | Path, options: ParseOptions = DEFAULT) -> ast.Program:
    return parse(read_file(path, "program file"), str(path), options)


def read_file(path: str | Path, what: str) -> str:
    """The text of the file at ``path``, or MissingInput saying which ``what`` (such as
    ``program file``) is missing or unreadable."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingInput(f"{what} {path} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError, PermissionError) as exc:
        raise MissingInput(f"cannot read {what} {path}: {exc}") from None


def parse_atom(text: str, name: str = "<query>") -> ast.Atom:
    """Parse a query such as ``path(1, X)`` (a trailing ``.`` and ``?-`` are optional)."""
    body = text.strip()
    body = body[2:] if body.startswith("?-") else body
    body = body.rstrip().rstrip(".")
    program = parse(body + ".", name)
    rules = program.rules
    if len(program.statements) != 1 or len(rules) != 1 or len(rules[0].heads) != 1:
        raise SyntaxError_("a query is one atom, such as path(1, X)", Span(Source(name, text), 1, 1))
    return rules[0].heads[0]


def parse_query(text: str, name: str = "<query>") -> tuple:
    """The body of a query ``?- path(1, x), !edge(x, _).``: a tuple of literals with their spans.

    >>> [str(literal) for literal in parse_query("?- p(x), x > 1 ; q(x).")]
    ['(p(x), x > 1 ; q(x))']
    """
    source = Source(name, text)
    return transform(ToQuery(source), parse_tree(text, source, "query"), "the query nests too deeply to parse")


def _attach_pragmas(program: ast.Program, text: str, places=None) -> ast.Program:
    """``// @order x, y`` on the lines before a rule applies to that rule (of the main file, when
    the text was preprocessed: ``places``)."""
    pending: dict[int, tuple[str, str]] = {}
    for number, line in enumerate(text.split("\n"), 1):
        match = _PRAGMA.match(line)
        if match:
            pending[number] = (match.group(1).lower(), match.group(2))
    if not pending:
        return program
    statements, last_line = [], 0
    for stmt in program.statements:
        line = stmt.span.line if stmt.span else 0
        if isinstance(stmt, ast.Rule) and (places is None or stmt.span and stmt.span.source
                                           and stmt.span.source.text == text):
            mine = tuple(p for n, p in sorted(pending.items()) if last_line < n < line)
            if mine:
                stmt = dataclasses.replace(stmt, pragma=mine)
        statements.append(stmt)
        last_line = stmt.span.end_line if stmt.span and stmt.span.end_line else line
    return ast.Program(tuple(statements), program.warnings)
