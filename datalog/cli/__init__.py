"""The command line (``datalog run | check | explain | repl | init | ...``) and the REPL."""

import os
import sys

from datalog.cli import commands
from datalog.cli.commands import main

__all__ = ["main", "entry"]


def entry() -> None:
    """The ``datalog`` console script: :func:`main`, then the process's exit.

    After ``datalog run`` has written its outputs, the process ends at once (``os._exit``)
    instead of freeing every tuple, trie and index it evaluated one object at a time: a third
    of the run's time for a program that derives 2M tuples (1.2 s of 4 s, measured on
    independent_body3). Only for ``run`` without Spark (whose JVM is stopped at exit), and only
    once stdout and stderr are flushed; every output file is closed by then (``write_outputs``
    writes each in a ``with``)."""
    commands.FAST_EXIT = True
    status = main()
    if commands.SPARED and "pyspark" not in sys.modules:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(status)
        os._exit(status)
    sys.exit(status)
