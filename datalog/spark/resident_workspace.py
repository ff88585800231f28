"""A Spark-resident workspace: ``datalog init ws/ prog.dl --engine spark`` and ``datalog refresh ws/``.

The workspace keeps every relation as a Parquet table that Spark reads and writes; the driver
holds the manifest (:mod:`datalog.spark.manifest`), plans and counts, never a relation's rows::

    ws/resident.json                  the manifest: program, commit, which version is current
    ws/relations/<r>/<vN>/rows        r's tuples, c0, c1, ..., with __n, their support count
    ws/relations/<r>/<vN>/delta       what commit N changed in r: the tuples whose count changed,
                                      __n their new count, __d +1/-1 where presence changed, else 0
    ws/static/<r>                     r's program facts and .input file rows, read once at init
    ws/spark/<r>/<vN>                 the snapshot chain of Spark source r (datalog.spark.diff)
    ws/lock                           the writer lock (datalog.workspace.lock)

**init** evaluates the program resident in Spark (:mod:`datalog.spark.resident`), each source
read once from its staged snapshot (``spark/<r>/v0``), counts the derivations of every relation
of a non-recursive stratum (:func:`datalog.spark.deltas.count_rules`), writes the Spark sinks,
and renames the directory it built into place: a killed init leaves no workspace.

**refresh**: (1) *repair*: sinks that may not hold the last commit are rewritten from the
stored relations; (2) *changes*: per Spark source its changes of presence, in Spark
(:mod:`datalog.spark.changes`: a snapshot source diffed against its snapshot chain, or not read
when its files are as the last refresh listed them; a source that carries its changes read for
them); (3) *maintain*: delta rules with counts stratum by stratum, DRed for
recursive ones
(:class:`datalog.spark.deltas.Maintainer`), each changed relation's delta written into
``relations/<r>/v<N+1>``, its new version being the old one with that delta laid over it (or,
past a few layers, written whole there: :func:`datalog.spark.versions.compacts`); (4) *commit*:
the manifest replaced atomically; (5)
*write back*: a sink whose relation changed gets the inserted rows appended (``mode=merge``
without retractions) or is rewritten from the new version (Parquet cannot delete in place),
then the manifest records that the sinks hold commit N+1; (6) versions no manifest names are
removed. Killed before (4) the workspace is as before and the next refresh removes what was
written; after it the workspace is the new one and the next refresh repairs the sinks.

Restrictions (init refuses them with ``unsupported``): a stratum the resident evaluator does not
translate (:func:`datalog.spark.resident.choices`), and a Spark source on a relation that rules
derive or that also has program facts or an input file.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Callable

from datalog.language.errors import Unsupported, WorkspaceExists, WorkspaceLocked, WorkspaceMissing
from datalog.spark import changes, diff, feeds, manifest
from datalog.spark.report import RefreshReport, SourceReport, checkpoint, describe as lines_of
from datalog.spark import tables as spark_io
from datalog.spark.deltas import Maintainer, count_rules
from datalog.spark.versions import COUNT, SIGN, Stored, bounds_of, layered, schema, typed
from datalog.spark.resident import Resident, choices, column_names
from datalog.spark.session import Observed, guard
from datalog.spark.unchanged import unchanged_local

try:                                            # the optional extra
    from pyspark.sql import functions as F
except ImportError:                             # pragma: no cover - depends on the installation
    pass


def _rows_dir(path: Path, name: str, version: str) -> Path:
    return path / "relations" / name / version


# the engine of a program text: Engine.from_source with the command's -F, --master/--conf and
# --allow-paths (given by the caller: the engine's layer imports this package's tables)
EngineOf = Callable[[str, str], object]


def check(engine, source: str = "the program") -> None:
    """Refuse (``unsupported``) what a Spark-resident workspace does not maintain."""
    blocked = [c for c in choices(engine) if c.reason is not None]
    if blocked:
        c = blocked[0]
        raise Unsupported(f"{source} cannot be a Spark-resident workspace: stratum {c.number} "
                          f"({', '.join(c.relations)}) is not evaluated in Spark: {c.reason}; "
                          f"`datalog init` without --engine spark keeps the workspace in this process")
    static_inputs = {d.relation for d in engine.checked.directives("input") if d.io not in ("spark", "delta")}
    for directive in engine.spark_directives("input"):
        name = directive.relation
        if name in engine.idb or len(engine.db[name]) or name in static_inputs:
            raise Unsupported(f"{source} cannot be a Spark-resident workspace: the Spark source of {name} is "
                              f"not its only content (rules, facts or an input file also give it rows)",
                              directive.span)


# ---------------------------------------------------------------- init

def create(path, text: str, engine_of: EngineOf, source: str = "<input>", out_dir=".", progress=None) -> dict:
    """Evaluate ``text`` in Spark and save it as a Spark-resident workspace at ``path`` (a new
    or empty directory); its manifest's body."""
    path = Path(path)
    if manifest.is_resident(path) or (path.exists() and (not path.is_dir() or any(path.iterdir()))):
        raise WorkspaceExists(f"{path} exists and is not empty; init makes a new workspace")
    engine = engine_of(text, source)
    check(engine, source)
    if engine.spark_directives("output"):
        engine.check_spark_sinks(out_dir)
    session = engine.spark_session()
    _configure(session)
    building = path.parent / f".{path.name}.datalog-init-{uuid.uuid4().hex[:8]}"
    try:
        body = _build(engine, session, building, text, source, progress)
        stored = _stored(session, building, body, engine)
        for directive in engine.spark_directives("output"):
            _rewrite_sink(engine, session, directive, stored[directive.relation], out_dir)
        manifest.write(building, body)
        if path.exists():
            path.rmdir()
        os.rename(building, path)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return body


def _configure(session) -> None:
    """As resident evaluation sets them (:meth:`Resident.run`): ANSI (a long overflow is an
    error) and no constraint propagation (it fails on unions of self-joined checkpoints)."""
    session.conf.set("spark.sql.ansi.enabled", "true")
    session.conf.set("spark.sql.constraintPropagation.enabled", "false")


def _build(engine, session, where: Path, text: str, source: str, progress) -> dict:
    # Spark's binary joins: one row per assignment of the body, as the delta rules count them
    # (the worst-case optimal join of datalog.spark.wcoj joins sets)
    evaluator = Resident(engine, session, progress=progress, join="binary")
    sources = {d.relation for d in engine.spark_directives("input")}

    def staged(directive):                      # the rows the snapshot v0 holds, read back
        target = changes.source_dir(where, directive.relation, "v0")
        if feeds.kind(directive):
            return feeds.stage(changes.feed(engine, session, directive), target)[0]
        files = diff.files_of(session, directive, engine.facts_dir, engine.allow_paths)   # before reading
        rows = diff.stage(Resident.source(evaluator, directive), target)[0]
        diff.record_files(target, files)
        return rows
    evaluator.source = staged
    evaluator.load()
    # a source whose events meet the stored relation (changes.from_feed) keeps its bounds
    bounded = {d.relation for d in engine.spark_directives("input")
               if feeds.kind(d) in ("append", "cdf") and engine.schema[d.relation].arity}
    body = {"format": manifest.FORMAT, "program": text, "source": source, "seq": 0, "outputs": 0,
            "relations": {}, "static": {}, "sources": {n: "v0" for n in sources}, "typed": True}
    static: dict[str, Stored] = {}
    for name in list(evaluator.frames):
        if name not in sources:
            static[name] = _write_rows(session, where / "static" / name,
                                       evaluator.frames[name].withColumn(COUNT, F.lit(1).cast("long")),
                                       engine.schema[name].types)
            body["static"][name] = static[name].size
    done: set[str] = set()
    for number, stratum in enumerate(engine.checked.strata, 1):
        rules = [c for c in stratum.clauses if c.body]
        if not rules:
            continue
        if stratum.recursive:
            evaluator._recursive(number, stratum, rules)
            continue
        for name in stratum.relations:
            counted = count_rules(evaluator, name, static[name].rows if name in static else None,
                                  [c for c in rules if c.head.relation == name])
            kept = _write_rows(session, _rows_dir(where, name, "v0") / "rows", counted, engine.schema[name].types)
            evaluator.frames[name], evaluator.sizes[name] = kept.tuples(), kept.size
            body["relations"][name] = {"version": "v0", "rows": kept.size, "typed": True}
            done.add(name)
    for name, info in engine.schema.items():
        if name in done or not info.arity:
            continue
        frame = evaluator.frames.get(name, evaluator.empty(name))
        kept = _write_rows(session, _rows_dir(where, name, "v0") / "rows",
                           frame.withColumn(COUNT, F.lit(1).cast("long")), info.types)
        body["relations"][name] = {"version": "v0", "rows": kept.size, "typed": True}
        if name in bounded:
            body["relations"][name]["bounds"] = bounds_of(kept.rows, [f"c{i}" for i in range(info.arity)])
    return body


def _write_rows(session, where: Path, frame, types: list[str]) -> Stored:
    """``frame`` (c0.., __n) written at ``where`` with the types of :func:`schema`, read back."""
    observed = Observed(typed(frame, types, COUNT), F.count(F.lit(1)).alias("n"))
    guard(lambda: observed.frame.write.mode("overwrite").parquet(spark_io.uri(where)), f"writing {where}")
    rows = session.read.schema(schema(types, COUNT)).parquet(spark_io.uri(where))
    return Stored(rows, observed.values("counting")["n"], typed=True)


# ---------------------------------------------------------------- refresh

def refresh(path, engine_of: EngineOf, out_dir=".", progress=None) -> RefreshReport:
    """Bring the Spark-resident workspace at ``path`` up to date with its Spark sources, in
    Spark (see the module); what was done. Local source paths are relative to the engine's
    ``facts_dir``, sink paths to ``out_dir``."""
    path = Path(path)
    if not manifest.is_resident(path):
        raise WorkspaceMissing(f"{path} is not a Spark-resident workspace (no {manifest.NAME})")
    with _locked(path):
        return _refresh(path, engine_of, out_dir, progress)


class _locked:
    """One writer: an exclusive ``flock`` on ``ws/lock`` (released by the kernel if killed)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        self.fd = os.open(self.path / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise WorkspaceLocked(f"workspace {self.path} is being refreshed by another process; one writer "
                                  f"at a time") from None
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def _refresh(path: Path, engine_of: EngineOf, out_dir, progress) -> RefreshReport:
    body = manifest.read(path)
    engine = engine_of(body["program"], body["source"])
    report = RefreshReport(commit_before=body["seq"])
    started = time.perf_counter()
    quiet = _unchanged(path, body, engine, out_dir)
    if quiet is not None:                     # local files, none changed, sinks in sync: no Spark
        _collect_garbage(path, body)
        report.sources = quiet
        report.phase("unchanged files", started)
        return report
    session = engine.spark_session()
    _configure(session)
    started = time.perf_counter()
    _collect_garbage(path, body)
    if engine.spark_directives("output"):
        engine.check_spark_sinks(out_dir)
    stored = _stored(session, path, body, engine)
    if engine.spark_directives("output") and body["outputs"] != body["seq"]:
        report.repaired = [d.relation for d in engine.spark_directives("output")]
        for directive in engine.spark_directives("output"):
            _rewrite_sink(engine, session, directive, stored[directive.relation], out_dir)
        body = {**body, "outputs": body["seq"]}
        manifest.write(path, body)
    started = report.phase("repair", started)
    seq = body["seq"] + 1
    version = f"v{seq}"
    maintainer = Maintainer(engine, session, stored, _static(session, path, body, engine),
                            lambda name: _rows_dir(path, name, version), progress=progress)
    deltas, chains, rows, read, distinct = {}, dict(body["sources"]), {}, {}, set()
    for directive in engine.spark_directives("input"):
        name = directive.relation
        if feeds.kind(directive):
            found = changes.from_feed(engine, session, path, directive, chains[name], version, stored)
        else:
            found = changes.from_snapshot(engine, session, path, directive, chains[name], version)
        delta, rows[name], chains[name], read[name], once = found
        if delta is not None:
            deltas[name] = delta
            if once:
                distinct.add(name)
        started = report.phase("read changes" if feeds.kind(directive) else "diff", started)
        checkpoint("diff")                    # the new versions written, nothing committed
    if deltas:
        maintainer.maintain(deltas, distinct)
    report.sources = [SourceReport(n, rows[n], *_counts(maintainer, n), read=read.get(n)) for n in rows]
    started = report.phase("maintain", started)
    if not deltas:                              # no change: no commit (a staged full version is dropped)
        _collect_garbage(path, body)
        return report
    relations = dict(body["relations"])
    for name in maintainer.written:
        kept = maintainer.new[name]
        relations[name] = {"version": kept.base, "layers": [list(layer) for layer in kept.layers], "rows": kept.size}
        if kept.typed:
            relations[name]["typed"] = True
        if kept.bounds is not None:
            relations[name]["bounds"] = kept.bounds
    body = {**body, "format": manifest.FORMAT, "seq": seq, "relations": relations, "sources": chains}
    checkpoint("transaction")
    manifest.write(path, body)                  # the commit
    report.commit = seq
    report.kinds = dict(maintainer.kinds)
    started = report.phase("commit", started)
    _write_back(engine, session, maintainer, report, out_dir)
    manifest.write(path, {**body, "outputs": seq})
    report.phase("write back", started)
    _collect_garbage(path, body)
    return report


def _unchanged(path: Path, body: dict, engine, out_dir) -> list[SourceReport] | None:
    """A report line per source when no source's files changed since the last refresh read
    them and the sinks hold the last commit (:func:`datalog.spark.unchanged.unchanged_local`),
    found without starting Spark; else None."""
    last = {name: changes.source_dir(path, name, chain.split("+")[-1]) for name, chain in body["sources"].items()}
    return unchanged_local(engine, last, body["outputs"] == body["seq"], engine.facts_dir, out_dir)


def _counts(maintainer: Maintainer, name: str) -> tuple[int, int]:
    change = maintainer.changes.get(name)
    return (change.inserted, change.retracted) if change else (0, 0)


def _write_back(engine, session, maintainer: Maintainer, report: RefreshReport, out_dir) -> None:
    for directive in engine.spark_directives("output"):
        name = directive.relation
        change = maintainer.changes.get(name)
        if change is None:
            report.outputs[name] = (0, 0, "unchanged")
            continue
        merge = (directive.param("mode") or "overwrite").lower() == "merge"
        if merge and not change.retracted:
            info = engine.schema[name]
            added = change.delta.where(F.col(SIGN) > 0).drop(SIGN).toDF(*column_names(info))
            spark_io.append_frame(session, directive, added, out_dir, engine.allow_paths)
            how = "appended"
        else:
            _rewrite_sink(engine, session, directive, maintainer.new[name], out_dir)
            how = "rewritten"
        report.outputs[name] = (change.inserted, change.retracted, how)
        checkpoint("write back")


def _rewrite_sink(engine, session, directive, stored: Stored, out_dir) -> None:
    info = engine.schema[directive.relation]
    spark_io.write_frame(session, directive, stored.tuples().toDF(*column_names(info)), out_dir,
                         engine.allow_paths)


def _stored(session, path: Path, body: dict, engine) -> dict[str, Stored]:
    return {name: _version(session, path, name, entry, engine.schema[name].types)
            for name, entry in body["relations"].items()}


def _version(session, path: Path, name: str, entry: dict, types: list[str] | None) -> Stored:
    """A relation as the manifest's ``entry`` makes it up: its base's rows with its layers laid
    over; read with their schema when they were written with it (``typed``) and ``types`` are known."""
    layers = tuple((v, n) for v, n in entry.get("layers", ()))
    known = entry.get("typed") is True and types is not None
    rows = _read(session, _rows_dir(path, name, entry["version"]) / "rows", schema(types, COUNT) if known else None)
    if layers:
        columns = [c for c in rows.columns if c != COUNT]
        for version, _ in layers:
            layer = _read(session, _rows_dir(path, name, version) / "delta",
                          schema(types, COUNT, SIGN) if known else None)
            rows = layered(rows, layer, columns)
    return Stored(rows, entry["rows"], entry["version"], layers, entry.get("bounds"), known)


def _read(session, where: Path, ddl: str | None):
    reader = session.read.schema(ddl) if ddl is not None else session.read
    return reader.parquet(spark_io.uri(where))


def _static(session, path: Path, body: dict, engine) -> dict[str, Stored]:
    known = body.get("typed") is True
    return {name: Stored(_read(session, path / "static" / name,
                               schema(engine.schema[name].types, COUNT) if known else None), size)
            for name, size in body["static"].items()}


def _collect_garbage(path: Path, body: dict) -> None:
    """Remove every version directory the manifest does not name (what a killed refresh wrote,
    and the versions a commit replaced)."""
    keep = {("relations", n, version) for n, v in body["relations"].items()
            for version in [v["version"], *(layer for layer, _ in v.get("layers", ()))]}
    keep |= {("spark", n, v) for n, chain in body["sources"].items() for v in chain.split("+")}
    for kind in ("relations", "spark"):
        root = path / kind
        for relation in (p for p in root.iterdir() if p.is_dir()) if root.is_dir() else ():
            for version in relation.iterdir():
                if (kind, relation.name, version.name) not in keep:
                    shutil.rmtree(version, ignore_errors=True)


# ---------------------------------------------------------------- reading

def relation(path, name: str, spark: dict | None = None):
    """A stored relation's rows (c0.., __n its support count) as a DataFrame on the session (for
    tests and tools)."""
    from datalog.spark.session import session as spark_session
    body = manifest.read(path)
    return _version(spark_session(**(spark or {})), Path(path), name, body["relations"][name], None).rows


def describe(report: RefreshReport) -> list[str]:
    """The lines ``datalog refresh`` prints for a Spark-resident workspace."""
    lines = lines_of(report)
    kinds = report.kinds
    recomputed = sorted(n for n, k in kinds.items() if "recomputed" in k)
    dred = sorted(n for n, k in kinds.items() if k == "DRed")
    lines.insert(-1, "maintained in Spark by delta rules with support counts" +
                 (f"; by DRed: {', '.join(dred)}" if dred else "") +
                 (f"; recomputed in Spark: {', '.join(f'{n} ({kinds[n]})' for n in recomputed)}" if recomputed else ""))
    return lines


__all__ = ["create", "refresh", "relation", "describe", "check"]
