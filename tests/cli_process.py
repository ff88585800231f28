"""``datalog ...`` as a process of its own, without paying Python's start and the CLI's imports.

:func:`run_datalog` returns what ``subprocess.run([sys.executable, "-m", "datalog", *args],
capture_output=True, text=True)`` returns, and is that process in every way a CLI test looks at:
its own pid, file descriptors 0-2, working directory, environment, signal handlers and exit
status. The difference is how it starts: the test process has imported the CLI already, so the
child is a ``fork`` of it that runs :func:`datalog.cli.entry` at once, where a new interpreter
spends 0.4-0.9 s (more under load) importing the engine before doing anything. The golden-error,
hostile-input and fuzz files run hundreds of commands each; this is most of their time.

What a fork cannot be, the command runs as a real ``python -m datalog`` (:func:`_fresh`):
* ``DATALOG_TEST_SUBPROCESS=1`` in the test's environment (every call, to compare the two);
* an environment that changes what happens at import or start-up (``PYTHON*``, the kernel's
  choice ``DATALOG_KERNEL*``): the child would keep the parent's imports;
* ``prefix`` (a command the CLI runs under, e.g. ``prlimit``).

Commands that start Spark are not for this runner (the child would share the test process's
JVM): the Spark test files run ``python -m datalog`` themselves.

The start-up itself (imports, the console script, a broken install) is tested by real processes
elsewhere: tests/test_cli_exit.py, tests/test_packaging.py.
"""

from __future__ import annotations

import functools
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

_AT_IMPORT = ("PYTHON", "DATALOG_KERNEL")          # environment read at import or start-up
_AT_START = {"PYTHONWARNINGS"}                      # ... that the child sets as it starts
_ROOT = str(Path(__file__).resolve().parents[1])
_MAIN = str(Path(_ROOT) / "datalog" / "__main__.py")


def run_datalog(*args, cwd=None, env: dict | None = None, input: str | bytes | None = None,
            timeout: float = 120, text: bool = True, prefix: tuple = (),
            umask: int | None = None) -> subprocess.CompletedProcess:
    """``python -m datalog *args`` with its output captured (``input``: its stdin, else none;
    ``umask``: the process's)."""
    argv = [str(a) for a in args]
    if prefix or not _forkable(env):
        return _fresh(argv, cwd, env, input, timeout, text, prefix, umask)
    return _forked(argv, cwd, env, input, timeout, text, umask)


def _forkable(env: dict | None) -> bool:
    if not hasattr(os, "fork") or os.environ.get("DATALOG_TEST_SUBPROCESS") == "1":
        return False
    if env is None:
        return True
    if env.get("DATALOG_TEST_SUBPROCESS") == "1":
        return False
    changed = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)}
    return not any(k.startswith(_AT_IMPORT) for k in changed - _AT_START)


def _fresh(argv, cwd, env, input, timeout, text, prefix, umask) -> subprocess.CompletedProcess:
    command = [*map(str, prefix), sys.executable, "-m", "datalog", *argv]
    env = dict(os.environ if env is None else env)
    env.setdefault("PYTHONPATH", _ROOT)               # the code the test process imports
    return subprocess.run(command, cwd=cwd, env=env, input=input, capture_output=True, text=text,
                          timeout=timeout, stdin=None if input is not None else subprocess.DEVNULL,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


_WARM = """.decl e(a: number, b: symbol)
.decl p(a: number)
e(1, "a").
p(x) :- e(x, _), !e(x + 1, _).
"""


@functools.cache
def _warm() -> None:
    """The CLI imported and its lazily built parts (the parser's tables, the planner's) made once
    in the test process, so that no child makes them again."""
    import datalog.cli                                # noqa: F401
    from datalog import Engine
    engine = Engine.from_source(_WARM)
    engine.run()
    engine.query("?- p(x).")


def _forked(argv, cwd, env, input, timeout, text, umask) -> subprocess.CompletedProcess:
    _warm()
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if input is not None:
            stdin.write(input.encode("utf-8") if isinstance(input, str) else input)
            stdin.seek(0)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:                                      # the child: never returns to pytest
            _child(argv, cwd, env, umask, stdin.fileno() if input is not None else None, out.fileno(), err.fileno())
        status = _wait(pid, timeout, argv)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if text:                                          # decoded as subprocess does (universal newlines)
        stdout, stderr = (b.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") for b in (stdout, stderr))
    return subprocess.CompletedProcess([sys.executable, "-m", "datalog", *argv], status, stdout, stderr)


def _wait(pid: int, timeout: float, argv) -> int:
    """The child's exit status as subprocess gives it (``-N`` for a signal); killed at ``timeout``."""
    deadline, pause = time.monotonic() + timeout, 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(["datalog", *argv], timeout)
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _child(argv, cwd, env, umask, stdin_fd, out_fd, err_fd) -> None:
    """The forked process: a fresh interpreter's view of fds, signals and warnings, then the CLI."""
    status = 1
    try:
        os.dup2(stdin_fd if stdin_fd is not None else os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
        if cwd is not None:
            os.chdir(cwd)
        if umask is not None:
            os.umask(umask)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        _as_at_start()
        sys.argv = [_MAIN, *argv]
        from datalog.cli import entry
        entry()
    except SystemExit as done:
        status = _exit_code(done.code)
    except BaseException:                             # as the interpreter reports an uncaught one
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            status = 120 if status == 0 else status    # the interpreter's code for a failed flush
        os._exit(status)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _as_at_start() -> None:
    """Signal handlers and warning filters as ``python -m datalog`` starts with them."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGALRM", "SIGVTALRM", "SIGUSR1", "SIGCHLD"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    warnings.resetwarnings()
    for action, category in (("ignore", ResourceWarning), ("ignore", ImportWarning),
                             ("ignore", PendingDeprecationWarning), ("ignore", DeprecationWarning)):
        warnings.simplefilter(action, category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    if "ignore" in os.environ.get("PYTHONWARNINGS", ""):
        warnings.simplefilter("ignore")
    warnings.showwarning = _show_warning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
