"""Soufflé's ``.include "file"`` and ``.once``: the included file's statements take the place of
the directive (inside a component too); a file that says ``.once`` is included at most once.

Soufflé's scanner reads the included file as it is, without the C preprocessor; so do we. The
file is looked up next to the including file, then in the ``-I`` directories, and must lie under
the program's directory or an ``-I`` directory unless ``--allow-paths`` (options.py).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable

from datalog.language import ast
from datalog.language.errors import MissingInput
from datalog.language.parser.options import ParseOptions

Parser = Callable[[str, str], ast.Program]       # (text, file name) -> the program, unexpanded


def resolve(program: ast.Program, name: str, options: ParseOptions, parse: Parser) -> ast.Program:
    """``program`` (of the file ``name``) with every ``.include`` replaced by the file's statements."""
    if not _has_includes(program.statements):
        return program
    seen = {os.path.realpath(name)} if os.path.isfile(name) else set()
    warnings = list(program.warnings)          # the included files' warnings join the program's
    statements = _resolved(program.statements, name, name, options, parse, seen, set(), warnings)
    return dataclasses.replace(program, statements=tuple(statements), warnings=tuple(warnings))


def _has_includes(statements) -> bool:
    return any(isinstance(s, (ast.Include, ast.Once)) or
               isinstance(s, ast.Component) and _has_includes(s.body) for s in statements)


def _resolved(statements, including: str, program: str, options: ParseOptions, parse: Parser,
              seen: set, once: set, warnings: list) -> list:
    out = []
    for stmt in statements:
        if isinstance(stmt, ast.Include):
            out.extend(_included(stmt, including, program, options, parse, seen, once, warnings))
        elif isinstance(stmt, ast.Component) and _has_includes(stmt.body):
            body = _resolved(stmt.body, including, program, options, parse, seen, once, warnings)
            out.append(dataclasses.replace(stmt, body=tuple(body)))
        elif not isinstance(stmt, ast.Once):
            out.append(stmt)
    return out


def _included(include: ast.Include, including: str, program: str, options: ParseOptions,
              parse: Parser, seen: set, once: set, warnings: list) -> list:
    path = _find(include, including, options)
    options.check_allowed(path, program, include.span)
    real = os.path.realpath(path)
    if real in once:
        return []                                  # its .once: included already
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MissingInput(f"cannot read include file {path}: {exc}", include.span) from None
    included = parse(text, str(path))
    if any(isinstance(s, ast.Once) for s in included.statements):
        if real in seen:
            return []
        once.add(real)
    seen.add(real)
    warnings.extend(included.warnings)
    return _resolved(included.statements, str(path), program, options, parse, seen, once, warnings)


def _find(include: ast.Include, including: str, options: ParseOptions) -> Path:
    """The included file: next to the including file, else in an -I directory (Soufflé's order)."""
    if os.path.isabs(include.path) and os.path.isfile(include.path):
        return Path(include.path)
    for directory in options.search_dirs(including):
        candidate = directory / include.path
        if candidate.is_file():
            return candidate
    raise MissingInput(f"cannot find include file {include.path!r} (searched the including file's "
                       f"directory and the -I directories)", include.span)
