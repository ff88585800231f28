"""Soufflé's own flags on ``datalog run`` (and so on ``datalog prog.dl``, Soufflé's form).

The ones that mean something here are ``run``'s own options under Soufflé's spellings: ``-F`` /
``--fact-dir``, ``-D`` / ``--output-dir``, ``-I`` / ``--include-dir``, ``-M`` / ``--macro``,
``-w`` / ``--no-warn``, ``-t`` / ``--provenance``, ``--no-preprocessor``. ``-j N`` / ``--jobs N``
is accepted and says how many threads evaluate here (one). The others are refused with
``unsupported``, naming the flag, what it does in Soufflé, and what to use instead.
"""

from __future__ import annotations

import argparse

from datalog.language.errors import Unsupported

EXPLAIN = "`datalog explain PROGRAM` prints the strata, variable orders and indexes"
PROFILE = ("`--timing` prints the evaluation time, `datalog explain PROGRAM --maintenance --updates FILE` "
           "per-rule statistics")
COMPILED = "this engine interprets the program: `datalog run PROGRAM` evaluates it directly"

# (spellings, takes a value, what it does in Soufflé, what to use here)
REFUSED = [
    (("-c", "--compile"), False, "compile to C++ and run the binary", COMPILED),
    (("-C", "--compile-many"), False, "compile to C++ files and run the binary", COMPILED),
    (("-o", "--dl-program"), True, "compile to a binary executable",
     COMPILED),
    (("-g", "--generate"), True, "write the program as C++", "no C++ is generated, " + EXPLAIN),
    (("-G", "--generate-many"), True, "write the program as C++ files", "no C++ is generated, " + EXPLAIN),
    (("-N", "--generate-namespace"), True, "the namespace of generated C++", "no C++ is generated"),
    (("-s", "--swig"), True, "a SWIG interface for Java or Python",
     "from Python, use the API: `from datalog import Engine`"),
    (("-p", "--profile"), True, "profiling into a log file", PROFILE),
    (("--live-profile",), False, "live profiling", PROFILE),
    (("--profile-frequency",), False, "the profiler's frequency counter", PROFILE),
    (("--emit-statistics",), False, "statistics for auto-scheduling", PROFILE),
    (("-a", "--auto-schedule"), True, "join orders from a profile", "a rule's `.plan` fixes its join order"),
    (("-r", "--debug-report"), True, "an HTML debug report", EXPLAIN),
    (("--show",), True, "print program information", EXPLAIN),
    (("--parse-errors",), False, "show the parse errors, then exit", "`datalog check PROGRAM` parses and checks it"),
    (("-v", "--verbose"), False, "verbose output", "`--timing` prints the evaluation time; " + EXPLAIN),
    (("-m", "--magic-transform"), True, "the magic-set transformation", "every rule is evaluated bottom-up"),
    (("--magic-transform-exclude",), True, "exclude relations from the magic-set transformation",
     "every rule is evaluated bottom-up"),
    (("--inline-exclude",), True, "keep relations from being inlined", "inlining is what `inline` declares"),
    (("-z", "--disable-transformers"), True, "disable AST transformers", "the rewrites are not configurable"),
    (("-P", "--pragma"), True, "set a pragma", 'write `.pragma "KEY" "VALUE"` in the program'),
    (("-l", "--libraries"), True, "libraries of functors", "functor libraries are not loaded"),
    (("-L", "--library-dir"), True, "a directory of functor libraries", "functor libraries are not loaded"),
    (("-W", "--warn"), True, "enable one warning", "every warning is on; `-w` turns them off"),
    (("--wno",), True, "disable one warning", "`-w` turns every warning off"),
    (("--preprocessor",), True, "the C preprocessor to run",
     "the built-in preprocessor runs; `--no-preprocessor` turns it off"),
    (("--legacy",), False, "legacy support", "Soufflé's current syntax is read"),
]


class _Refused(argparse.Action):
    """A Soufflé flag with no meaning here: giving it is ``unsupported``."""

    def __init__(self, option_strings, dest, what: str = "", instead: str = "", **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.what, self.instead = what, instead

    def __call__(self, parser, namespace, values, option_string=None):
        spelled = " / ".join(self.option_strings)
        raise Unsupported(f"Soufflé's {spelled} ({self.what}) is not supported here; {self.instead}")


def add_souffle_flags(parser) -> None:
    """``-j N`` and the refused flags on ``datalog run``."""
    parser.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                        help="Soufflé's parallel threads: accepted, but this engine evaluates in one thread "
                             "(a note says so); --engine spark runs in parallel over --partitions")
    for spellings, takes_value, what, instead in REFUSED:
        parser.add_argument(*spellings, action=_Refused, nargs="?" if takes_value else 0, what=what,
                            instead=instead, help=argparse.SUPPRESS, default=argparse.SUPPRESS,
                            dest="souffle_" + spellings[-1].lstrip("-").replace("-", "_"))


def _jobs(text: str) -> str:
    if text == "auto" or (text.isdigit() and int(text) > 0):
        return text
    raise argparse.ArgumentTypeError(f"expected a positive whole number or auto (as Soufflé takes), got {text!r}")


def jobs_note(args) -> str | None:
    """What ``-j N`` does here, unless it asked for one thread (Soufflé's default)."""
    if args.jobs in (None, "1"):
        return None
    spark = " (Spark's own parallelism is --partitions)" if getattr(args, "engine", "lftj") == "spark" else ""
    return (f"note: -j {args.jobs}: this engine evaluates in 1 thread; Soufflé's parallel jobs have no "
            f"counterpart here{spark}")
