"""Plain Datalog's mixed columns: a column the facts give both numbers and symbols.

In a program without ``.decl`` a column takes its type from use (:mod:`datalog.language.typecheck`);
where one column is given both a number and a symbol (``p(5). p("a").``) its type is ``mixed``,
as Nemo's ``any`` columns hold values of several types. Soufflé, whose every column has a
declared type, has no such column; a declared relation never gets one.

Every place a mixed value can flow is mixed too: a variable that stands in a mixed column makes
every column it stands in mixed, in the body, under negation and in the head, and a variable
equated with one (``x = y``) is mixed as well. The values of mixed columns are compared with
``=`` and ``!=`` only: ordering them (``x < 3``), arithmetic, string functors and aggregates
other than ``count`` on them are ``type_mismatch``, naming the variable. A number or a symbol
computed in a rule may go into a mixed column of its head.

A mixed column holds :class:`MixedNumber` for its numbers, an ``int`` whose order puts every
number before every symbol, so that the sorted structures of the evaluators (tries, sorted runs,
the REPL's sorted rows) hold both; and :class:`MixedSymbol` for its symbols, a ``str`` that is
written in Datalog's syntax (``"5"``, quoted) wherever a value is shown or written, so that the
symbol ``"5"`` is never read as the number 5 (an output file of a mixed column reads back with
:func:`from_text`). Both equal and hash as their ``int`` and ``str``; every value that enters a
mixed column (a constant, a loaded fact, a computed head value, a value from Python) is made one
on the way in (:func:`as_mixed`).

>>> values = [as_mixed(v) for v in (10, "b", -3, "a")]
>>> sorted(values), [written(v) for v in sorted(values)]
([-3, 10, 'a', 'b'], ['-3', '10', '"a"', '"b"'])
>>> MixedNumber(5) == 5, MixedNumber(5) == "5", hash(MixedNumber(5)) == hash(5), MixedSymbol("a") == "a"
(True, False, True, True)
"""

from __future__ import annotations

import re
from dataclasses import replace

from datalog.language import ast
from datalog.language.display import value_text
from datalog.language.numbers import parse_int

MIXED = "mixed"
MIXED_TYPES = ("number", "symbol")           # the types whose values a mixed column holds


class MixedNumber(int):
    """An integer of a mixed column: before every symbol, else ordered as an int."""

    __slots__ = ()

    def __lt__(self, other):
        return True if isinstance(other, str) else int.__lt__(self, other)

    def __le__(self, other):
        return True if isinstance(other, str) else int.__le__(self, other)

    def __gt__(self, other):
        return False if isinstance(other, str) else int.__gt__(self, other)

    def __ge__(self, other):
        return False if isinstance(other, str) else int.__ge__(self, other)

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__


class MixedSymbol(str):
    """A symbol of a mixed column: a ``str`` (after every number: :class:`MixedNumber` orders
    them), shown and written quoted."""

    __slots__ = ()


def as_mixed(value):
    """``value`` as a mixed column holds it: an int as a :class:`MixedNumber`, a str as a
    :class:`MixedSymbol` (either already one: as it is)."""
    if type(value) is int:
        return MixedNumber(value)
    if type(value) is str:
        return MixedSymbol(value)
    return value


def is_mixed(value) -> bool:
    return isinstance(value, (MixedNumber, MixedSymbol))


def written(value) -> str:
    """A mixed column's value as Datalog writes it: ``5``, ``"a"`` (:func:`from_text` reads it back)."""
    return value_text(str.__str__(value)) if isinstance(value, str) else int.__repr__(value)


def from_text(text: str):
    """A mixed column's value from text (a fact file's field, an Arrow string): an integer is a
    number, a symbol in double quotes is that symbol (Datalog's escapes undone, as
    :func:`datalog.language.display.value_text` writes it), any other text is itself a symbol.

    >>> from_text("5"), from_text('"5"'), from_text("ann"), from_text('"say \\"hi\\""')
    (5, '5', 'ann', 'say "hi"')
    """
    number = parse_int(text)
    if number is not None:
        return MixedNumber(number)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return MixedSymbol(_ESCAPE.sub(lambda m: _ESCAPED.get(m[1], m[1]), text[1:-1]))
    return MixedSymbol(text)


_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r"}


def widen(have: str | None, got: str | None) -> str | None:
    """The type of an undeclared column that was ``have`` and is given a ``got``: mixed where
    one is a number and the other a symbol (or either is mixed), else None (no widening)."""
    pair = {have, got}
    if MIXED in pair and pair <= {MIXED, *MIXED_TYPES}:
        return MIXED
    if pair == set(MIXED_TYPES):
        return MIXED
    return None


def mixed_constants(ctx) -> None:
    """Every integer constant of a clause that stands in a mixed column, or is compared with a
    mixed variable, as a :class:`MixedNumber` (the evaluators look it up in a mixed column's
    sorted structures, which an int beside a str could not be compared in)."""
    if not any(MIXED in info.types for info in ctx.schema.values()):
        return
    for i, clause in enumerate(ctx.clauses):
        variables = mixed_variables([clause.head], clause.body, ctx.schema)
        ctx.clauses[i] = replace(clause, head=_atom(clause.head, ctx.schema),
                                 body=tuple(_literal(lit, ctx.schema, variables) for lit in clause.body))


def mixed_variables(heads, body, schema) -> set[str]:
    """The variables of a clause (its ``heads``, its ``body``) that stand in a mixed column, or
    are equated with one."""
    atoms = [*heads] + [lit.atom if isinstance(lit, ast.Negation) else lit for lit in body
                        if isinstance(lit, (ast.Atom, ast.Negation))]
    found = {a.name for atom in atoms for a, t in zip(atom.args, schema[atom.relation].types)
             if t == MIXED and isinstance(a, ast.Variable)}
    equalities = [lit for lit in body if isinstance(lit, ast.Comparison) and lit.op == "="
                  and isinstance(lit.left, ast.Variable) and isinstance(lit.right, ast.Variable)]
    while True:
        more = {side.name for lit in equalities for side, other in ((lit.left, lit.right), (lit.right, lit.left))
                if other.name in found} - found
        if not more:
            return found
        found |= more


def _literal(literal, schema, variables: set[str]):
    if isinstance(literal, ast.Atom):
        return _atom(literal, schema)
    if isinstance(literal, ast.Negation):
        return replace(literal, atom=_atom(literal.atom, schema))
    if isinstance(literal, ast.Comparison):
        literal = replace(literal, left=_aggregate(literal.left, schema, variables),
                          right=_aggregate(literal.right, schema, variables))
    if isinstance(literal, ast.Comparison) and literal.op in ("=", "!="):
        def mixed(term):
            return isinstance(term, ast.Variable) and term.name in variables
        return replace(literal, left=_constant(literal.left) if mixed(literal.right) else literal.left,
                       right=_constant(literal.right) if mixed(literal.left) else literal.right)
    return literal


def _aggregate(term, schema, variables: set[str]):
    """An aggregate's body, its constants as in a clause's body."""
    if not isinstance(term, ast.Aggregate):
        return term
    inner = variables | mixed_variables((), term.body, schema)
    return replace(term, body=tuple(_literal(lit, schema, inner) for lit in term.body))


def _atom(atom: ast.Atom, schema) -> ast.Atom:
    types = schema[atom.relation].types
    if MIXED not in types:
        return atom
    return replace(atom, args=tuple(_constant(a) if t == MIXED else a for a, t in zip(atom.args, types)))


def _constant(term):
    """A number or symbol constant as a mixed value: equal to it, so a comparison stays true."""
    if isinstance(term, ast.Constant) and type(term.value) in (int, str) and not term.unsigned:
        return replace(term, value=as_mixed(term.value))
    return term
