"""Ctrl-C for the REPL: cancel the running statement at a point where that is safe.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be. Inside a
finalizer (``__del__``, run by the garbage collector at any moment, e.g. for the event
loop of an earlier prompt) the exception is printed and dropped, so the statement would
go on. :func:`cancellable` defers the interrupt by a few milliseconds until no finalizer
is running. A commit needs nothing more: its journal defers Ctrl-C to a point it can
undo (``maintenance/journal.py``).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

RETRY = 0.005          # seconds until a deferred interrupt is tried again


@contextmanager
def cancellable():
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` outside finalizers only."""
    def on_interrupt(signum, frame):
        if _in_finalizer(frame):
            signal.setitimer(signal.ITIMER_REAL, RETRY)
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise KeyboardInterrupt

    with _handlers(on_interrupt, on_interrupt):
        yield


@contextmanager
def _handlers(on_int, on_alarm):
    previous = signal.signal(signal.SIGINT, on_int), signal.signal(signal.SIGALRM, on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def _in_finalizer(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False
