"""Sources that carry their own changes: a refresh reads what changed, not the whole source.

Three kinds, each declared on its ``.input`` (any other Spark source is a snapshot, diffed by
:mod:`datalog.spark.diff`):

- ``IO=spark, append_only=true`` (``path=`` or ``table=``): files are only ever added. A refresh
  lists the source's files (names, sizes, modification times: metadata only) and reads the ones
  it has not read; a file it read that is gone or rewritten is ``append_only_violated``
  (a deletion it cannot see), never ignored.
- ``IO=spark, partitioned=true`` (``path=`` or ``table=``, Hive-style ``k=v`` directories): a
  refresh lists the files, and reads only the partitions (directories) whose files changed; it
  compares their rows with the rows the workspace kept of those partitions. A row that leaves
  one partition but stays in another is no retraction: unless every partition column is a column
  of the relation (then partitions cannot share a row), the changed rows are checked against
  the kept rows of the other partitions (the workspace's copy, not the source).
- ``IO=delta, cdf=true``: a Delta Lake table's change data feed since the version last read
  (:mod:`datalog.spark.delta_table`): ``insert``/``update_postimage`` add a row,
  ``delete``/``update_preimage`` remove one; a row's net count decides. The table is taken as
  a set: deleting one copy of a duplicated row retracts it (read such a table without cdf=true).

What a source was read up to, its **watermark** (the files read with their size and
modification time; the Delta version; per partition the version directory keeping its rows),
is ``watermark.json`` in the last version directory of the source's chain (``spark/r/vN``), with
a SHA-256 of its content (:mod:`datalog.sources.sealed`): the chain moves with the commit that applies the changes (the log
record of an in-process workspace, the manifest of a Spark-resident one), so a refresh that
fails leaves the old watermark and the next one reads the same changes again.

The events a refresh found (row columns and ``__present``: 1 inserted, 0 retracted) are kept by
the executors for that refresh only (``localCheckpoint``); they are what the source says
changed, before they meet the relation (an appended row may be present already): the callers
keep only the changes of presence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datalog.language import ast
from datalog.language.errors import InternalError, SourceNotAppendOnly, SourceReplaced, WorkspaceCorrupt
from datalog.language.types import AUTO
from datalog.sources import sealed
from datalog.spark import places, tables
from datalog.spark.session import Observed, guard

try:                                            # without them session() is spark_unavailable first
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
except ImportError:                             # pragma: no cover - depends on the installation
    pass

WATERMARK = "watermark.json"
PRESENT, PART = "__present", "__part"


kind = places.feed_kind


@dataclass
class Source:
    """How to read one source: the session, its directive, the relation's column names and
    types, and where its local paths are relative to; ``measures``: aggregates of the events
    (over ``c0, c1, ..., __present``) the caller wants, computed while they are read."""

    spark: object
    directive: ast.Directive
    names: list[str]
    types: list[str]
    facts_dir: object = "."
    allow_paths: bool = False
    measures: tuple = ()

    @property
    def relation(self) -> str:
        return self.directive.relation


@dataclass
class Found:
    """What a refresh read of one source."""

    events: "DataFrame | None"     # c0, c1, ..., __present; None: no change
    read: int                      # rows read from the source
    rows: int                      # the source's rows (as far as the watermark counts them)
    chain: str                     # the source's chain after this refresh
    size: int = 0                  # rows of events
    measured: dict | None = None   # the values of Source.measures over the events


# ---------------------------------------------------------------- the watermark

def save(where: Path, mark: dict) -> None:
    Path(where).mkdir(parents=True, exist_ok=True)
    sealed.write(Path(where) / WATERMARK, mark)


def load(where: Path, expected: str) -> dict:
    """The watermark in version directory ``where``; ``workspace_corrupt`` when it is missing,
    not JSON, fails its checksum or is of another kind (the program's declaration changed)."""
    path = Path(where) / WATERMARK
    try:
        mark = sealed.read(path)
    except sealed.Mismatch:
        raise WorkspaceCorrupt(f"{path} fails its checksum (damaged or edited)") from None
    except (OSError, ValueError) as exc:
        raise WorkspaceCorrupt(f"{path}: the watermark of a change-carrying source cannot be read: {exc}") from None
    if not isinstance(mark, dict) or mark.get("kind") != expected:
        raise WorkspaceCorrupt(f"{path} is the watermark of a {mark.get('kind') if isinstance(mark, dict) else '?'} "
                               f"source, not of a {expected} one")
    return mark


# ---------------------------------------------------------------- init

def stage(source: Source, where: Path) -> tuple["DataFrame", int]:
    """The source read in full once (``init``), kept at version directory ``where`` with its
    watermark: (its rows as read back, how many)."""
    how = kind(source.directive)
    if how == "partitioned":
        return _stage_partitioned(source, where)
    if how == "append":
        root, fmt = tables.files_root(source.spark, source.directive, source.facts_dir, source.allow_paths)
        files = tables.listing(source.spark, root)          # listed first: a file added meanwhile is read again
        frame = _read(source, root, fmt, sorted(files))
        mark = {"kind": "append", "files": _plain(files)}
    else:
        from datalog.spark import delta_table
        _, raw, version = tables.delta_source(source.spark, source.directive, source.facts_dir, source.allow_paths)
        frame = tables.typed(source.directive, f"Delta table {source.directive.param('path')}", raw,
                             source.types, source.names)
        mark = {"kind": "cdf", "version": version,
                "table_id": delta_table.table_id(_delta_path(source), source.relation, version)}
    rows, count = _write(source.spark, frame, where / "rows")
    save(where, {**mark, "rows": count})
    return rows, count


def _stage_partitioned(source: Source, where: Path) -> tuple["DataFrame", int]:
    root, fmt = tables.files_root(source.spark, source.directive, source.facts_dir, source.allow_paths)
    files = tables.listing(source.spark, root)
    parts = _by_part(files)
    index = {p: i for i, p in enumerate(sorted(parts))}
    counts = _write_parts(source, root, fmt, {p: sorted(parts[p]) for p in parts}, index, where)
    save(where, {"kind": "partitioned", "files": _plain(files), "next": len(index),
                 "parts": {p: [where.name, index[p], counts.get(index[p], 0)] for p in parts},
                 "rows": sum(counts.values())})
    kept = where / "parts"
    frame = (source.spark.read.parquet(_local_uri(kept)).drop(PART) if kept.exists() else _union([], source))
    return frame, sum(counts.values())


# ---------------------------------------------------------------- refresh

def refresh(source: Source, chain: list[Path], target: Path) -> Found:
    """What changed in the source since the watermark at ``chain[-1]``, the new version written
    at ``target`` (named in the returned chain; nothing is committed here)."""
    how = kind(source.directive)
    names = [p.name for p in chain]
    if how == "append":
        return _append(source, chain[-1], target, names)
    if how == "cdf":
        return _cdf(source, chain[-1], target, names)
    return _partitioned(source, chain, target)


def _append(source: Source, last: Path, target: Path, chain: list[str]) -> Found:
    mark = load(last, "append")
    root, fmt = tables.files_root(source.spark, source.directive, source.facts_dir, source.allow_paths)
    now = tables.listing(source.spark, root)
    for name, meta in sorted(mark["files"].items()):
        if name not in now or list(now[name]) != list(meta):
            what = "is gone" if name not in now else "was rewritten (its size or modification time changed)"
            raise SourceNotAppendOnly(f"{source.relation} is declared append_only=true, but its file {name} {what} "
                                      f"since the last refresh: deletions cannot be seen in an append-only "
                                      f"source; drop append_only=true (a refresh then diffs the whole source) "
                                      f"or init the workspace again", source.directive.span)
    new = sorted(set(now) - set(mark["files"]))
    if not new:
        return Found(None, 0, mark["rows"], "+".join(chain))
    events, read, measured = _kept(_read(source, root, fmt, new).withColumn(PRESENT, F.lit(1)), source)
    save(target, {"kind": "append", "files": _plain(now), "rows": mark["rows"] + read})
    return Found(events, read, mark["rows"] + read, target.name, read, measured)


def _cdf(source: Source, last: Path, target: Path, chain: list[str]) -> Found:
    from datalog.spark import delta_table
    mark = load(last, "cdf")
    path = _delta_path(source)
    latest, table_id = delta_table.latest(path, source.relation)
    _check_same_table(source, path, mark, latest, table_id)
    if latest == mark["version"]:
        return Found(None, 0, mark["rows"], "+".join(chain))
    feed = delta_table.changes(path, source.relation, mark["version"], latest)
    kinds = feed.column("_change_type").to_pylist()
    signs = pa.array([1 if k in delta_table.INSERTS else -1 if k in delta_table.RETRACTS else 0 for k in kinds],
                     pa.int64())
    data = feed.select([c for c in feed.column_names if not c.startswith("_")]).append_column("__d", signs)
    raw = source.spark.createDataFrame(data)
    signed = tables.typed(source.directive, f"Delta table {source.directive.param('path')}", raw,
                          source.types, source.names, keep=("__d",))
    columns = [tables.quote(n) for n in source.names]
    net = signed.groupBy(*columns).agg(F.sum("__d").alias("__s")).where("__s != 0")
    events = net.select(*columns, F.when(F.col("__s") > 0, 1).otherwise(0).alias(PRESENT))
    events, size, measured = _kept(events, source)
    rows_now = mark["rows"] + sum(signs.to_pylist())
    save(target, {"kind": "cdf", "version": latest, "rows": rows_now, "table_id": table_id})
    return Found(events, feed.num_rows, rows_now, target.name, size, measured)


def _delta_path(source: Source) -> str:
    name, local = tables.located(source.spark, source.directive, source.facts_dir, source.allow_paths)
    return str(local) if local is not None else name


def _check_same_table(source: Source, path: str, mark: dict, latest: int, table_id: str) -> None:
    """``source_replaced`` when the Delta table is not the one the watermark read: another table id
    (dropped and made again, at any version), or a version before the one read. Its change data
    feed would not continue the changes read, and the relation would keep rows the table lost.
    (A watermark written before table ids were kept has none: the id is recorded next time.)"""
    known = mark.get("table_id")
    if known is not None and known != table_id:
        why = f"its table id is {table_id}, not {known} as when it was last read (at version {mark['version']})"
    elif latest < mark["version"]:
        why = f"it is at version {latest}, before version {mark['version']} which the last refresh read"
    else:
        return
    raise SourceReplaced(f"the Delta Lake table {path} ({source.relation}) was replaced since the last refresh: {why}; "
                         f"its change data feed does not continue the changes read. Make the workspace again from "
                         f"the table as it is (datalog init), or read the table without cdf=true (every refresh "
                         f"then diffs the whole table)", source.directive.span)


def _partitioned(source: Source, chain: list[Path], target: Path) -> Found:
    mark = load(chain[-1], "partitioned")
    by_name = {p.name: p for p in chain}
    root, fmt = tables.files_root(source.spark, source.directive, source.facts_dir, source.allow_paths)
    now = tables.listing(source.spark, root)
    old_parts, new_parts = _by_part(mark["files"]), _by_part(now)
    changed = sorted(p for p in set(old_parts) | set(new_parts)
                     if {f: list(m) for f, m in old_parts.get(p, {}).items()} !=
                     {f: list(m) for f, m in new_parts.get(p, {}).items()})
    if not changed:
        return Found(None, 0, mark["rows"], "+".join(p.name for p in chain))
    parts, following = dict(mark["parts"]), mark["next"]
    index = {}
    for p in changed:
        if p in new_parts:
            index[p] = parts[p][1] if p in parts else following
            following += p not in parts
    counts = _write_parts(source, root, fmt, {p: sorted(new_parts[p]) for p in index}, index, target)
    old = _union([_part_rows(source, by_name[parts[p][0]], parts[p][1]) for p in changed if p in parts], source)
    new = _union([_part_rows(source, target, index[p]) for p in index], source)
    # one aggregation (a shuffle), not two distincts and two subtractions: a row only among the
    # changed partitions' new rows is inserted, one only among the rows kept of them retracted
    tagged = old.withColumn("__new", F.lit(1)).unionByName(new.withColumn("__new", F.lit(2)))
    sides = tagged.groupBy(*[F.col(tables.quote(n)) for n in source.names]).agg(F.bit_or("__new").alias("__in"))
    events = sides.where(F.col("__in") != 3).select(*[F.col(tables.quote(n)) for n in source.names],
                                                   (F.col("__in") == 2).cast("int").alias(PRESENT))
    if not _disjoint(source.directive, set(old_parts) | set(new_parts)):
        others = _union([_part_rows(source, by_name[v], i) for p, (v, i, _) in parts.items() if p not in changed],
                        source)
        events = events.join(others, source.names, "left_anti")
    events, size, measured = _kept(events, source)
    for p in changed:
        if p in index:
            parts[p] = [target.name, index[p], counts.get(index[p], 0)]
        else:
            parts.pop(p, None)
    rows = sum(c for _, _, c in parts.values())
    save(target, {"kind": "partitioned", "files": _plain(now), "next": following, "parts": parts, "rows": rows})
    kept = {v for v, _, _ in parts.values()} - {target.name}
    order = sorted(kept, key=lambda v: int(v[1:])) + [target.name]
    return Found(events, sum(counts.values()), rows, "+".join(order), size, measured)


# ---------------------------------------------------------------- files and partitions

def _plain(files: dict) -> dict:
    return {name: list(meta) for name, meta in files.items()}


def _by_part(files: dict) -> dict[str, dict]:
    """The files (paths relative to the dataset's root) grouped by their partition: their
    directory (``k=v/...``; ``""`` for files in the root itself)."""
    parts: dict[str, dict] = {}
    for name, meta in files.items():
        parts.setdefault(name.rsplit("/", 1)[0] if "/" in name else "", {})[name] = meta
    return parts


def _disjoint(directive: ast.Directive, parts: set[str]) -> bool:
    """Whether two partitions can never hold one row: one layout of Hive-style ``k=v``
    directories whose every key is a column the relation reads (all the source's columns unless
    ``columns=`` picks some)."""
    pieces = [p.split("/") if p else [] for p in parts]
    keys = {tuple(piece.split("=", 1)[0] for piece in p) for p in pieces}
    if len(keys) != 1 or any("=" not in piece for p in pieces for piece in p):
        return False
    (key,) = keys
    if not key:
        return len(parts) <= 1
    wanted = directive.param("columns")
    return wanted is None or set(key) <= {c.strip() for c in wanted.split(",")}


def _read(source: Source, root: str, fmt: str, files: list[str]) -> "DataFrame":
    """The relation's typed rows of exactly ``files`` (none: an empty frame)."""
    if not files:
        return tables.frame_of(source.spark, [], source.names, _concrete(source.types))
    raw = tables.read_files(source.spark, source.directive, root, files, fmt)
    return tables.typed(source.directive, f"{fmt} {root}", raw, source.types, source.names)


def _concrete(types: list[str]) -> list[str]:
    return [t if t in ("number", "float", "unsigned", "symbol") else "symbol" for t in types]


def _write_parts(source: Source, root: str, fmt: str, files: dict[str, list[str]], index: dict[str, int],
                 where: Path) -> dict[int, int]:
    """The rows of each partition's ``files``, written at ``where/parts/__part=<index>``: the
    number of rows of each index written."""
    frames = [_read(source, root, fmt, files[p]).withColumn(PART, F.lit(index[p])) for p in sorted(files)]
    if not frames:
        return {}
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    path = tables.uri(where / "parts")
    numbers = sorted(set(index.values()))
    # each partition's rows counted while they are written (no job of their own)
    observed = Observed(union, *[F.count(F.when(F.col(PART) == n, 1)).alias(f"__rows{n}") for n in numbers],
                        F.count(F.lit(1)).alias("__rows"))
    guard(lambda: observed.frame.write.mode("overwrite").partitionBy(PART).parquet(path), f"writing {where}")
    counts = observed.values(f"counting {where}")
    found = {n: counts[f"__rows{n}"] for n in numbers if counts[f"__rows{n}"]}
    if sum(found.values()) != counts["__rows"]:
        raise InternalError(f"partition rows of {source.relation} were written under an unknown partition")
    return found


def _part_rows(source: Source, version: Path, number: int):
    """The rows the workspace kept of one partition (None: it had none), read with the types
    :func:`tables.typed` wrote them with when the declaration fixes them (no schema inference,
    a Spark job of its own)."""
    where = version / "parts" / f"{PART}={number}"
    if not where.exists():
        return None
    reader = source.spark.read
    if AUTO not in source.types:
        reader = reader.schema(tables.schema_of(source.names, source.types))
    return reader.parquet(_local_uri(where))


def _local_uri(where: Path) -> str:
    """A local directory as Spark reads it: a file: URI would quote "=" as %3D, which Hadoop
    then takes literally."""
    return "file://" + str(where.resolve())


def _union(frames: list, source: Source) -> "DataFrame":
    frames = [f for f in frames if f is not None]
    if not frames:
        return tables.frame_of(source.spark, [], source.names, _concrete(source.types))
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _kept(frame: "DataFrame", source: Source) -> tuple["DataFrame", int, dict]:
    """A refresh's events as ``c0, c1, ..., __present``, computed once and kept by the executors
    for this refresh (a Parquet write and read back cost 0.3 s more for 10,000 rows), how many,
    and the values of ``source.measures``: all counted while they are computed (one job)."""
    frame = frame.toDF(*[f"c{i}" for i in range(len(frame.columns) - 1)], PRESENT)
    observed = Observed(frame, F.count(F.lit(1)).alias("__events"), *source.measures)
    kept = guard(lambda: observed.frame.localCheckpoint(eager=True), f"reading {source.relation}")
    measured = observed.values(f"counting {source.relation}")
    return kept, measured.pop("__events"), measured


def _write(spark, frame: "DataFrame", where: Path) -> tuple["DataFrame", int]:
    path = tables.uri(where)
    guard(lambda: frame.write.mode("overwrite").parquet(path), f"writing {where}")
    written = spark.read.parquet(path)
    return written, guard(written.count, "counting")


__all__ = ["kind", "Source", "Found", "stage", "refresh", "save", "load", "WATERMARK", "PRESENT"]
