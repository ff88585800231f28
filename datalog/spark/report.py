"""What a refresh reports, where the kill tests stop it, and when a snapshot chain is cut: shared
by the in-process refresh (:mod:`datalog.refresh`) and the Spark-resident one
(:mod:`datalog.spark.resident_workspace`). No pyspark here."""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass, field

CHAIN = 16               # versions in a snapshot's chain before a refresh writes a full one
CHAIN_SHARE = 0.1        # ... or when the chain's changes pass this share of the source's rows


@dataclass
class SourceReport:
    """One source of a refresh: its rows, the rows read from it (``read``: all of them for a
    snapshot source, only the new or changed ones for a source that carries its changes), and
    how many were inserted and retracted."""

    relation: str
    rows: int = 0
    inserted: int = 0
    retracted: int = 0
    read: int | None = None          # None: every row (a snapshot source's diff reads them all)

    @property
    def rows_read(self) -> int:
        return self.rows if self.read is None else self.read

    @property
    def deleted(self) -> int:
        """Deprecated: the old name of ``retracted``."""
        warnings.warn("SourceReport.deleted is deprecated: read SourceReport.retracted", DeprecationWarning,
                      stacklevel=2)
        return self.retracted


@dataclass
class RefreshReport:
    """What one refresh did: per source, per output, and seconds per phase."""

    sources: list[SourceReport] = field(default_factory=list)
    outputs: dict[str, tuple[int, int, str]] = field(default_factory=dict)   # name -> (+, -, how)
    seconds: dict[str, float] = field(default_factory=dict)
    commit: int | None = None                 # the workspace commit made, None if nothing changed
    commit_before: int = 0
    repaired: list[str] = field(default_factory=list)   # sinks rewritten after an earlier failure
    kinds: dict[str, str] = field(default_factory=dict)  # Spark-resident: relation -> how it was maintained

    def phase(self, name: str, started: float) -> float:
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - started
        return now


def checkpoint(phase: str) -> None:
    """Where the kill tests stop a refresh: with ``DATALOG_REFRESH_PAUSE=<phase>`` in the
    environment the refresh says so on stderr and waits there to be killed."""
    if os.environ.get("DATALOG_REFRESH_PAUSE") == phase:
        print(f"refresh paused at {phase}", file=sys.stderr, flush=True)
        time.sleep(3600)


def describe(report: RefreshReport) -> list[str]:
    """The lines ``datalog refresh`` prints."""
    if not report.seconds:
        return ["nothing to refresh: the program names no Spark source or output"]
    lines = [f"source {s.relation}: {s.rows_read:,} rows read" +
             (f" (of {s.rows:,}: only what changed)" if s.read is not None else "") +
             f", +{s.inserted:,} -{s.retracted:,}" for s in report.sources]
    lines += [f"output {name}: +{ins:,} -{dels:,} ({how})" for name, (ins, dels, how) in report.outputs.items()]
    lines += [f"output {name}: rewritten in full (it may not have held commit {report.commit_before}: a write-back "
              f"cut short, or datalog update since)" for name in report.repaired]
    lines.append("no change: nothing to maintain" if report.commit is None else f"committed {report.commit}")
    lines.append("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in report.seconds.items()))
    return lines


__all__ = ["CHAIN", "CHAIN_SHARE", "SourceReport", "RefreshReport", "checkpoint", "describe"]
