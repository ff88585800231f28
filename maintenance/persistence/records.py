"""The encodings that writing and reading a maintainer file share: values as JSON data and back,
support counts as rows, the page a sensitivity group or a support count is hashed to, the size
of a node index page, and the error a malformed record raises.

Values are JSON data; a JSON array is read back as a tuple (keys, ``alpha`` prefixes and head
tuples are tuples of scalars).
"""

from __future__ import annotations

import json
import zlib

from datalog.language.errors import WorkspaceCorrupt


# Trace nodes' [parent, key] a page of the node index. The file does not record it: both
# directions must agree, and changing it changes the format.
LINKS = 4096

# What reading a malformed record raises: a key or an index missing, a value of the wrong type
# (a page count of 0: ZeroDivisionError).
MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError)


def malformed(where, exc) -> WorkspaceCorrupt:
    """The error of the maintainer file ``where`` whose record raised ``exc`` (one of
    :data:`MALFORMED`)."""
    return WorkspaceCorrupt(f"workspace file {where}: the maintainer record is malformed ({exc})")


def bucket(where: int, alpha: tuple, pages: int) -> int:
    """The page of group ``(where, alpha)``: a CRC-32 of its JSON text, numbers that Python holds
    equal written alike (1 and 1.0, 0.0 and -0.0), so an equal ``alpha`` finds the same page.
    A support count's row is hashed as the group ``(0, row)``. (Integers alone are written as
    ``json.dumps`` would write them, without it: a maintainer file of 1M tuples hashes 530,000.)"""
    if all(type(v) is int for v in alpha):
        text = f"[{where},[{','.join(map(str, alpha))}]]"
    else:
        text = json.dumps([where, [_canonical(v) for v in alpha]], separators=(",", ":"))
    return zlib.crc32(text.encode("ascii")) % pages


def _canonical(value):
    if type(value) is float and value.is_integer():
        return int(value)
    if type(value) is tuple:
        return [_canonical(v) for v in value]
    return value


def count_rows(counter) -> list:
    """Counts (support counts, derived rows, rho) as ``[[row, count], ...]``."""
    return [[list(row), n] for row, n in counter.items()]


def read_counts(pairs, name: str, rows, where, what: str) -> dict:
    """Counts stored by :func:`count_rows` read back: each a positive integer (a support count,
    a multiplicity), each row with ``rows`` (the workspace's checker of stored values, e.g.
    :class:`datalog.workspace.validate.Columns`; None: not checked) a row of relation ``name``;
    ValueError (:data:`MALFORMED`) otherwise."""
    if type(pairs) is not list:
        raise ValueError(f"{what} are not a list")
    counts = {}
    for row, n in pairs:
        if type(n) is not int or n <= 0:
            raise ValueError(f"{what}: {n!r} is not a positive integer")
        counts[to_tuple(row)] = n
    if rows is not None:
        rows.check_rows(name, counts, where, what)
    return counts


def to_json(value):
    """A key as JSON data: a tuple as an array."""
    return list(value) if isinstance(value, tuple) else value


def to_tuple(value):
    """A stored value read back: an array as a tuple."""
    return tuple(value) if type(value) is list else value
