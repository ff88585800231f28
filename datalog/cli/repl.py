"""A REPL session: each statement run against one :class:`~datalog.engine.engine.Engine`.

No terminal here (that is :mod:`datalog.cli.terminal`): :meth:`Session.run` takes one
:class:`~datalog.cli.statements.Statement` and returns the text to print, or raises a
:class:`~datalog.language.errors.DatalogError`. A statement that fails changes nothing: changes go
through engine transactions (all or nothing, also on ``KeyboardInterrupt``) and new rules
through :meth:`Engine.extend <datalog.engine.engine.Engine.extend>` (the same). Where the program
grows, in memory or in an open workspace, is :mod:`datalog.cli.repl_store`; the ``.`` commands are
:mod:`datalog.cli.repl_commands`.

>>> from datalog.engine.engine import Engine
>>> from datalog.cli.statements import split
>>> session = Session(Engine.from_source(""))
>>> for statement in split('''edge(1, 2). edge(2, 3).
...     path(x, y) :- edge(x, y). path(x, z) :- path(x, y), edge(y, z).
...     -edge(2, 3).  ?- path(1, X).''')[0]:
...     print(session.run(statement))
edge +1
edge +1
path +2
path +1
edge -1, path -2
X
-
2
1 row
"""

from __future__ import annotations

import time
from dataclasses import replace

from datalog.engine import query as queries
from datalog.engine.query import Answers
from datalog.engine.updates import request
from datalog.language import ast
from datalog.language.display import plural
from datalog.language.errors import DatalogError, DatalogWarning, Source, SyntaxError_, TransactionState
from datalog.language.parser import parse, parse_query
from datalog.language.recordtypes import is_ground
from datalog.cli.repl_changes import History
from datalog.engine.absent import absent_retractions, absent_warning
from datalog.cli.repl_commands import run_command
from datalog.cli.repl_store import Store
from datalog.cli.report import summary
from datalog.cli.statements import Statement, as_begun
from datalog.cli.tables import limited
from datalog.workspace.workspace import Workspace


class Session:
    """One engine (a workspace's, if one is open) in its :class:`~datalog.cli.repl_store.Store`, an
    optional open transaction, the last change, and display settings."""

    def __init__(self, engine, timing: bool = False, limit: int = 50, workspace: Workspace | None = None,
                 program: tuple[str, str] = ("main", ""), facts_dir=None):
        self.store = Store(engine, workspace, program, facts_dir)
        self.timing, self.limit = timing, limit
        self.tx = None                      # the Transaction opened by begin, if any
        self.queued = 0                     # changes requested in it
        self.last = None                    # (what, delta) of the last commit or extension
        self.history = History()            # the commits .undo undoes
        self.warnings: list[DatalogWarning] = []    # of the last statement run (printed on stderr)

    @property
    def engine(self):
        return self.store.engine

    @property
    def workspace(self) -> Workspace | None:
        return self.store.workspace

    def close(self) -> None:
        """Close the open workspace, if any (its writer lock is released)."""
        self.store.close()

    def run(self, statement: Statement) -> str:
        started = time.perf_counter()
        self.warnings = []
        try:
            text = getattr(self, "_" + statement.kind)(statement)
        except DatalogError as err:
            _as_typed(err, statement)
            raise
        self.warnings = [w if w.span else replace(w, span=statement.span(original=True)) for w in self.warnings]
        if self.timing and statement.kind != "command":
            text += f" ({(time.perf_counter() - started) * 1000:.1f} ms)"
        return text

    def prompt(self) -> str:
        return "datalog*> " if self.tx is not None else "datalog> "

    # ------------------------------------------------------------ program statements
    def _clause(self, statement: Statement) -> str:
        atom = _single_fact(parse(statement.positioned(), statement.name))
        if atom is not None and self._is_edb(atom.relation):
            return self._change("+", _constant_fact(atom))
        return self.extend(statement.positioned(), statement)

    def _insert(self, statement: Statement) -> str:
        _constant_fact(self._atom(statement, "an insert is one fact, such as +edge(1, 2)."))
        return self._clause(statement)

    def _retract(self, statement: Statement) -> str:
        return self._change("-", _constant_fact(self._atom(statement, "a retraction is one fact, such as "
                                                                      "-edge(1, 2).")))

    def _directive(self, statement: Statement) -> str:
        text = statement.positioned().rstrip()
        return self.extend(text[:-1] if text.endswith(".") else text, statement)

    def extend(self, text: str, statement: Statement, name: str | None = None) -> str:
        """The engine grows by ``text`` (from ``name``, else from the statement)."""
        if self.tx is not None:
            raise TransactionState("declarations and rules cannot be added inside a transaction; "
                                   "commit or rollback first", statement.span())
        delta, block = self.store.extend(text, name or statement.name)
        self.last = ("program change", delta)
        self.history.end()
        stored = f" (stored as block {block})" if self.workspace is not None else ""
        return (summary(delta) or "ok") + stored

    def _is_edb(self, name: str) -> bool:
        return name in self.engine.db and name not in self.engine.idb

    # ------------------------------------------------------------ changes and transactions
    def _change(self, sign: str, atom: ast.Atom) -> str:
        if self.tx is not None:
            request(self.tx, sign, atom)
            self.queued += 1
            return f"queued ({plural(self.queued, 'change')} in this transaction)"
        tx = self.engine.transaction()
        request(tx, sign, atom)
        self.last = ("commit", self._maintain(tx))
        return summary(self.last[1]) or "no change"

    def _maintain(self, tx, span=None):
        """Commit ``tx`` (a retraction of a fact not there is warned about, pointing at ``span``); on
        an error or Ctrl-C the engine rolls it back and nothing changed."""
        retractions, absent = absent_retractions(self.engine, tx.pending)
        with tx:
            pass
        self.history.record(tx.delta, self.engine.idb)
        warning = absent_warning(retractions, absent, span)
        self.warnings += [warning] if warning else []
        return tx.delta

    def undo(self, statement: Statement) -> str:
        """``.undo``: the last commit of this session undone by a commit of its inverse."""
        if self.tx is not None:
            raise TransactionState(".undo cannot run inside a transaction; commit or rollback first",
                                   statement.span())
        delta = self.history.undo(self.engine, statement.span())
        self.last = ("undo", delta)
        durable = " (a durable commit of its own)" if self.workspace is not None else ""
        left = f"; {plural(len(self.history), 'commit')} more can be undone" if self.history else ""
        return f"undid the last commit{durable}: {summary(delta) or 'no change'}{left}"

    def _begin(self, statement: Statement) -> str:
        if self.tx is not None:
            raise TransactionState("a transaction is already open: commit or rollback it first",
                                   statement.span())
        self.tx, self.queued = self.engine.transaction(), 0
        return "transaction open: changes are applied together at commit; rollback discards them"

    def _commit(self, statement: Statement) -> str:
        delta = self._maintain(self._open_tx(statement), statement.span())    # on an error it stays open
        self.tx, self.last = None, ("commit", delta)
        return summary(delta) or "no change"

    def _rollback(self, statement: Statement) -> str:
        self._open_tx(statement)
        queued, self.tx = self.queued, None
        return f"rolled back {plural(queued, 'change')}"

    def _open_tx(self, statement: Statement):
        if self.tx is None:
            raise TransactionState("no transaction is open (begin starts one)", statement.span())
        return self.tx

    # ------------------------------------------------------------ queries
    def _query(self, statement: Statement) -> str:
        answers = self.answer(statement)
        if not answers.columns:
            return "true" if answers.rows else "false"
        return limited(answers.columns, answers.rows, self.limit)

    def answer(self, statement: Statement) -> Answers:
        """The answers of a query (``?- path(1, X).``): its variables and their distinct rows,
        sorted, as ``engine.query`` gives them (:mod:`datalog.engine.query`). Inside a transaction
        the relations are those its changes make, not committed (Engine.tentatively)."""
        if self.tx is not None and self.tx.pending:
            return self.engine.tentatively(self.tx.pending, lambda: self._answer(statement))
        return self._answer(statement)

    def _answer(self, statement: Statement) -> Answers:
        try:
            body = parse_query(statement.positioned(original=True), statement.name)
            return queries.answers(self.engine, body, queries.title(statement.text))
        except DatalogError as err:
            _as_typed(err, statement)
            raise

    def _atom(self, statement: Statement, message: str) -> ast.Atom:
        atom = _single_fact(parse(statement.positioned(), statement.name))
        if atom is None:
            raise SyntaxError_(message, statement.span())
        return atom

    # ------------------------------------------------------------ commands
    def _command(self, statement: Statement) -> str:
        return run_command(self, statement)

    def _unfinished(self, statement: Statement) -> str:
        """Text cut off where the next statement begins: its syntax error, where the parser stops."""
        begun = as_begun(statement)
        try:
            if begun.kind == "query":
                parse_query(begun.positioned(original=True), statement.name)
            else:
                parse(begun.positioned(), statement.name)
        except DatalogError as err:
            _as_typed(err, begun)
            raise
        raise SyntaxError_("this statement is not finished (a rule, fact or query ends with '.')",
                           statement.span())


# ---------------------------------------------------------------- helpers

def _single_fact(program: ast.Program) -> ast.Atom | None:
    """The atom of a program that is one fact (``r(...).``), else ``None``."""
    rules = program.rules
    if len(program.statements) == 1 and len(rules) == 1 and not rules[0].body and len(rules[0].heads) == 1:
        return rules[0].heads[0]
    return None


def _constant_fact(atom: ast.Atom) -> ast.Atom:
    for arg in atom.args:
        if not is_ground(arg):                        # records (issue 18): +p([1, nil]).
            hint = f' (a symbol is quoted: "{arg}")' if isinstance(arg, ast.Variable) else ""
            raise SyntaxError_(f"a change holds constants only, not {arg}{hint}", arg.span or atom.span)
    return atom


def _as_typed(err: DatalogError, statement: Statement) -> None:
    """A diagnostic about the statement shows it as typed (with its ``-``, ``+`` or ``?-``)."""
    span = err.span
    if span is not None and span.source is not None and span.source.text == statement.positioned():
        text = statement.positioned()
        original = text[:len(text) - len(statement.text)] + statement.original()
        err.span = replace(span, source=Source(span.source.name, original))
