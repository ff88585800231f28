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

- :meth:`Watcher.start` is called inside the ``try`` whose ``finally`` calls :meth:`Watcher.stop`,
  and ``stop`` undoes whatever part of ``start`` was done (it looks at the handler installed and
  the watcher registered, not at flags ``start`` may not have reached).
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
import threading
import time

from maintenance.budget import resident

INTERVAL = 0.02                 # seconds between two readings of the resident memory


class OverBudget(BaseException):
    """Raised in the evaluating thread by the watcher (a BaseException: no ``except Exception``
    of a rule's code can swallow it)."""


class _Withdrawn(BaseException):
    """Replaces an :class:`OverBudget` sent too late, and is caught as it comes (:func:`_withdraw`)."""


class Watcher:
    """Between :meth:`start` and :meth:`stop`, stops the starting thread with :class:`OverBudget`
    once the process holds more than ``limit`` bytes (None: never). ``held``: what it read when it
    fired."""

    def __init__(self, limit: int | None):
        self.limit, self.held, self.thread = limit, None, 0

    def start(self) -> None:
        """Begin watching. Call it inside the ``try`` whose ``finally`` calls :meth:`stop`."""
        if self.limit is None or resident() is None:
            return
        self.thread = threading.get_ident()
        if threading.current_thread() is threading.main_thread() and _timer_free():
            signal.signal(signal.SIGVTALRM, self._tick)          # the handler first, then the timer
            signal.setitimer(signal.ITIMER_VIRTUAL, INTERVAL, INTERVAL)
        else:
            _MONITOR.add(self)

    def _tick(self, signum, frame) -> None:
        held = resident()
        if self.held is None and held is not None and held > self.limit:
            self.held = held
            raise OverBudget

    def stop(self) -> bool:
        """Stop watching, whatever part of :meth:`start` was done; whether it fired. Its own
        exception arriving meanwhile is taken here; another one (Ctrl-C) stops it again, then
        comes out."""
        try:
            return self._stop()
        except OverBudget:
            return self._stop()
        except BaseException:
            self._stop()
            raise

    def _stop(self) -> bool:
        if signal.getsignal(signal.SIGVTALRM) == self._tick:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
        if _MONITOR.remove(self):
            _withdraw()
        return self.held is not None


def _timer_free() -> bool:
    """Whether the CPU-time timer is the Watchers' to use: no other handler, no timer running
    (a handler a stopped Watcher left behind counts as none)."""
    handler = signal.getsignal(signal.SIGVTALRM)
    if isinstance(getattr(handler, "__self__", None), Watcher):
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
        handler = signal.SIG_DFL
    return handler in (signal.SIG_DFL, None) and not signal.getitimer(signal.ITIMER_VIRTUAL)[0]


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
                for thread, watcher in list(self.watched.items()):
                    if held is not None and held > watcher.limit:
                        watcher.held = held
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
