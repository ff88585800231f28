"""``datalog run | check | explain | repl``: thin wrappers around :class:`datalog.engine.engine.Engine`.

Flags follow Soufflé's: ``-F`` the fact directory, ``-D`` the output directory
(``-D -`` prints output relations to stdout). A user mistake prints the
caret diagnostic to stderr and exits 1; it never shows a traceback.

``run --updates changes.dl`` then applies the batches of an updates file
(:mod:`datalog.engine.updates`), one ``engine.transaction()`` each, and prints each batch's
delta (:mod:`datalog.cli.report`); ``explain --maintenance`` prints ``engine.stats()`` per rule.
"""

from __future__ import annotations

import os
import sys
import time

from datalog.engine.engine import Engine
from datalog.engine.outputs import write_files
from datalog.engine.updates import read_updates
from datalog.language import numbers
from datalog.language.errors import BadCommand, DatalogError, Interrupted, IOFault, OutOfMemory
from datalog.cli.arguments import Parser, parse
from datalog.cli.options import (add_budget_option, add_path_option, add_preprocessor_options, add_spark_options,
                                 parse_options, progress_bar, spark_options)
from datalog.cli.report import apply_and_report, batch_summary, delta_printer
from datalog.cli.souffle_flags import add_souffle_flags, jobs_note
from datalog.cli.tables import stats_table

# The console script sets FAST_EXIT (datalog.cli.entry): `run` then spares its engine here so
# the process ends without freeing what it evaluated (datalog.cli.entry says why).
FAST_EXIT = False
SPARED: list = []

STRATEGIES = ["incremental", "recompute"]
JOINS = ["hash", "leapfrog", "probe"]          # probe: the old name of hash


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parse(parser, sys.argv[1:] if argv is None else list(argv))
        if args.version:
            print(f"datalog-lftj {version()}")
            return 0
        if args.command is None:
            raise parser.mistake(BadCommand, "a command is missing")
        status = args.func(args)
        sys.stdout.flush()                       # a full disk under stdout is reported here, not at exit
        return status
    except DatalogError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print(Interrupted("interrupted (Ctrl-C); nothing more was done").render(), file=sys.stderr)
        if FAST_EXIT:                            # the run's relations are not freed tuple by tuple
            SPARED.append(exc.__traceback__)     # (seconds) before the process exits: datalog.cli.entry
        return 130
    except MemoryError as exc:                   # out of memory outside an evaluation (which says so itself)
        if FAST_EXIT:
            SPARED.append(exc.__traceback__)
        print(OutOfMemory("the machine ran out of memory; what was being done is undone (a workspace "
                          "keeps its last commit); give a --memory-budget to stop earlier").render(), file=sys.stderr)
        return 1
    except BrokenPipeError:                      # e.g. `datalog run ... -D - | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RecursionError:
        print("error[too_deep]: the rule nesting is too deep to evaluate", file=sys.stderr)
        return 1
    except OSError as exc:                       # the workspace's and output files' are coded where they
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())       # happen: this is stdout's
        where = f": {exc.filename}" if exc.filename else ""
        print(IOFault(f"reading or writing failed{where}: {exc.strerror or exc}").render(), file=sys.stderr)
        return 1


def version() -> str:
    """The installed package's version (``datalog --version``; importlib.metadata is imported
    here, not at start-up: 50 ms of every command)."""
    from importlib import metadata
    try:
        return metadata.version("datalog-lftj")
    except metadata.PackageNotFoundError:           # the sources, not installed
        return "(not installed)"


def _parser() -> Parser:
    parser = Parser(prog="datalog", description="Soufflé-compatible Datalog on leapfrog triejoin.",
                    epilog="datalog PROGRAM.dl [-F DIR] [-D DIR] ... (Soufflé's form) is datalog run PROGRAM.dl ...")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="evaluate a program and write its outputs")
    run.add_argument("program")
    run.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    run.add_argument("-D", "--output-dir", default=".", help="directory for .csv outputs; - for stdout")
    run.add_argument("--join", choices=JOINS, default="hash",
                     help="how each level is intersected: the hash intersection (default; 'probe' is its "
                          "old name) or the leapfrog loop")
    run.add_argument("--timing", action="store_true", help="print the evaluation time to stderr")
    run.add_argument("-w", "--no-warn", action="store_true", help="do not print warnings (Soufflé's -w)")
    run.add_argument("--number-width", type=int, choices=(32, 64), default=64,
                     help="32: integer results wrap at 32 bits as Soufflé's default number does; "
                          "64 (default): 64-bit, an overflow is number_out_of_range")
    run.add_argument("--updates", metavar="FILE",
                     help="after evaluating, apply the batches of FILE (+r(1, 2). -r(3, 4). commit.) "
                          "and print each batch's delta")
    run.add_argument("--maintenance", choices=STRATEGIES, default="incremental",
                     help="how --updates batches are maintained (default incremental)")
    run.add_argument("--spark", action="store_true",
                     help="start Spark (it starts anyway when the program names IO=spark sources or sinks)")
    run.add_argument("--engine", choices=["lftj", "spark"], default="lftj",
                     help="evaluate in this process (default) or on Spark: resident (every relation a "
                          "DataFrame) when every stratum can be, else the distributed evaluator")
    _add_join_option(run)
    run.add_argument("-t", "--provenance", choices=["none", "explain", "explore", "keep"], default=None,
                     nargs="?", const="keep",
                     help="explain (or explore, the same here): after the run, answer Soufflé's explain "
                          "commands from stdin (explain R(...), subproof, explainnegation, setdepth, measure, "
                          "output, format, exit), from heights kept as Soufflé keeps them. A program's "
                          ".pragma \"provenance\" asks for it too. --provenance alone (after the program): "
                          "only keep the heights (datalog explain-fact --provenance)")
    add_spark_options(run)
    add_budget_option(run)
    add_path_option(run)
    add_preprocessor_options(run)
    add_souffle_flags(run)
    run.set_defaults(func=_run)
    chk = sub.add_parser("check", help="parse and check a program without evaluating it")
    chk.add_argument("program")
    chk.add_argument("-w", "--no-warn", action="store_true", help="do not print warnings")
    add_path_option(chk)
    add_preprocessor_options(chk)
    chk.set_defaults(func=_check)
    exp = sub.add_parser("explain", help="show strata, variable orders and indexes; with --maintenance, "
                                         "maintenance statistics per rule")
    exp.add_argument("program")
    exp.add_argument("--maintenance", nargs="?", const="incremental", choices=STRATEGIES,
                     help="run the program (and --updates) and print engine.stats() per rule "
                          "(strategy: default incremental)")
    exp.add_argument("-F", "--fact-dir", default=".", help="with --maintenance: directory of .facts files")
    exp.add_argument("--updates", metavar="FILE", help="with --maintenance: the updates file to apply "
                                                      "(implies --maintenance)")
    exp.add_argument("--engine", choices=["lftj", "spark"], default="lftj",
                     help="spark: also say per stratum whether it runs Spark-resident or why not")
    _add_join_option(exp)
    add_budget_option(exp)
    add_path_option(exp)
    add_preprocessor_options(exp)
    exp.set_defaults(func=_explain)
    repl = sub.add_parser("repl", help="interactive session: rules, facts, changes, queries, transactions "
                                       "(reads statements from stdin when it is not a terminal)")
    repl.add_argument("program", nargs="?",
                      help="a program to start from, or a workspace directory to continue on (as its writer)")
    repl.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    repl.add_argument("--join", choices=JOINS, default="hash",
                      help="how each level is intersected (as for run)")
    repl.add_argument("--maintenance", choices=STRATEGIES, default="incremental",
                      help="how changes are maintained (default incremental)")
    repl.add_argument("--provenance", action="store_true",
                      help="keep every derived fact's least proof height for .why (see explain-fact --provenance)")
    repl.add_argument("--echo", action="store_true",
                      help="with piped input: print each statement after a prompt before its result")
    add_budget_option(repl)
    add_path_option(repl)
    repl.set_defaults(func=_repl)
    from datalog.cli.workspace import add_commands     # init, update, query, ... (issue 5)
    add_commands(sub)
    from datalog.cli import provenance                  # explain-fact, why (issue 21)
    provenance.add_commands(sub)
    return parser


def _add_join_option(parser) -> None:
    parser.add_argument("--spark-join", choices=["auto", "binary", "wcoj"], default="auto",
                        help="with --engine spark, how a rule's atoms are joined: Spark's binary joins, "
                             "worst-case optimally (HyperCube shuffle, leapfrog triejoin per cell), or auto: "
                             "a cyclic body whose largest pairwise join is estimated at over 100x its inputs "
                             "goes worst-case optimally (default)")


def _evaluate(engine, args, batches, progress) -> list[str] | None:
    """Evaluate the program: Spark-resident, every relation a DataFrame from sources to sinks
    (returns the ``.printsize`` lines; the sinks are written), else on Spark's distributed
    evaluator or here (None)."""
    if args.engine == "spark" and batches is None:
        from datalog.spark import resident      # (here: pyspark costs every other command 0.1 s to import)
        blocked = [c for c in resident.choices(engine) if c.reason is not None]
        if not blocked:                          # every relation stays a DataFrame, sources to sinks
            _, lines = resident.run_resident(engine, args.output_dir, progress, join=args.spark_join)
            return lines
        first = blocked[0]
        print(f"note: not Spark-resident (stratum {first.number}, {', '.join(first.relations)}: {first.reason}); "
              f"the distributed evaluator runs the program, its relations on the driver", file=sys.stderr)
    if args.engine == "spark":
        from datalog.spark.distributed import run_on_spark
        run_on_spark(engine, progress)
    else:
        if args.spark:
            engine.spark_session()
        engine.run(progress=progress)
    return None


def _run(args) -> int:
    started = time.perf_counter()
    numbers.set_width(args.number_width)
    engine = Engine.from_file(args.program, args.fact_dir, intersect=args.join, maintenance=args.maintenance,
                              spark=spark_options(args), allow_paths=args.allow_paths,
                              memory_budget=args.memory_budget, parse_options=parse_options(args))
    engine.provenance = _explain_mode(engine, args) != "none"     # Soufflé's explain keeps its annotations too
    print_warnings(engine, args)
    note = jobs_note(args)
    if note and not args.no_warn:
        print(note, file=sys.stderr)
    batches = read_updates(engine, args.updates) if args.updates else None
    with progress_bar() as progress:
        lines = _evaluate(engine, args, batches, progress)
    if lines is None:
        lines = engine.write_outputs(args.output_dir)
    for line in lines:
        print(line)
    if args.timing:
        print(f"evaluated in {time.perf_counter() - started:.3f} s", file=sys.stderr)
    status = 0
    if batches is not None:
        applied, status = apply_and_report(engine, batches, delta_printer(engine))
        if applied and args.output_dir != "-":
            _rewrite_output_files(engine, args.output_dir)
    if _explain_mode(engine, args) in ("explain", "explore"):
        from datalog.cli.explain_interface import Interface
        sys.stdout.flush()
        Interface(engine).run()
    if FAST_EXIT:
        SPARED.append(engine)
    return status


def _explain_mode(engine: Engine, args) -> str:
    """``-t``'s mode, else the program's ``.pragma "provenance"`` (Soufflé's way to ask for it)."""
    if args.provenance is not None:
        return args.provenance
    values = [p.value for p in engine.program.pragmas if p.key == "provenance"]
    return (values[-1] or "explain") if values else "none"


def _repl(args) -> int:
    from datalog.cli.terminal import main as repl     # prompt_toolkit is loaded only for the REPL
    return repl(args)


def print_warnings(engine: Engine, args) -> None:
    """Soufflé's warnings to stderr, in its caret format, unless --no-warn."""
    if not getattr(args, "no_warn", False):
        for warning in engine.warnings:
            print(warning.render(), file=sys.stderr)


def _check(args) -> int:
    print_warnings(Engine.from_file(args.program, parse_options=parse_options(args)), args)
    print(f"{args.program}: ok")
    return 0


def _explain(args) -> int:
    if args.maintenance is None and args.updates is None:
        engine = Engine.from_file(args.program, parse_options=parse_options(args))
        print(engine.explain())
        if args.engine == "spark":
            from datalog.spark import deltas, resident
            print("\n".join(resident.explain_lines(engine, args.spark_join)))
            if all(c.reason is None for c in resident.choices(engine)):
                print("\n".join(deltas.explain_lines(engine)))
        return 0
    strategy = args.maintenance or "incremental"
    engine = Engine.from_file(args.program, args.fact_dir, maintenance=strategy, allow_paths=args.allow_paths,
                              parse_options=parse_options(args), memory_budget=args.memory_budget)
    batches = read_updates(engine, args.updates) if args.updates else []
    engine.run()
    applied, status = apply_and_report(engine, batches, batch_summary)
    if status:
        return status
    stats = engine.stats()
    if not stats:
        print("no maintenance ran yet: give --updates with a committed batch" if not applied else
              f"the {strategy} maintenance reported no statistics")
        return 0
    print(f"maintenance ({engine.maintenance}) of batch {applied}, the last one, per rule:")   # a .limitsize forces recompute
    print(stats_table(stats))
    return 0


def _rewrite_output_files(engine: Engine, out_dir: str) -> None:
    """The final state into the ``.output`` files, all or none (``IO=stdout`` ones are not printed
    again)."""
    files = [d for d in engine.checked.directives("output") if d.io in ("file", "sqlite", "jsonfile")]
    write_files(engine, files, out_dir)


if __name__ == "__main__":
    sys.exit(main())
