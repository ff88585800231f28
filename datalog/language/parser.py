"""Program text -> AST. The only module that imports lark.

Parsing is two passes: lark builds a tree with positions from ``grammar.lark``,
then :class:`ToAst` (methods named after grammar rules) turns it into the frozen
dataclasses of :mod:`datalog.language.ast`, giving each node its :class:`Span`.

>>> print(parse('.decl e(a: number, b: symbol)\\ne(1, "x").'))
.decl e(a: number, b: symbol)
e(1, "x").
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import lark
from lark import Transformer, v_args

from datalog.language import ast
from datalog.language.errors import DatalogError, Source, Span, SyntaxError_, TooDeep

_GRAMMAR = Path(__file__).with_name("grammar.lark")
_PRAGMA = re.compile(r"^\s*//\s*@(\w+)\s*(.*?)\s*$")


@functools.cache
def _lark() -> lark.Lark:
    """One LALR parser for the grammar's three start symbols: programs (``start``), queries and
    updates files. Building it is most of a short command's start-up (about 0.2 s each when
    they were three parsers)."""
    return lark.Lark(_GRAMMAR.read_text(), parser="lalr", propagate_positions=True,
                     maybe_placeholders=True, start=["start", "query", "updates"])


def parse(text: str, name: str = "<input>") -> ast.Program:
    """Parse a whole program; raises DatalogError(syntax_error) on bad text."""
    source = Source(name, text)
    tree = _parse_tree(text, source)
    try:
        program = ToAst(source).transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DatalogError):
            raise exc.orig_exc from None
        raise
    except RecursionError:
        raise TooDeep("the program nests expressions too deeply to parse; split the expression "
                      "with intermediate variables", Span(source, 1, 1)) from None
    return _attach_pragmas(program, text)


def parse_file(path: str | Path) -> ast.Program:
    from datalog.language.errors import MissingInput
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingInput(f"program file {path} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError, PermissionError) as exc:
        raise MissingInput(f"cannot read program file {path}: {exc}") from None
    return parse(text, str(path))


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
    try:
        tree = _lark().parse(text, start="query")
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax_error(exc, source) from None
    try:
        return _ToQuery(source).transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DatalogError):
            raise exc.orig_exc from None
        raise
    except RecursionError:
        raise TooDeep("the query nests too deeply to parse", Span(source, 1, 1)) from None


# ---------------------------------------------------------------- updates files

class Batch(list):
    """One transaction of an updates file: ``(sign, atom)`` pairs in file order, ``sign`` is
    ``"+"`` (insert) or ``"-"`` (retract), every argument an :class:`ast.Constant`; ``span`` is
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
        tree = _lark().parse(text, start="updates")
    except lark.exceptions.UnexpectedInput as exc:
        error = _syntax_error(exc, source)
        if "DOT" in (getattr(exc, "expected", None) or ()) and "; expected" not in error.message:
            error.message += "; does the change before it end with '.'?"
        raise error from None
    try:
        items = _ToUpdates(source).transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DatalogError):
            raise exc.orig_exc from None
        raise
    except RecursionError:
        raise TooDeep("a change nests too deeply to parse", Span(source, 1, 1)) from None
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
    from datalog.language.errors import MissingInput
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingInput(f"updates file {path} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError, PermissionError) as exc:
        raise MissingInput(f"cannot read updates file {path}: {exc}") from None
    return parse_updates(text, str(path))


class _Commit:
    def __init__(self, span: Span | None):
        self.span = span


def _parse_tree(text: str, source: Source) -> lark.Tree:
    try:
        return _lark().parse(text, start="start")
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax_error(exc, source) from None


def _syntax_error(exc: lark.exceptions.UnexpectedInput, source: Source) -> DatalogError:
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


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _describe(token) -> str:
    return f"'{token}'" if str(token) else token.type


def _expected(exc) -> str:
    names = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    shown = []
    for name in names:
        try:
            pattern = _lark().get_terminal(name).pattern
        except KeyError:
            continue
        shown.append(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    if not shown or len(shown) > 8:
        return ""
    return ", ".join(shown)


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


@v_args(meta=True)
class ToAst(Transformer):
    """One method per grammar rule (or alias); each returns an AST node with its span."""

    def __init__(self, source: Source):
        super().__init__()
        self.source = source

    def _span(self, meta) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return Span(self.source, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok) -> Span:
        return Span(self.source, tok.line, tok.column, tok.end_line, tok.end_column)

    # statements ------------------------------------------------------------
    def start(self, meta, children):
        flat = []
        for child in children:
            flat.extend(child if isinstance(child, list) else [child])
        return ast.Program(tuple(flat))

    def declaration(self, meta, children):
        name, *rest = children
        columns = tuple(c for c in rest if isinstance(c, ast.Column))  # qualifiers are dropped
        return ast.Declaration(str(name), columns, self._span(meta))

    def column(self, meta, children):
        name, type_ = children
        return ast.Column(str(name), str(type_), self._span(meta))

    def type_declaration(self, meta, children):
        name, base = children
        return ast.TypeDeclaration(str(name), str(base), self._span(meta))

    def directive(self, meta, children):
        kind, relations = children
        return [ast.Directive(kind, name, params, span) for name, params, span in relations]

    def directive_kind(self, meta, children):
        return str(children[0])[1:]

    def relation_list(self, meta, children):
        return children

    def io_relation(self, meta, children):
        name, *params = children
        return str(name), tuple(p for p in params if p is not None), self._tok_span(name)

    def param(self, meta, children):
        key, value = children
        text = _unquote(value, self._tok_span(value)) if value.type == "STRING" else str(value)
        return str(key), text

    def fact(self, meta, children):
        return ast.Rule((children[0],), (), self._span(meta))

    def rule(self, meta, children):
        *heads, body = children
        return ast.Rule(tuple(heads), _flatten_body(body, self._span(meta)), self._span(meta))

    # bodies ----------------------------------------------------------------
    def body(self, meta, children):
        return tuple(children)  # alternatives, each a tuple of literals

    def conjunction(self, meta, children):
        return tuple(children)

    def disjunction(self, meta, children):
        (alternatives,) = children
        if len(alternatives) == 1:
            return _Group(alternatives[0])
        return ast.Disjunction(alternatives, self._span(meta))

    def atom(self, meta, children):
        name, *args = children
        args = tuple(a for a in args if a is not None)
        return ast.Atom(str(name), args, self._span(meta))

    def negation(self, meta, children):
        return ast.Negation(children[0], self._span(meta))

    def comparison(self, meta, children):
        left, op, right = children
        return ast.Comparison(op, left, right, self._span(meta))

    def compare_op(self, meta, children):
        return str(children[0])

    # terms -----------------------------------------------------------------
    def variable(self, meta, children):
        tok = children[0]
        if str(tok) == "_":
            return ast.Wildcard(self._tok_span(tok))
        return ast.Variable(str(tok), self._tok_span(tok))

    def int_(self, meta, children):
        text = str(children[0])
        return ast.Constant(int(text, 16) if text.startswith("0x") else int(text), self._span(meta))

    def float_(self, meta, children):
        return ast.Constant(float(children[0]), self._span(meta))

    def string(self, meta, children):
        tok = children[0]
        return ast.Constant(_unquote(tok, self._tok_span(tok)), self._tok_span(tok))

    def _binary(self, op, meta, children):
        left, right = children
        return ast.BinaryOp(op, left, right, self._span(meta))

    def add(self, meta, children):
        return self._binary("+", meta, children)

    def sub(self, meta, children):
        return self._binary("-", meta, children)

    def mul(self, meta, children):
        return self._binary("*", meta, children)

    def div(self, meta, children):
        return self._binary("/", meta, children)

    def mod(self, meta, children):
        return self._binary("%", meta, children)

    def pow(self, meta, children):
        return self._binary("^", meta, children)

    def negate(self, meta, children):
        (operand,) = children
        if isinstance(operand, ast.Constant) and not isinstance(operand.value, str):
            return ast.Constant(-operand.value, self._span(meta))
        return ast.Negate(operand, self._span(meta))

    def functor(self, meta, children):
        name, *args = children
        return ast.Functor(name, tuple(a for a in args if a is not None), self._span(meta))

    def functor_name(self, meta, children):
        return str(children[0])

    def aggregate(self, meta, children):
        kind, target, body = children
        if target is None and kind != "count":
            raise SyntaxError_(f"{kind} needs an expression to aggregate, as in "
                               f"`{kind} x : {{ r(x) }}`", self._span(meta))
        if isinstance(body, ast.Atom):
            literals = (body,)
        else:
            literals = _flatten_body(body, self._span(meta))
        return ast.Aggregate(kind, target, literals, self._span(meta))

    def aggregate_kind(self, meta, children):
        return str(children[0])


class _Group(tuple):
    """A parenthesised conjunction without ``;``: spliced into the enclosing body."""


def _flatten_body(alternatives, span) -> tuple:
    """A body is a tuple of alternatives; one alternative is the plain conjunction."""
    if len(alternatives) == 1:
        return _splice(alternatives[0])
    return (ast.Disjunction(tuple(_splice(a) for a in alternatives), span),)


def _splice(literals) -> tuple:
    out = []
    for lit in literals:
        out.extend(_splice(lit) if isinstance(lit, _Group) else [lit])
    return tuple(out)


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "'": "'", "/": "/"}


def _unquote(token, span: Span) -> str:
    body = str(token)[1:-1]
    if "\\" not in body:
        return body
    try:
        return json.loads('"' + body + '"')
    except json.JSONDecodeError:
        pass
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        if ch == "\\":
            raise SyntaxError_(f"unknown escape sequence in string {token}", span)
        out.append(ch)
        i += 1
    return "".join(out)


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
            if not isinstance(arg, ast.Constant):
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


@v_args(meta=True)
class _ToQuery(ToAst):
    """A query's body, built as a rule body is."""

    def query(self, meta, children):
        return _flatten_body(children[0], self._span(meta))
