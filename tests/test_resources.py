"""Evaluation within a memory budget, running out of memory, and Ctrl-C (datalog/engine/resources.py):
real processes, a real address-space limit, a real SIGINT."""

from __future__ import annotations

import contextlib
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from datalog import Engine
from datalog.language.errors import DatalogError
from interrupts import interrupted_within_a_second, leaving_a_with, resident_bytes
from maintenance.budget import resident

LIMIT = 350                     # MB of address space for the out-of-memory tests
DATALOG = str(Path(sys.executable).with_name("datalog"))
RUNAWAY = ".decl n(x: number)\nn(0).\nn(x + 1) :- n(x).\n.output n\n"
# grows fast: 16M pairs in one join (a GB of tuples)
WIDE = (".decl n(x: number)\nn(x) :- x = range(0, 4000).\n.decl p(x: number, y: number)\n"
        "p(x, y) :- n(x), n(y).\n.output p\n")


def _program(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prog.dl"
    path.write_text(text)
    (tmp_path / "out").mkdir()
    return path


def test_run_stops_at_the_memory_budget_with_a_code_and_writes_nothing(tmp_path):
    prog = _program(tmp_path, RUNAWAY)
    done = subprocess.run([DATALOG, "run", str(prog), "-D", str(tmp_path / "out"), "--memory-budget", "150M"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "error[memory_budget]" in done.stderr and "of n" in done.stderr and "Traceback" not in done.stderr
    assert "n(x + 1) :- n(x)." in done.stderr                # the caret at the rule that grew
    assert list((tmp_path / "out").iterdir()) == []


def test_an_engine_over_its_budget_stays_unevaluated_and_evaluates_again_right():
    text = ".decl n(x: number)\nn(0).\nn(x + 1) :- n(x), x < 400000.\n.decl c(k: number)\nc(k) :- k = count : { n(_) }.\n"
    engine = Engine.from_source(text, memory_budget=(resident() or 0) + (20 << 20))
    with pytest.raises(DatalogError) as caught:
        engine.run()
    assert caught.value.code == "memory_budget" and "of n" in caught.value.message
    assert not engine.evaluated
    assert engine.stored_relation("n").sorted_rows() == [(0,)] and engine.stored_relation("c").sorted_rows() == []
    with pytest.raises(DatalogError) as again:          # an answer runs it again: over the budget again
        engine.rows("n")
    assert again.value.code == "memory_budget" and not engine.evaluated
    engine.memory_budget = 1 << 40
    engine.run()
    assert engine.evaluated and len(engine.rows("n")) == 400001 and engine.rows("c") == [(400001,)]


def test_a_budget_that_is_not_reached_changes_nothing():
    text = "e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z)."
    engine = Engine.from_source(text, memory_budget=1 << 40)
    engine.run()
    assert engine.rows("p") == [(1, 2), (1, 3), (2, 3)]


def _limited(megabytes: int):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


def test_running_out_of_memory_is_a_coded_error_on_the_cli(tmp_path):
    prog = _program(tmp_path, WIDE)
    done = subprocess.run([DATALOG, "run", str(prog), "-D", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited(LIMIT))
    assert done.returncode == 1, done.stderr
    assert "error[out_of_memory]" in done.stderr and "Traceback" not in done.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_running_out_of_memory_is_a_coded_error_in_the_api(tmp_path):
    script = (f"from datalog import Engine\nfrom datalog.language.errors import DatalogError\n"
              f"e = Engine.from_source({WIDE!r})\n"
              f"try:\n    e.run()\nexcept DatalogError as exc:\n"
              f"    print(exc.code, e.evaluated, len(e.stored_relation('p').sorted_rows()), "
              f"len(e.stored_relation('n').sorted_rows()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited(LIMIT))
    assert done.stdout.split() == ["out_of_memory", "False", "0", "0"], done.stderr


def test_running_out_of_memory_while_loading_is_a_coded_error_in_the_api(tmp_path):
    # 3M pairs: about 30 MB of text, far more than the 350 MB of address space as tuples
    with open(tmp_path / "e.facts", "w") as facts:
        facts.writelines(f"{i}\t{i + 1}\n" for i in range(3_000_000))
    script = (f"from datalog import Engine\nfrom datalog.language.errors import DatalogError\n"
              f"e = Engine.from_source('.decl e(a: number, b: number)\\n.input e\\ne(-1, -1).', {str(tmp_path)!r})\n"
              f"try:\n    e.run()\nexcept DatalogError as exc:\n"
              f"    print(exc.code, e.stored_relation('e').sorted_rows())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited(LIMIT))
    assert done.stdout.split() == ["out_of_memory", "[(-1,", "-1)]"], done.stderr    # only the program's fact


def test_ctrl_c_stops_a_large_run_within_a_second(tmp_path):
    prog = _program(tmp_path, WIDE)
    child = subprocess.Popen([DATALOG, "run", str(prog), "-D", str(tmp_path / "out")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    interrupted_within_a_second(child, lambda: resident_bytes(child.pid) >= 400 << 20)     # much to free


def _over_budget_in_a_thread() -> list:
    engine = Engine.from_source(RUNAWAY, memory_budget=(resident() or 0) + (20 << 20))
    caught = []

    def run():
        try:
            engine.run()
        except DatalogError as exc:
            caught.append(exc.code)
    worker = threading.Thread(target=run)
    worker.start()
    worker.join(120)
    assert caught == ["memory_budget"] and not engine.evaluated
    assert engine.stored_relation("n").sorted_rows() == [(0,)]
    return caught


def _ends_within(seconds: float, call) -> bool:
    """Whether ``call()`` ends within ``seconds`` (run in a daemon thread: a hang fails the test)."""
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


def test_the_budget_holds_in_a_thread_other_than_the_main_one_and_leaves_nothing_behind():
    """Stopped by the watcher thread, then a commit traced line by line (as tests, debuggers and
    coverage trace) ends: taking back the watcher's exception with
    PyThreadState_SetAsyncExc(thread, NULL) left the interpreter's pending flag set, and every
    traced call after it looped for ever."""
    _over_budget_in_a_thread()
    engine = Engine.from_source("e(1, 2). p(x, y) :- e(x, y).")
    engine.run()

    def traced_commit():
        def tracer(frame, event, arg):
            return tracer
        sys.settrace(tracer)
        try:
            engine.commit(inserts={"e": [(2, 3)]})
        finally:
            sys.settrace(None)
    assert _ends_within(10, traced_commit), "a traced commit after a stopped run did not end"
    assert engine.rows("p") == [(1, 2), (2, 3)]


def _watcher_lines(filename: str) -> bool:
    return filename.endswith(("datalog/engine/watcher.py", "datalog/engine/resources.py"))


def _nothing_left_behind(where) -> None:
    """No timer armed, no handler installed, no watcher thread left (none is, once nothing is
    watched), and a run in another thread within a budget ends."""
    assert signal.getsignal(signal.SIGVTALRM) in (signal.SIG_DFL, _own_handler), where
    assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0 or \
        signal.getsignal(signal.SIGVTALRM) is _own_handler, where
    deadline = time.monotonic() + 2
    while any(t.name == "datalog-memory-budget" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "datalog-memory-budget" for t in threading.enumerate()), f"{where}: a watcher is left"
    engine = Engine.from_source("e(1, 2). p(x, y) :- e(x, y).", memory_budget=1 << 40)
    assert _ends_within(10, engine.run) and engine.rows("p") == [(1, 2)], f"{where}: a run in a thread waits"


class _Hung(Exception):
    pass


@contextlib.contextmanager
def _within(seconds: float, where):
    """A call that hangs is stopped (SIGALRM) and fails the test."""
    def expired(signum, frame):
        raise _Hung(f"{where}: did not end within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _own_handler(signum, frame):
    """A program's own SIGVTALRM handler: the budget then uses the watcher thread in the main thread too."""


@pytest.mark.parametrize("timer", [True, False])
def test_an_interrupt_at_any_line_of_the_budget_watcher_leaves_nothing_behind(timer):
    """KeyboardInterrupt, SIGINT, SystemExit, MemoryError at each line the evaluating thread runs
    in datalog/engine/watcher.py and resources.py (starting, stopping, firing), on the main thread's CPU-time timer
    and on the watcher thread: the evaluation stops, nothing is left armed, waiting or holding a
    lock, and the budget still holds afterwards."""
    from interrupts import attempt
    previous = signal.signal(signal.SIGVTALRM, signal.SIG_DFL if timer else _own_handler)
    try:
        kinds, at, fired = (KeyboardInterrupt, "SIGINT", SystemExit, MemoryError), 0, True
        while fired:
            at += 1
            engine = Engine.from_source(RUNAWAY, memory_budget=1)        # over it at the first reading
            with _within(10, at):
                fired, caught = attempt(engine.run, at, kinds[at % 4], select=_watcher_lines)
            assert not isinstance(caught, _Hung), caught
            assert fired or isinstance(caught, DatalogError) and caught.code == "memory_budget", (at, caught)
            assert not engine.evaluated and engine.stored_relation("n").sorted_rows() == [(0,)], at
            _nothing_left_behind(at)
        assert at > 8
        _over_budget_in_a_thread()
    finally:
        # disarmed before the default disposition comes back: a test that failed part way (a _Hung
        # raised inside the watcher's stop on a loaded machine) must not leave a CPU-time timer
        # whose next expiry, under SIG_DFL, ends the whole test process (an xdist worker died so)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


class _TwoEvents:
    """A tracer of the watcher's own lines: at the ``tick``-th line event a real SIGVTALRM (the
    budget's handler reads the memory there, if it is installed), at the ``interrupt``-th a KeyboardInterrupt."""

    def __init__(self, tick: int, interrupt: int):
        self.tick, self.interrupt, self.count = tick, interrupt, 0

    def call(self, frame, event, arg):
        own = frame.f_code.co_filename.endswith("datalog/engine/watcher.py") and frame.f_code.co_name != "_watched"
        return self.line if own else None         # (_watched is the evaluation's frame)

    def line(self, frame, event, arg):
        if event == "line" and not leaving_a_with(frame):   # (no exception can arise there)
            self.count += 1
            if self.count == self.tick and signal.getsignal(signal.SIGVTALRM) != signal.SIG_DFL:
                signal.raise_signal(signal.SIGVTALRM)          # (only while armed, as a timer's)
            if self.count == self.interrupt:
                raise KeyboardInterrupt
        return self.line


@pytest.mark.parametrize("over_in_evaluation", [False, True])
def test_the_budget_firing_and_a_ctrl_c_at_any_two_lines_of_the_watcher_leave_nothing_armed(over_in_evaluation):
    """A watched run over its budget (a real timer signal: in the evaluation, or at any line of
    the watcher's own start and stop) and a Ctrl-C at any line of the watcher, in either order:
    nothing is left armed, the Ctrl-C comes out, and the budget's exception comes out only when
    it came inside the evaluation (never raised into start or stop, where it once cut short the
    stop that followed an interrupted one and left the handler installed: a CI run found it)."""
    from datalog.engine.watcher import OverBudget, Watcher

    def evaluate():
        if over_in_evaluation:
            signal.raise_signal(signal.SIGVTALRM)
    previous = signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    try:
        interrupted = 0
        for tick in [0] if over_in_evaluation else range(1, 20):
            for interrupt in range(1, 30):
                watcher, events = Watcher(1), _TwoEvents(tick, interrupt)
                sys.settrace(events.call)
                try:
                    fired, caught = watcher.run(evaluate), None
                except BaseException as exc:      # what the watched run let out
                    fired, caught = None, exc
                finally:
                    sys.settrace(None)
                where = (tick, interrupt, events.count, caught)
                assert signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL, where
                assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0, where
                if interrupt <= events.count:
                    interrupted += 1
                    assert isinstance(caught, KeyboardInterrupt), where
                elif over_in_evaluation:
                    assert isinstance(caught, OverBudget) and watcher.held, where
                else:
                    assert caught is None and fired is False and watcher.held is None, where
        assert interrupted > 15
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def test_a_budget_handler_whose_run_is_over_disarms_itself_and_raises_nothing():
    """A watcher started by a frame that has returned (what two exceptions cutting both of its
    stops short would leave): its next tick disarms the timer and raises nothing."""
    from datalog.engine.watcher import Watcher
    previous = signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    try:
        watcher = Watcher(1)

        def started():
            watcher.start()
        started()
        assert signal.getsignal(signal.SIGVTALRM) == watcher._tick
        signal.raise_signal(signal.SIGVTALRM)
        assert signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL
        assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0 and watcher.held is None
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
