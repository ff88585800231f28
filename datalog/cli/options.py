"""What the commands share on the command line: the Spark options (``--master``, ``--conf``),
``--allow-paths`` and the progress bar on stderr."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys

from datalog.engine.progress import ProgressBar
from datalog.language.errors import BadCommand
from datalog.language.parser import ParseOptions


def add_spark_options(parser) -> None:
    """``--master``, ``--conf KEY=VALUE`` and the scale knobs on a command that may start Spark."""
    parser.add_argument("--master", help="Spark master URL (default: local[2] inside this process, "
                                         "or $SPARK_MASTER)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting, e.g. --conf spark.sql.adaptive.enabled=true (repeatable; the "
                             "options below win over it)")
    parser.add_argument("--partitions", type=_positive, metavar="N",
                        help="Spark's shuffle partitions and default parallelism (default 2: local[2]; on a "
                             "cluster about 2-4 per executor core)")
    parser.add_argument("--executor-memory", type=_memory, metavar="SIZE",
                        help="memory of each Spark executor, e.g. 8g (spark.executor.memory)")
    parser.add_argument("--driver-memory", type=_memory, metavar="SIZE",
                        help="memory of Spark's driver JVM, e.g. 4g (spark.driver.memory; default 2g or "
                             "$DATALOG_SPARK_MEMORY)")
    parser.add_argument("--driver-max-rows", type=_positive, metavar="N",
                        help="the most rows one relation may bring to the driver (the in-process engine's "
                             "sources, a refresh's changes); past it, driver_too_large names the relation "
                             "(default 20,000,000)")


# what each scale knob sets
KNOBS = {"partitions": ("spark.sql.shuffle.partitions", "spark.default.parallelism"),
         "executor_memory": ("spark.executor.memory",), "driver_memory": ("spark.driver.memory",),
         "driver_max_rows": ("spark.datalog.driverMaxRows",)}


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _memory(text: str) -> str:
    if not re.fullmatch(r"[0-9]+[kmgt]?", text.strip().lower()):
        raise argparse.ArgumentTypeError(f"expected a size such as 512m or 8g, got {text!r}")
    return text.strip().lower()


def add_path_option(parser) -> None:
    """``--allow-paths`` on a command that reads ``.input`` or writes ``.output`` files: the one way
    to let a program's ``filename`` lead out of ``-F``/``-D`` (a program or a stored workspace
    cannot allow it: :mod:`datalog.sources.paths`)."""
    parser.add_argument("--allow-paths", action="store_true",
                        help="let .input/.output filenames and local Spark path= lead out of -F/-D (absolute "
                             "paths, .., symlinks out), as Souffle allows; refused by default")


def add_budget_option(parser) -> None:
    """``--memory-budget SIZE`` on a command that evaluates or maintains a program: the memory the
    process may hold while it evaluates or maintenance records a rule's state (``memory_budget``
    naming the relation or the rule, else)."""
    parser.add_argument("--memory-budget", type=_size, metavar="SIZE",
                        help="the memory evaluation and incremental maintenance may use, e.g. 8G or 500M (default: "
                             "what the machine has free); past it, an error names the relation or rule that does "
                             "not fit")


def _size(text: str) -> int:
    from maintenance.budget import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def spark_options(args) -> dict:
    """``--master`` / ``--conf k=v`` as the engine's ``spark=`` option."""
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadCommand(f"--conf takes KEY=VALUE, got {item!r}")
        conf[key.strip()] = value.strip()
    for knob, keys in KNOBS.items():
        value = getattr(args, knob, None)
        if value is not None:
            conf.update({key: str(value) for key in keys})
    return {"master": args.master, "conf": conf}


@contextlib.contextmanager
def progress_bar():
    """A rich progress bar on stderr while the block runs (:mod:`datalog.engine.progress`): the
    progress callback to give the engine, or ``None`` if stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    with ProgressBar(Console(stderr=True)) as bar:
        yield bar


def add_preprocessor_options(parser) -> None:
    """Soufflé's ``-I dir``, ``-M "NAME=value"`` and ``--no-preprocessor`` on a command that reads
    a program file."""
    parser.add_argument("-I", "--include-dir", action="append", default=[], metavar="DIR",
                        help="a directory #include and .include search after the including file's "
                             "(repeatable)")
    parser.add_argument("-M", "--macro", action="append", default=[], metavar="'NAME=value ...'",
                        help="preprocessor macros, as #define NAME value (space-separated; repeatable)")
    parser.add_argument("--no-preprocessor", action="store_true",
                        help="do not run the C preprocessor on the program")


def parse_options(args) -> ParseOptions:
    """The command line's preprocessor options (and --allow-paths, for included files)."""
    return ParseOptions(preprocess=not args.no_preprocessor, include_dirs=tuple(args.include_dir),
                        macros=tuple(args.macro), allow_paths=getattr(args, "allow_paths", False))
