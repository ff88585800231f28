"""Where a refresh of a Spark-resident workspace gets its changes: per Spark source, the changes
of presence of its relation (``c0, c1, ..., __d`` +1 inserted / -1 retracted), kept in Spark.

* A **snapshot** source is diffed against its snapshot chain (:mod:`datalog.spark.diff`), or,
  when its files are as the last refresh listed them, not read at all.
* A source that **carries its changes** (:mod:`datalog.spark.feeds`: append-only files, changed
  partitions, a Delta change feed) gives its events. A partitioned source's events are changes
  of presence already. An append-only or change-feed source's events may name rows the
  relation holds (an appended row may be there already, a deleted one may never have been):
  they meet the stored relation, unless they fall outside its **bounds** (per column the least
  and greatest value it ever held, :mod:`datalog.spark.versions`), where none can be.

Each source's new snapshot or watermark version is written at ``spark/<r>/v<N+1>``; nothing is
committed here. The rows are checked for NULL and NaN, which no relation can hold.
"""

from __future__ import annotations

from pathlib import Path

from datalog.spark import diff, feeds
from datalog.spark import report as reports
from datalog.spark import tables as spark_io
from datalog.spark.resident import column_names, refuse_unfit, unfit
from datalog.spark.session import Observed, guard
from datalog.spark.versions import SIGN, apart, bounding, bounds_in, present

try:                                            # the optional extra
    from pyspark.sql import functions as F
except ImportError:                             # pragma: no cover - depends on the installation
    pass


def source_dir(path: Path, name: str, version: str) -> Path:
    return path / "spark" / name / version


def feed(engine, session, directive, measures: tuple = ()) -> feeds.Source:
    info = engine.schema[directive.relation]
    return feeds.Source(session, directive, column_names(info), list(info.types), engine.facts_dir,
                        engine.allow_paths, measures)


def from_feed(engine, session, path: Path, directive, chain_text: str, version: str, stored: dict):
    """A source that carries its changes: (its presence changes -- None if none --, its row
    count, its new chain, the rows read, whether the changes name each row once)."""
    name = directive.relation
    columns = [f"c{i}" for i in range(engine.schema[name].arity)]
    kept = stored.get(name)
    bounded = kept is not None and kept.bounds is not None and feeds.kind(directive) != "partitioned"
    inserted = F.col(feeds.PRESENT) == 1
    # counted while the events are read: the rows they insert, their NULLs and NaNs, and (if
    # the relation keeps bounds) the events' bounds
    measures = (F.count(F.when(inserted, 1)).alias("__ins"),
                F.count(F.when(inserted & unfit(engine.schema[name].types), 1)).alias("__bad"),
                *(bounding(columns, F.lit(True)) if bounded else []))
    chain = [source_dir(path, name, v) for v in chain_text.split("+")]
    found = feeds.refresh(feed(engine, session, directive, measures), chain, source_dir(path, name, version))
    if found.events is None:
        return None, found.rows, found.chain, found.read, True
    events, summary = found.events, found.measured
    if summary["__bad"]:
        refuse_unfit(directive)
    if feeds.kind(directive) == "partitioned":
        # the changed partitions' rows against the rows kept of them, and of the others: its
        # events are changes of presence already
        moved, size = events, found.size
    elif kept is None or bounded and apart(kept.bounds, bounds_in(summary, columns) or []):
        # outside every tuple the relation ever held (new keys, as appended logs have): none is
        # there, and the relation is not scanned
        moved, size = events.where(inserted), summary["__ins"]
    else:
        was = present(kept.tuples(), events.select(*columns), columns, found.size)
        events = events.join(was.withColumn("__was", F.lit(1)), columns, "left")
        moved = events.where(inserted & F.col("__was").isNull() | ~inserted & F.col("__was").isNotNull())
        # kept once, counted meanwhile: the maintenance reads it (an appended file may repeat
        # a row: the maintainer keeps one of each, Maintainer._apply)
        observed = Observed(moved, F.count(F.lit(1)).alias("n"))
        moved = guard(lambda: observed.frame.localCheckpoint(eager=True), f"reading {name}")
        size = observed.values(f"reading {name}")["n"]
    if not size:
        return None, found.rows, found.chain, found.read, True
    signed = moved.select(*columns, F.when(F.col(feeds.PRESENT) == 1, 1).otherwise(-1).alias(SIGN))
    # an appended file may repeat a row; a partition's or a feed's events are grouped by row
    return signed, found.rows, found.chain, found.read, feeds.kind(directive) != "append"


def from_snapshot(engine, session, path: Path, directive, chain_text: str, version: str):
    """A snapshot source: (its presence changes -- None if none --, its row count, its new
    chain, the rows read: None for all of them, 0 when its files are as the last refresh read
    them, whether the changes name each row once: not known)."""
    name = directive.relation
    info = engine.schema[name]
    chain = chain_text.split("+")
    before = [source_dir(path, name, v) for v in chain]
    target = source_dir(path, name, version)
    rows, events = diff.snapshot_meta(before[-1], session)
    files = diff.files_of(session, directive, engine.facts_dir, engine.allow_paths)    # before reading
    if diff.same_files(before[-1], files):
        return None, rows, chain_text, 0, False          # not a file changed: not read
    frame = spark_io.source_frame(session, directive, info.types, column_names(info), engine.facts_dir,
                                  engine.allow_paths)
    if len(chain) >= reports.CHAIN or events > reports.CHAIN_SHARE * max(rows, 1):
        _, rows = diff.stage(frame, target)
        changes = diff.difference_frame(session, target, before)
        changed = guard(changes.count, "diffing") if changes is not None else 0
        new_chain = version
    else:
        changes, rows, changed = diff.delta_events(session, frame, before, target)
        new_chain = "+".join(chain + [version]) if changes is not None else chain_text
    diff.record_files(source_dir(path, name, new_chain.split("+")[-1]), files)
    if not changed:
        return None, rows, new_chain, None, False
    columns = [c for c in changes.columns if not c.startswith("__")]
    signed = changes.select(*[F.col(spark_io.quote(c)).alias(f"c{i}") for i, c in enumerate(columns)],
                            F.when(F.col("__present") == 1, 1).otherwise(-1).alias(SIGN))
    if guard(lambda: signed.where((F.col(SIGN) > 0) & unfit(info.types)).limit(1).count(), f"reading {name}"):
        refuse_unfit(directive)
    return signed, rows, new_chain, None, False


__all__ = ["source_dir", "feed", "from_feed", "from_snapshot"]
