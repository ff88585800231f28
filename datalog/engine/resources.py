"""Evaluation within a memory budget, and running out of memory as a coded error.

``Engine.run`` evaluates inside :func:`evaluating`: the process's resident memory
(``/proc/self/statm``) is read every :data:`INTERVAL` seconds, and when it passes the budget
(``Engine(memory_budget=)``, ``--memory-budget``; by default what the machine had free when the
run began: :meth:`maintenance.budget.MemoryBudget.default`) the evaluating thread is stopped
with :class:`OverBudget`, raised at its next bytecode -- inside a join, a semi-naive round or
the worklist alike, since evaluation is Python code (a product of trie levels is added in
chunks for this: :mod:`datalog.evaluation.emitters`). No check runs in the evaluation's loops:
in the main thread a CPU-time timer's signal handler reads the memory, elsewhere a watcher
thread (:class:`Watcher`).

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

import ctypes
import signal
import threading
from typing import Callable

from datalog.language.errors import MemoryBudgetExceeded, OutOfMemory
from maintenance.budget import MemoryBudget, resident, size_text

INTERVAL = 0.02                 # seconds between two readings of the resident memory


class OverBudget(BaseException):
    """Raised in the evaluating thread by the watcher (a BaseException: no ``except Exception``
    of a rule's code can swallow it)."""


class Watcher:
    """While entered, stops the entering thread with :class:`OverBudget` once the process holds
    more than ``limit`` bytes (None: never). ``held``: what it read when it fired.

    In the main thread a CPU-time timer (``ITIMER_VIRTUAL``, ``SIGVTALRM``, unless the program
    has its own handler for it) reads the memory every :data:`INTERVAL` seconds of CPU: its
    handler runs in the evaluating thread itself, so no thread takes the GIL from it (a watcher
    thread waking 50 times a second cost 15-20% of a 2-6 s evaluation on a loaded 2-core machine:
    each wake-up waits for the GIL, then for a core). Elsewhere one watcher thread serves every
    Watcher of the process (:class:`_Monitor`)."""

    def __init__(self, limit: int | None):
        self.limit, self.held, self.thread = limit, None, 0
        self._watched = self._timer = False
        self._previous = None

    def __enter__(self) -> "Watcher":
        if self.limit is None or resident() is None:
            return self
        self.thread = threading.get_ident()
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGVTALRM) in (signal.SIG_DFL, None) and \
                not signal.getitimer(signal.ITIMER_VIRTUAL)[0]:
            self._previous = signal.signal(signal.SIGVTALRM, self._tick)
            signal.setitimer(signal.ITIMER_VIRTUAL, INTERVAL, INTERVAL)
            self._timer = True
        else:
            self._watched = _MONITOR.add(self)
        return self

    def _tick(self, signum, frame) -> None:
        held = resident()
        if self._timer and self.held is None and held is not None and held > self.limit:
            self.held = held
            raise OverBudget

    def __exit__(self, kind, value, traceback) -> None:
        if self._timer:
            self._timer = False
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, self._previous if self._previous is not None else signal.SIG_DFL)
        elif self._watched and _MONITOR.remove(self) and kind is None:
            raise OverBudget                          # over the budget as the evaluation ended


class _Monitor:
    """The watcher thread and the Watchers it serves, by thread. A Watcher fires once: it is
    removed as it fires, so no exception reaches its thread after it is left."""

    def __init__(self):
        self.lock = threading.Condition()
        self.watched: dict[int, Watcher] = {}
        self.thread = None

    def add(self, watcher: Watcher) -> bool:
        with self.lock:
            if watcher.thread in self.watched:        # a run inside a run: the outer one watches
                return False
            self.watched[watcher.thread] = watcher
            if self.thread is None or not self.thread.is_alive():     # (also in a forked child)
                self.thread = threading.Thread(target=self._watch, name="datalog-memory-budget", daemon=True)
                self.thread.start()
            self.lock.notify()
        return True

    def remove(self, watcher: Watcher) -> bool:
        """Whether it fired; an exception it sent and its thread has not raised yet is withdrawn."""
        with self.lock:
            self.watched.pop(watcher.thread, None)
            if watcher.held is not None:
                _raise_in(watcher.thread, None)
            return watcher.held is not None

    def _watch(self) -> None:
        # the thread ends when no thread is watched (add starts another): none is left behind
        with self.lock:
            while self.watched:
                self.lock.wait(INTERVAL)
                held = resident()
                for thread, watcher in list(self.watched.items()):
                    if held is not None and held > watcher.limit:
                        watcher.held = held
                        del self.watched[thread]
                        _raise_in(thread, OverBudget)


_MONITOR = _Monitor()


def _raise_in(thread: int, exception) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                               ctypes.py_object(exception) if exception else None)


def evaluating(engine, evaluate: Callable[[], None]) -> None:
    """``evaluate()`` (the engine's evaluation from scratch) within the engine's memory budget;
    on any exception the derived relations are as before (see the module docstring)."""
    db, engine.spared = engine.db, None          # (what an interrupted run kept: freed now)
    before = {} if engine.evaluated else {n: set(db[n].tuples) for n in engine.idb if n in db and db[n].stored}
    budget = engine.memory_budget if engine.memory_budget is not None else MemoryBudget.default().limit
    watcher = Watcher(budget)
    try:
        with watcher:
            evaluate()
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
