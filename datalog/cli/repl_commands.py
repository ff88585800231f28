"""The REPL's commands (``.load``, ``.facts``, ``.explain``, ``.stats``, ``.delta``, ``.undo``, ``.timing``,
``.limit``, ``.open``, ``.save``, ``.help``, ``.quit``/``.exit``), each run on a :class:`~datalog.cli.repl.Session`:
it returns the text to print or raises a :class:`~datalog.language.errors.DatalogError`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from datalog.language import numbers
from datalog.language.errors import BadCommand, DatalogError, MissingInput, TransactionState
from datalog.language.display import fact_text, plural
from datalog.language.rewrites import is_internal, visible
from datalog.cli.report import summary
from datalog.cli.statements import Statement
from datalog.cli.tables import aligned, limited, stats_table

HELP = """\
statements (each ends with '.'; .decl and other directives end with their line):
  .decl edge(a: number, b: number)   declare a relation (.type .input .output .printsize too)
  path(x, y) :- edge(x, y).          add a rule: evaluated at once, kept up to date after
  edge(1, 2).                        insert a fact (of a relation with rules: added to the program)
  -edge(1, 2).                       retract a fact
  ?- path(1, X).                     query: the rows of the variables (_ matches anything)
  ?- path(x, y), !edge(y, _).        a query may be any rule body
  begin ... commit | rollback        several changes in one transaction (queries inside see them)
commands:
  .load FILE.dl        add a program's statements      .facts REL [LIMIT]  rows of a relation
  .explain REL         rules, variable orders, backend .stats              sizes, last maintenance
  .why FACT            why path(1, 4) holds: its proof .whynot FACT         why it does not: the
                       (least height), as Soufflé draws it                  literal each rule fails at
  .delta               what the last commit changed    .timing on|off      elapsed time per statement
  .undo                undo the last commit (again:    .stats all          the relations rewrites
                       the one before)                                      made (_range_...) too
  .limit N             rows shown before truncating    .help  .quit        (help, quit, exit, Ctrl-D)
  .open DIR            continue on a workspace (the writer): changes become durable commits,
                       rules and declarations become blocks repl-1, repl-2, ... (.load too)
  .save DIR            write the session (program and relations) to a new workspace and
                       continue on it; .quit, Ctrl-D or another .open closes it
Ctrl-C cancels a running statement and leaves everything as it was."""


class Quit(Exception):
    """``.quit``: the caller leaves the loop."""


def run_command(session, statement: Statement) -> str:
    """Run the command ``statement`` (such as ``.facts path 10``) on ``session``."""
    name, *args = statement.text.rstrip().rstrip(".").split()
    name = name[1:] if name.startswith(".") else name
    if name not in COMMANDS:
        raise BadCommand(f"unknown command .{name}; commands: "
                         f"{', '.join('.' + c for c in COMMANDS)}", statement.span())
    return _RUN[name](session, args, statement)


def _load(session, args, statement) -> str:
    path = _one(args, ".load FILE.dl", statement)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MissingInput(f"cannot read {path}: {exc.strerror or exc}", statement.span()) from None
    return f"loaded {path}: " + session.extend(text, statement, path)


def _facts(session, args, statement) -> str:
    if len(args) not in (1, 2) or (len(args) == 2 and _count(args[1]) is None):
        raise BadCommand("usage: .facts RELATION [LIMIT]", statement.span())
    rows = session.engine.stored_relation(args[0], statement.span()).sorted_rows()
    info = session.engine.schema[args[0]]
    headers = info.column_names or [f"c{i + 1}" for i in range(info.arity)]
    return limited(headers, rows, _count(args[1]) if len(args) == 2 else session.limit)


def _explain(session, args, statement) -> str:
    name = _one(args, ".explain RELATION", statement)
    engine = session.engine
    engine.stored_relation(name, statement.span())
    number, stratum = next((i, s) for i, s in enumerate(engine.checked.strata, 1) if name in s.relations)
    kind = "derived by rules (IDB)" if name in engine.idb else "given by facts and changes (EDB)"
    lines = [f"{name}: {kind}, {plural(len(engine.db[name]), 'tuple')}; stratum {number} of "
             f"{len(engine.checked.strata)} ({'recursive' if stratum.recursive else 'non-recursive'}"
             f"{': ' + ', '.join(stratum.relations) if len(stratum.relations) > 1 else ''})"]
    for clause in (c for c in stratum.clauses if c.head.relation == name and c.body):
        lines.append(f"  {clause}\n      {engine.plans[clause.index].describe()}")
    join = "leapfrog loop" if engine.intersect == "leapfrog" else "hash intersection"
    lines.append(f"default backend: leapfrog triejoin (levels intersected by {join}); "
                 f"maintenance: {engine.maintenance}")
    return "\n".join(lines)


def _stats(session, args, statement) -> str:
    """Sizes of the relations (``.stats all``: also those rewrites made) and the last maintenance."""
    if args not in ([], ["all"]):
        raise BadCommand("usage: .stats [all] (all: also the relations rewrites made, such as _range_0_10)",
                         statement.span())
    engine = session.engine
    sizes = [(n, "IDB" if n in engine.idb else "EDB", len(engine.db[n])) for n in engine.relations()
             if args or not is_internal(n)]
    text = aligned(["relation", "kind", "tuples"], sizes)
    stats = engine.stats()
    if not stats:
        return text + "\nno maintenance since the program last changed (commit a change to see it)"
    return f"{text}\n\nlast maintenance ({engine.maintenance}), per rule:\n{stats_table(stats)}"


def _delta(session, args, statement) -> str:
    if session.last is None:
        return "nothing changed yet in this session"
    what, delta = session.last
    limit = session.limit
    lines = [f"last {what}: {summary(delta) or 'no change'}"]
    for name in sorted(n for n in delta if not is_internal(n)):
        for sign, rows in (("+", delta[name].inserted), ("-", delta[name].retracted)):
            lines.extend(f"{sign}{fact_text(name, row)}." for row in sorted(rows)[:limit])
            if len(rows) > limit:
                lines.append(f"... {len(rows) - limit} more {sign}{name} "
                             f"row{'s' * (len(rows) - limit != 1)} (.limit N shows more)")
    return "\n".join(lines)


def _timing(session, args, statement) -> str:
    if args not in (["on"], ["off"]):
        raise BadCommand("usage: .timing on|off", statement.span())
    session.timing = args == ["on"]
    return f"timing {args[0]}"


def _limit(session, args, statement) -> str:
    value = _count(_one(args, ".limit N", statement))
    if value is None or value < 1:
        raise BadCommand("usage: .limit N (a positive number of rows)", statement.span())
    session.limit = value
    return f"showing at most {plural(session.limit, 'row')}"


def _count(text: str) -> int | None:
    """A row count: ASCII digits within the number range (str.isdigit() also takes '²' and
    Arabic-Indic digits, and int() of 5,000 digits raises), else None."""
    value = numbers.parse_int(text, prefixed=False)
    return value if value is not None and value >= 0 and text.strip() == text and text[:1].isdigit() else None


def _open(session, args, statement) -> str:
    path = _workspace_arg(session, args, ".open DIR", statement)
    if session.store.is_open(path):
        return f"workspace {path} is already open in this session"
    with _located(statement):
        ws = session.store.open(path)
    session.last = None
    session.history.end()
    return (f"opened workspace {path} (the writer, last commit {ws.seq}): "
            f"{plural(len(visible(ws.engine.relations())), 'relation')}; changes are durable commits, rules and "
            f"declarations become blocks")


def _save(session, args, statement) -> str:
    path = _workspace_arg(session, args, ".save DIR", statement)
    with _located(statement):
        ws, relations = session.store.save(path)
    session.last = None
    session.history.end()
    return (f"saved to workspace {path}: {plural(len(ws.blocks), 'block')}, "
            f"{plural(relations, 'relation')}; the session continues on it (changes are durable commits)")


def _workspace_arg(session, args, usage: str, statement) -> str:
    path = _one(args, usage, statement)
    if session.tx is not None:
        raise TransactionState(f"{usage.split()[0]} cannot run inside a transaction; commit or "
                               f"rollback first", statement.span())
    return path


def _undo(session, args, statement) -> str:
    if args:
        raise BadCommand("usage: .undo (undoes the last commit; again, the one before)", statement.span())
    return session.undo(statement)


def _help(session, args, statement) -> str:
    return HELP


def _quit(session, args, statement) -> str:
    raise Quit()


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


def _why(session, args, statement) -> str:
    """``.why path(1, 4)``: the fact's proof; a fact the relation does not hold gets ``.whynot``'s answer."""
    fact = _fact_arg(args, ".why FACT, such as .why path(1, 4)", statement)
    relation, row = session.engine.ground_fact(fact)
    if row not in session.engine.stored_relation(relation):
        return f"{relation} does not hold it; why not:\n" + session.engine.why_not(fact).to_text()
    return session.engine.why(fact).to_text()


def _whynot(session, args, statement) -> str:
    return session.engine.why_not(_fact_arg(args, ".whynot FACT, such as .whynot path(4, 1)", statement)).to_text()


def _fact_arg(args: list[str], usage: str, statement) -> str:
    if not args:
        raise BadCommand(f"usage: {usage}", statement.span())
    return " ".join(args)


_RUN = {"load": _load, "facts": _facts, "explain": _explain, "why": _why, "whynot": _whynot, "stats": _stats, "delta": _delta, "undo": _undo,
        "timing": _timing, "limit": _limit, "save": _save, "open": _open, "help": _help, "quit": _quit, "exit": _quit}
COMMANDS = tuple(_RUN)
