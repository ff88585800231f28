"""REPL input -> statements: where each one ends, what kind it is, and where it came from.

A rule, fact, change (``-edge(1, 2).``) or query (``?- path(1, X).``) ends at its final
``.`` (one not inside a string, comment or number); a directive (``.decl``, ``.type``,
``.input``, ``.output``, ``.printsize``) and a command (``.facts path 10``) end with their
line (a directive may go on over lines while a parenthesis is open); ``begin``, ``commit``
and ``rollback`` are words of their own (a trailing ``.`` is allowed).

>>> [(s.kind, s.text) for s in split('edge(1, 2).  -edge(1,\\n 2).\\n?- path(1, X).\\n.facts path 3\\nbegin')[0]]
[('clause', 'edge(1, 2).'), ('retract', ' edge(1,\\n 2).'), ('query', '   path(1, X).'), ('command', '.facts path 3'), ('begin', 'begin')]
>>> split('r(x) :- s(x), x > 1.5')[1].text        # not finished: the rest
'r(x) :- s(x), x > 1.5'
>>> is_complete('.decl e(a: number,'), is_complete('.decl e(a: number,\\n b: number)')
(False, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from datalog.language.errors import Source, Span

DIRECTIVES = ("decl", "type", "input", "output", "printsize")
KEYWORDS = ("begin", "commit", "rollback")
_KEYWORD = re.compile(r"(begin|commit|rollback)\s*\.?(?=\s|$|//|/\*)")
_WORD = re.compile(r"\.([A-Za-z_]\w*)")
_PREFIXES = (("?-", "query"), ("-", "retract"), ("+", "insert"))


@dataclass(frozen=True)
class Statement:
    """One statement: ``kind`` (clause, insert, retract, query, directive, command, begin, commit,
    rollback), its ``text`` (a ``?-``, ``-`` or ``+`` prefix blanked out so columns stay true), and
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

    def span(self) -> Span:
        """The statement's first line, for errors about the statement as a whole."""
        first = self.text.split("\n")[0].rstrip()
        source = Source(self.name, self.positioned())
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
        out.append(Statement(kind, _blank_prefix(kind, text[i:end]), line, column, name))
        i = _skip_blank(text, end)
    return out, None


def is_complete(text: str) -> bool:
    """Whether the input can be run as it is (the REPL's Enter key: run, or start a new line)."""
    return split(text)[1] is None


def _statement_at(text: str, i: int) -> tuple[str, int]:
    """The kind of the statement starting at ``i`` and the index just past its end (-1: unfinished)."""
    word = _WORD.match(text, i)
    if word:
        kind = "directive" if word.group(1) in DIRECTIVES else "command"
        return kind, _line_end(text, i, parens=kind == "directive")
    keyword = _KEYWORD.match(text, i)
    if keyword:
        return keyword.group(1), keyword.end()
    kind = next((k for prefix, k in _PREFIXES if text.startswith(prefix, i)), "clause")
    return kind, _dot_end(text, i)


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


def _dot_end(text: str, i: int) -> int:
    """Just past the ``.`` that ends a clause: outside strings, comments and numbers (``1.5``),
    at parenthesis depth 0 or followed by white space (so that a missing ``)`` is reported)."""
    depth = 0
    while i < len(text):
        skipped = _skip_string_or_comment(text, i)
        if skipped != i:
            if skipped < 0:
                return -1
            i = skipped
            continue
        ch = text[i]
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "." and not _in_number(text, i):
            after = text[i + 1:i + 2]
            if depth <= 0 or after == "" or after.isspace():
                return i + 1
        i += 1
    return -1


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
