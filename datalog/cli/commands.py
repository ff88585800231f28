"""``datalog run | check | explain | repl``: thin wrappers around :class:`datalog.engine.engine.Engine`.

Flags follow Soufflé's: ``-F`` the fact directory, ``-D`` the output directory
(``-D -`` prints output relations to stdout). A user mistake prints the
caret diagnostic to stderr and exits 1; it never shows a traceback.

``run --updates changes.dl`` then applies the batches of an updates file (see
:func:`datalog.language.parser.parse_updates`), one ``engine.transaction()`` each, and prints
each batch's delta; ``explain --maintenance`` prints ``engine.stats()`` per rule.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from datalog.engine.engine import Engine
from datalog.language.errors import BadCommand, DatalogError, TooDeep, TypeMismatch
from datalog.language.parser import parse_updates_file
from datalog.language.types import AUTO, value_type
from datalog.sources.files import format_value, write_output
from datalog.spark.distributed import run_on_spark
from datalog.cli.tables import stats_table

STRATEGIES = ["incremental", "recompute"]


class _Unavailable(DatalogError):
    code = "unavailable_strategy"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except DatalogError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:                      # e.g. `datalog run ... -D - | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RecursionError:
        print("error[too_deep]: the rule nesting is too deep to evaluate", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="datalog", description="Soufflé-compatible Datalog on "
                                     "leapfrog triejoin.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="evaluate a program and write its outputs")
    run.add_argument("program")
    run.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    run.add_argument("-D", "--output-dir", default=".", help="directory for .csv outputs; - for stdout")
    run.add_argument("--join", choices=["probe", "leapfrog"], default="probe",
                     help="how each level is intersected: hash probes (default) or the leapfrog loop")
    run.add_argument("--timing", action="store_true", help="print the evaluation time to stderr")
    run.add_argument("--updates", metavar="FILE",
                     help="after evaluating, apply the batches of FILE (+r(1, 2). -r(3, 4). commit.) "
                          "and print each batch's delta")
    run.add_argument("--maintenance", choices=STRATEGIES, default="incremental",
                     help="how --updates batches are maintained (default incremental)")
    run.add_argument("--spark", action="store_true",
                     help="start Spark (it starts anyway when the program names IO=spark sources or sinks)")
    run.add_argument("--engine", choices=["lftj", "spark"], default="lftj",
                     help="evaluate in this process (default) or each stratum on Spark")
    add_spark_options(run)
    run.set_defaults(func=_run)
    chk = sub.add_parser("check", help="parse and check a program without evaluating it")
    chk.add_argument("program")
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
    exp.set_defaults(func=_explain)
    repl = sub.add_parser("repl", help="interactive session: rules, facts, changes, queries, transactions "
                                       "(reads statements from stdin when it is not a terminal)")
    repl.add_argument("program", nargs="?",
                      help="a program to start from, or a workspace directory to continue on (as its writer)")
    repl.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    repl.add_argument("--join", choices=["probe", "leapfrog"], default="probe",
                      help="how each level is intersected (as for run)")
    repl.add_argument("--maintenance", choices=STRATEGIES, default="incremental",
                      help="how changes are maintained (default incremental)")
    repl.add_argument("--echo", action="store_true",
                      help="with piped input: print each statement after a prompt before its result")
    repl.set_defaults(func=_repl)
    from datalog.cli.workspace import add_commands     # init, update, query, ... (issue 5)
    add_commands(sub)
    return parser


def _run(args) -> int:
    started = time.perf_counter()
    engine = Engine.from_file(args.program, args.fact_dir, intersect=args.join, maintenance=args.maintenance,
                              spark=spark_options(args))
    batches = _read_updates(engine, args.updates) if args.updates else None
    progress = _progress() if sys.stderr.isatty() else None
    if args.engine == "spark":
        run_on_spark(engine, progress)
    else:
        if args.spark:
            engine.spark_session()
        engine.run(progress=progress)
    for line in engine.write_outputs(args.output_dir):
        print(line)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if args.timing:
        print(f"evaluated in {time.perf_counter() - started:.3f} s", file=sys.stderr)
    if batches is None:
        return 0
    applied, status = _apply_updates(engine, batches, _delta_printer(engine))
    if applied and args.output_dir != "-":
        _rewrite_output_files(engine, args.output_dir)
    return status


def _repl(args) -> int:
    from datalog.cli.terminal import main as repl     # prompt_toolkit is loaded only for the REPL
    return repl(args)


def _check(args) -> int:
    Engine.from_file(args.program)
    print(f"{args.program}: ok")
    return 0


def _explain(args) -> int:
    if args.maintenance is None and args.updates is None:
        print(Engine.from_file(args.program).explain())
        return 0
    strategy = args.maintenance or "incremental"
    engine = Engine.from_file(args.program, args.fact_dir, maintenance=strategy)
    batches = _read_updates(engine, args.updates) if args.updates else []
    engine.run()
    applied, status = _apply_updates(engine, batches, _batch_summary)
    if status:
        return status
    stats = engine.stats()
    if not stats:
        print("no maintenance ran yet: give --updates with a committed batch" if not applied else
              f"the {strategy} maintenance reported no statistics")
        return 0
    print(f"maintenance ({strategy}) of batch {applied}, the last one, per rule:")
    print(stats_table(stats))
    return 0


# ---------------------------------------------------------------- updates

def _read_updates(engine: Engine, path: str) -> list:
    """Parse the updates file and check every change against the program, before anything runs.

    Loads the ``.input`` files first (the same ones ``run`` would load) so that columns whose type
    comes from the data are settled."""
    batches = parse_updates_file(path)
    engine.load_inputs()
    for batch in batches:
        tx = engine.transaction()                 # requests only: it is never committed
        for sign, atom in batch:
            _request(engine, tx, sign, atom)
    _check_auto_columns(engine, batches)
    return batches


def _check_auto_columns(engine: Engine, batches) -> None:
    """A column still typed ``auto`` (an undeclared input with no rows) takes the type of its first
    value, here or in the data; later values must agree (a column holds one type)."""
    first: dict[tuple[str, int], tuple[str, object]] = {}
    for batch in batches:
        for _, atom in batch:
            for i, (arg, type_) in enumerate(zip(atom.args, engine.schema[atom.relation].types)):
                if type_ != AUTO:
                    continue
                if (atom.relation, i) not in first:
                    row = next(iter(engine.db[atom.relation].tuples), None)
                    first[atom.relation, i] = (value_type(row[i]), "its rows") if row else \
                        (value_type(arg.value), arg.span)
                expected, where = first[atom.relation, i]
                got = value_type(arg.value)
                if got != expected:
                    raise TypeMismatch(f"column {i + 1} of {atom.relation} holds {expected}s (from {where}), "
                                       f"got the {got} {format_value(arg.value)!r}", arg.span)


def _request(engine: Engine, tx, sign: str, atom) -> None:
    """One change of an updates file into a transaction; an error points into the updates file."""
    row = tuple(arg.value for arg in atom.args)
    try:
        (tx.insert if sign == "+" else tx.retract)(atom.relation, [row])
    except DatalogError as err:
        if err.span is None or err.span.source is not atom.span.source:
            err.span = _culprit(engine, err, atom)
        raise err from None


def _culprit(engine: Engine, err: DatalogError, atom):
    """The argument of a type mismatch, else the whole atom."""
    if isinstance(err, TypeMismatch) and atom.relation in engine.schema:
        for arg, type_ in zip(atom.args, engine.schema[atom.relation].types):
            got = value_type(arg.value)
            if type_ not in (AUTO, got) and not (type_ == "float" and got == "number"):
                return arg.span or atom.span
    return atom.span


def _apply_updates(engine: Engine, batches, report) -> tuple[int, int]:
    """Commit each batch in order; ``report(number, delta, seconds)`` after each. Stops at the
    first failing batch (its transaction rolled back). Returns (batches applied, exit status)."""
    for number, batch in enumerate(batches, 1):
        started = time.perf_counter()
        try:
            try:
                with engine.transaction() as tx:
                    for sign, atom in batch:
                        _request(engine, tx, sign, atom)
            except RecursionError:
                raise TooDeep("the rule nesting is too deep to evaluate", None) from None
            except ModuleNotFoundError as exc:    # a strategy whose module is not in this build
                if not (exc.name or "").startswith("maintenance."):
                    raise
                raise _Unavailable(f"the {engine.maintenance} maintenance strategy is not available "
                                   f"({exc}); try --maintenance recompute") from None
        except DatalogError as err:
            rest = len(batches) - number
            where = f" ({batch.span})" if batch.span else ""
            later = f"; the {rest} later batch{'es were' if rest != 1 else ' was'} not applied" if rest else ""
            print(f"batch {number}{where} failed and was rolled back{later}:\n{err.render()}",
                  file=sys.stderr)
            return number - 1, 1
        report(number, tx.delta, time.perf_counter() - started)
    return len(batches), 0


def _delta_printer(engine: Engine):
    """Print a batch's delta of every ``.output`` relation (or, with none, of every relation that changed):
    a header ``batch N: +I -E tuples in REL``, then ``+REL<TAB>v1<TAB>v2`` per inserted row and
    ``-REL<TAB>...`` per erased row, each group sorted; last ``batch N: maintained in T ms``, the only
    line that differs between runs."""
    outputs = list(dict.fromkeys(d.relation for d in engine.checked.directives("output")))

    def report(number: int, delta, seconds: float) -> None:
        names = outputs or sorted(name for name, change in delta.items() if change)
        lines = [] if names else [f"batch {number}: no changes"]
        for name in names:
            change = delta.get(name)
            inserted = sorted(change.inserted) if change else []
            erased = sorted(change.erased) if change else []
            lines.append(f"batch {number}: +{len(inserted)} -{len(erased)} tuples in {name}")
            lines.extend(_row("+", name, row) for row in inserted)
            lines.extend(_row("-", name, row) for row in erased)
        lines.append(f"batch {number}: maintained in {seconds * 1000:.1f} ms")
        try:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
        except BrokenPipeError:                  # the reader left: keep applying, quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return report


def _row(sign: str, name: str, row: tuple) -> str:
    return sign + "\t".join([name, *map(format_value, row)])


def _batch_summary(number: int, delta, seconds: float) -> None:
    inserted = sum(len(change.inserted) for change in delta.values())
    erased = sum(len(change.erased) for change in delta.values())
    changed = len([change for change in delta.values() if change])
    print(f"batch {number}: +{inserted} -{erased} tuples in {changed} relation{'s' * (changed != 1)}, "
          f"maintained in {seconds * 1000:.1f} ms")


def _rewrite_output_files(engine: Engine, out_dir: str) -> None:
    """The final state into the ``.output`` files (``IO=stdout`` ones are not printed again)."""
    for directive in engine.checked.directives("output"):
        if directive.io == "file":
            write_output(directive, engine.rows(directive.relation), out_dir)


def add_spark_options(parser) -> None:
    parser.add_argument("--master", help="Spark master URL (default: local[2] inside this process, "
                                         "or $SPARK_MASTER)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting, e.g. --conf spark.driver.memory=8g (repeatable)")


def spark_options(args) -> dict:
    """``--master`` / ``--conf k=v`` as the engine's ``spark=`` option."""
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadCommand(f"--conf takes KEY=VALUE, got {item!r}")
        conf[key.strip()] = value.strip()
    return {"master": args.master, "conf": conf}


def _progress():
    def report(message: str) -> None:
        sys.stderr.write("\r\033[K" + message[:100])
        sys.stderr.flush()
    return report


if __name__ == "__main__":
    sys.exit(main())
