"""One engine's commits: one at a time, each whole, its subscribers told in commit order.

Every commit, ``run``, ``extend``, ``insert`` and read of an :class:`~datalog.engine.Engine` holds
its :class:`Guard`'s lock, a re-entrant lock: commits from several threads are serialised (not
refused: a caller has nothing better to do than wait, and the lock costs nothing when one thread
commits), and a subscriber's callback may commit from the thread that delivers to it.

A commit is whole with respect to exceptions and interrupts. Before its durable point (its
maintenance, the workspace's log append) any exception -- ``KeyboardInterrupt``, ``SystemExit``,
``MemoryError`` -- undoes it through the journal; from its durable point on (the log record
fsynced; for an engine without a workspace, maintenance done) it is finished: counted, its
provenance heights repaired, its subscribers told, and an exception that arrived meanwhile is
raised after that (a Ctrl-C -- SIGINT -- is held by a signal handler for that stretch). A
commit whose relations are left neither as before nor as after it (an exception while its
changes are undone, or while it is being finished) marks the guard broken: every later call
raises ``engine_broken`` until the workspace is opened again (an engine is built again).

The rule that makes this checkable: the guard is marked *changing* before a commit's first
change and unmarked only by the line that finishes or undoes it (:meth:`changing`,
:meth:`settled`). Whatever interrupts the lines between leaves the mark, and the guard breaks.

>>> guard = Guard()
>>> with guard.committing():
...     guard.changing()
...     guard.settled()
>>> guard.broken is None
True
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Callable

from datalog.engine.delivery import Deliveries
from datalog.language.errors import EngineBroken


class Guard:
    """The lock, the changing mark, why the guard broke (``broken``), the exceptions held until
    the outermost commit is finished (``held``), a Ctrl-C held meanwhile (``interrupted``) and
    the subscribers' deliveries in commit order (``deliveries``)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.broken: str | None = None
        self.dirty: int | None = None             # the nesting level (of serial) whose work is changing
        self.level = 0                            # serial sections entered on the lock's thread
        self.depth = 0                            # commits in progress on the lock's thread
        self.held: list[BaseException] = []
        self.interrupted = False
        self.deliveries = Deliveries()
        self._previous = None                     # the SIGINT handler before the outermost commit
        self.holding = False                      # a Ctrl-C now is held (the commit is made)

    def check(self) -> None:
        """``engine_broken`` once a commit left the relations neither as before nor as after it."""
        if self.broken is not None:
            raise EngineBroken(f"the engine is broken: {self.broken}; its relations may be half "
                               f"changed, so it refuses further work. Open the workspace again (its "
                               f"log holds every acknowledged commit) or build the engine again and rerun")

    def changing(self) -> None:
        """A commit is about to change the relations: until :meth:`settled`, it is neither before nor after."""
        self.dirty = self.level

    def settled(self) -> None:
        """The commit's changes are finished or undone: the relations are after or before it."""
        self.dirty = None

    def hold(self, exc: BaseException) -> None:
        """Raise ``exc`` once the outermost commit is finished (it arrived after the durable point)."""
        self.held.append(exc)

    @contextmanager
    def serial(self):
        """Hold the lock (refusing a broken engine); the work inside breaks the guard if it leaves
        the changing mark."""
        with self.lock:
            self.check()
            self.level += 1
            try:
                yield self
            except BaseException as exc:
                self._break_if_changing(exc)
                raise
            else:
                self._break_if_changing(None)
            finally:
                self.level -= 1

    @contextmanager
    def committing(self, after: Callable[[], None] | None = None):
        """One commit (or a commit made inside a subscriber's callback, which nests): serialised;
        for the outermost one, SIGINT held from its durable point (:meth:`made`) until its
        subscribers are told (not inside their callbacks), then ``after()`` (a workspace's
        compaction, interruptible) unless a Ctrl-C came, then the held exceptions raised, first
        first."""
        with self.serial():
            outer = self.depth == 0
            self.depth += 1
            if outer:
                self._defer_interrupts()
            try:
                try:
                    yield self
                finally:
                    if outer and self.dirty is None:
                        self.deliveries.drain(self)
            finally:
                self.depth -= 1
                if outer:
                    self._restore_interrupts()
            if outer:
                self._finish(after)

    def _finish(self, after) -> None:
        """The outermost commit is finished and delivered: ``after()`` unless a Ctrl-C came, then
        the held exceptions."""
        held, self.held = self.held, []
        if self.interrupted:
            self.interrupted = False
            held.insert(0, KeyboardInterrupt())
        if not held and after is not None and self.broken is None:
            after()
        if held:
            raise held[0]

    def _break_if_changing(self, exc: BaseException | None) -> None:
        if self.dirty is not None and self.dirty >= self.level:     # this section's work, or deeper
            self.dirty = None
            cause = f"{type(exc).__name__} {exc}".strip() if exc is not None else "it was left unfinished"
            self.broken = f"a commit was stopped where it could be neither finished nor undone ({cause})"

    # ------------------------------------------------------------ SIGINT
    def made(self) -> None:
        """The commit passed its durable point: from here until it is finished, a Ctrl-C is held."""
        self.holding = True

    def _defer_interrupts(self) -> None:
        """The outermost commit's SIGINT handler (main thread only: no other receives signals): as
        before while the commit can still be undone, holding the interrupt once it is made."""
        self._previous, self.holding = None, False
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum, frame):
            if self.holding:
                self.interrupted = True
            elif callable(previous):
                previous(signum, frame)
            elif previous != signal.SIG_IGN:
                signal.default_int_handler(signum, frame)
        try:
            signal.signal(signal.SIGINT, handler)
        except (ValueError, TypeError):           # signals unavailable here (an embedded interpreter)
            return
        self._previous = previous if previous is not None else signal.default_int_handler

    def _restore_interrupts(self) -> None:
        self.holding = False
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def interruptible(self, call: Callable[[], object]) -> object:
        """``call()`` (a subscriber's callback, which may run long) with Ctrl-C raising."""
        saved, self.holding = self.holding, False
        try:
            return call()
        finally:
            self.holding = saved
