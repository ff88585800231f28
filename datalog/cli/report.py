"""How changes are shown: the batches of an updates file (each batch's delta, or a one-line summary
of it, and the batch that failed) and the REPL's one-line summary of a change.
"""

from __future__ import annotations

import os
import sys

from datalog.engine.absent import absent_retractions, absent_warning
from datalog.engine.updates import Committed, Failure, apply_updates
from datalog.sources.files import format_value
from datalog.language.display import plural
from datalog.language.rewrites import is_internal


def apply_and_report(engine, batches, report: Committed) -> tuple[int, int]:
    """Commit each batch in order (:func:`datalog.engine.updates.apply_updates`), ``report`` after each;
    a failing batch (rolled back) is described on stderr. Returns (batches applied, exit status)."""
    applied, failure = apply_updates(engine, batches, report, _warn_absent)
    if failure is None:
        return applied, 0
    print(failed(failure), file=sys.stderr)
    return applied, 1


def _warn_absent(number: int, batch, tx) -> None:
    """``warning[retract_absent]`` on stderr for a batch's retractions of facts not there."""
    warning = absent_warning(*absent_retractions(tx.engine, tx.pending), batch.span)
    if warning:
        print(warning.render(), file=sys.stderr)


def failed(failure: Failure) -> str:
    """``batch N (file:line:col) failed and was rolled back; ...:`` and the diagnostic."""
    where = f" ({failure.batch.span})" if failure.batch.span else ""
    rest = failure.later
    later = f"; the {rest} later batch{'es were' if rest != 1 else ' was'} not applied" if rest else ""
    return f"batch {failure.number}{where} failed and was rolled back{later}:\n{failure.error.render()}"


def delta_printer(engine) -> Committed:
    """Print a batch's delta of every ``.output`` relation (or, with none, of every relation that changed):
    a header ``batch N: +I -E tuples in REL``, then ``+REL<TAB>v1<TAB>v2`` per inserted row and
    ``-REL<TAB>...`` per erased row, each group sorted; last ``batch N: maintained in T ms``, the only
    line that differs between runs."""
    outputs = list(dict.fromkeys(d.relation for d in engine.checked.directives("output")))

    def report(number: int, delta, seconds: float) -> None:
        names = outputs or sorted(name for name, change in delta.items() if change and not is_internal(name))
        lines = [] if names else [f"batch {number}: no changes"]
        for name in names:
            change = delta.get(name)
            inserted = sorted(change.inserted) if change else []
            erased = sorted(change.retracted) if change else []
            lines.append(f"batch {number}: +{len(inserted)} -{len(erased)} tuples in {name}")
            lines.extend(row("+", name, values) for values in inserted)
            lines.extend(row("-", name, values) for values in erased)
        lines.append(f"batch {number}: maintained in {seconds * 1000:.1f} ms")
        try:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
        except BrokenPipeError:                  # the reader left: keep applying, quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return report


def row(sign: str, name: str, values: tuple) -> str:
    """``+REL<TAB>v1<TAB>v2``: one inserted (``+``) or erased (``-``) row."""
    return sign + "\t".join([name, *map(format_value, values)])


def batch_summary(number: int, delta, seconds: float) -> None:
    """Print ``batch N: +I -E tuples in R relations, maintained in T ms``."""
    shown = [change for name, change in delta.items() if not is_internal(name)]
    inserted = sum(len(change.inserted) for change in shown)
    erased = sum(len(change.retracted) for change in shown)
    changed = len([change for change in shown if change])
    print(f"batch {number}: +{inserted} -{erased} tuples in {plural(changed, 'relation')}, "
          f"maintained in {seconds * 1000:.1f} ms")


def summary(delta) -> str:
    """``edge +1, path +2 -1``: the size of each relation's change, by name (not of the relations
    rewrites made, :func:`~datalog.language.rewrites.is_internal`)."""
    parts = []
    for name in sorted(n for n, change in delta.items() if change and not is_internal(n)):
        change = delta[name]
        counts = [f"+{len(change.inserted)}" * bool(change.inserted), f"-{len(change.retracted)}" * bool(change.retracted)]
        parts.append(f"{name} {' '.join(c for c in counts if c)}")
    return ", ".join(parts)
