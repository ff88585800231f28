"""Stopping a thread once the process holds more memory than a limit (:class:`Watcher`), so that
whatever interrupts its start or stop -- Ctrl-C, ``SystemExit``, ``MemoryError``, the budget's
own exception -- leaves no lock held, no thread waiting and nothing armed.

In the main thread a CPU-time timer (``ITIMER_VIRTUAL``, ``SIGVTALRM``, unless the program has
its own handler for it) reads the memory every :data:`INTERVAL` seconds of CPU: its handler runs
in the evaluating thread itself, so no thread takes the GIL from it (a watcher thread waking 50
times a second cost 15-20% of a 2-6 s evaluation on a loaded 2-core machine: each wake-up waits
for the GIL, then for a core). Elsewhere one watcher thread serves every Watcher of the process
(:class:`_Monitor`) and stops a thread with an asynchronous exception
(``PyThreadState_SetAsyncExc``).

What makes it safe to interrupt:

- :meth:`Watcher.run` calls :meth:`Watcher.start` inside the ``try`` whose ``finally`` calls
  :meth:`Watcher.stop`, and ``stop`` undoes whatever part of ``start`` was done (it looks at the
  handler installed and the watcher registered, not at flags ``start`` may not have reached). A
  second ``finally`` stops it again: an exception can come at any line, the ``try`` and
  ``finally`` lines included, where nothing catches it.
- The budget's own exception is raised only inside the evaluation, never in ``run``, ``start``
  or ``stop`` (:meth:`Watcher.where` looks at the interrupted thread's stack), so it cannot cut
  a stop short; a handler or a watched thread whose run is over (two exceptions cut both stops
  short) is dropped at its next reading, never raised into.
- The monitor's lock is a plain lock entered by ``with`` itself (a C ``__enter__``: no bytecode,
  so no signal handler and no asynchronous exception, runs between its acquire and the block);
  a ``threading.Condition``'s Python ``__enter__`` could be interrupted holding it, and every
  later run in a thread would then wait for it for ever. The watcher thread sleeps rather than
  waits on anything, and ends when nothing is watched.
- An exception sent and not raised yet is taken back by replacing it with one that is caught at
  once (:func:`_withdraw`), never by ``PyThreadState_SetAsyncExc(thread, NULL)``: in CPython 3.11
  that leaves the interpreter's "asynchronous exception pending" flag set with nothing pending,
  and from then on any call made under ``sys.settrace`` (a debugger, coverage) loops for ever.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
import time
from typing import Callable

from maintenance.budget import resident

INTERVAL = 0.02                 # seconds between two readings of the resident memory


class OverBudget(BaseException):
    """Raised in the evaluating thread by the watcher (a BaseException: no ``except Exception``
    of a rule's code can swallow it)."""


class _Withdrawn(BaseException):
    """Replaces an :class:`OverBudget` sent too late, and is caught as it comes (:func:`_withdraw`)."""


class Watcher:
    """In :meth:`run`, stops ``evaluate`` with :class:`OverBudget` once the process holds more
    than ``limit`` bytes (None: never). ``held``: what it read when it fired."""

    def __init__(self, limit: int | None):
        self.limit, self.held, self.thread, self.frame = limit, None, 0, None

    def run(self, evaluate: Callable[[], None]) -> bool:
        """``evaluate()`` watched; whether the budget fired as it ended (its exception comes out
        of ``evaluate`` if it came there). The stop runs twice: one exception (a Ctrl-C) can
        cut the first short, even at its first line; the budget's own cannot, since it is
        raised only inside ``evaluate`` (:meth:`_tick`)."""
        try:
            try:
                self.start()
                _watched(evaluate)
            finally:
                fired = self.stop()
        finally:
            self.stop()
        return fired

    def start(self) -> None:
        """Begin watching the calling frame's callees (:meth:`run`'s ``evaluate``)."""
        self.frame = sys._getframe(1)
        if self.limit is None or resident() is None:
            return
        self.thread = threading.get_ident()
        if threading.current_thread() is threading.main_thread() and _timer_free():
            signal.signal(signal.SIGVTALRM, self._tick)          # the handler first, then the timer
            signal.setitimer(signal.ITIMER_VIRTUAL, INTERVAL, INTERVAL)
        else:
            _MONITOR.add(self)

    def _tick(self, signum, frame) -> None:
        """The CPU-time timer's handler (a handler left by a run that is over disarms itself)."""
        where = self.where(frame)
        if where is None and signal.getsignal(signal.SIGVTALRM) == self._tick:
            _disarm()
        elif where and self.over():
            raise OverBudget

    def where(self, frame) -> bool | None:
        """Whether ``frame`` is in the evaluation: in the watching frame's call of
        :func:`_watched` (False: in the watching frame itself, in start or stop, or in a signal
        handler called there; None: the watching frame is not on the stack, the run is over)."""
        child = None
        while frame is not None and frame is not self.frame:
            frame, child = frame.f_back, frame
        if frame is None:
            return None
        return child is not None and child.f_code is _watched.__code__

    def over(self, held: int | None = None) -> bool:
        """Whether the process is over the limit: it fires once (``held`` set)."""
        held = resident() if held is None else held
        if self.held is None and held is not None and held > self.limit:
            self.held = held
            return True
        return False

    def stop(self) -> bool:
        """Stop watching, whatever part of :meth:`start` was done; whether it fired. Another
        exception meanwhile (Ctrl-C) stops it again, then comes out."""
        try:
            self._stop()
        except BaseException:
            self._stop()
            raise
        return self.held is not None

    def _stop(self) -> None:
        if signal.getsignal(signal.SIGVTALRM) == self._tick:
            _disarm()
        if _MONITOR.remove(self):
            _withdraw()


def _watched(evaluate: Callable[[], None]) -> None:
    """The evaluation's own frame: the budget's exception is raised only below it."""
    evaluate()


def _timer_free() -> bool:
    """Whether the CPU-time timer is the Watchers' to use: no other handler, no timer running
    (a handler a stopped Watcher left behind counts as none)."""
    handler = signal.getsignal(signal.SIGVTALRM)
    if isinstance(getattr(handler, "__self__", None), Watcher):
        _disarm()
        handler = signal.SIG_DFL
    return handler in (signal.SIG_DFL, None) and not signal.getitimer(signal.ITIMER_VIRTUAL)[0]


def _disarm() -> None:
    """Stop the CPU-time timer, then put the default handler back: in that order, since a tick
    that found the default handler would end the process (SIGVTALRM's default action)."""
    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    signal.signal(signal.SIGVTALRM, signal.SIG_DFL)


class _Monitor:
    """The watcher thread and the Watchers it serves, by thread. A Watcher fires once: it is
    removed as it fires."""

    def __init__(self):
        self.lock = threading.Lock()
        self.watched: dict[int, Watcher] = {}
        self.thread: threading.Thread | None = None

    def add(self, watcher: Watcher) -> None:
        with self.lock:
            if watcher.thread in self.watched:        # a run inside a run: the outer one watches
                return
            self.watched[watcher.thread] = watcher
            if self.thread is None or not self.thread.is_alive():     # (also in a forked child)
                self.thread = threading.Thread(target=self._watch, name="datalog-memory-budget", daemon=True)
                self.thread.start()

    def remove(self, watcher: Watcher) -> bool:
        """``watcher`` no longer served; whether it fired (an exception may be on its way)."""
        with self.lock:
            if self.watched.get(watcher.thread) is watcher:
                del self.watched[watcher.thread]
            return watcher.held is not None

    def _watch(self) -> None:
        me = threading.current_thread()
        while True:
            time.sleep(INTERVAL)
            held = resident()
            with self.lock:
                if not self.watched:                  # none is left behind (add starts another)
                    if self.thread is me:
                        self.thread = None
                    return
                frames = sys._current_frames()
                for thread, watcher in list(self.watched.items()):
                    where = watcher.where(frames.get(thread))
                    if where is None:                 # its run is over (a stop cut short twice)
                        del self.watched[thread]
                    elif where and watcher.over(held):
                        del self.watched[thread]
                        _raise_in(thread, OverBudget)


_MONITOR = _Monitor()


def _raise_in(thread: int, exception: type[BaseException]) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(exception))


def _withdraw() -> None:
    """Take back an :class:`OverBudget` sent to this thread and not raised yet: replaced by a
    :class:`_Withdrawn`, raised as the call that sent it returns, and caught (which also clears
    the interpreter's pending flag)."""
    try:
        _raise_in(threading.get_ident(), _Withdrawn)
        for _ in range(1000):                     # (each call's end checks for it too)
            _nothing()
    except _Withdrawn:
        return
    except BaseException:                         # a Ctrl-C came first: the replacement still comes
        _withdraw()
        raise


def _nothing() -> None:
    pass


__all__ = ["Watcher", "OverBudget", "INTERVAL"]
