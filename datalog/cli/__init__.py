"""The command line (``datalog run | check | explain | repl | init | ...``) and the REPL."""

import os
import sys

__all__ = ["main", "entry"]


def main(argv: list[str] | None = None) -> int:
    """:func:`datalog.cli.commands.main`: one command, its exit status."""
    from datalog.cli import commands
    return commands.main(argv)


def entry() -> None:
    """The ``datalog`` console script: :func:`main`, then the process's exit.

    The commands (and the engine under them) are imported here, not when the console script
    imports this package: a Ctrl-C while they load (0.2-0.5 s, more on a busy machine) is
    ``error[interrupted]`` and status 130 like one later, not a traceback.

    After ``datalog run`` has written its outputs, the process ends at once (``os._exit``)
    instead of freeing every tuple, trie and index it evaluated one object at a time: a third
    of the run's time for a program that derives 2M tuples (1.2 s of 4 s, measured on
    independent_body3). Only for ``run`` without Spark (whose JVM is stopped at exit), and only
    once stdout and stderr are flushed; every output file is closed by then (``write_outputs``
    writes each in a ``with``)."""
    try:
        from datalog.cli import commands
    except KeyboardInterrupt:
        print("error[interrupted]: interrupted (Ctrl-C) while starting; nothing was done", file=sys.stderr)
        sys.exit(130)
    commands.FAST_EXIT = True
    status = commands.main()
    if commands.SPARED and "pyspark" not in sys.modules:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(status)
        os._exit(status)
    sys.exit(status)
