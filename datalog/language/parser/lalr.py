"""The one LALR parser of ``grammar.lark``, shared by programs, queries and updates files, and
lark's errors as ours: a :class:`SyntaxError_` whose span puts the caret under the offending
token, the error a Transformer's method raised, :class:`TooDeep`.

>>> print(parse_tree("e(1).", Source("<input>", "e(1).")).data)
start
>>> try:
...     parse_tree("e(1) :- f(1)", Source("<input>", "e(1) :- f(1)"))
... except DatalogError as error:
...     print(error.render())
<input>:1:13: error[syntax_error]: unexpected end of input (a statement ends with '.')
  e(1) :- f(1)
              ^
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import lark

from datalog.language.errors import DatalogError, Source, Span, SyntaxError_, TooDeep, Unsupported
from datalog.language.parser import unsupported

_GRAMMAR = Path(__file__).with_name("grammar.lark")


@functools.cache
def lark_parser() -> lark.Lark:
    """One LALR parser for the grammar's three start symbols: programs (``start``), queries and
    updates files. Building it is most of a short command's start-up (about 0.2 s each when
    they were three parsers)."""
    return lark.Lark(_GRAMMAR.read_text(), parser="lalr", propagate_positions=True,
                     maybe_placeholders=True, start=["start", "query", "updates"])


def parse_tree(text: str, source: Source, start: str = "start") -> lark.Tree:
    """lark's tree of ``text`` from the grammar's ``start`` symbol, or a SyntaxError_."""
    try:
        return lark_parser().parse(text, start=start)
    except lark.exceptions.UnexpectedInput as exc:
        raise syntax_error(exc, source) from None


def transform(transformer: lark.Transformer, tree: lark.Tree, too_deep: str):
    """The AST that ``transformer`` (which has the ``source``) builds from ``tree``. A
    DatalogError raised by one of its methods comes out as it is, not wrapped in lark's
    VisitError; a tree too deep for Python's recursion is TooDeep(``too_deep``)."""
    try:
        return transformer.transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DatalogError):
            raise exc.orig_exc from None
        raise
    except RecursionError:
        raise TooDeep(too_deep, Span(transformer.source, 1, 1)) from None


def syntax_error(exc: lark.exceptions.UnexpectedInput, source: Source) -> DatalogError:
    """lark's ``exc`` as a SyntaxError_ spanning the unexpected token (or the end of the text),
    with the tokens that could have come there when they are few."""
    named = _unsupported(exc, source)
    if named is not None:
        return named
    line, column = getattr(exc, "line", 1), getattr(exc, "column", 1)
    if line is None or line < 1:
        line, column = _end_position(source.text)
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        char = source.text[exc.pos_in_stream] if exc.pos_in_stream < len(source.text) else ""
        message = f"unexpected character {char!r}"
    elif isinstance(exc, lark.exceptions.UnexpectedEOF) or getattr(exc, "token", None) in (None, "") \
            or getattr(getattr(exc, "token", None), "type", "") == "$END":
        message = "unexpected end of input (a statement ends with '.')"
        line, column = _end_position(source.text)
    else:
        message = f"unexpected {_describe(exc.token)}"
    expected = _expected(exc)
    if expected:
        message += f"; expected {expected}"
    width = len(str(getattr(exc, "token", "") or "x"))
    return SyntaxError_(message, Span(source, line, column, line, column + width))


def _unsupported(exc, source: Source) -> DatalogError | None:
    """``unsupported`` naming the Soufflé construct lark stopped in (see unsupported.py), if any."""
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        position = exc.pos_in_stream
        token = source.text[position:position + 1]
    else:
        token = getattr(exc, "token", None)
        position = getattr(token, "start_pos", None)
        if position is None or getattr(token, "type", "") == "$END":
            return None
        token = str(token)
    before = source.text[:position]
    construct = unsupported.construct(token, before, source.text[position:position + 40])
    if construct is None:
        return None
    start = unsupported.word_before(token, before)
    word = re.match(r"\.?[A-Za-z_]\w*", source.text[position:position + 40]) if token == "." else None
    width = len(word.group(0)) if word else len(token)          # .pragma: the whole directive
    start, width = (position, width) if start is None else (start, position - start)
    line = before.count("\n", 0, start) + 1
    column = start - before.rfind("\n", 0, start)
    width = len(source.text[start:start + width].rstrip()) or 1
    return Unsupported(f"{construct}: not supported by this engine", Span(source, line, column, line,
                                                                            column + width))


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _describe(token) -> str:
    return f"'{token}'" if str(token) else token.type


def _expected(exc) -> str:
    names = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    shown = []
    for name in names:
        if name == "QNAME":                     # a.b.r: a name too, already listed as one
            continue
        try:
            pattern = lark_parser().get_terminal(name).pattern
        except KeyError:
            continue
        shown.append(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    if not shown or len(shown) > 12:
        return ""
    return ", ".join(shown)
