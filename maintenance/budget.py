"""The memory budget of the maintained state (``--memory-budget``; ``Engine(memory_budget=...)``).

Recording a rule's trace and sensitivity indices can take many times the memory of its relations
(triangles: about 5x the EDB). Rather than let the machine swap, or the kernel kill the process,
the maintainer checks the process's resident memory every :attr:`MemoryBudget.every` iterator
operations of a rule it records, and stops with ``memory_budget`` naming the rule whose state did
not fit. The transaction (or the first commit that builds the maintainer) then changes nothing:
the journal undoes it, or the half-built maintainer is dropped.

The default budget is what the machine can give: the process's resident memory when the budget
is made plus 90% of the memory Linux reports available (``MemAvailable``); elsewhere, no limit.

>>> parse_size("512M"), parse_size("2g"), parse_size("1000")
(536870912, 2147483648, 1000)
"""

from __future__ import annotations

import os
import re

from datalog.language.errors import MemoryBudgetExceeded

UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """``8G``, ``500M``, ``64k`` or a number of bytes; ValueError otherwise."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", str(text), re.IGNORECASE)
    if not found:
        raise ValueError(f"{text!r} is not a size (e.g. 8G, 500M, 4096)")
    return int(float(found.group(1)) * UNITS[found.group(2).lower()])


def resident() -> int | None:
    """This process's resident memory in bytes (None where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def available() -> int | None:
    """The memory the machine can still give (Linux ``MemAvailable``), None if unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def size_text(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


class MemoryBudget:
    """At most ``limit`` bytes resident (None: no limit); checked every ``every + 1`` operations."""

    every = 0xFFFF                       # a mask: a check when ``operations & every == 0``

    def __init__(self, limit: int | None):
        self.limit = limit

    @classmethod
    def default(cls) -> "MemoryBudget":
        now, free = resident(), available()
        return cls(None if now is None or free is None else now + free * 9 // 10)

    def check(self, rule) -> None:
        """``memory_budget`` if the process holds more than the limit while ``rule`` records."""
        if self.limit is None:
            return
        held = resident()
        if held is None or held <= self.limit:
            return
        clause = rule.clause
        raise MemoryBudgetExceeded(
            f"the maintenance state of rule `{clause}` does not fit in the memory budget of "
            f"{size_text(self.limit)}: the process holds {size_text(held)} after this rule recorded "
            f"{rule.intervals:,} sensitivity intervals; give a larger --memory-budget, or maintain the "
            f"program with --maintenance recompute", getattr(clause, "span", None))
