"""The command line (``datalog run | check | explain | repl | init | ...``) and the REPL."""

from datalog.cli.commands import main

__all__ = ["main"]
