"""Programs, queries and atoms from text: the entry points :func:`parse` (with the ``// @pragma``
comments that go with rules), :func:`parse_file`, :func:`parse_atom` and :func:`parse_query`;
:func:`read_file` is shared with updates files.

>>> print(parse('// @order y, x\\np(x, y) :- e(x, y).').rules[0].pragma)
(('order', 'y, x'),)
"""

from __future__ import annotations

import re
from pathlib import Path

from datalog.language import ast
from datalog.language.errors import MissingInput, Source, Span, SyntaxError_
from datalog.language.parser.lalr import parse_tree, transform
from datalog.language.parser.to_ast import ToAst, ToQuery

_PRAGMA = re.compile(r"^\s*//\s*@(\w+)\s*(.*?)\s*$")


def parse(text: str, name: str = "<input>") -> ast.Program:
    """Parse a whole program; raises DatalogError(syntax_error) on bad text."""
    source = Source(name, text)
    program = transform(ToAst(source), parse_tree(text, source),
                        "the program nests expressions too deeply to parse; split the expression "
                        "with intermediate variables")
    return _attach_pragmas(program, text)


def parse_file(path: str | Path) -> ast.Program:
    return parse(read_file(path, "program file"), str(path))


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


def _attach_pragmas(program: ast.Program, text: str) -> ast.Program:
    """``// @order x, y`` on the lines before a rule applies to that rule."""
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
        if isinstance(stmt, ast.Rule):
            mine = tuple(p for n, p in sorted(pending.items()) if last_line < n < line)
            if mine:
                stmt = ast.Rule(stmt.heads, stmt.body, stmt.span, mine)
        statements.append(stmt)
        last_line = stmt.span.end_line if stmt.span and stmt.span.end_line else line
    return ast.Program(tuple(statements))
