"""Retractions of facts that are not there: counted (:func:`absent_retractions`), described as a
``warning[retract_absent]`` (:func:`absent_warning`: the CLI and the REPL print it) and, in the
Python API, reported as an :class:`AbsentRetractionWarning` (:func:`warn_absent`) by
``Engine.commit`` and ``Engine.retract`` (also on a workspace's engine). Never an error: the
commit stands, it just removed nothing for those facts.

>>> from datalog import Engine
>>> engine = Engine.from_source(".decl e(a: number)\\ne(1).")
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     engine.commit(retracts={"e": [(1,), (2,)]}) and None
>>> [(w.category.__name__, str(w.message)) for w in caught]
[('AbsentRetractionWarning', 'warning[retract_absent]: 1 of 2 retractions removed nothing (no such fact): e(2)')]
"""

from __future__ import annotations

import warnings

from datalog.language.display import fact_text, plural
from datalog.language.errors import DatalogWarning, Span

SHOWN = 3                       # absent facts named in a warning; the rest are counted


class AbsentRetractionWarning(UserWarning):
    """A commit retracted facts its relations did not hold (the commit stands; they removed
    nothing). ``code`` is ``retract_absent``; ``facts``: the (relation, row) pairs."""

    code = "retract_absent"

    def __init__(self, message: str, facts: list[tuple[str, tuple]]):
        super().__init__(message)
        self.facts = facts


def absent_retractions(engine, pending: dict[str, dict[tuple, int]]) -> tuple[int, list[tuple[str, tuple]]]:
    """The number of retractions among the requests ``pending`` and those of facts that their
    relation does not hold (relation, row), in order."""
    retractions, absent = 0, []
    for name, requests in pending.items():
        relation = engine.stored_relation(name)
        for row, sign in requests.items():
            if sign < 0:
                retractions += 1
                if row not in relation:
                    absent.append((name, row))
    return retractions, absent


def absent_warning(retractions: int, absent: list[tuple[str, tuple]], span: Span | None) -> DatalogWarning | None:
    """``warning[retract_absent]`` naming the facts retracted that were not there (the first
    :data:`SHOWN`, the others counted); None if every retraction removed a fact."""
    if not absent:
        return None
    named = ", ".join(fact_text(name, row) for name, row in absent[:SHOWN])
    more = f" and {len(absent) - SHOWN} more" if len(absent) > SHOWN else ""
    if retractions == 1:
        name, _ = absent[0]
        message = f"{named} is not in {name}: nothing was retracted"
    else:
        message = f"{len(absent)} of {plural(retractions, 'retraction')} removed nothing (no such fact): {named}{more}"
    return DatalogWarning("retract_absent", message, span)


def warn_absent(counted: tuple[int, list[tuple[str, tuple]]], stacklevel: int) -> None:
    """An :class:`AbsentRetractionWarning` for ``counted`` (:func:`absent_retractions`), if any
    retraction removed nothing."""
    warning = absent_warning(*counted, None)
    if warning is not None:
        warnings.warn(AbsentRetractionWarning(str(warning), counted[1]), stacklevel=stacklevel + 1)


__all__ = ["AbsentRetractionWarning", "absent_retractions", "absent_warning", "warn_absent", "SHOWN"]
