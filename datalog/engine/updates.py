"""Updates files (``+r(1, 2). -r(3, 4). commit.``) applied to an engine: every change is checked
against the program before anything runs, then each batch is one transaction, all or nothing.

The file is parsed by :func:`datalog.language.parser.parse_updates_file`; an error about a change
points into the updates file. Nothing here prints: :func:`apply_updates` calls back after each
committed batch and returns how far it got.

>>> from datalog.engine.engine import Engine
>>> from datalog.language.parser import parse_updates
>>> engine = Engine.from_source("path(x, y) :- edge(x, y).\\nedge(1, 2).")
>>> engine.run()
>>> batches = parse_updates("+edge(2, 3). commit. -edge(1, 2). +edge(3, 4). commit.")
>>> applied, failure = apply_updates(engine, batches, lambda n, delta, s: print(n, sorted(delta)))
1 ['edge', 'path']
2 ['edge', 'path']
>>> applied, failure, engine.rows("path")
(2, None, [(2, 3), (3, 4)])
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from datalog.engine.admission import misfit
from datalog.engine.engine import Engine, Transaction
from datalog.language import ast
from datalog.language.errors import DatalogError, Span, TooDeep, TypeMismatch
from datalog.language.parser import Batch, parse_updates_file
from datalog.language.recordtypes import value_of
from datalog.language.types import AUTO, value_type
from datalog.language.display import value_text
from maintenance.delta import Delta

Committed = Callable[[int, Delta, float], None]      # (batch number, its delta, seconds it took)


class UnavailableStrategy(DatalogError):
    code = "unavailable_strategy"


@dataclass(frozen=True)
class Failure:
    """The batch that failed, numbered from 1 (it was rolled back), why, and how many batches after it
    were not applied."""

    number: int
    batch: Batch
    error: DatalogError
    later: int


def read_updates(engine: Engine, path: str | Path) -> list[Batch]:
    """Parse the updates file and check every change against the program, before anything runs.

    Loads the ``.input`` files first (the same ones ``run`` would load) so that columns whose type
    comes from the data are settled."""
    batches = parse_updates_file(path)
    engine.load_inputs()
    for batch in batches:
        tx = engine.transaction()                 # requests only: it is never committed
        for sign, atom in batch:
            request(tx, sign, atom, pinpoint=True)
    check_auto_columns(engine, batches)
    return batches


def check_auto_columns(engine: Engine, batches: list[Batch]) -> None:
    """A column still typed ``auto`` (an undeclared input with no rows) takes the type of its first
    value, here or in the data; later values must agree (a column holds one type)."""
    first: dict[tuple[str, int], tuple[str, object]] = {}
    for batch in batches:
        for _, atom in batch:
            for i, (arg, type_) in enumerate(zip(atom.args, engine.schema[atom.relation].types)):
                if type_ != AUTO:
                    continue
                if (atom.relation, i) not in first:
                    row = next(iter(engine.db[atom.relation].tuples), None)
                    first[atom.relation, i] = (value_type(row[i]), "its rows") if row else \
                        (value_type(value_of(arg)), arg.span)
                expected, where = first[atom.relation, i]
                got = value_type(value_of(arg))
                if got != expected:
                    raise TypeMismatch(f"column {i + 1} of {atom.relation} holds {expected}s (from {where}), "
                                       f"got the {got} {value_text(value_of(arg))}", arg.span)


def request(tx: Transaction, sign: str, atom: ast.Atom, pinpoint: bool = False) -> None:
    """One change (``+`` inserts, ``-`` retracts the atom's constants) into a transaction. An error
    that does not point into the atom's source points at the atom or, with ``pinpoint``, at the
    argument of a type mismatch (:func:`culprit`)."""
    row = tuple(value_of(arg) for arg in atom.args)      # a record term's value too (issue 18)
    info = tx.engine.schema.get(atom.relation)
    for arg, type_ in zip(atom.args, info.types if info else ()):
        if isinstance(arg, ast.Constant) and arg.unsigned and type_ not in ("unsigned", AUTO):
            raise TypeMismatch(f"{arg} is an unsigned but column of {atom.relation}/{len(atom.args)} is "
                               f"{'an' if str(type_)[:1] in 'aeiou' else 'a'} {type_}", arg.span or atom.span)
    try:
        (tx.insert if sign == "+" else tx.retract)(atom.relation, [row])
    except DatalogError as err:
        if err.span is None or err.span.source is not atom.span.source:
            err.span = culprit(tx.engine, err, atom) if pinpoint else atom.span
        raise err from None


def culprit(engine: Engine, err: DatalogError, atom: ast.Atom) -> Span | None:
    """The argument of a type mismatch, else the whole atom."""
    if isinstance(err, TypeMismatch) and atom.relation in engine.schema:
        column = misfit(engine.schema[atom.relation], [value_of(arg) for arg in atom.args])
        if column is not None:
            return atom.args[column].span or atom.span
    return atom.span


def apply_updates(engine: Engine, batches: list[Batch], committed: Committed,
                  examine: Callable[[int, Batch, object], None] | None = None) -> tuple[int, Failure | None]:
    """Commit each batch in order; ``committed(number, delta, seconds)`` after each. Stops at the
    first failing batch (its transaction rolled back). Returns the number of batches applied and the
    failure, if one failed. ``seconds`` is the batch's own time: the evaluation and the
    maintainer's set-up are done before the first batch is timed (a failure there is the first
    batch's). ``examine(number, batch, tx)``: each batch's transaction with its requests made,
    before it commits."""
    for number, batch in enumerate(batches, 1):
        try:
            if number == 1:
                with _coded(engine):
                    engine.prepare()
            started = time.perf_counter()
            delta = apply_batch(engine, batch, examine and (lambda tx: examine(number, batch, tx)))
        except DatalogError as err:
            return number - 1, Failure(number, batch, err, len(batches) - number)
        committed(number, delta, time.perf_counter() - started)
    return len(batches), None


def apply_batch(engine: Engine, batch: Batch, examine: Callable[[object], None] | None = None) -> Delta:
    """One batch as one transaction; returns its delta. All or nothing: on an error nothing changed.
    ``examine(tx)``: the transaction with its requests made, before it commits."""
    with _coded(engine):
        with engine.transaction() as tx:
            for sign, atom in batch:
                request(tx, sign, atom, pinpoint=True)
            if examine:
                examine(tx)
    return tx.delta


@contextmanager
def _coded(engine: Engine):
    """Evaluating or maintaining: too deep a nesting and a missing strategy module as diagnostics."""
    try:
        yield
    except RecursionError:
        raise TooDeep("the rule nesting is too deep to evaluate", None) from None
    except ModuleNotFoundError as exc:    # a strategy whose module is not in this build
        if not (exc.name or "").startswith("maintenance."):
            raise
        raise UnavailableStrategy(f"the {engine.maintenance} maintenance strategy is not available "
                                  f"({exc}); try --maintenance recompute") from None
