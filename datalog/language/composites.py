"""Records and algebraic data types (issue 18): their values, their types, and their text.

Values. A record ``[1, "a"]`` is a :class:`Record` (a tuple of its fields), ``nil`` is
:data:`NIL` (the empty Record: it orders before every record, as Soufflé's ``nil`` is the
record reference 0), an ADT value ``$Circle(5)`` is a :class:`Branch` (a tuple of the branch
name and its arguments). Being tuples, they hash, compare structurally (Soufflé's equality of
records is structural) and are totally ordered wherever a column holds values of one type: two
records of one type compare field by field, ``nil`` first; two values of one ADT by branch name
(Soufflé sorts the branches of an ADT by name), then arguments. So the tries, the sorted
relations and maintenance's intervals take them as they take numbers.

Types. ``.type Pair = [a: number, b: symbol]`` is a :class:`RecordType`, ``.type Shape =
Circle {r: number} | Empty {}`` an :class:`AdtType`: each is a ``str`` (its name, so a column
type stays a string everywhere) that also knows its fields, resolved through the program's
type aliases on first use (a type may name itself: ``.type List = [head: number, tail: List]``).

Text, as Soufflé's WriteStream and ReadStream have it: ``[1, [2, nil]]``, symbols inside raw,
``$Circle(5)``, ``$Empty``.

>>> value = Record((1, Record((2, NIL))))
>>> render(value), render(Branch(("Circle", 5))), render(Branch(("Empty",)))
('[1, [2, nil]]', '$Circle(5)', '$Empty')
>>> NIL < Record((0, NIL)) < Record((1, NIL)), Branch(("A", 9)) < Branch(("B", "x"))
(True, True)
"""

from __future__ import annotations

from typing import Callable

from datalog.language import numbers


class Record(tuple):
    """A record value: its fields in order. The empty record is ``nil``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return render(self)


class Branch(tuple):
    """An ADT value: ``(branch name, argument, ...)``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1:]

    def __repr__(self) -> str:
        return render(self)


NIL = Record(())


def is_composite(value) -> bool:
    return isinstance(value, (Record, Branch))


def render(value, leaf: Callable = str) -> str:
    """Soufflé's text of a value; ``leaf`` prints the primitive ones (symbols raw)."""
    if isinstance(value, Record):
        if not value:
            return "nil"
        return "[" + ", ".join(render(v, leaf) for v in value) + "]"
    if isinstance(value, Branch):
        if len(value) == 1:
            return f"${value[0]}"
        return f"${value[0]}(" + ", ".join(render(v, leaf) for v in value[1:]) + ")"
    return leaf(value)


# ---------------------------------------------------------------- types

class CompositeType(str):
    """A record or ADT type: its name, with its declaration's fields resolved on demand by
    ``resolve`` (a type name -> the type it stands for)."""

    is_composite = True

    def __new__(cls, name: str, declaration, resolve: Callable[[str, object], str]):
        self = super().__new__(cls, name)
        self.declaration = declaration
        self._resolve = resolve
        self._resolved = None
        return self

    def _field_types(self, fields) -> tuple[str, ...]:
        return tuple(self._resolve(f.type, f.span) for f in fields)


class RecordType(CompositeType):
    kind = "record"

    @property
    def fields(self) -> tuple[str, ...]:
        """The type of each field."""
        if self._resolved is None:
            self._resolved = self._field_types(self.declaration.fields)
        return self._resolved

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.declaration.fields)


class AdtType(CompositeType):
    kind = "adt"

    @property
    def branches(self) -> dict[str, tuple[str, ...]]:
        """Branch name -> the type of each of its arguments."""
        if self._resolved is None:
            self._resolved = {b.name: self._field_types(b.fields) for b in self.declaration.branches}
        return self._resolved


def conforms(value, type_) -> bool:
    """Whether a value built outside the program (an insert, a source) is one of the composite
    ``type_``: a record of its arity or nil, a branch of it, each part of its part's type."""
    if type_.kind == "record":
        if type(value) is not Record:
            return False
        return not value or (len(value) == len(type_.fields) and all(map(_part, value, type_.fields)))
    if type(value) is not Branch or value[0] not in type_.branches:
        return False
    types = type_.branches[value[0]]
    return len(value) == len(types) + 1 and all(map(_part, value[1:], types))


def rebuilt(value, type_):
    """A value of the composite ``type_`` from plain lists, as JSON keeps it (a record its fields,
    nil ``[]``, a branch ``[name, argument, ...]``), or None if the lists have another shape;
    :func:`conforms` then checks the primitive parts.

    >>> L = RecordType("L", None, None); L._resolved = ("number", L)
    >>> rebuilt([1, [2, []]], L), rebuilt([1, 2, 3], L)
    ([1, [2, nil]], None)
    """
    if type(value) is not list:
        return None
    if type_.kind == "record":
        if not value:
            return NIL
        if len(value) != len(type_.fields):
            return None
        parts = [rebuilt(v, t) if getattr(t, "is_composite", False) else v for v, t in zip(value, type_.fields)]
        return None if any(p is None for p in parts) else Record(parts)
    if not value or not isinstance(value[0], str) or value[0] not in type_.branches:
        return None
    types = type_.branches[value[0]]
    if len(value) != len(types) + 1:
        return None
    parts = [rebuilt(v, t) if getattr(t, "is_composite", False) else v for v, t in zip(value[1:], types)]
    return None if any(p is None for p in parts) else Branch([value[0], *parts])


def _part(value, type_) -> bool:
    """A field's value: of its type, and a value of the engine (no NaN, an int in range)."""
    if getattr(type_, "is_composite", False):
        return conforms(value, type_)
    if isinstance(value, (tuple, bool)) or not isinstance(value, _PYTHON.get(type_, int)):
        return False
    if type_ == "symbol":
        return utf8(value)
    return numbers.value_problem(value, type_) is None


def utf8(text: str) -> bool:
    """Whether UTF-8 can write ``text`` (it holds no lone surrogate such as ``"\\ud800"``)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_PYTHON = {"symbol": str, "float": (float, int)}


# ---------------------------------------------------------------- reading text

class TextError(ValueError):
    """A record or ADT in a fact file that does not parse: ``position`` is the offset."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


def parse_value(text: str, type_: str, primitive: Callable[[str, str], object]):
    """The value ``text`` spells as a ``type_`` (a CompositeType); ``primitive(text, type)``
    reads a number, float or symbol (None if it is not one). Raises TextError."""
    reader = _Reader(text, primitive)
    value = reader.value(type_, "")
    reader.blanks()
    if reader.pos != len(text):
        raise TextError(f"unexpected {text[reader.pos:reader.pos + 10]!r} after the value", reader.pos)
    return value


class _Reader:
    """ReadStream's grammar: ``nil``, ``[v, ...]``, ``$Name``, ``$Name(v, ...)``; a symbol inside
    runs to the next ``,`` or closing bracket unless quoted."""

    def __init__(self, text: str, primitive):
        self.text, self.pos, self.primitive = text, 0, primitive

    def blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def expect(self, char: str) -> None:
        self.blanks()
        if not self.text.startswith(char, self.pos):
            found = self.text[self.pos:self.pos + 1] or "the end"
            raise TextError(f"expected {char!r}, found {found!r}", self.pos)
        self.pos += 1

    def value(self, type_: str, stops: str):
        self.blanks()
        kind = getattr(type_, "kind", None)
        if kind == "record":
            return self.record(type_)
        if kind == "adt":
            return self.branch(type_)
        return self.leaf(type_, stops)

    def record(self, type_: RecordType) -> Record:
        if self.text.startswith("nil", self.pos):
            self.pos += 3
            return NIL
        self.expect("[")
        fields = []
        for i, field in enumerate(type_.fields):
            if i:
                self.expect(",")
            fields.append(self.value(field, ",]"))
        self.expect("]")
        return Record(fields)

    def branch(self, type_: AdtType) -> Branch:
        self.expect("$")
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_?."):
            self.pos += 1
        name = self.text[start:self.pos]
        if name not in type_.branches:
            raise TextError(f"{type_} has no branch {name!r}", start)
        args = [name]
        types = type_.branches[name]
        if types:
            self.expect("(")
            for i, arg in enumerate(types):
                if i:
                    self.expect(",")
                args.append(self.value(arg, ",)"))
            self.expect(")")
        return Branch(args)

    def leaf(self, type_: str, stops: str):
        start = self.pos
        if type_ == "symbol" and self.text.startswith('"', self.pos):
            return self.quoted()
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            self.pos += 1
        raw = self.text[start:self.pos]
        value = self.primitive(raw if type_ == "symbol" else raw.strip(), type_)
        if value is None:
            raise TextError(f"{raw!r} is not a {type_}", start)
        return value

    def quoted(self) -> str:
        out, self.pos = [], self.pos + 1
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            if self.text[self.pos] == "\\" and self.pos + 1 < len(self.text):
                self.pos += 1
            out.append(self.text[self.pos])
            self.pos += 1
        self.expect('"')
        return "".join(out)
