"""``datalog verify``: a workspace checked against a recomputation, the check to run on a
workspace received from elsewhere. Reading checks every file's structure and every value's type
(``validate``), but a well-formed file can still lie: an extra derived row, a support count
raised by one. Here the stored program is evaluated again from scratch over the stored EDB and
every relation compared with what is stored, and the maintainer stored with the snapshot
(``maintainer.S``, restored and brought to the last commit through the log, as a writer does)
with a maintainer built from the recomputation: its support counts, and whether it reproduces
the logged commits.
"""

from __future__ import annotations

from dataclasses import dataclass

from datalog.language.errors import DatalogError


@dataclass(frozen=True)
class Difference:
    """One way the stored state differs from the recomputed one: a row of ``relation`` (stored
    or recomputed: ``True``/``False``), or its support count (``row``'s count, 0 for none), or
    (``row`` None) the stored maintainer failing, ``stored`` saying how."""

    relation: str
    row: tuple | None
    stored: object
    recomputed: object
    what: str = "row"                    # "row", "support count" or "maintainer"

    def __str__(self) -> str:
        if self.what == "maintainer":
            return f"maintainer: {self.stored}"
        shown = f"{self.relation}({', '.join(map(repr, self.row))})"
        if self.what == "row":
            return f"{shown}: {'stored' if self.stored else 'not stored'}, " \
                   f"{'recomputed' if self.recomputed else 'not recomputed'}"
        return f"support count of {shown}: stored {self.stored}, recomputed {self.recomputed}"


def rows(stored, recomputed) -> list[Difference]:
    """Every row that one engine's relations hold and the other's do not (each relation's rows
    sorted, so that the report reads in order)."""
    out = []
    for name in sorted(set(stored.db) | set(recomputed.db)):
        mine = set(stored.db[name].tuples) if name in stored.db else set()
        theirs = set(recomputed.db[name].tuples) if name in recomputed.db else set()
        out += [Difference(name, row, True, False) for row in _sorted(mine - theirs)]
        out += [Difference(name, row, False, True) for row in _sorted(theirs - mine)]
    return out


def support(maintained, built) -> list[Difference]:
    """Every support count in which a maintainer restored from the workspace (``maintained``)
    differs from one built over the recomputed relations (``built``)."""
    out = []
    for name in sorted(set(maintained.support) | set(built.support)):
        mine, theirs = dict(maintained.support.get(name, {}).items()), dict(built.support.get(name, {}).items())
        for row in _sorted(set(mine) | set(theirs)):
            if mine.get(row, 0) != theirs.get(row, 0):
                out.append(Difference(name, row, mine.get(row, 0), theirs.get(row, 0), "support count"))
    return out


def failed(error: DatalogError) -> Difference:
    """The stored maintainer could not be restored or does not reproduce the log."""
    return Difference("", None, error.message, None, "maintainer")


def _sorted(rows) -> list:
    try:
        return sorted(rows)
    except TypeError:                      # values of several types (reading refuses them anyway)
        return sorted(rows, key=repr)
