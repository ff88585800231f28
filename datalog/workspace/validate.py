"""Values read from a workspace checked before use: a workspace may come from elsewhere, and a
file whose checksums hold can still be forged (checksums find damage, not intent). Every row
block is checked against its relation's column types from the program's ``.decl``s (and, for an
``auto`` column, against the one type its stored values settle), header fields against their
types, blocks against their shape; anything else is ``workspace_corrupt`` naming the file and
the record. What a well-formed file can still lie about (a support count raised by one, an
extra derived row) only recomputing finds: ``Workspace.verify`` (``datalog verify``).

>>> from datalog.language.types import RelationInfo
>>> columns = Columns({"e": RelationInfo("e", 2, ["number", "auto"])})
>>> columns.check("e", [1, "a", 2, "b"], 2, "ws/log", "commit 3")
>>> columns.check("e", [1, 2], 2, "ws/log", "commit 4")
Traceback (most recent call last):
    ...
datalog.language.errors.WorkspaceCorrupt: error[workspace_corrupt]: workspace file ws/log: commit 4: column 2 of e holds 2 (a number) where its other values are symbols
>>> columns.check("e", [1.5, "a"], 2, "ws/log", "commit 5")
Traceback (most recent call last):
    ...
datalog.language.errors.WorkspaceCorrupt: error[workspace_corrupt]: workspace file ws/log: commit 5: column 1 of e holds 1.5, not a number
"""

from __future__ import annotations

import math

from datalog.language import composites
from datalog.language.errors import WorkspaceCorrupt
from datalog.language.mixed import MIXED, MixedNumber, MixedSymbol
from datalog.language.numbers import INT_MAX, UINT_MAX
from datalog.language.types import AUTO

KINDS = {int: "number", float: "float", str: "symbol"}     # a JSON value's Python type -> column type
INT_MIN, INT_MAX = -2 ** 63, 2 ** 63 - 1    # the engine's numbers (signed 64-bit; floats without NaN):
                                            # what it never stores is not read either
PLURAL = {"number": "numbers", "float": "floats", "symbol": "symbols"}
STORED = {"unsigned": "number"}     # an unsigned column holds ints (0 .. 2^64-1), as a number column does
LAST_TIME = 253402300799            # 9999-12-31T23:59:59Z: the last second time.gmtime can show


class Columns:
    """The column types every stored row must have: a relation's from the program (``schema``:
    name -> RelationInfo), an ``auto`` column's the one type its stored values have (the first
    checked settles it, as the engine settles it from a relation's first row).

    Invariant: every value that :meth:`check` let through is a number (``int``, not ``bool``),
    a float or a symbol of its column's type (an ``unsigned`` column's ints within 0 .. 2^64-1),
    in a row of its relation's arity."""

    def __init__(self, schema: dict):
        self.types = {name: list(info.types) for name, info in schema.items()}
        self.settled: dict[tuple[str, int], str] = {}       # (relation, column) of an auto column -> type

    def settle(self, schema: dict, where) -> None:
        """The engine's types once it settled its ``auto`` columns: the columns checked so far
        must have them, and later checks use them."""
        for (name, column), kind in self.settled.items():
            declared = schema[name].types[column]
            if declared not in (AUTO, kind):
                raise WorkspaceCorrupt(f"workspace file {where}: column {column + 1} of {name} holds "
                                       f"{PLURAL[kind]}, its program makes it {declared}")
        self.types = {name: list(info.types) for name, info in schema.items()}

    def arity(self, name: str, where, record: str) -> int:
        """Relation ``name``'s arity; ``workspace_corrupt`` if the program has no such relation."""
        types = self.types.get(name) if isinstance(name, str) else None
        if types is None:
            raise WorkspaceCorrupt(f"workspace file {where}: {record} holds rows of {name!r}, which its "
                                   f"program does not have")
        return len(types)

    def check(self, name: str, values: list, arity: int, where, record: str) -> None:
        """The flat ``values`` of rows of ``name`` (``arity`` each, as a row block stores them)
        fit its columns. A column is checked as a whole (the set of its values' Python types),
        so that a million values cost one pass in C each (about 60 ns a value), a block whose
        columns all have one type in one pass."""
        if arity != self.arity(name, where, record):
            raise WorkspaceCorrupt(f"workspace file {where}: {record}: rows of {name} of arity {arity}, "
                                   f"its program says {len(self.types[name])}")
        declared = self.types[name]
        composite = [c for c, t in enumerate(declared) if getattr(t, "is_composite", False) or t == MIXED]
        for column in composite:                    # records, ADTs and mixed values rebuilt in place
            _rebuild_column(values, column, arity, declared[column], f"workspace file {where}: {record}: "
                            f"column {column + 1} of {name}")
        expected = [self.settled.get((name, c)) if t == AUTO else t for c, t in enumerate(declared)]
        if composite:
            expected = [None if c in composite else t for c, t in enumerate(expected)]
        if len(set(expected)) == 1 and expected[0] is not None:      # one type: one pass over the block
            kinds = set(map(type, values))
            if not kinds:
                return
            if len(kinds) == 1 and KINDS.get(next(iter(kinds))) == STORED.get(expected[0], expected[0]) \
                    and _in_range(values, expected[0]):
                return
        for column in range(arity):
            if column in composite:
                continue
            column_values = values[column::arity]
            kinds = set(map(type, column_values))
            want = STORED.get(expected[column], expected[column])
            if kinds and not (len(kinds) == 1 and want is not None and KINDS.get(next(iter(kinds))) == want
                              and _in_range(column_values, expected[column])):    # (an unsettled auto
                                                                                  # column: value by value)
                self._misfit(name, column, column_values, declared[column], where, record)

    def _misfit(self, name: str, column: int, values: list, declared: str, where, record: str) -> None:
        """The column's first value that does not fit (or, in an ``auto`` column, the first of
        another type than the first) reported; an ``auto`` column of one type settles here."""
        at = f"workspace file {where}: {record}: column {column + 1} of {name}"
        for value in values:
            kind = KINDS.get(type(value))
            if kind is None:
                raise WorkspaceCorrupt(f"{at} holds {_shown(value)}, not a number, float or symbol")
            if declared != AUTO and kind != STORED.get(declared, declared):
                raise WorkspaceCorrupt(f"{at} holds {_shown(value)}, not a {declared}")
            if declared == "unsigned" and not _in_range([value], declared):
                raise WorkspaceCorrupt(f"{at} holds {_shown(value)}, which is no unsigned of the engine's "
                                       f"(0 .. 2^64-1)")
            if declared != "unsigned" and not _in_range([value], kind):
                raise WorkspaceCorrupt(f"{at} holds {_shown(value)}, which is no {kind} of the engine's "
                                       f"(signed 64-bit integers, floats without NaN, text UTF-8 can write)")
            if declared == AUTO:
                settled = self.settled.setdefault((name, column), kind)
                if kind != settled:
                    raise WorkspaceCorrupt(f"{at} holds {_shown(value)} (a {kind}) where its other values "
                                           f"are {PLURAL[settled]}")

    def check_rows(self, name: str, rows, where, record: str) -> list[tuple]:
        """Rows given as sequences (a sample row, support counts' rows) fit ``name``; returns them
        as tuples (records and ADTs rebuilt)."""
        arity = self.arity(name, where, record)
        flat = []
        for row in rows:
            if type(row) not in (list, tuple) or len(row) != arity:
                raise WorkspaceCorrupt(f"workspace file {where}: {record}: {_shown(row)} is not a row of "
                                       f"{name} (arity {arity})")
            flat.extend(row)
        self.check(name, flat, arity, where, record)
        return [tuple(flat[i:i + arity]) for i in range(0, len(flat), arity)] if arity else [() for _ in rows]


def rebuilds_values(schema: dict) -> bool:
    """Whether a relation of ``schema`` has a record, ADT or mixed column: such a workspace stores
    its rows (rebuilt by :meth:`Columns.check`) but no maintainer, whose traces hold values without
    their types (a writer builds the maintainer at its first commit instead)."""
    return any(getattr(t, "is_composite", False) or t == MIXED for info in schema.values() for t in info.types)


def _rebuild_column(values: list, column: int, arity: int, type_, at: str) -> None:
    """A record or ADT column of a flat row block, its JSON lists made values of ``type_`` in
    place (a mixed column's ints made MixedNumbers); one that is not one is ``workspace_corrupt``."""
    if type_ == MIXED:
        for i in range(column, len(values), arity):
            value = values[i]
            if type(value) is int and INT_MIN <= value <= INT_MAX:
                values[i] = MixedNumber(value)
            elif type(value) is str and _in_range([value], "symbol"):
                values[i] = MixedSymbol(value)
            else:
                raise WorkspaceCorrupt(f"{at} holds {_shown(value)}, not a number or a symbol")
        return
    for i in range(column, len(values), arity):
        value = composites.rebuilt(values[i], type_)
        if value is None or not composites.conforms(value, type_):
            raise WorkspaceCorrupt(f"{at} holds {_shown(values[i])}, not a {type_}")
        values[i] = value


def _in_range(values: list, kind: str) -> bool:
    """Numbers within the signed 64-bit range, unsigned within 0 .. 2^64-1, floats not NaN, symbols
    that UTF-8 can write (one or two passes in C)."""
    if kind == "unsigned":
        return 0 <= min(values) and max(values) <= UINT_MAX
    if kind == "number":
        return INT_MIN <= min(values) and max(values) <= INT_MAX
    if kind == "float":
        return not any(map(math.isnan, values))
    if kind == "symbol":                            # no lone surrogate (what admission refuses)
        return all(map(str.isascii, values)) or all(map(composites.utf8, values))
    return True


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def sequence(value, where, what: str) -> int:
    """A commit number (``seq``, ``base``): a non-negative 64-bit integer (a larger one would name
    files longer than the file system allows)."""
    if type(value) is not int or not 0 <= value <= INT_MAX:
        raise WorkspaceCorrupt(f"workspace file {where}: {what} is {_shown(value)}, not a commit number")
    return value


def moment(value, where, what: str) -> float:
    """A commit's time: Unix seconds that a date can show (0 up to the year 9999)."""
    if type(value) not in (int, float) or not 0 <= value <= LAST_TIME:      # (NaN compares false)
        raise WorkspaceCorrupt(f"workspace file {where}: {what} is {_shown(value)}, not a time")
    return value


def converted_rows(blocks: list[dict], where) -> None:
    """A block's ``converted`` rows are lists of numbers, floats and symbols (they become facts)."""
    for block in blocks:
        for relation, rows in block["converted"].items():
            if not isinstance(rows, list) or not all(
                    type(row) is list and all(type(v) in KINDS for v in row) for row in rows):
                raise WorkspaceCorrupt(f"workspace file {where}: block {block['name']} converts {relation!r} "
                                       f"into rows that are not lists of values")
