"""Soufflé constructs the grammar does not have, named: when lark stops on a token that belongs to
one, the error is ``unsupported`` naming the construct at its position, not a bare
``unexpected '-'`` (a ``syntax_error`` is for text that is not Soufflé either).

The construct is told by the token lark stopped at and the word just before it, as Soufflé spells
them: ``choice-domain`` stops at ``-`` after ``choice``; ``eqrel`` after a declaration stops at the
next statement; ``itof(x)`` stops at ``(`` after ``itof``; ``0b101`` at ``b101`` after ``0``.

>>> construct("-", ".decl r(x: number) choice")
'choice-domain'
>>> construct("(", "p(y) :- q(x), y = itof")
'the functor itof'
>>> construct("x", "p(x) :- q(x). r(") is None
True
"""

from __future__ import annotations

import re

# tokens (or unexpected characters) that only a construct of Soufflé's begins
_TOKENS = {
    "[": "records ([a, b])", "]": "records ([a, b])", "$": "algebraic data types ($Branch(...)) or autoinc ($)",
    "|": "type unions (.type T = A | B)", "<=": "subsumption (a <= b :- ...)",
    ".pragma": ".pragma", ".lattice": "lattices (.lattice)", "#": "a preprocessor directive (with --no-preprocessor)",
    "nil": "records (nil)", "debug_delta": "debug_delta relations",
}
_OPERATORS = {"band", "bor", "bxor", "bnot", "bshl", "bshr", "bshru", "land", "lor", "lxor", "lnot"}
_FUNCTORS = {"ord", "range", "match", "contains", "itof", "ftoi", "itou", "utoi", "ftou", "utof", "to_unsigned",
             "autoinc", "as", "lor", "land", "lxor", "lnot", "bnot", "sum", "count", "mean"}
# a word that makes the next token unexpected: a relation qualifier, a literal
_BEFORE = {"eqrel": "eqrel relations", "choice": "choice-domain", "true": "the literal true",
           "false": "the literal false", "subsumption": "subsumption"}
# directives lark reads as '.' and a name
_DIRECTIVES = {".pragma": ".pragma", ".lattice": "lattices (.lattice)", ".symbol_type": ".symbol_type"}
_DIRECTIVE = re.compile(r"\.[A-Za-z_]+")
_WORD_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")


def construct(token: str, before: str, after: str = "") -> str | None:
    """The Soufflé construct that the unexpected ``token`` belongs to, given the text ``before``
    it and from it on (``after``), or None when it is not one."""
    directive = _DIRECTIVE.match(after) if token == "." else None
    if directive and directive.group(0) in _DIRECTIVES:
        return _DIRECTIVES[directive.group(0)]
    if token in _TOKENS:
        return _TOKENS[token]
    if token in _OPERATORS:
        return f"the operator {token}"
    word = _WORD_BEFORE.search(before)
    previous = word.group(1) if word else ""
    if token == "(" and previous in _FUNCTORS:
        return f"the functor {previous}"
    if re.search(r"\b0$", before) and re.fullmatch(r"b[01]+", token):
        return "binary literals (0b101)"
    if token == "u" and re.search(r"\d$", before):
        return "unsigned literals (1u)"
    if token == "=" and re.search(r"\.decl\s+[\w.]+\s*$", before):
        return "debug_delta relations (.decl r = debug_delta(s))"
    if token == "{" and before.rsplit("\n", 1)[-1].lstrip().startswith(".type"):
        return "algebraic data types (.type T = A {x: number} | B {})"
    return _BEFORE.get(previous)


def word_before(token: str, before: str) -> int | None:
    """Where the word just before the unexpected token starts, when that word is the construct
    (``eqrel``, ``choice``, ``false``, ``itof(``): the error points at it, not at what follows."""
    word = _WORD_BEFORE.search(before)
    if word and (word.group(1) in _BEFORE or token == "(" and word.group(1) in _FUNCTORS):
        return word.start(1)
    return None
