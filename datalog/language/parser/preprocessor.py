"""The C preprocessor Soufflé runs on every program (``#include``, ``#define`` with and without
arguments, ``#ifdef``/``#if``), by pcpp, a pure-Python one; and where each line of its output
came from, so that errors point into the original file and line.

pcpp writes ``#line N "file"`` markers where the output jumps (an included file, a long gap);
:func:`preprocess` turns them into empty lines and returns, for each output line, the original
file's :class:`Source` and line number. The parser is not troubled when the text has no ``#``
directive (most programs): :func:`needed` says so with one regular expression.

>>> text, places = preprocess('#define N 3\\nr(N).', "<input>", ParseOptions())
>>> text.strip(), places.place(2)[1]
('r(3).', 2)
"""

from __future__ import annotations

import functools
import io
import os
import re

from datalog.language.errors import MissingInput, Source, Span, SyntaxError_
from datalog.language.parser.options import ParseOptions

_DIRECTIVE = re.compile(r"^[ \t]*#", re.MULTILINE)
_LINE = re.compile(r'^#line (\d+)(?: "(.*)")?$')
# Soufflé defines the width of its numbers; this engine's are 64-bit
_BUILTIN = ["RAM_DOMAIN_SIZE 64"]


def needed(text: str, options: ParseOptions) -> bool:
    """Whether the text must go through the preprocessor: it has a ``#`` directive (or -M macros)."""
    return options.preprocess and (bool(options.macros) or _DIRECTIVE.search(text) is not None)


class Places:
    """Output line -> (the Source of the file it came from, its line there)."""

    def __init__(self, lines: list[tuple[Source, int]]):
        self.lines = lines

    def place(self, line: int) -> tuple[Source, int]:
        return self.lines[min(max(line, 1), len(self.lines)) - 1]


def preprocess(text: str, name: str, options: ParseOptions) -> tuple[str, Places]:
    """``text`` (of the program file ``name``) preprocessed, and where its lines came from."""
    cpp = _preprocessor_class()(name, text, options)
    for definition in _BUILTIN + options.definitions():
        cpp.define(definition)
    for directory in options.include_dirs:
        cpp.add_path(str(directory))
    cpp.parse(text, name)
    out = io.StringIO()
    cpp.write(out)
    return _placed(out.getvalue(), Source(name, text), cpp.opened)


def _placed(output: str, main: Source, opened: dict[str, str]) -> tuple[str, Places]:
    """The output with its ``#line`` markers blanked, and each line's origin."""
    lines, places = output.split("\n"), []
    source, number = main, 1
    for index, line in enumerate(lines):
        marker = _LINE.match(line)
        if marker:
            number = int(marker.group(1))
            if marker.group(2) is not None:
                source = _source(marker.group(2), main, opened)
            lines[index] = ""
            places.append((source, number))
            continue
        places.append((source, number))
        number += 1
    return "\n".join(lines), Places(places)


def _source(name: str, main: Source, opened: dict[str, str]) -> Source:
    """The Source of the file pcpp calls ``name`` (as the #include wrote it)."""
    if name == main.name:
        return main
    suffix = os.sep + os.path.normpath(name)
    for path, text in opened.items():
        if path == os.path.abspath(name) or path.endswith(suffix):
            return Source(name, text)
    return Source(name, "")


@functools.cache
def _preprocessor_class():
    """pcpp's Preprocessor with our errors, built on first use: importing pcpp costs some 30 ms,
    which a program without a directive never pays."""
    import pcpp

    class Preprocessor(pcpp.Preprocessor):
        """pcpp with our errors: an included file outside the allowed directories is refused before
        it is read, a missing one is ``missing_input``, ``#error`` and malformed directives are
        syntax errors."""

        def __init__(self, program: str, text: str, options: ParseOptions):
            super().__init__()
            self.program, self.text, self.options = program, text, options
            self.opened: dict[str, str] = {}
            self.line_directive = "#line"

        def on_file_open(self, is_system_include, includepath):
            if not os.path.isfile(includepath):
                raise FileNotFoundError(includepath)           # pcpp tries the next directory
            self.options.check_allowed(includepath, self.program, self._span())
            handle = super().on_file_open(is_system_include, includepath)
            self.opened[includepath] = handle.read()
            handle.seek(0)
            return handle

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            what = "malformed #include" if is_malformed else "cannot find include file"
            raise MissingInput(f"{what} {includepath!r} (searched the including file's directory and "
                               f"the -I directories)", self._span())

        def on_error(self, file, line, msg):
            raise SyntaxError_(f"preprocessor: {msg}", self._span(file, line))

        def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
            text = "".join(tok.value for tok in toks).strip()
            if directive.value == "error":
                raise SyntaxError_(f"#error {text}", self._span(directive.source, directive.lineno))
            if directive.value == "warning":
                return True                    # pcpp would print it; nothing here prints
            raise SyntaxError_(f"unknown preprocessor directive #{directive.value}",
                               self._span(directive.source, directive.lineno))

        def _span(self, file=None, line=None) -> Span:
            directive = getattr(self, "lastdirective", None)
            file = file or (directive.source if directive is not None else self.program)
            line = line or (directive.lineno if directive is not None else 1)
            text = self.text if file == self.program else self.opened.get(os.path.abspath(file), "")
            return Span(Source(file, text), line, 1)

    return Preprocessor
