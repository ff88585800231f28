"""Evaluation within a memory budget, and running out of memory as a coded error.

``Engine.run`` evaluates inside :func:`evaluating`: the process's resident memory
(``/proc/self/statm``) is read every :data:`INTERVAL` seconds, and when it passes the budget
(``Engine(memory_budget=)``, ``--memory-budget``; by default what the machine had free when the
run began: :meth:`maintenance.budget.MemoryBudget.default`) the evaluating thread is stopped
with :class:`OverBudget`, raised at its next bytecode -- inside a join, a semi-naive round or
the worklist alike, since evaluation is Python code (a product of trie levels is added in
chunks for this: :mod:`datalog.evaluation.emitters`). No check runs in the evaluation's loops:
in the main thread a CPU-time timer's signal handler reads the memory, elsewhere a watcher
thread (:class:`datalog.engine.watcher.Watcher`, which nothing that interrupts it leaves armed,
waiting or holding a lock).

Whatever stops an evaluation (the budget, a ``MemoryError``, Ctrl-C, an error in a rule), the
derived relations are put back as they were before it (the program's facts of them): nothing
half-made is left, the engine stays unevaluated, and the next ``run`` (or query) evaluates again.
The budget and ``MemoryError`` become ``memory_budget`` and ``out_of_memory`` errors naming the
relation that had grown largest; their partial rows are freed at once (the memory is the
point). After an interrupt they are freed only at the next run: freeing millions of tuples one
by one takes seconds, and Ctrl-C must stop within one.

>>> from datalog import Engine
>>> e = Engine.from_source("n(0). n(x + 1) :- n(x).", memory_budget=1)
>>> try:
...     e.run()
... except Exception as exc:
...     print(exc.code, e.evaluated, e.stored_relation("n").sorted_rows())
memory_budget False [(0,)]
"""

from __future__ import annotations

from typing import Callable

from datalog.engine.watcher import INTERVAL, OverBudget, Watcher
from datalog.language.errors import MemoryBudgetExceeded, OutOfMemory
from maintenance.budget import MemoryBudget, size_text


def evaluating(engine, evaluate: Callable[[], None]) -> None:
    """``evaluate()`` (the engine's evaluation from scratch) within the engine's memory budget;
    on any exception the derived relations are as before (see the module docstring)."""
    db, engine.spared = engine.db, None          # (what an interrupted run kept: freed now)
    before = {} if engine.evaluated else {n: set(db[n].tuples) for n in engine.idb if n in db and db[n].stored}
    budget = engine.memory_budget if engine.memory_budget is not None else MemoryBudget.default().limit
    watcher = Watcher(budget)
    try:
        if watcher.run(evaluate):
            raise OverBudget                      # over the budget as the evaluation ended
    except OverBudget:
        grown, span = _restore(engine, before, keep=False)
        raise MemoryBudgetExceeded(
            f"evaluation does not fit in the memory budget of {size_text(budget)}: the process held "
            f"{size_text(watcher.held or 0)}{grown}; nothing was derived. Give a larger --memory-budget "
            f"(Engine(memory_budget=...)), or look for a rule that derives without end", span) from None
    except MemoryError:
        grown, span = _restore(engine, before, keep=False)
        raise OutOfMemory(f"the machine ran out of memory during evaluation{grown}; nothing was derived. "
                          f"Free memory, or give a --memory-budget to stop earlier", span) from None
    except Exception:
        _restore(engine, before, keep=False)
        raise
    except BaseException:                         # Ctrl-C, SystemExit: stop at once, free later
        _restore(engine, before, keep=True)
        raise


def _restore(engine, before: dict, keep: bool) -> tuple[str, object]:
    """The derived relations back to ``before``; (a phrase naming the one that had grown most,
    the span of its first rule). ``keep``: their partial rows kept on the engine until its next
    run instead of freed now."""
    db = engine.db
    grown = {n: len(db[n]) for n in before if len(db[n]) > len(before[n])}
    dropped = []
    for name, rows in before.items():
        relation = db[name]
        if len(relation) != len(rows) or relation.indexes:
            dropped.append((relation.tuples, relation.indexes))
            relation.tuples, relation.indexes, relation.presorted = rows, {}, None
            relation.version += 1
    engine.spared = dropped if keep else None
    del dropped
    if not grown:
        return "", None
    name = max(grown, key=grown.get)
    span = next((c.head.span for c in engine.checked.clauses if c.body and c.head.relation == name), None)
    return f" after deriving {grown[name]:,} tuples of {name}", span


__all__ = ["evaluating", "Watcher", "OverBudget", "INTERVAL"]
