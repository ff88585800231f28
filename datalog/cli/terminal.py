"""``datalog repl``: the terminal side of the REPL (statements are run by :mod:`datalog.cli.repl`).

On a terminal: a prompt_toolkit prompt with persistent history (``~/.datalog_history``,
or ``$DATALOG_HISTORY``), multi-line input (Enter runs the input once its last statement
is finished, else starts a new line), syntax highlighting and Tab completion of relation
names, directives and commands. Ctrl-C at the prompt clears the input; during a statement
it cancels the statement (nothing changes); Ctrl-D quits, asking first if a transaction
is open. With standard input not a terminal (``datalog repl < script.dl``) the statements
are read and run in order: results on stdout, diagnostics on stderr, exit status 1 if any
statement failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.shortcuts import confirm
from prompt_toolkit.styles import Style

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError, InternalError, SyntaxError_, TransactionState
from datalog.cli.highlight import STYLE, DatalogCompleter, DatalogLexer
from datalog.cli.interrupts import cancellable
from datalog.cli.repl import Session
from datalog.cli.repl_commands import Quit
from datalog.cli.statements import Statement, is_complete, split
from datalog.workspace.workspace import Workspace
from datalog.language.display import plural
from datalog.language.rewrites import visible

INTERRUPTED = "interrupted: the statement was cancelled and nothing changed"


def main(args) -> int:
    """Entry point of ``datalog repl [program.dl | workspace/] [-F facts]`` (errors at start-up are
    raised). An open workspace is closed (its lock released) however the session ends."""
    session = _session(args)
    try:
        if sys.stdin.isatty():
            session.timing = True
            return interactive(session, args.program)
        return script(session, sys.stdin.read(), "<stdin>", echo=args.echo)
    finally:
        session.close()


def _session(args) -> Session:
    """A session on the workspace ``args.program`` (a directory), or on the program file (or none)."""
    options = {"intersect": args.join, "maintenance": args.maintenance, "allow_paths": args.allow_paths,
               "memory_budget": args.memory_budget, "provenance": args.provenance}
    if args.program and (args.program.endswith("/") or Path(args.program).is_dir()):
        ws = Workspace.open(args.program, **options)
        return Session(ws.engine, workspace=ws, facts_dir=args.fact_dir)
    if args.program:
        text = _read_program(args.program)
        engine = Engine.from_file(args.program, args.fact_dir, **options)
        program = (args.program, text)
    else:
        engine, program = Engine.from_source("", args.fact_dir, **options), ("main", "")
    engine.run()
    return Session(engine, program=program, facts_dir=args.fact_dir)


def _read_program(path: str) -> str:
    """The program's text, kept for ``.save`` (a file that cannot be read is reported by the parser)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


# ---------------------------------------------------------------- running statements

def execute(session: Session, statement: Statement) -> bool:
    """Run one statement, print its result (or its diagnostic on stderr); ``.quit`` raises Quit."""
    try:
        with cancellable():
            text = session.run(statement)
    except DatalogError as err:
        print(err.render(), file=sys.stderr, flush=True)
        return False
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr, flush=True)
        return False
    except RecursionError:
        print("error[too_deep]: the rule nesting is too deep to evaluate", file=sys.stderr, flush=True)
        return False
    except Quit:
        raise
    except Exception as exc:                      # a bug, not a mistake: keep the session going
        error = InternalError(f"the statement was undone: {type(exc).__name__}: {exc}", statement.span(original=True))
        print(error.render(), file=sys.stderr, flush=True)
        return False
    print(text, flush=True)
    for warning in session.warnings:
        print(warning.render(), file=sys.stderr, flush=True)
    return True


def script(session: Session, text: str, name: str, echo: bool = False) -> int:
    """Run every statement of ``text``; 1 if any failed, if the text ends inside a statement, or if
    a transaction is left open (it is rolled back)."""
    statements, rest = split(text, name)
    ok = True
    try:
        for statement in statements:
            if echo:
                print(_echo(session, statement), flush=True)
            ok &= execute(session, statement)
    except Quit:
        return 0 if ok else 1
    if rest is not None:
        print(_unfinished(rest).render(), file=sys.stderr)
        ok = False
    if session.tx is not None:
        print(TransactionState("the input ended inside a transaction (begin without commit); it was "
                               "rolled back").render(), file=sys.stderr)
        ok = False
    return 0 if ok else 1


def _echo(session: Session, statement: Statement) -> str:
    prompt = session.prompt()
    lines = statement.original().split("\n")
    return "\n".join([prompt + lines[0]] + [" " * (len(prompt) - 5) + "...> " + line for line in lines[1:]])


def _unfinished(rest: Statement) -> DatalogError:
    return SyntaxError_("unexpected end of input: this statement is not finished (a rule, fact or "
                        "query ends with '.')", rest.span())


# ---------------------------------------------------------------- the terminal

def interactive(session: Session, program: str | None) -> int:
    prompt = _prompt_session(session)
    loaded = f" from {'workspace ' * (session.workspace is not None)}{program}" if program else ""
    print(f"datalog repl: {plural(len(visible(session.engine.relations())), 'relation')}{loaded}. "
          f".help for help, Ctrl-D to quit.", flush=True)
    entry = 0
    while True:
        try:
            text = prompt.prompt(session.prompt)
        except KeyboardInterrupt:
            continue
        except EOFError:
            if session.tx is None or _confirm_quit():
                return 0
            continue
        entry += 1
        statements, rest = split(text, f"<input {entry}>")
        try:
            for statement in statements:
                execute(session, statement)
        except Quit:
            if session.tx is None or _confirm_quit():
                return 0
        if rest is not None:
            print(_unfinished(rest).render(), file=sys.stderr, flush=True)


def _confirm_quit() -> bool:
    try:
        return confirm("A transaction is open; quit and roll it back?")
    except (KeyboardInterrupt, EOFError):
        return False


def history_path() -> Path:
    return Path(os.environ.get("DATALOG_HISTORY") or Path.home() / ".datalog_history")


def _prompt_session(session: Session) -> PromptSession:
    path = history_path()
    history = FileHistory(str(path)) if path.parent.is_dir() else InMemoryHistory()
    return PromptSession(history=history, lexer=DatalogLexer(),
                         completer=DatalogCompleter(lambda: session.engine), key_bindings=_keys(), multiline=True,
                         prompt_continuation=lambda width, *_: " " * (width - 5) + "...> ",
                         style=Style.from_dict(STYLE), complete_while_typing=False)


def _keys() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter")
    def _enter(event):
        buffer = event.current_buffer
        if buffer.document.is_cursor_at_the_end and is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return keys

