"""Relations and their column types.

Primitive types are ``number``, ``unsigned`` (Soufflé's 64-bit unsigned: 0 .. 2^64-1, its
arithmetic modulo 2^64), ``float`` and ``symbol``;
``.type T <: symbol`` names an alias. A relation without ``.decl`` gets its
arity from its first use and its column types from facts, heads and uses;
a column nothing constrains is ``auto`` (numbers if every loaded value is an
integer, else symbols).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.language.errors import Span, TypeMismatch
from datalog.language.mixed import MIXED, as_mixed

PRIMITIVES = {"number": "number", "unsigned": "unsigned", "float": "float", "symbol": "symbol"}
AUTO = "auto"


@dataclass
class RelationInfo:
    name: str
    arity: int
    types: list[str]
    declared: bool = False
    span: Span | None = None
    column_names: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.name}/{self.arity}"


def value_type(value) -> str:
    if isinstance(value, str):
        return "symbol"
    if isinstance(value, float):
        return "float"
    if isinstance(value, tuple):            # a record or ADT value (issue 18)
        return "record"
    return "number"


def resolve_type(name: str, aliases: dict[str, str], span: Span | None) -> str:
    seen = set()
    while name not in PRIMITIVES:
        if name in seen or name not in aliases:
            raise TypeMismatch(f"unknown type {name} (use number, unsigned, float, symbol or a .type)", span)
        seen.add(name)
        if getattr(aliases[name], "is_composite", False):     # a record type or an ADT (issue 18)
            return aliases[name]
        name = aliases[name]
    return PRIMITIVES[name]


def compatible(a: str, b: str) -> bool:
    """Numbers and floats mix (the result is a float); symbols only with symbols; unsigned only
    with unsigned (as in Soufflé; an unsuffixed literal adapts, see typecheck.py)."""
    if AUTO in (a, b) or a == b:
        return True
    return {a, b} == {"number", "float"}


def convert(value, type_: str):
    """A loaded or derived value in a column's representation."""
    if type_ == "float" and isinstance(value, int):
        return float(value)
    if type_ == MIXED:
        return as_mixed(value)
    return value


_EXAMPLES = {"number": "1", "unsigned": "1", "float": "1.5", "symbol": '"a"', AUTO: "1", MIXED: "1"}


def example(type_, depth: int = 3) -> str:
    """A constant of the column type ``type_`` as Datalog text, for a message's "such as
    ``can("a", 1)``": a record's is ``nil``, an ADT's its first branch without arguments if it
    has one, else its first branch with examples of its arguments.

    >>> [example(t) for t in ("symbol", "number", "unsigned", "float", AUTO)]
    ['"a"', '1', '1', '1.5', '1']
    """
    kind = getattr(type_, "kind", None)
    if kind == "record" or (kind == "adt" and depth == 0):
        return "nil"
    if kind == "adt":
        name, args = next(((n, a) for n, a in type_.branches.items() if not a), next(iter(type_.branches.items())))
        return f"${name}" + (f"({', '.join(example(a, depth - 1) for a in args)})" if args else "")
    return _EXAMPLES.get(type_, "1")
