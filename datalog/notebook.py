"""The IPython extension: ``%load_ext datalog``, then ``%%datalog`` cells.

A cell holds what the REPL takes (:mod:`datalog.cli.repl`): declarations, facts, rules,
retractions (``-edge(1, 2).``), ``begin`` ... ``commit``, queries (``?- path(1, X).``) and the
``.`` commands, run in order against a session engine. What each statement changed is printed
(``edge +1, path +2``); a query's answers are a pandas DataFrame (``--as polars``, ``arrow``, or
``table``: :class:`datalog.engine.query.Answers`, what ``engine.query`` gives): shown where the
query is, and the cell's value when the query is the cell's last statement (``-o NAME`` also
stores the last answers in the variable ``NAME``). A statement that fails stops the cell with its
diagnostic (a ``UsageError``, no traceback) and changes nothing; the statements before it stay
done, each its own commit as in the REPL (``begin`` ... ``commit`` makes them one).

    %%datalog [NAME] [-w DIR] [-F DIR] [-o VAR] [--as pandas|polars|arrow|table]

``NAME`` (default ``default``) picks the session: a variable of the notebook holding an
:class:`~datalog.engine.engine.Engine` or a :class:`~datalog.workspace.workspace.Workspace` is
that engine (or workspace: changes are durable commits, rules are blocks); any other name is
a session engine of its own, kept for the kernel's life (:func:`engine` gives it to Python).
``-w DIR`` continues the session on the workspace ``DIR`` (opened as its writer, or created
from the session's program and relations when there is none: ``DIR`` absent or a directory
without a workspace's files, an empty one too); ``.quit`` ends the cell, not the session; ``-F DIR`` reads ``.input``
files from ``DIR``. Long loads and evaluations show a rich progress bar
(:mod:`datalog.engine.progress`). The extension also shows relations and answers as rich
tables in a terminal IPython (Jupyter shows their HTML, ``_repr_html_``).

IPython is an optional dependency (the ``notebook`` extra): this is the one module that
imports it, and only ``%load_ext datalog`` imports this module.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from datalog.cli.repl import Session
from datalog.cli.repl_commands import Quit
from datalog.cli.statements import UNFINISHED, split
from datalog.engine.engine import Engine
from datalog.engine.progress import ProgressBar
from datalog.engine.query import Answers
from datalog.engine.tables import Relation
from datalog.language.errors import DatalogError
from datalog.workspace.workspace import LOG, SNAPSHOT, Workspace

_SESSIONS: dict[str, Session] = {}


def engine(name: str = "default") -> Engine:
    """The engine of the session ``name`` (created empty if there is none yet)."""
    return _session(name, None).engine


def _session(name: str, given) -> Session:
    """The session ``name``: over ``given`` (an Engine or Workspace of the notebook) when there
    is one, else the session engine of that name."""
    session = _SESSIONS.get(name)
    if isinstance(given, Workspace) and (session is None or session.workspace is not given):
        session = _SESSIONS[name] = Session(given.engine, workspace=given)
    elif isinstance(given, Engine) and (session is None or session.engine is not given):
        session = _SESSIONS[name] = Session(given)
    elif session is None:
        session = _SESSIONS[name] = Session(Engine.from_source(""))
    return session


@magics_class
class DatalogMagics(Magics):
    """The ``%%datalog`` cell magic: see the module docstring."""

    @magic_arguments()
    @argument("name", nargs="?", default="default",
              help="the session: a variable holding an Engine or Workspace, or a session engine's name")
    @argument("-w", "--workspace", metavar="DIR", help="continue on the workspace DIR (created if there is none)")
    @argument("-F", "--facts", metavar="DIR", help="read .input files from DIR")
    @argument("-o", "--out", metavar="VAR", help="store the last query's answers in the variable VAR")
    @argument("--as", dest="kind", choices=("pandas", "polars", "arrow", "table"), default="pandas",
              help="what a query's answers are (default: a pandas DataFrame)")
    @cell_magic
    def datalog(self, line: str, cell: str):
        args = parse_argstring(self.datalog, line)
        session = _session(args.name, self.shell.user_ns.get(args.name))
        if args.facts is not None:
            session.store.facts_dir = args.facts
            session.engine.facts_dir = Path(args.facts)
        statements, rest = split(cell, f"<cell {args.name}>")
        if args.workspace is not None:
            statements.insert(0, _command(".open" if _holds_workspace(Path(args.workspace)) else ".save",
                                          args.workspace))
        if rest is not None:                    # the cell ends inside a statement
            statements.append(replace(rest, kind=UNFINISHED))
        value, last = None, None
        for i, statement in enumerate(statements):
            try:
                value = _run(session, statement, args.kind)
            except Quit:                        # the REPL's way out: here the cell's end
                print(QUIT)
                value = None
                break
            if value is not None:
                last = value
                if i < len(statements) - 1:
                    display(value)
        if args.out is not None and last is not None:
            self.shell.user_ns[args.out] = last
        return value


QUIT = ".quit ends the REPL; in a notebook it ends the cell (the session stays; restart the kernel to end it)"


def _holds_workspace(path: Path) -> bool:
    """Whether ``-w DIR`` opens a workspace (DIR has its files: a damaged one is reported by
    ``.open``) or saves the session to a new one (DIR absent, or a directory without them)."""
    return any(os.path.lexists(path / name) for name in (SNAPSHOT, LOG))


def _command(word: str, path: str):
    from datalog.cli.statements import Statement
    return Statement("command", f"{word} {path}", name="<%%datalog -w>")


def _run(session: Session, statement, kind: str):
    """Run one statement; print what it changed, or return a query's answers as ``kind``."""
    engine = session.engine                     # .open and .save switch the session's engine
    with ProgressBar() as bar:
        engine.progress = bar
        try:
            if statement.kind == "query":
                answers = session.answer(statement)        # what engine.query gives
                if not answers.columns:
                    print("true" if answers.rows else "false")
                    return None
                return _as(answers, kind)
            print(session.run(statement))
            return None
        except DatalogError as err:
            raise UsageError(err.render()) from None
        finally:
            engine.progress = None


def _as(answers: Answers, kind: str):
    if kind == "table":
        return answers
    if kind == "arrow":
        return answers.arrow()
    if kind == "polars":
        return answers.pl()
    return answers.df()


def _rich_text(obj, printer, cycle) -> None:
    """IPython's plain-text display of a relation or answers: a rich table."""
    from rich.console import Console
    console = Console(width=getattr(printer, "max_width", 100), force_jupyter=False, color_system=None)
    with console.capture() as captured:
        console.print(obj)
    printer.text(captured.get().rstrip("\n"))


def load_ipython_extension(ipython) -> None:
    """``%load_ext datalog``: the cell magic, and relations and answers shown as rich tables."""
    ipython.register_magics(DatalogMagics)
    plain = ipython.display_formatter.formatters["text/plain"]
    for kind in (Relation, Answers):
        plain.for_type(kind, _rich_text)
