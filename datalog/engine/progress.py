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

import re
import time

_STRATUM = re.compile(r"stratum (\d+)/(\d+)")


class ProgressBar:
    """A callable taking the engine's progress lines, drawing them as a rich progress bar while
    it is entered (``with ProgressBar() as bar: engine.run(bar)``). ``lines``: every line it took."""

    def __init__(self, console=None, delay: float = 0.5, transient: bool = True):
        self.console, self.delay, self.transient = console, delay, transient
        self.lines: list[str] = []
        self._progress = self._task = None
        self._started = 0.0
        self._strata = (0, 0)                   # (strata begun, strata in all)

    def __enter__(self) -> "ProgressBar":
        self._started = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            done, total = self._strata
            if exc[0] is None and total:
                self._progress.update(self._task, completed=total)
            self._progress.stop()
            self._progress = None

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        match = _STRATUM.search(line)
        if match:
            self._strata = (int(match.group(1)), int(match.group(2)))
        if self._progress is None and time.monotonic() - self._started >= self.delay:
            self._start()
        if self._progress is not None:
            begun, total = self._strata
            self._progress.update(self._task, description=line.strip(), completed=max(begun - 1, 0),
                                  total=total or None)

    def _start(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TextColumn("strata"), TimeElapsedColumn(),
                                  console=self.console, transient=self.transient)
        self._task = self._progress.add_task("", total=None)
        self._progress.start()
