"""``datalog init | refresh | update | query | export | status | verify | addblock | removeblock | compact``: the
workspace commands (:mod:`datalog.workspace.workspace`). Errors print their diagnostic and exit 1, as
for ``datalog run``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from datalog.engine.updates import read_updates
from datalog.language import ast
from datalog.language.errors import BadCommand, MissingInput, Unsupported
from datalog.sources.files import format_rows, write_outputs
from datalog.cli.options import add_budget_option, add_path_option, add_spark_options, progress_bar, spark_options
from datalog.cli import changes
from datalog.cli.report import apply_and_report, delta_printer
from datalog.language.display import plural
from datalog.language.rewrites import is_internal


def _workspace():
    """The Workspace class, imported when a workspace command runs (it pulls in the whole
    maintainer: ~20 ms that ``datalog run`` should not pay at start-up)."""
    from datalog.workspace.workspace import Workspace
    return Workspace


def add_commands(sub) -> None:
    """Register the workspace subcommands on ``datalog``'s subparsers."""
    init = sub.add_parser("init", help="evaluate a program once and save it as a workspace")
    init.add_argument("workspace")
    init.add_argument("program")
    init.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    init.add_argument("-D", "--output-dir", default=".",
                      help="directory that local Spark sink paths are relative to (default .)")
    init.add_argument("--engine", choices=["lftj", "spark"], default="lftj",
                      help="lftj: the workspace lives in this process (default); spark: its relations are "
                           "Parquet tables that Spark evaluates and refresh maintains (Spark-resident)")
    add_spark_options(init)
    add_budget_option(init)
    add_path_option(init)
    init.set_defaults(func=_init)
    refresh = sub.add_parser("refresh", help="apply what changed in the Spark sources since the last "
                                             "load, then write the Spark outputs")
    refresh.add_argument("workspace")
    refresh.add_argument("-F", "--fact-dir", default=".",
                         help="directory that local Spark source paths are relative to (default .)")
    refresh.add_argument("-D", "--output-dir", default=".",
                         help="directory that local Spark sink paths are relative to (default .)")
    refresh.add_argument("--engine", choices=["lftj", "spark"], default=None,
                         help="the kind of workspace (default: the kind init made; spark: Spark-resident, "
                              "maintained inside Spark)")
    add_spark_options(refresh)
    add_budget_option(refresh)
    add_path_option(refresh)
    changes.add_options(refresh)
    refresh.set_defaults(func=_refresh)
    update = sub.add_parser("update", help="commit the batches of an updates file (+r(1). -r(2). commit.)")
    update.add_argument("workspace")
    update.add_argument("updates")
    add_budget_option(update)
    changes.add_options(update)
    update.set_defaults(func=_update)
    query = sub.add_parser("query", help="rows of a relation matching an atom, e.g. \"path(1, X)\", "
                                         "or the answers of ?- body.")
    query.add_argument("workspace")
    query.add_argument("query")
    query.set_defaults(func=_query)
    export = sub.add_parser("export", help="write the .output relations (all relations if none)")
    export.add_argument("workspace")
    export.add_argument("-D", "--output-dir", default=".", help="directory for .csv outputs; - for stdout")
    add_path_option(export)
    export.set_defaults(func=_export)
    status = sub.add_parser("status", help="program blocks, relation sizes, last commit, size on disk")
    status.add_argument("workspace")
    status.add_argument("--internal", action="store_true",
                        help="also list the relations rewrites made (such as a range's values, _range_0_10)")
    status.set_defaults(func=_status)
    verify = sub.add_parser("verify", help="recompute every relation from the stored EDB and program and "
                                           "compare with what is stored (exit 1 on a difference)")
    verify.add_argument("workspace")
    verify.set_defaults(func=_verify)
    add = sub.add_parser("addblock", help="add a named block of rules and relations to a workspace")
    add.add_argument("workspace")
    add.add_argument("block")
    add.add_argument("--name", help="the block's name (default: the file name without .dl)")
    add.add_argument("-F", "--fact-dir", default=".", help="directory of the block's .facts inputs")
    add_path_option(add)
    add.set_defaults(func=_addblock)
    remove = sub.add_parser("removeblock", help="remove a named block and what only it derived")
    remove.add_argument("workspace")
    remove.add_argument("name")
    remove.set_defaults(func=_removeblock)
    compact = sub.add_parser("compact", help="fold the commit log into a new snapshot")
    compact.add_argument("workspace")
    compact.set_defaults(func=_compact)


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingInput(f"{what} file {path} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError, PermissionError) as exc:
        raise MissingInput(f"cannot read {what} file {path}: {exc}") from None


def _resident(path: str) -> bool:
    from datalog.spark.manifest import is_resident      # (no pyspark there)
    return is_resident(path)


def _in_process(path: str, command: str) -> None:
    """Refuse a command that only an in-process workspace has (unsupported)."""
    if _resident(path):
        raise Unsupported(f"{path} is a Spark-resident workspace (datalog init --engine spark): "
                          f"`datalog {command}` works only on in-process workspaces; refresh and status work on it")


def _engine_of(args):
    """The engine of a program text with the command's -F, --master/--conf and --allow-paths."""
    from datalog.engine.engine import Engine
    options = spark_options(args)
    return lambda text, source: Engine.from_source(text, args.fact_dir, name=source, spark=options,
                                                   allow_paths=args.allow_paths)


def _init(args) -> int:
    text = _read_text(args.program, "program")
    if args.engine == "spark":
        from datalog.spark import resident_workspace
        with progress_bar() as progress:
            body = resident_workspace.create(args.workspace, text, _engine_of(args), source=args.program,
                                             out_dir=args.output_dir, progress=progress)
        sizes = {n: v["rows"] for n, v in body["relations"].items()}
        print(f"initialized {args.workspace} (Spark-resident): {plural(len(sizes), 'relation')}, "
              f"{plural(sum(sizes.values()), 'tuple')}")
        return 0
    with progress_bar() as progress:
        ws = _workspace().create(args.workspace, text, args.fact_dir, source=args.program, out_dir=args.output_dir,
                                 spark=spark_options(args), allow_paths=args.allow_paths,
                                 memory_budget=args.memory_budget, progress=progress)
    with ws:
        sizes = ws.status()["sizes"]
    print(f"initialized {args.workspace}: {plural(len(sizes), 'relation')}, {plural(sum(sizes.values()), 'tuple')}")
    return 0


def _refresh(args) -> int:
    resident = _resident(args.workspace)
    if args.engine is not None and (args.engine == "spark") != resident:
        kind = "Spark-resident" if resident else "an in-process workspace"
        raise BadCommand(f"{args.workspace} is {kind}: refresh it without --engine (or with --engine "
                         f"{'spark' if resident else 'lftj'}); `datalog init --engine spark` makes a Spark-resident one")
    if resident:
        if args.changes:
            raise BadCommand("--changes is not available for a Spark-resident workspace (its deltas stay in Spark)")
        from datalog.spark import resident_workspace
        with progress_bar() as progress:
            report = resident_workspace.refresh(args.workspace, _engine_of(args), args.output_dir, progress)
        for line in resident_workspace.describe(report):
            print(line)
        return 0
    from datalog.refresh import describe, refresh
    with _workspace().open(args.workspace, spark=spark_options(args), allow_paths=args.allow_paths,
                           memory_budget=args.memory_budget) as ws:
        with changes.ChangeFiles(ws.engine, args.changes, args.changes_format) as files:
            with progress_bar() as progress:
                report = refresh(ws, progress, args.fact_dir, args.output_dir)
    for line in describe(report):
        print(line)
    return files.report()


def _update(args) -> int:
    _in_process(args.workspace, "update")
    with _workspace().open(args.workspace, memory_budget=args.memory_budget) as ws:
        batches = read_updates(ws.engine, args.updates)      # the whole file is checked first
        with changes.ChangeFiles(ws.engine, args.changes, args.changes_format) as files:
            applied, status = apply_and_report(ws.engine, batches, delta_printer(ws.engine))
    print(f"committed {applied} batch{'es' * (applied != 1)}; last commit {ws.seq}", file=sys.stderr)
    return max(status, files.report())


def _query(args) -> int:
    _in_process(args.workspace, "query")
    with _workspace().open(args.workspace, readonly=True) as ws:
        text = args.query.strip()
        if text.startswith("?-"):
            answers = ws.engine.query(text)
            names, rows = answers.columns, answers.rows
            print("\t".join(names))
        else:
            rows = ws.engine.query(text)
    sys.stdout.write(format_rows(rows, "\t"))
    return 0


def _export(args) -> int:
    """The stored program's ``.output`` files (its filenames held to ``-D`` unless ``--allow-paths``),
    or every relation's, all or none."""
    _in_process(args.workspace, "export")
    with _workspace().open(args.workspace, readonly=True, allow_paths=args.allow_paths) as ws:
        engine = ws.engine
        if engine.checked.directives("output"):
            for line in engine.write_outputs(args.output_dir):
                print(line)
            return 0
        write_outputs([ast.Directive("output", name) for name in engine.relations() if not is_internal(name)], engine.rows,
                      args.output_dir)
    return 0


def _status(args) -> int:
    if _resident(args.workspace):
        return _resident_status(args.workspace, args.internal)
    with _workspace().open(args.workspace, readonly=True) as ws:
        info = ws.status()
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(info["time"]))
    print(f"workspace {info['path']}")
    print("program: " + ", ".join(f"{name} ({source})" for name, source in info["blocks"]))
    print(f"last commit: {info['last_commit']} at {when}")
    print(f"on disk: {info['disk_bytes']} bytes")
    print("kind: in-process (relations in this process; refresh maintains them with LFTJ sensitivity indices)")
    print(f"writer: {'process ' + str(info['writer']) if info['writer'] else 'none'}")
    print("maintainer: " + ("stored (a writer restores it)" if info["maintainer"] else
                            "not stored (a writer builds it at its first commit)"))
    if info["discarded"]:
        print(f"note: the log ends with {info['discarded']} bytes of an unfinished commit (a crash "
              f"during a commit); it was never acknowledged and is ignored")
    for name, size in info["sizes"].items():
        if is_internal(name) and not args.internal:
            continue
        print(f"{name}\t{size}\t{'idb' if name in info['idb'] else 'edb'}")
    return 0


def _resident_status(path: str, internal: bool = False) -> int:
    from datalog.spark import manifest
    body = manifest.read(path)
    from datalog.engine.engine import Engine
    idb = Engine.from_source(body["program"], name=body["source"]).idb
    print(f"workspace {path}")
    print("kind: Spark-resident (relations are Parquet tables; refresh maintains them inside Spark)")
    print(f"last commit: {body['seq']}")
    print(f"Spark sinks hold commit: {body['outputs']}")
    for name, info in sorted(body["relations"].items()):
        if is_internal(name) and not internal:
            continue
        print(f"{name}\t{info['rows']}\t{'idb' if name in idb else 'edb'}")
    return 0


def _verify(args) -> int:
    """Every difference on a line of its own; exit 0 when there is none, 1 otherwise."""
    _in_process(args.workspace, "verify")
    with _workspace().open(args.workspace, readonly=True) as ws:
        differences = ws.verify()
        sizes = ws.status()["sizes"]
    for difference in differences:
        print(f"{args.workspace}: {difference}")
    if differences:
        print(f"{args.workspace}: {len(differences)} difference{'s' * (len(differences) != 1)} from a "
              f"recomputation at commit {ws.seq}", file=sys.stderr)
        return 1
    print(f"verified {args.workspace}: {plural(len(sizes), 'relation')}, {plural(sum(sizes.values()), 'tuple')} at commit {ws.seq} "
          f"equal a recomputation")
    return 0


def _addblock(args) -> int:
    _in_process(args.workspace, "addblock")
    text = _read_text(args.block, "block")
    name = args.name or Path(args.block).stem
    with _workspace().open(args.workspace, allow_paths=args.allow_paths) as ws:
        delta = ws.addblock(name, text, source=args.block, facts_dir=args.fact_dir)
    _print_changes(f"added block {name}", delta)
    return 0


def _removeblock(args) -> int:
    _in_process(args.workspace, "removeblock")
    with _workspace().open(args.workspace) as ws:
        delta = ws.removeblock(args.name)
    _print_changes(f"removed block {args.name}", delta)
    return 0


def _compact(args) -> int:
    _in_process(args.workspace, "compact")
    with _workspace().open(args.workspace) as ws:
        with progress_bar() as progress:
            ws.compact(progress)
        print(f"compacted {args.workspace}: snapshot at commit {ws.seq}, {ws.snapshot_bytes} bytes")
    return 0


def _print_changes(what: str, delta) -> None:
    parts = [f"{name} +{len(c.inserted)} -{len(c.retracted)}" for name, c in sorted(delta.items())]
    print(f"{what}: {', '.join(parts) if parts else 'no relation changed'}")


__all__ = ["add_commands"]
