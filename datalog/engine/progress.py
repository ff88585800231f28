"""A progress bar (rich) for long loads and evaluations, in a terminal and in a notebook.

The engine reports its progress as lines to a callable (``Engine.run(progress)``, or
``engine.progress``, which ``run``, ``extend`` and loading use when none is given):
``loading r``, ``stratum 2/5: path, reach``, ``  iteration 3: 1200 tuples``, ``  worklist: ...``.
:class:`ProgressBar` is such a callable: the strata make the bar, the latest line its text.
It draws nothing for work that ends within ``delay`` seconds (the bar appears at the first
line after that), and nothing once the work is done (``transient``). In Jupyter, rich draws
through ipywidgets (the ``notebook`` extra installs it).

>>> from io import StringIO
>>> from rich.console import Console
>>> from datalog import Engine
>>> engine = Engine.from_source("e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).")
>>> out = StringIO()
>>> with ProgressBar(Console(file=out, width=60), delay=0, transient=False) as bar:
...     engine.run(bar)
>>> bar.lines, "2/2 strata" in out.getvalue()
(['stratum 2/2: p'], True)
"""

from __future__ import annotations

import os
import re
import threading
import time

_STRATUM = re.compile(r"stratum (\d+)/(\d+)")


class ProgressBar:
    """A callable taking the engine's progress lines, drawing them as a rich progress bar while
    it is entered (``with ProgressBar() as bar: engine.run(bar)``). ``lines``: every line it took.

    The bar appears at the first line ``delay`` seconds after the block began; on a terminal
    console also when ``delay`` has passed after an earlier line (a timer draws it, so a long step
    that began early shows too; not in a notebook, whose output belongs to the cell's thread). A
    line after the last stratum's (a workspace's ``saving the maintainer's state``) counts every
    stratum done. ``delay`` by default: ``DATALOG_PROGRESS_DELAY`` seconds if set, else 0.5."""

    def __init__(self, console=None, delay: float | None = None, transient: bool = True):
        if delay is None:
            delay = float(os.environ.get("DATALOG_PROGRESS_DELAY", "0.5"))
        self.console, self.delay, self.transient = console, delay, transient
        self._timed = console is not None and console.is_terminal
        self.lines: list[str] = []
        self._progress = self._task = self._timer = None
        self._started = 0.0
        self._strata = (0, 0)                   # (strata begun, strata in all)
        self._lock = threading.Lock()           # the timer's thread and the caller's
        self._open = False

    def __enter__(self) -> "ProgressBar":
        self._started = time.monotonic()
        self._open = True
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._open = False
            if self._timer is not None:
                self._timer.cancel()
            if self._progress is not None:
                done, total = self._strata
                if exc[0] is None and total:
                    self._progress.update(self._task, completed=total, strata=f"{total}/{total} strata")
                self._progress.stop()
                self._progress = None

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)
            match = _STRATUM.search(line)
            if match:
                self._strata = (int(match.group(1)), int(match.group(2)))
            elif not line.startswith((" ", "loading")) and self._strata[1]:
                self._strata = (self._strata[1] + 1, self._strata[1])    # a step after the last stratum's
            waited = time.monotonic() - self._started
            if self._progress is None and waited >= self.delay:
                self._start()
            elif self._progress is None and self._timer is None and self._open and self._timed:
                self._timer = threading.Timer(self.delay - waited, self._late)
                self._timer.daemon = True
                self._timer.start()
            self._show()

    def _late(self) -> None:
        with self._lock:
            if self._open and self._progress is None:
                self._start()
                self._show()

    def _show(self) -> None:
        if self._progress is not None and self.lines:
            begun, total = self._strata
            done = min(max(begun - 1, 0), total)
            self._progress.update(self._task, description=self.lines[-1].strip(), completed=done,    # drawn now:
                                  total=total or None, strata=f"{done}/{total} strata" if total else "",
                                  refresh=True)                       # a short step shows too

    def _start(self) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                  TextColumn("{task.fields[strata]}"), TimeElapsedColumn(),
                                  console=self.console, transient=self.transient)
        self._task = self._progress.add_task("", total=None, strata="")
        self._progress.start()
