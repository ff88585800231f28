"""Updates files, the changes ``datalog run --updates`` applies: :func:`parse_updates` and
:func:`parse_updates_file` give their transactions, each a :class:`Batch`, built by the grammar's
``updates`` rules.
"""

from __future__ import annotations

from pathlib import Path

import lark
from lark import v_args

from datalog.language import ast
from datalog.language.recordtypes import is_ground
from datalog.language.errors import Source, Span, SyntaxError_
from datalog.language.parser.lalr import lark_parser, syntax_error, transform
from datalog.language.parser.programs import read_file
from datalog.language.parser.to_ast import ToAst


class Batch(list):
    """One transaction of an updates file: ``(sign, atom)`` pairs in file order, ``sign`` is
    ``"+"`` (insert) or ``"-"`` (retract), every argument ground (a constant, or a record or branch
term of constants: :func:`datalog.language.recordtypes.value_of`); ``span`` is
    where its ``commit.`` is. Atoms and constants carry spans into the updates file."""

    def __init__(self, changes=(), span: Span | None = None):
        super().__init__(changes)
        self.span = span


def parse_updates(text: str, name: str = "<updates>") -> list[Batch]:
    """Parse an updates file: ``+r(1, "a").`` inserts, ``-r(2, "b").`` retracts, ``commit.`` ends a
    batch; ``//`` and ``/* */`` comments. Changes after the last ``commit.`` are a syntax error
    (nothing is applied from a file that may be cut short).

    >>> [[(s, str(a)) for s, a in b] for b in parse_updates('+e(1, "x"). -e(2, 2.5).\\ncommit.')]
    [[('+', 'e(1, "x")'), ('-', 'e(2, 2.5)')]]
    """
    source = Source(name, text)
    try:
        tree = lark_parser().parse(text, start="updates")
    except lark.exceptions.UnexpectedInput as exc:
        error = syntax_error(exc, source)
        said = "; expected" in error.message or "missing '.'" in error.message
        if "DOT" in (getattr(exc, "expected", None) or ()) and not said:
            error.message += "; does the change before it end with '.'?"
        raise error from None
    items = transform(_ToUpdates(source), tree, "a change nests too deeply to parse")
    batches, current = [], Batch()
    for item in items:
        if isinstance(item, _Commit):
            current.span = item.span
            batches.append(current)
            current = Batch()
        else:
            current.append(item)
    if current:
        first = current[0][1].span
        raise SyntaxError_(f"{'this change is' if len(current) == 1 else f'these {len(current)} changes are'} "
                           f"not followed by commit.; end every batch with a line commit.", first)
    return batches


def parse_updates_file(path: str | Path) -> list[Batch]:
    return parse_updates(read_file(path, "updates file"), str(path))


class _Commit:
    def __init__(self, span: Span | None):
        self.span = span


@v_args(meta=True)
class _ToUpdates(ToAst):
    """The rules of an updates file; atoms and terms are built as in programs."""

    def updates(self, meta, children):
        return children

    def change(self, meta, children):
        sign, atom = children
        if sign is None:
            raise SyntaxError_(f"a change starts with + (insert) or - (retract), as in +{atom}.", atom.span)
        for arg in atom.args:
            if not is_ground(arg):                      # records (issue 18): +p([1, nil]).
                hint = f' (a symbol is quoted: "{arg}")' if isinstance(arg, ast.Variable) else ""
                raise SyntaxError_(f"a change holds constants only, not {arg}{hint}", arg.span or atom.span)
        return sign, atom

    def update_sign(self, meta, children):
        return str(children[0])

    def commit(self, meta, children):
        (name,) = children
        span = Span(self.source, name.line, name.column, name.end_line, name.end_column)
        if str(name) != "commit":
            raise SyntaxError_(f"unexpected {name}.; expected commit. or a change such as +{name}(...).", span)
        return _Commit(self._span(meta))
