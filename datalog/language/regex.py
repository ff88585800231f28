"""Soufflé's regular expressions (``match(pattern, s)``) in Python's ``re``.

Soufflé matches with C++ ``std::regex`` in its default ECMAScript grammar, and a pattern that
does not compile makes ``match`` and ``!match`` both false (Soufflé prints a warning). Python's
``re`` reads the common syntax alike; where the dialects differ this module follows ECMAScript:

* POSIX classes inside brackets, ``[[:digit:]]``, ``[[:alpha:]_]``, are ECMAScript's (std::regex
  accepts them); Python would read ``[[:digit:]]`` as a set of characters followed by ``]``;
* a ``{`` that does not begin a quantifier ``{n}``, ``{n,}``, ``{n,m}`` is an error in ECMAScript
  (``fo{x}b``), a literal brace in Python;
* Python-only syntax (``(?P<name>...)``, ``(?i)``, ``\\A``, ``\\Z``) is refused.

Still different: a leading ``]`` in a class (``[]a]``: ECMAScript's empty class, Python's
literal ``]``), ECMAScript's ``\\d``/``\\w``/``\\s`` are ASCII (``re.ASCII`` is set), and
back-references to groups not yet closed, which both treat in their own way.

>>> compile_pattern("[[:digit:]]+#NOT").fullmatch("1234#NOT") is not None
True
>>> compile_pattern("fo{x}b.*") is None, compile_pattern("fo{2}b.*").fullmatch("foob") is not None
(True, True)
"""

from __future__ import annotations

import functools
import re

_POSIX = {"digit": r"0-9", "alpha": r"a-zA-Z", "alnum": r"a-zA-Z0-9", "upper": r"A-Z", "lower": r"a-z",
          "space": r" \t\n\r\f\v", "xdigit": r"0-9A-Fa-f", "punct": r"!-/:-@\[-`{-~", "w": r"\w",
          "blank": r" \t", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~", "d": r"0-9", "s": r"\s"}
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")
_PYTHON_ONLY = re.compile(r"\(\?P|\(\?[aiLmsux]|\\[AZ]")


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str):
    """The compiled pattern, or None if ECMAScript would refuse it."""
    if _PYTHON_ONLY.search(pattern):
        return None
    translated = _translate(pattern)
    if translated is None:
        return None
    try:
        return re.compile(translated, re.ASCII)
    except re.error:
        return None


def _translate(pattern: str) -> str | None:
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2:end] if end >= 0 else None
            if name not in _POSIX:
                return None
            out.append(_POSIX[name])
            i = end + 2
            continue
        if ch == "[" and not in_class:
            in_class = True
            out.append(ch)
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif ch == "{" and not in_class:
            quantifier = _QUANTIFIER.match(pattern, i)
            if quantifier is None:
                return None
            out.append(quantifier.group())
            i = quantifier.end()
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def matches(pattern: str, text: str) -> bool | None:
    """Whether all of ``text`` matches; None if the pattern is no ECMAScript regex."""
    regex = compile_pattern(pattern)
    return None if regex is None else regex.fullmatch(text) is not None
