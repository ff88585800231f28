"""The command line's argument parser: argparse's, except that a mistake is a coded diagnostic on
stderr and exit status 1, as every other user mistake is, instead of the usage of every command
and exit status 2.

* an unknown option: ``bad_option``, with the nearest valid spelling (``did you mean `-F`
  (`--fact-dir`)?``); an option's value that it does not take (an invalid choice, not a
  number): ``bad_option`` too;
* an unknown command: ``bad_command``, with the nearest command; a missing or an extra
  argument: ``bad_command``;
* ``datalog prog.dl [-F dir] [-D dir]``, Soufflé's form (a program, no command), is
  ``datalog run prog.dl ...``.

The message is one line, then the short usage of the command concerned only.

>>> parser = Parser(prog="datalog")
>>> commands = parser.add_subparsers(dest="command")
>>> run = commands.add_parser("run")
>>> _ = run.add_argument("program")
>>> _ = run.add_argument("-F", "--fact-dir")
>>> parse(parser, ["prog.dl", "-F", "facts"])
Namespace(command='run', program='prog.dl', fact_dir='facts')
>>> print(mistake(parser, ["run", "prog.dl", "--facts", "f"]))
error[bad_option]: datalog run: unknown option --facts; did you mean `-F` (`--fact-dir`)?
usage: datalog run PROGRAM [options]   (`datalog run -h` lists them)
>>> print(mistake(parser, ["rnu", "prog.dl"]))
error[bad_command]: datalog: unknown command rnu; did you mean `run`?
usage: datalog COMMAND ..., or datalog PROGRAM.dl [-F DIR] [-D DIR]   (`datalog -h` lists the commands)
"""

from __future__ import annotations

import argparse
import difflib
import os
import re

from datalog.language.errors import BadCommand, BadOption, DatalogError

_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_REQUIRED = "the following arguments are required: "
TOP_OPTIONS = ("-h", "--help", "--version")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors raise :class:`BadOption` or :class:`BadCommand` (its
    commands' parsers are of this class too)."""

    commands = None                              # the subparsers action, once made

    def add_subparsers(self, **kwargs):
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def error(self, message: str):
        if message.startswith(_REQUIRED):
            missing = [name.upper() for name in message[len(_REQUIRED):].split(", ")]
            raise self.mistake(BadCommand, f"missing {' and '.join(missing)}")
        match = _CHOICE.search(message)
        if match:
            choices = [c.strip().strip("'") for c in match.group(2).split(",")]
            message += _did_you_mean(difflib.get_close_matches(match.group(1), choices, n=1))
        raise self.mistake(BadOption, message)

    def mistake(self, kind: type[DatalogError], message: str) -> DatalogError:
        """``kind`` with ``message`` (after this command's name), then the short usage."""
        return kind(f"{self.prog}: {message}\n{self.short_usage()}")

    def short_usage(self) -> str:
        """``usage: datalog run PROGRAM [options]`` and where the options are listed."""
        if self.commands is not None:
            return (f"usage: {self.prog} COMMAND ..., or {self.prog} PROGRAM.dl [-F DIR] [-D DIR]   "
                    f"(`{self.prog} -h` lists the commands)")
        words = [self.prog]
        for action in self._actions:
            if not action.option_strings:
                name = action.metavar or action.dest.upper()
                words.append(f"[{name}]" if action.nargs == "?" else name)
        if not [group for group in self.spellings() if "-h" not in group]:
            return f"usage: {' '.join(words)}"
        return f"usage: {' '.join(words)} [options]   (`{self.prog} -h` lists them)"

    def spellings(self) -> list[tuple[str, ...]]:
        """The option strings of each visible option: ``[("-F", "--fact-dir"), ...]``."""
        return [tuple(a.option_strings) for a in self._actions
                if a.option_strings and a.help != argparse.SUPPRESS]

    def knows(self, option: str) -> bool:
        """Whether ``option`` (``--x=v``, ``-Fdir`` included) is one of this parser's options."""
        known = {s for a in self._actions for s in a.option_strings}
        name = option.split("=", 1)[0]
        return name in known or (len(option) > 2 and not option.startswith("--") and option[:2] in known)

    def nearest(self, option: str) -> str:
        """``; did you mean `-F` (`--fact-dir`)?`` for an unknown option, or nothing."""
        groups = self.spellings()
        every = [s for group in groups for s in group]
        same = [s for s in every if s.lower() == option.lower()]
        close = same or difflib.get_close_matches(option, every, n=1, cutoff=0.6)
        if not close:
            return ""
        group = next(g for g in groups if close[0] in g)        # e.g. ("-F", "--fact-dir"): both
        return _did_you_mean(list(group) if len(group) <= 2 else [close[0]])


def _did_you_mean(spellings: list[str]) -> str:
    if not spellings:
        return ""
    first, *rest = spellings
    return f"; did you mean `{first}`" + "".join(f" (`{s}`)" for s in rest) + "?"


def parse(parser: Parser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by ``parser`` (one with commands); a mistake raises its diagnostic."""
    args, extras = parser.parse_known_args(_with_command(parser, argv))
    if extras:
        command = getattr(args, parser.commands.dest, None)
        raise _unknown(parser.commands.choices[command] if command else parser, extras)
    return args


def _with_command(parser: Parser, argv: list[str]) -> list[str]:
    """``argv``, with ``run`` in front when it is Soufflé's form: a program file first, or one of
    ``run``'s options first (``datalog -F facts prog.dl``)."""
    if not argv or argv[0] in parser.commands.choices or argv[0] in TOP_OPTIONS:
        return argv
    first, run = argv[0], parser.commands.choices["run"]
    if first.startswith("-") and first != "-":
        if not run.knows(first):
            raise parser.mistake(BadOption, f"unknown option {first.split('=', 1)[0]}"
                                 f"{parser.nearest(first.split('=', 1)[0])}")
        command = next((a for a in argv[1:] if a in parser.commands.choices), None)
        if command is not None:
            raise parser.mistake(BadOption, f"{first} goes after the command: {parser.prog} {command} ... {first}")
        return ["run", *argv]
    if first.endswith(".dl") or os.path.isfile(first):
        return ["run", *argv]
    close = difflib.get_close_matches(first, list(parser.commands.choices), n=1)
    raise parser.mistake(BadCommand, f"unknown command {first}{_did_you_mean(close)}")


def _unknown(parser: Parser, extras: list[str]) -> DatalogError:
    """The diagnostic of what ``parser`` left over: an unknown option, else an extra argument."""
    options = [e.split("=", 1)[0] for e in extras if e.startswith("-") and e != "-"]
    if options:
        return parser.mistake(BadOption, f"unknown option {options[0]}{parser.nearest(options[0])}")
    return parser.mistake(BadCommand, f"unexpected argument {extras[0]}")


def mistake(parser: Parser, argv: list[str]) -> str:
    """The rendered diagnostic of parsing ``argv`` (for examples and tests); '' if it parses."""
    try:
        parse(parser, argv)
    except DatalogError as err:
        return err.render()
    return ""
