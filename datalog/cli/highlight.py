"""The REPL prompt's syntax highlighting and Tab completion (prompt_toolkit classes).

>>> [(style, text) for style, text in tokens('?- path(1, "a"). // x') if style]
[('class:operator', '?-'), ('class:relation', 'path'), ('class:number', '1'), ('class:string', '"a"'), ('class:comment', '// x')]
"""

from __future__ import annotations

import re

from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.lexers import Lexer

from datalog.cli.repl_commands import COMMANDS
from datalog.cli.statements import DIRECTIVES, KEYWORDS
from datalog.language.rewrites import is_internal

STYLE = {"comment": "#888888 italic", "string": "ansigreen", "number": "ansicyan", "directive": "ansiblue bold",
         "operator": "ansimagenta bold", "keyword": "ansiyellow", "relation": "bold"}
_TOKEN = re.compile(r"""(?P<comment>//.*|/\*.*?(\*/|$))
    |(?P<string>"(\\.|[^"\\])*"?)
    |(?P<directive>\.[A-Za-z_]\w*)
    |(?P<number>\d+(\.\d+)?([eE][+-]?\d+)?)
    |(?P<operator>:-|\?-)
    |(?P<keyword>\b(begin|commit|rollback|count|sum|min|max|mean|nil|as)\b)
    |(?P<relation>[A-Za-z_?][\w?]*(?=\s*\())""", re.VERBOSE)
_WORD = re.compile(r"\.?[A-Za-z_][\w?]*$")


def tokens(line: str) -> list[tuple[str, str]]:
    """(style, text) pieces of one line; text without a style is ``""``-styled."""
    out, i = [], 0
    for match in _TOKEN.finditer(line):
        if match.start() > i:
            out.append(("", line[i:match.start()]))
        out.append((f"class:{match.lastgroup}", match.group()))
        i = match.end()
    if i < len(line):
        out.append(("", line[i:]))
    return out


class DatalogLexer(Lexer):
    def lex_document(self, document):
        lines = document.lines
        return lambda number: tokens(lines[number]) if number < len(lines) else []


class DatalogCompleter(Completer):
    """After a ``.``: directives and commands; otherwise relation names (those rewrites made, such as
    ``_range_0_10``, only after a ``_``) and begin/commit/rollback."""

    def __init__(self, engine_of):
        self.engine_of = engine_of          # a function: the engine may change (.load)

    def get_completions(self, document, complete_event):
        match = _WORD.search(document.text_before_cursor)
        word = match.group() if match else ""
        if word.startswith("."):
            names = ["." + n for n in (*DIRECTIVES, *COMMANDS)]
        else:
            internal = word.startswith("_")               # the relations rewrites made only when asked
            names = [*(n for n in self.engine_of().relations() if internal or not is_internal(n)), *KEYWORDS]
        for name in sorted(set(names)):
            if name.startswith(word) and name != word:
                yield Completion(name, start_position=-len(word))
