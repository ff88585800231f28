"""The REPL's words and messages: ``quit``/``exit``/``help`` without a dot, ``.undo`` (compared with
engines built afresh), queries inside a transaction (compared with the committed twin), internal
relations kept out of listings, rows in Datalog syntax (compared with the parser: they read back to
the same values), grammatical counts, and retractions of facts not there. The statement layer runs
in-process; the terminal only where the terminal is what is tested (the Enter key on ``quit``)."""

from __future__ import annotations

import re
import sys

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.document import Document

from datalog.cli import main
from datalog.cli.highlight import DatalogCompleter
from datalog.cli.repl import Session
from datalog.cli.repl_commands import HELP, Quit
from datalog.cli.statements import is_complete, split
from datalog.cli.terminal import execute
from datalog.engine.engine import Engine
from datalog.language.composites import Branch, Record
from datalog.language.display import fact_text, plural, value_text
from datalog.language.errors import DatalogError
from datalog.language.parser import parse
from datalog.workspace.workspace import Workspace
from tests.test_repl import Terminal, fresh, run_session, state
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

PROGRAM = """.decl e(a: number, b: number)
.decl path(a: number, b: number)
.decl n(c: number)
.decl lone(a: number)
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
n(c) :- c = count : e(_, _).
lone(x) :- e(x, _), !e(_, x).
"""


def session_on(program: str = PROGRAM, edb=None) -> Session:
    return Session(fresh(program, {"e": [(1, 2), (2, 3)]} if edb is None else edb))


def error_of(session: Session, text: str) -> DatalogError:
    with pytest.raises(DatalogError) as info:
        run_session(session, text)
    return info.value


# ---------------------------------------------------------------- quit, exit, help without a dot

@pytest.mark.parametrize("text", ["quit", "exit", "quit.", ".quit", ".exit", "  exit  // bye"])
def test_quit_and_exit_with_or_without_a_dot_leave(text):
    statements, rest = split(text)
    assert rest is None and [s.kind for s in statements] == ["command"] and is_complete(text)
    with pytest.raises(Quit):
        session_on().run(statements[0])


def test_quit_after_a_line_without_its_dot_is_still_quit():
    statements, rest = split("garbage here\nquit")
    assert rest is None and [(s.kind, s.text) for s in statements] == [("unfinished", "garbage here"), ("command", "quit")]


def test_help_without_a_dot_is_help_and_relations_so_named_still_work():
    assert run_session(session_on(), "help") == [HELP] == run_session(session_on(), ".help")
    session = session_on()
    out = run_session(session, ".decl help(x: number)\nhelp(1).\n.decl exit(x: number)\nexit(x) :- help(x).\n?- exit(X).")
    assert out[1:] == ["help +1", "ok", "exit +1", "X\n-\n1\n1 row"]


def test_quit_at_the_terminal_ends_the_session(tmp_path):
    """The terminal's Enter runs ``quit`` (before: a continuation prompt waiting for a '.')."""
    term = Terminal(tmp_path)
    assert "commands:" in term.enter("help")
    term.child.send("quit\r")
    term.child.expect(pexpect.EOF, timeout=10)
    term.child.close()
    assert term.child.exitstatus == 0


# ---------------------------------------------------------------- .undo

changes = st.lists(st.tuples(st.sampled_from("+-"), st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=4)


@settings(max_examples=15, deadline=None)
@given(st.lists(changes, min_size=1, max_size=4))
def test_each_undo_returns_to_the_state_before_that_commit(commits):
    """After commits c1..ck, each .undo gives the state a fresh engine has with c1..c(k-1) (derived
    relations included): the inverse delta is maintained as any commit."""
    session, edb = session_on(), {(1, 2), (2, 3)}
    first, befores = state(session.engine), []
    for commit in commits:
        before = state(session.engine)
        text = "begin\n" + "\n".join(f"{sign}e({a}, {b})." for sign, a, b in commit) + "\ncommit"
        run_session(session, text)
        for sign, a, b in commit:
            edb = edb | {(a, b)} if sign == "+" else edb - {(a, b)}
        assert state(session.engine) == state(fresh(PROGRAM, {"e": sorted(edb)}))
        if state(session.engine) != before:            # a commit that changed nothing is not undone
            befores.append(before)
    for expected in reversed(befores):
        out = run_session(session, ".undo")[0]
        assert out.startswith("undid the last commit: ") and state(session.engine) == expected
    assert error_of(session, ".undo").code == "nothing_to_undo"
    assert state(session.engine) == first


def test_undo_reports_refuses_and_stops_at_a_program_change():
    session = session_on()
    assert error_of(session, ".undo").code == "nothing_to_undo"
    out = run_session(session, "e(3, 4).\n-e(1, 2).\n.undo")
    assert out[2] == "undid the last commit: e +1, lone +1 -1, n +1 -1, path +3; 1 commit more can be undone"
    assert run_session(session, ".delta")[0].startswith("last undo: e +1")
    assert error_of(session, "begin\n.undo").code == "transaction_state"
    run_session(session, "rollback\n.decl q(x: number)\nq(x) :- e(x, 4).")
    err = error_of(session, ".undo")
    assert err.code == "nothing_to_undo" and "program changed" in err.message
    assert error_of(session, ".undo now").code == "bad_command"


def test_undo_in_a_workspace_session_is_a_durable_commit(tmp_path):
    with Workspace.create(tmp_path / "ws", PROGRAM + "e(1, 2). e(2, 3).\n"):
        pass
    ws = Workspace.open(tmp_path / "ws")
    session = Session(ws.engine, workspace=ws)
    before, seq = state(session.engine), ws.seq
    run_session(session, "e(3, 1).")
    assert run_session(session, ".undo")[0].startswith("undid the last commit (a durable commit of its own): e -1")
    assert state(session.engine) == before and ws.seq == seq + 2
    session.close()
    with Workspace.open(tmp_path / "ws", readonly=True) as again:          # another opening: as before
        assert state(again.engine) == before and again.seq == seq + 2


# ---------------------------------------------------------------- queries inside a transaction

QUERIES = ["?- n(C).", "?- path(1, X).", "?- path(x, y), !lone(x), y > 2.", "?- lone(X).", "?- e(3, 4)."]


@pytest.mark.parametrize("maintenance", ["incremental", "recompute"])
@settings(max_examples=10, deadline=None)
@given(commit=changes)
def test_queries_inside_a_transaction_see_its_changes_and_commit_nothing(maintenance, commit):
    """Each query inside begin answers as the same query after committing the changes would (the
    twin: a session that commits them); the relations stay as they were until commit."""
    session, twin = (Session(Engine.from_source(PROGRAM + "e(1, 2). e(2, 3).", maintenance=maintenance))
                     for _ in range(2))
    session.engine.run()
    twin.engine.run()
    text = "\n".join(f"{sign}e({a}, {b})." for sign, a, b in commit)
    before = state(session.engine)
    run_session(session, "begin\n" + text)
    run_session(twin, text)
    for query in QUERIES:
        assert run_session(session, query) == run_session(twin, query)
        statement = split(query)[0][0]                   # Session.answer too (the notebook's %datalog)
        mine, theirs = session.answer(statement), twin.answer(statement)
        assert (mine.columns, mine.rows) == (theirs.columns, theirs.rows)
    assert state(session.engine) == before
    run_session(session, "commit")
    assert state(session.engine) == state(twin.engine)


def test_a_query_inside_a_transaction_on_a_workspace_writes_no_commit(tmp_path):
    with Workspace.create(tmp_path / "ws", PROGRAM + "e(1, 2).\n"):
        pass
    ws = Workspace.open(tmp_path / "ws")
    session = Session(ws.engine, workspace=ws)
    seq = ws.seq
    out = run_session(session, "begin\ne(2, 3).\n?- path(1, X).\nrollback\n?- path(1, X).")
    assert out[2] == "X\n-\n2\n3\n2 rows" and out[4] == "X\n-\n2\n1 row" and ws.seq == seq
    session.close()


# ---------------------------------------------------------------- internal relations

RANGE = ".decl r(x: number)\nr(x) :- x = range(0, 3000).\n"


def test_internal_relations_stay_out_of_messages_listings_and_completion():
    session = Session(Engine.from_source(""))
    out = run_session(session, RANGE + "?- r(2999).")
    assert out[1] == "r +3000" and out[2] == "true"
    stats = run_session(session, ".stats")[0]
    assert "_range" not in stats and re.search(r"r\s+IDB\s+3000", stats)
    assert re.search(r"_range_0_3000\s+EDB\s+3000", run_session(session, ".stats all")[0])
    assert "_range" not in run_session(session, ".delta")[0]
    assert "_range_0_3000:" in run_session(session, ".explain _range_0_3000")[0]    # when asked for
    completer = DatalogCompleter(lambda: session.engine)
    offered = [c.text for c in completer.get_completions(Document("?- "), None)]
    assert "r" in offered and not any(name.startswith("_") for name in offered)
    assert [c.text for c in completer.get_completions(Document("?- _ra"), None)] == ["_range_0_3000"]
    engine = session.engine
    assert "_range" not in engine.explain().split(":")[0] and "stratum 1" not in engine.explain()
    assert "stratum 1 (non-recursive): _range_0_3000" in engine.explain(internal=True)


def test_status_and_export_leave_internal_relations_out_unless_asked(tmp_path, capsys):
    with Workspace.create(tmp_path / "ws", RANGE):
        pass
    assert main(["status", str(tmp_path / "ws")]) == 0
    out = capsys.readouterr().out
    assert "r\t3000\tidb" in out and "_range" not in out
    assert main(["status", "--internal", str(tmp_path / "ws")]) == 0
    assert "_range_0_3000\t3000\tedb" in capsys.readouterr().out
    assert main(["export", str(tmp_path / "ws"), "-D", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.csv"]


# ---------------------------------------------------------------- rows in Datalog syntax

symbols = st.text(st.sampled_from('ab "\\\n\t\'/é'), max_size=6)
values = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), symbols,
                   st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f == f and str(f) != "-0.0"))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(values, min_size=1, max_size=3))
def test_a_fact_as_shown_reads_back_as_the_same_values(row):
    """The display's text is Datalog: the parser reads it back to the row (symbols with quotes,
    backslashes and newlines, floats with every digit)."""
    text = fact_text("p", tuple(row))
    atom = parse(text + ".").rules[0].heads[0]
    got = [arg.value for arg in atom.args]
    assert [float(g) if isinstance(v, float) else g for g, v in zip(got, row)] == row
    assert [type(g) for g, v in zip(got, row) if not isinstance(v, float)] == [type(v) for v in row if not isinstance(v, float)]


def test_records_and_adts_are_shown_as_written():
    assert value_text(Record((1, "a", Record(())))) == '[1, "a", nil]'
    assert value_text(Branch(("Cons", 1, Branch(("Nil",))))) == "$Cons(1, $Nil)"
    assert fact_text("person", ("carl",)) == 'person("carl")'


def test_repl_messages_show_rows_in_datalog_syntax():
    session = session_on('.decl person(n: symbol, age: number)\nperson("ann", 3).\n', {})
    assert error_of(session, '+person("carl").').message == \
        'person has arity 2, got a row of 1: person("carl")'          # not ('carl',)
    assert "got the symbol" not in error_of(session, '+person("x", "y").').message
    run_session(session, 'person("carl", 4).\n-person("ann", 3).')
    delta = run_session(session, ".delta")[0]
    assert delta.splitlines()[1:] == ['-person("ann", 3).'] and "('" not in delta


# ---------------------------------------------------------------- counts

def test_counts_agree_with_their_noun():
    assert [plural(n, "tuple") for n in (0, 1, 2)] == ["0 tuples", "1 tuple", "2 tuples"]
    session = session_on(".decl one(x: number)\none(1).\n", {})
    assert ", 1 tuple;" in run_session(session, ".explain one")[0]
    assert error_of(session, ".why one(1, 2)").message.endswith("the fact has 2 arguments")
    assert error_of(session, ".why one()").message.endswith("the fact has 0 arguments")
    session = session_on(".decl two(x: number, y: number)\n", {})
    assert error_of(session, ".why two(1)").message.endswith("the fact has 1 argument")
    assert error_of(session, "?- two(1).").message.endswith("used here with 1 argument")
    assert run_session(session, ".limit 1")[0] == "showing at most 1 row"


# ---------------------------------------------------------------- retracting facts not there

def test_retracting_a_fact_not_there_is_a_warning_with_a_count(capsys):
    session = session_on()
    assert run_session(session, "-e(7, 7).") == ["no change"]
    [warning] = session.warnings
    assert warning.code == "retract_absent" and warning.message == "e(7, 7) is not in e: nothing was retracted"
    run_session(session, "-e(1, 2).")
    assert session.warnings == []
    out = run_session(session, "begin\n-e(2, 3).\n-e(8, 8).\n-e(9, 9).\ncommit")
    assert out[-1] == "e -1, lone -1, n +1 -1, path -1"
    assert session.warnings[0].message == "2 of 3 retractions removed nothing (no such fact): e(8, 8), e(9, 9)"
    statement = split("-e(5, 5).", "<t>")[0][0]
    assert execute(session, statement)
    captured = capsys.readouterr()
    assert captured.out == "no change\n"
    assert captured.err.startswith("<t>:1:1: warning[retract_absent]: e(5, 5) is not in e") and "  -e(5, 5).\n" in captured.err
