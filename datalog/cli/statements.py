"""REPL input -> statements: where each one ends, what kind it is, and where it came from.

A rule, fact, change (``-edge(1, 2).``) or query (``?- path(1, X).``) ends at its final
``.`` (one not inside a string, comment or number); a directive (``.decl``, ``.type``,
``.input``, ``.output``, ``.printsize``) and a command (``.facts path 10``) end with their
line (a directive may go on over lines while a parenthesis is open); ``begin``, ``commit``
and ``rollback`` are words of their own (a trailing ``.`` is allowed), and so are ``quit``,
``exit`` and ``help`` alone on their line (the commands ``.quit``, ``.exit``, ``.help``).

A statement left without its ``.`` (garbage, or a fact missing its dot) must not swallow
the statements after it (issue 23): it ends, as an ``unfinished`` statement that reports its
syntax error when run, where the next statement begins: at a line that starts a directive, a
command or a transaction word, or, when the text up to the next ``.`` does not parse, at the
first unindented line from which the rest does (a boundary found by the parser: :func:`_resync`).

>>> [(s.kind, s.text) for s in split('garbage here\\ne(1, 2).\\n-e(3, 4)\\n.decl f(a: number)')[0]]
[('unfinished', 'garbage here'), ('clause', 'e(1, 2).'), ('unfinished', '-e(3, 4)'), ('directive', '.decl f(a: number)')]

>>> [(s.kind, s.text) for s in split('edge(1, 2).  -edge(1,\\n 2).\\n?- path(1, X).\\n.facts path 3\\nbegin')[0]]
[('clause', 'edge(1, 2).'), ('retract', ' edge(1,\\n 2).'), ('query', '   path(1, X).'), ('command', '.facts path 3'), ('begin', 'begin')]
>>> split('r(x) :- s(x), x > 1.5')[1].text        # not finished: the rest
'r(x) :- s(x), x > 1.5'
>>> is_complete('.decl e(a: number,'), is_complete('.decl e(a: number,\\n b: number)')
(False, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from datalog.language.errors import DatalogError, Source, Span, SyntaxError_
from datalog.language.parser import parse, parse_query

DIRECTIVES = ("decl", "type", "input", "output", "printsize")
KEYWORDS = ("begin", "commit", "rollback")
_KEYWORD = re.compile(r"(begin|commit|rollback)\s*\.?(?=\s|$|//|/\*)")
_WORD = re.compile(r"\.([A-Za-z_]\w*)")
BARE_COMMANDS = ("quit", "exit", "help")       # commands that also work without their dot
_BARE = re.compile(r"(quit|exit|help)[ \t]*\.?(?=[ \t]*(\n|$|//|/\*))")
_PREFIXES = (("?-", "query"), ("-", "retract"), ("+", "insert"))
UNFINISHED = "unfinished"           # a statement cut off where the next one begins
DOTTED = ("clause", "insert", "retract", "query")
MAX_CUTS = 100                      # line starts tried by _resync (each costs a parse)


@dataclass(frozen=True)
class Statement:
    """One statement: ``kind`` (clause, insert, retract, query, directive, command, begin, commit,
    rollback, or unfinished: text without its end, cut where the next statement begins), its ``text`` (a ``?-``, ``-`` or ``+`` prefix blanked out so columns stay true), and
    where it starts in its input (1-based ``line`` and ``column`` of ``name``)."""

    kind: str
    text: str
    line: int = 1
    column: int = 1
    name: str = "<input>"

    def positioned(self, original: bool = False) -> str:
        """The text (or the text as typed) preceded by blank lines and spaces, so that a parse
        reports true positions."""
        return "\n" * (self.line - 1) + " " * (self.column - 1) + (self.original() if original else self.text)

    def span(self, original: bool = False) -> Span:
        """The statement's first line, for errors about the statement as a whole (its source the
        text, or the text as typed)."""
        first = self.text.split("\n")[0].rstrip()
        source = Source(self.name, self.positioned(original))
        return Span(source, self.line, self.column, self.line, self.column + max(len(first), 1))

    def original(self) -> str:
        """The text as typed (with its ``?-``, ``-`` or ``+``)."""
        prefix = next((p for p, k in _PREFIXES if k == self.kind), "")
        return prefix + self.text[len(prefix):]


def split(text: str, name: str = "<input>") -> tuple[list[Statement], Statement | None]:
    """The complete statements of ``text`` and the unfinished rest (``None`` if there is none)."""
    out, i = [], _skip_blank(text, 0)
    while i < len(text):
        kind, end = _statement_at(text, i)
        line, column = _position(text, i)
        if end < 0:
            return out, Statement(kind, text[i:], line, column, name)
        cut = _resync(text, i, end, kind)
        if cut is not None:
            kind, end = UNFINISHED, cut
        piece = text[i:end].rstrip() if kind == UNFINISHED else text[i:end]
        out.append(Statement(kind, _blank_prefix(kind, piece), line, column, name))
        i = _skip_blank(text, end)
    return out, None


def as_begun(statement: Statement) -> Statement:
    """An unfinished statement as the kind its start announces (``?-``, ``-``, ``+`` or a clause),
    its prefix blanked as :func:`split` does."""
    kind = next((k for prefix, k in _PREFIXES if statement.text.startswith(prefix)), "clause")
    return replace(statement, kind=kind, text=_blank_prefix(kind, statement.text))


def is_complete(text: str) -> bool:
    """Whether the input can be run as it is (the REPL's Enter key: run, or start a new line)."""
    return split(text)[1] is None


def _statement_at(text: str, i: int) -> tuple[str, int]:
    """The kind of the statement starting at ``i`` and the index just past its end (-1: unfinished)."""
    word = _WORD.match(text, i)
    if word:
        kind = "directive" if word.group(1) in DIRECTIVES else "command"
        return kind, _line_end(text, i, parens=kind == "directive")
    bare = _BARE.match(text, i)
    if bare:
        return "command", bare.end()
    keyword = _KEYWORD.match(text, i)
    if keyword:
        return keyword.group(1), keyword.end()
    kind = next((k for prefix, k in _PREFIXES if text.startswith(prefix, i)), "clause")
    end, finished = _dot_end(text, i)
    return (kind if finished else UNFINISHED), end


def _line_end(text: str, i: int, parens: bool) -> int:
    """End of a command (its line) or a directive (its line once every parenthesis is closed)."""
    depth = 0
    while i < len(text):
        skipped = _skip_string_or_comment(text, i)
        if skipped != i:
            if skipped < 0:
                return -1
            i = skipped
            continue
        ch = text[i]
        if ch == "\n" and not (parens and depth > 0):
            return i
        depth += parens and ch in "({"
        depth -= parens and ch in ")}"
        i += 1
    return -1 if parens and depth > 0 else len(text)


def _dot_end(text: str, i: int) -> tuple[int, bool]:
    """(just past the ``.`` that ends a clause, True): outside strings, comments and numbers
    (``1.5``), at parenthesis depth 0 or followed by white space (so that a missing ``)`` is
    reported); (-1, True) if the text ends first; (the line end, False) if a line that starts a
    directive or command (``.decl``), or an unindented ``begin``, ``commit``, ``rollback`` (or a
    ``quit``, ``exit``, ``help`` alone on its line), comes
    first: the clause is unfinished there."""
    depth = 0
    while i < len(text):
        skipped = _skip_string_or_comment(text, i)
        if skipped != i:
            if skipped < 0:
                return -1, True
            i = skipped
            continue
        ch = text[i]
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "." and not _in_number(text, i):
            after = text[i + 1:i + 2]
            if depth <= 0 or after == "" or after.isspace():
                return i + 1, True
        if ch == "\n" and (_WORD.match(text, _skip_spaces(text, i + 1)) or _KEYWORD.match(text, i + 1)
                           or _BARE.match(text, i + 1)):
            return i, False
        i += 1
    return -1, True


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r":
        i += 1
    return i


def _resync(text: str, start: int, end: int, kind: str) -> int | None:
    """Where the statement ``text[start:end]``, over several lines and not parsing, should be cut:
    before the first line that begins (not indented: a rule's continuation lines are) a statement
    that parses up to its own end -- or before an unindented line above it, each such line being
    reported on its own -- tried over the first :data:`MAX_CUTS` lines; None to leave the statement
    whole (a broken rule over indented lines stays one error, no piece of it runs)."""
    if kind not in DOTTED or "\n" not in text[start:end].rstrip() or _parses(kind, text, start, end):
        return None
    cut, first = text.find("\n", start, end), None
    for _ in range(MAX_CUTS):
        if cut < 0 or cut + 1 >= end:
            return None
        j = cut + 1
        if not text[j].isspace() and not text.startswith(("//", "/*"), j):
            first = cut if first is None else first
            next_kind, next_end = _statement_at(text, j)
            if next_end > 0 and next_kind != UNFINISHED and _parses(next_kind, text, j, next_end):
                return first          # each unindented line before the statement: garbage of its own
        cut = text.find("\n", j, end)
    return None


def _parses(kind: str, text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a statement of ``kind`` to the parser (one that is wrong in
    another way -- too deep, a number out of range -- is still a statement)."""
    if kind not in DOTTED:
        return True
    piece = _blank_prefix(kind, text[start:end])
    try:
        if kind == "query":
            parse_query(text[start:end])
        else:
            parse(piece)
    except SyntaxError_:
        return False
    except DatalogError:
        return True
    return True


def _in_number(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()


def _skip_string_or_comment(text: str, i: int) -> int:
    """Index past a string or comment starting at ``i``; ``i`` if none starts there; -1 if unclosed."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return -1 if end < 0 else end + 2
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] not in '"\n':
            j += 2 if text[j] == "\\" else 1
        return j + 1 if j < len(text) and text[j] == '"' else (j if j < len(text) else -1)
    return i


def _skip_blank(text: str, i: int) -> int:
    """Past white space and comments (an unclosed block comment is left, to be unfinished)."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i) or text.startswith("/*", i):
            end = _skip_string_or_comment(text, i)
            if end < 0:
                return i
            i = end
        else:
            break
    return i


def _position(text: str, i: int) -> tuple[int, int]:
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


def _blank_prefix(kind: str, text: str) -> str:
    for prefix, k in _PREFIXES:
        if kind == k:
            return " " * len(prefix) + text[len(prefix):]
    return text
