"""Exceptions and Ctrl-Cs injected at a line of the engine's own code, without replacing any component.

:class:`Inject` is a ``sys.settrace`` tracer counting the line events of the frames whose file
``select`` takes; at the ``at``-th it raises ``exc`` there (as a ``MemoryError`` or a signal
handler's ``KeyboardInterrupt`` would), or, for ``exc="SIGINT"``, sends the process a real SIGINT
there (the handler that is installed at that moment decides what happens). The lines of
:mod:`datalog.engine.serial` and :mod:`datalog.engine.delivery` -- the mechanism that makes commits
whole -- are not counted: the guarantees are made by them.

:func:`outcome` compares an engine (and its workspace, reopened and verified) with the states
before and after a commit: the commit was either not made or made, or the engine says
``engine_broken`` and the workspace reopens to one of the two.
"""

from __future__ import annotations

import dis
import functools
import signal
import sys
from pathlib import Path

import datalog

ROOT = str(Path(datalog.__file__).resolve().parent.parent)
MECHANISM = ("datalog/engine/serial.py", "datalog/engine/delivery.py")
MECHANISM_CALLS = {("datalog/engine/tables.py", "deliver")}       # a subscription taking its change


def project(filename: str) -> bool:
    """Any of the project's own files (not the standard library, not site-packages)."""
    return filename.startswith(ROOT) and "/.venv/" not in filename and "/tests/" not in filename


def commit_path(filename: str) -> bool:
    """The files of a commit's own steps: the engine, the workspace and its log (not maintenance
    and joins, where a Ctrl-C is held by the journal until its next undo record and only a
    ``MemoryError`` can strike between a change and its record)."""
    return project(filename) and any(part in filename for part in (
        "datalog/engine/", "datalog/workspace/", "datalog/sources/atomic", "maintenance/delta"))


class Inject:
    """``with Inject(at, exc, select): ...``: ``exc`` at the ``at``-th counted line event;
    ``fired`` says whether it came (``count``: the events counted)."""

    def __init__(self, at: int, exc="SIGINT", select=commit_path):
        self.at, self.exc, self.select = at, exc, select
        self.count, self.fired = 0, False

    def __enter__(self) -> "Inject":
        sys.settrace(self._call)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(None)

    def _call(self, frame, event, arg):
        name = frame.f_code.co_filename
        if self.fired or not self.select(name) or name.endswith(MECHANISM):
            return None
        if any(name.endswith(f) and frame.f_code.co_name == c for f, c in MECHANISM_CALLS):
            return None
        return self._line

    def _line(self, frame, event, arg):
        if event != "line" or self.fired or leaving_a_with(frame):
            return self._line
        self.count += 1
        if self.count == self.at:
            self.fired = True
            sys.settrace(None)
            if self.exc == "SIGINT":
                signal.raise_signal(signal.SIGINT)
            else:
                raise self.exc() if isinstance(self.exc, type) else self.exc
        return self._line


def leaving_a_with(frame) -> bool:
    """Whether the line event is a ``with`` statement's own exit (``__exit__(None, None, None)``,
    reported as a line event of the ``with`` line, outside the block's exception handler). No
    exception arises there outside a tracer: the instructions up to the call of ``__exit__``
    neither allocate nor check for signals or asynchronous exceptions. One raised there by a
    tracer skips ``__exit__`` (a lock entered by ``with`` would stay held), a state no Ctrl-C
    or ``MemoryError`` can make, so no event is counted there."""
    return frame.f_lasti in _with_exits(frame.f_code)


@functools.lru_cache(maxsize=None)
def _with_exits(code) -> frozenset[int]:
    """The offsets of the line events at which a ``with`` block is left normally."""
    found, start = set(), None
    ops = list(dis.get_instructions(code))
    for i, op in enumerate(ops):
        if op.starts_line is not None:
            start = op.offset
        call = ops[i:i + 4]
        if len(call) == 4 and all(c.opname == "LOAD_CONST" and c.argval is None for c in call[:3]) and \
                call[3].opname in ("PRECALL", "CALL") and call[3].arg == 2 and \
                all(c.starts_line is None for c in call[1:]):
            found.add(start)
    return frozenset(found)


def attempt(call, at: int, exc, select=commit_path):
    """``call()`` with ``exc`` injected at event ``at``: (fired, the exception that came out or None)."""
    injector = Inject(at, exc, select)
    try:
        with injector:
            call()
    except BaseException as caught:           # what the injection (or the commit) raised
        return injector.fired, caught
    return injector.fired, None


class Where(Inject):
    """Where event ``at`` is (file:line, function), without raising."""

    def _line(self, frame, event, arg):
        if event == "line" and not self.fired:
            self.count += 1
            if self.count == self.at:
                self.fired = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        return self._line


def resident_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` (a child past its imports holds well over 100 MB
    only once it evaluates: a readiness sign that does not depend on the machine's load)."""
    import resource
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _signal_state(pid: int) -> str:
    """The kernel's record of process ``pid``'s blocked, ignored and caught signals (for a
    failure's message: a Ctrl-C that did nothing)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return " ".join(line.strip() for line in f if line.startswith(("SigBlk", "SigIgn", "SigCgt")))
    except OSError as exc:
        return f"unknown ({exc})"


def interrupted_within_a_second(child, ready) -> None:
    """SIGINT to the running ``datalog`` ``child`` (a Popen with text pipes) once ``ready()`` (or
    after 60 s); it must exit with ``error[interrupted]`` and status 130, no traceback, in under
    a second."""
    import time
    try:
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, "the run ended before it could be interrupted"
        signals = _signal_state(child.pid)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        child.kill()
    assert child.returncode == 130 and "error[interrupted]" in err and "Traceback" not in err, \
        f"exit {child.returncode} {time.monotonic() - deadline + 60:.1f} s after its start, stderr {err!r}; " \
        f"the child's signals when sent: {signals}; this process's SIGINT handler: {signal.getsignal(signal.SIGINT)}"
    assert took < 1.0, f"{took:.2f} s from SIGINT to exit"
