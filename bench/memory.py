"""Peak memory of a benchmark's phase, on Linux: this (driver) process's RSS and Python heap, and
the RSS of the JVM it started (pyspark's gateway; in local mode the executors run in it too).

Peaks belong to the phase: each phase starts by resetting the kernel's high-water marks
(``echo 5 > /proc/<pid>/clear_refs`` resets VmHWM, Linux >= 4.0) and starting tracemalloc, and
ends by reading VmHWM from ``/proc/<pid>/status`` and tracemalloc's peak. The heap peak counts
what the phase allocated (blocks allocated before it are not traced); tracemalloc runs only
inside a phase. Where the reset is refused, the RSS is the process's peak so far, marked ``>=``.
"""
from __future__ import annotations

import os
import re
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

MB = 1 << 20


def _status_kb(pid: int | str, field: str) -> int | None:
    try:
        found = re.search(rf"^{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    except OSError:
        return None
    return int(found.group(1)) if found else None


def _reset(pid: int | str) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def java_children(root: int | None = None) -> list[int]:
    """The ``java`` processes among the descendants of ``root`` (this process)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    todo, found = [root or os.getpid()], []
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid:
                todo.append(child)
                try:
                    if Path(f"/proc/{child}/comm").read_text().strip() == "java":
                        found.append(child)
                except OSError:
                    pass
    return found


class Peaks:
    """The peaks of one phase, in bytes (None: not readable)."""

    def __init__(self):
        self.python_rss = self.python_heap = self.jvm_rss = None
        self.exact = True

    def text(self) -> str:
        def mb(v, digits=0):
            return "?" if v is None else f"{v / MB:,.{digits}f}"
        mark = "" if self.exact else ">="
        return f"{mark}{mb(self.python_rss)} / {mb(self.python_heap, 1)} / {mark}{mb(self.jvm_rss)}"


def start() -> bool:
    """Reset the high-water marks and start tracing; whether the resets were accepted."""
    exact = all([_reset("self"), *[_reset(p) for p in java_children()]])
    if tracemalloc.is_tracing():
        tracemalloc.stop()
    tracemalloc.start()
    return exact


def stop(exact: bool) -> Peaks:
    peaks = Peaks()
    peaks.exact = exact
    if tracemalloc.is_tracing():
        peaks.python_heap = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    hwm = _status_kb("self", "VmHWM")
    peaks.python_rss = hwm * 1024 if hwm is not None else None
    jvm = [v for v in (_status_kb(p, "VmHWM") for p in java_children()) if v is not None]
    peaks.jvm_rss = sum(jvm) * 1024 if jvm else None
    return peaks


@contextmanager
def phase():
    """``with phase() as peaks:`` -- ``peaks`` filled in when the block ends."""
    peaks = Peaks()
    exact = start()
    try:
        yield peaks
    finally:
        got = stop(exact)
        peaks.__dict__.update(got.__dict__)


@contextmanager
def per_report_phase(report_class, into: dict):
    """Also the peaks of each phase a Spark refresh report times (``report.phase(name, t)``
    closes phase ``name``): ``into[name]`` is its :class:`Peaks`, the marks reset for the next."""
    original = report_class.phase
    exact = [True]

    def phase(self, name, started):
        got = stop(exact[0])
        into[name] = got if name not in into else _max(into[name], got)
        exact[0] = start()
        return original(self, name, started)
    report_class.phase = phase
    try:
        yield into
    finally:
        report_class.phase = original


def _max(a: Peaks, b: Peaks) -> Peaks:
    out = Peaks()
    for field in ("python_rss", "python_heap", "jvm_rss"):
        values = [v for v in (getattr(a, field), getattr(b, field)) if v is not None]
        setattr(out, field, max(values) if values else None)
    out.exact = a.exact and b.exact
    return out


def overall(parts: list[Peaks]) -> Peaks:
    """The peaks of consecutive phases taken together."""
    out = parts[0]
    for part in parts[1:]:
        out = _max(out, part)
    return out
