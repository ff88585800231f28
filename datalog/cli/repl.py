"""The REPL's statements and commands, run against one :class:`~datalog.engine.engine.Engine`.

No terminal here (that is :mod:`datalog.cli.terminal`): :meth:`Session.run` takes one
:class:`~datalog.cli.statements.Statement` and returns the text to print, or raises a
:class:`~datalog.language.errors.DatalogError`. A statement that fails changes nothing: changes go
through engine transactions (all or nothing, also on ``KeyboardInterrupt``) and new rules
through :meth:`Engine.extend <datalog.engine.engine.Engine.extend>` (the same). With a workspace open
(``.open``, ``.save``, ``datalog repl ws/``) the engine is the workspace's: changes are durable
commits and new statements are blocks (``Workspace.addblock``) named ``repl-1``, ``repl-2``, ...

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

import contextlib
import time
from dataclasses import replace
from pathlib import Path

from datalog.language import ast
from datalog.language.errors import BadCommand, DatalogError, MissingInput, Source, SyntaxError_, TransactionState
from datalog.engine.extension import newly_derived
from datalog.language.parser import parse, parse_query
from datalog.sources.files import format_value
from datalog.cli.statements import Statement
from datalog.cli.tables import aligned, stats_table
from datalog.workspace.workspace import Workspace

HELP = """\
statements (each ends with '.'; .decl and other directives end with their line):
  .decl edge(a: number, b: number)   declare a relation (.type .input .output .printsize too)
  path(x, y) :- edge(x, y).          add a rule: evaluated at once, kept up to date after
  edge(1, 2).                        insert a fact (of a relation with rules: added to the program)
  -edge(1, 2).                       retract a fact
  ?- path(1, X).                     query: the rows of the variables (_ matches anything)
  ?- path(x, y), !edge(y, _).        a query may be any rule body
  begin ... commit | rollback        several changes in one transaction
commands:
  .load FILE.dl        add a program's statements      .facts REL [LIMIT]  rows of a relation
  .explain REL         rules, variable orders, backend .stats              sizes, last maintenance
  .delta               what the last commit changed    .timing on|off      elapsed time per statement
  .limit N             rows shown before truncating    .help  .quit        (Ctrl-D quits too)
  .open DIR            continue on a workspace (the writer): changes become durable commits,
                       rules and declarations become blocks repl-1, repl-2, ... (.load too)
  .save DIR            write the session (program and relations) to a new workspace and
                       continue on it; .quit, Ctrl-D or another .open closes it
Ctrl-C cancels a running statement and leaves everything as it was."""
COMMANDS = ("load", "facts", "explain", "stats", "delta", "timing", "limit", "save", "open", "help", "quit")


class Quit(Exception):
    """``.quit``: the caller leaves the loop."""


class Session:
    """One engine (a workspace's, if one is open), an optional open transaction, the last change,
    the program as blocks (for ``.save``), and display settings."""

    def __init__(self, engine, timing: bool = False, limit: int = 50, workspace: Workspace | None = None,
                 program: tuple[str, str] = ("main", ""), facts_dir=None):
        self.engine, self.timing, self.limit = engine, timing, limit
        self.tx = None                      # the Transaction opened by begin, if any
        self.queued = 0                     # changes requested in it
        self.last = None                    # (what, delta) of the last commit or extension
        self.workspace, self.facts_dir = workspace, facts_dir
        self._blocks = [{"name": "main", "source": program[0], "text": program[1], "converted": {}}]

    def close(self) -> None:
        """Close the open workspace, if any (its writer lock is released)."""
        if self.workspace is not None:
            self.workspace.close()

    def run(self, statement: Statement) -> str:
        started = time.perf_counter()
        try:
            text = getattr(self, "_" + statement.kind)(statement)
        except DatalogError as err:
            _as_typed(err, statement)
            raise
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
        return self._extend(statement.positioned(), statement)

    def _insert(self, statement: Statement) -> str:
        _constant_fact(self._atom(statement, "an insert is one fact, such as +edge(1, 2)."))
        return self._clause(statement)

    def _retract(self, statement: Statement) -> str:
        return self._change("-", _constant_fact(self._atom(statement, "a retraction is one fact, such as "
                                                                      "-edge(1, 2).")))

    def _directive(self, statement: Statement) -> str:
        text = statement.positioned().rstrip()
        return self._extend(text[:-1] if text.endswith(".") else text, statement)

    def _extend(self, text: str, statement: Statement, name: str | None = None) -> str:
        """The engine grows by ``text`` (from ``name``, else from the statement)."""
        if self.tx is not None:
            raise TransactionState("declarations and rules cannot be added inside a transaction; "
                                   "commit or rollback first", statement.span())
        source, block = name or statement.name, self._block_name()
        if self.workspace is not None:
            delta = self.workspace.addblock(block, text, source, self.facts_dir)
        else:
            delta = self._extend_in_memory(text, source, block)
        self.last = ("program change", delta)
        stored = f" (stored as block {block})" if self.workspace is not None else ""
        return (_summary(delta) or "ok") + stored

    def _extend_in_memory(self, text: str, source: str, block: str):
        """``Engine.extend``, and the statements kept as a block (as addblock keeps them) for ``.save``."""
        engine, added = self.engine, parse(text, source)
        if not engine.evaluated:
            engine.run()
        converted = {n: [list(r) for r in engine.rows(n)] for n in newly_derived(added, engine.idb, engine.db)}
        delta = engine.extend(added)
        self._blocks.append({"name": block, "source": source, "text": text, "converted": converted})
        return delta

    def _block_name(self) -> str:
        names = {b["name"] for b in self._program_blocks()}
        number = 1
        while f"repl-{number}" in names:
            number += 1
        return f"repl-{number}"

    def _program_blocks(self) -> list[dict]:
        return self.workspace.blocks if self.workspace is not None else self._blocks

    def _is_edb(self, name: str) -> bool:
        return name in self.engine.db and name not in self.engine.idb

    # ------------------------------------------------------------ changes and transactions
    def _change(self, sign: str, atom: ast.Atom) -> str:
        if self.tx is not None:
            _request(self.tx, sign, atom)
            self.queued += 1
            return f"queued ({self.queued} change{'s' * (self.queued != 1)} in this transaction)"
        tx = self.engine.transaction()
        _request(tx, sign, atom)
        self.last = ("commit", self._maintain(tx))
        return _summary(self.last[1]) or "no change"

    def _maintain(self, tx):
        """Commit ``tx``; on an error or Ctrl-C the engine rolls it back and nothing changed."""
        with tx:
            pass
        return tx.delta

    def _begin(self, statement: Statement) -> str:
        if self.tx is not None:
            raise TransactionState("a transaction is already open: commit or rollback it first",
                                   statement.span())
        self.tx, self.queued = self.engine.transaction(), 0
        return "transaction open: changes are applied together at commit; rollback discards them"

    def _commit(self, statement: Statement) -> str:
        delta = self._maintain(self._open_tx(statement))     # on an error the transaction stays open
        self.tx, self.last = None, ("commit", delta)
        return _summary(delta) or "no change"

    def _rollback(self, statement: Statement) -> str:
        self._open_tx(statement)
        queued, self.tx = self.queued, None
        return f"rolled back {queued} change{'s' * (queued != 1)}"

    def _open_tx(self, statement: Statement):
        if self.tx is None:
            raise TransactionState("no transaction is open (begin starts one)", statement.span())
        return self.tx

    # ------------------------------------------------------------ queries
    def _query(self, statement: Statement) -> str:
        """``?- path(1, X).`` reads the relation; a longer body is evaluated as a rule of its own."""
        body = parse_query(statement.positioned(original=True), statement.name)
        if len(body) == 1 and _simple(body[0]):
            names, rows = _lookup(self.engine, body[0])
        else:
            names, rows = self.engine.ask(body)
        if not names:
            return "true" if rows else "false"
        return self._table(names, rows)

    def _table(self, headers: list[str], rows: list[tuple], limit: int | None = None) -> str:
        limit = self.limit if limit is None else limit
        shown = aligned(headers, rows[:limit])
        count = f"{len(rows)} row{'s' * (len(rows) != 1)}"
        if len(rows) > limit:
            count += f", the first {limit} shown (.limit N shows more)"
        return f"{shown}\n{count}"

    def _atom(self, statement: Statement, message: str) -> ast.Atom:
        atom = _single_fact(parse(statement.positioned(), statement.name))
        if atom is None:
            raise SyntaxError_(message, statement.span())
        return atom

    # ------------------------------------------------------------ commands
    def _command(self, statement: Statement) -> str:
        name, *args = statement.text.rstrip().rstrip(".").split()
        name = name[1:]
        if name not in COMMANDS:
            raise BadCommand(f"unknown command .{name}; commands: "
                             f"{', '.join('.' + c for c in COMMANDS)}", statement.span())
        return getattr(self, "_do_" + name)(args, statement)

    def _do_load(self, args, statement) -> str:
        path = _one(args, ".load FILE.dl", statement)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MissingInput(f"cannot read {path}: {exc.strerror or exc}", statement.span()) from None
        return f"loaded {path}: " + self._extend(text, statement, path)

    def _do_facts(self, args, statement) -> str:
        if len(args) not in (1, 2) or (len(args) == 2 and not args[1].isdigit()):
            raise BadCommand("usage: .facts RELATION [LIMIT]", statement.span())
        rows = self.engine.relation(args[0], statement.span()).sorted_rows()
        info = self.engine.schema[args[0]]
        headers = info.column_names or [f"c{i + 1}" for i in range(info.arity)]
        return self._table(headers, rows, int(args[1]) if len(args) == 2 else None)

    def _do_explain(self, args, statement) -> str:
        name = _one(args, ".explain RELATION", statement)
        engine = self.engine
        engine.relation(name, statement.span())
        number, stratum = next((i, s) for i, s in enumerate(engine.checked.strata, 1) if name in s.relations)
        kind = "derived by rules (IDB)" if name in engine.idb else "given by facts and changes (EDB)"
        lines = [f"{name}: {kind}, {len(engine.db[name])} tuples; stratum {number} of "
                 f"{len(engine.checked.strata)} ({'recursive' if stratum.recursive else 'non-recursive'}"
                 f"{': ' + ', '.join(stratum.relations) if len(stratum.relations) > 1 else ''})"]
        for clause in (c for c in stratum.clauses if c.head.relation == name and c.body):
            lines.append(f"  {clause}\n      {engine.plans[id(clause)].describe()}")
        join = "leapfrog loop" if engine.intersect == "leapfrog" else "hash probes"
        lines.append(f"default backend: leapfrog triejoin (levels intersected by {join}); "
                     f"maintenance: {engine.maintenance}")
        return "\n".join(lines)

    def _do_stats(self, args, statement) -> str:
        engine = self.engine
        sizes = [(n, "IDB" if n in engine.idb else "EDB", len(engine.db[n])) for n in engine.relations()]
        text = aligned(["relation", "kind", "tuples"], sizes)
        stats = engine.stats()
        if not stats:
            return text + "\nno maintenance since the program last changed (commit a change to see it)"
        return f"{text}\n\nlast maintenance ({engine.maintenance}), per rule:\n{stats_table(stats)}"

    def _do_delta(self, args, statement) -> str:
        if self.last is None:
            return "nothing changed yet in this session"
        what, delta = self.last
        lines = [f"last {what}: {_summary(delta) or 'no change'}"]
        for name in sorted(delta):
            for sign, rows in (("+", delta[name].inserted), ("-", delta[name].erased)):
                lines.extend(f"{sign}{name}\t" + "\t".join(map(format_value, row))
                             for row in sorted(rows)[:self.limit])
                if len(rows) > self.limit:
                    lines.append(f"... {len(rows) - self.limit} more {sign}{name} rows (.limit N shows more)")
        return "\n".join(lines)

    def _do_timing(self, args, statement) -> str:
        if args not in (["on"], ["off"]):
            raise BadCommand("usage: .timing on|off", statement.span())
        self.timing = args == ["on"]
        return f"timing {args[0]}"

    def _do_limit(self, args, statement) -> str:
        value = _one(args, ".limit N", statement)
        if not value.isdigit() or int(value) < 1:
            raise BadCommand("usage: .limit N (a positive number of rows)", statement.span())
        self.limit = int(value)
        return f"showing at most {self.limit} rows"

    def _do_open(self, args, statement) -> str:
        path = self._workspace_arg(args, ".open DIR", statement)
        if self.workspace is not None and Path(path).resolve() == self.workspace.path.resolve():
            return f"workspace {path} is already open in this session"
        with _located(statement):
            ws = Workspace.open(path, **self._options())
        self._switch(ws)
        return (f"opened workspace {path} (the writer, last commit {ws.seq}): "
                f"{len(ws.engine.relations())} relations; changes are durable commits, rules and "
                f"declarations become blocks")

    def _do_save(self, args, statement) -> str:
        path = self._workspace_arg(args, ".save DIR", statement)
        tables = {n: set(r.tuples) for n, r in self.engine.db.items()}
        with _located(statement):
            ws = Workspace.create_from(path, self._program_blocks(), tables, **self._options())
        self._switch(ws)
        return (f"saved to workspace {path}: {len(ws.blocks)} block{'s' * (len(ws.blocks) != 1)}, "
                f"{len(tables)} relations; the session continues on it (changes are durable commits)")

    def _workspace_arg(self, args, usage: str, statement) -> str:
        path = _one(args, usage, statement)
        if self.tx is not None:
            raise TransactionState(f"{usage.split()[0]} cannot run inside a transaction; commit or "
                                   f"rollback first", statement.span())
        return path

    def _options(self) -> dict:
        return {"intersect": self.engine.intersect, "maintenance": self.engine.maintenance}

    def _switch(self, ws: Workspace) -> None:
        """Continue on ``ws``; the workspace open before (if any) is closed."""
        old, self.workspace, self.engine, self.last = self.workspace, ws, ws.engine, None
        if old is not None:
            old.close()

    def _do_help(self, args, statement) -> str:
        return HELP

    def _do_quit(self, args, statement) -> str:
        raise Quit()


# ---------------------------------------------------------------- helpers

def _single_fact(program: ast.Program) -> ast.Atom | None:
    """The atom of a program that is one fact (``r(...).``), else ``None``."""
    rules = program.rules
    if len(program.statements) == 1 and len(rules) == 1 and not rules[0].body and len(rules[0].heads) == 1:
        return rules[0].heads[0]
    return None


def _simple(literal) -> bool:
    return isinstance(literal, ast.Atom) and all(
        isinstance(a, (ast.Constant, ast.Variable, ast.Wildcard)) for a in literal.args)


def _lookup(engine, atom: ast.Atom) -> tuple[list[str], list[tuple]]:
    """The variables of one atom and their sorted distinct rows, read from its relation."""
    names = list(dict.fromkeys(a.name for a in atom.args if isinstance(a, ast.Variable)))
    columns = [next(i for i, a in enumerate(atom.args) if getattr(a, "name", None) == n) for n in names]
    return names, sorted({tuple(row[i] for i in columns) for row in engine.query(atom)})


def _constant_fact(atom: ast.Atom) -> ast.Atom:
    for arg in atom.args:
        if not isinstance(arg, ast.Constant):
            hint = f' (a symbol is quoted: "{arg}")' if isinstance(arg, ast.Variable) else ""
            raise SyntaxError_(f"a change holds constants only, not {arg}{hint}", arg.span or atom.span)
    return atom


def _request(tx, sign: str, atom: ast.Atom) -> None:
    """One change into a transaction; an error points at the atom typed."""
    row = tuple(arg.value for arg in atom.args)
    try:
        (tx.insert if sign == "+" else tx.retract)(atom.relation, [row])
    except DatalogError as err:
        if err.span is None or err.span.source is not atom.span.source:
            err.span = atom.span
        raise err from None


def _summary(delta) -> str:
    """``edge +1, path +2 -1``: the size of each relation's change, by name."""
    parts = []
    for name in sorted(n for n, change in delta.items() if change):
        change = delta[name]
        counts = [f"+{len(change.inserted)}" * bool(change.inserted), f"-{len(change.erased)}" * bool(change.erased)]
        parts.append(f"{name} {' '.join(c for c in counts if c)}")
    return ", ".join(parts)


def _as_typed(err: DatalogError, statement: Statement) -> None:
    """A diagnostic about the statement shows it as typed (with its ``-``, ``+`` or ``?-``)."""
    span = err.span
    if span is not None and span.source is not None and span.source.text == statement.positioned():
        text = statement.positioned()
        original = text[:len(text) - len(statement.text)] + statement.original()
        err.span = replace(span, source=Source(span.source.name, original))


@contextlib.contextmanager
def _located(statement: Statement):
    """An error without a place (a workspace's) points at the command."""
    try:
        yield
    except DatalogError as err:
        if err.span is None:
            err.span = statement.span()
        raise


def _one(args: list[str], usage: str, statement: Statement) -> str:
    if len(args) != 1:
        raise BadCommand(f"usage: {usage}", statement.span())
    return args[0]

