"""Queries from Python as in the REPL: ``engine.query("?- body.")`` answers any query the REPL's
``?-`` takes with an ``Answers`` (columns, rows, ``df()``, ``pl()``, ``arrow()``); ``engine.ask``
takes text; ``parse_query`` is exported; a wrong query is a coded error with a caret into its
text. Compared against the slow twin: the program with the rule ``ans(vars) :- body.``
evaluated from scratch."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog import Answers, DatalogError, Engine, Workspace
from datalog.cli.commands import main
from datalog.cli.repl import Session
from datalog.cli.statements import split
from tests.strategies import QUERY_VARIABLE, programs, query_bodies

PROGRAM = """
.decl edge(a: number, b: number)
.decl name(a: number, s: symbol)
.decl weight(a: number, w: float)
.decl path(a: number, b: number)
edge(1, 2). edge(2, 3). edge(3, 4). edge(4, 2).
name(1, "one"). name(3, "three"). name(4, "four").
weight(1, 0.5). weight(2, 2.25).
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def engine_of(text: str = PROGRAM) -> Engine:
    engine = Engine.from_source(text)
    engine.run()
    return engine


def twin_answers(text: str, edb: dict, columns: list[str], body: str, types=None) -> list[tuple]:
    """The slow twin: ``ans(columns) :- body.`` added to the program, evaluated from scratch."""
    decl = ", ".join(f"{c}: {t}" for c, t in zip(columns, types or ["number"] * len(columns)))
    engine = Engine.from_source(f"{text}\n.decl ans({decl})\nans({', '.join(columns)}) :- {body}.\n")
    for name, rows in edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine.rows("ans")


# ---------------------------------------------------------------- what failed on 2f12e53

def test_a_conjunction_with_a_comparison_is_answered():
    """Was a syntax_error: engine.query took one atom only."""
    engine = engine_of()
    result = engine.query("?- path(x, y), x > 1.")
    assert isinstance(result, Answers) and result.columns == ["x", "y"]
    assert result.rows == [row for row in engine.rows("path") if row[0] > 1]
    assert len(result) == len(result.rows) and list(result) == result.rows


def test_ask_takes_text():
    """Was AttributeError: 'str' object has no attribute 'span'."""
    engine = engine_of()
    assert engine.ask("?- path(x, y).") == (["x", "y"], engine.rows("path"))
    assert engine.ask("?- path(x, y), !edge(x, y).") == engine.ask(datalog.parse_query("?- path(x, y), !edge(x, y)."))


def test_parse_query_is_exported():
    assert "parse_query" in datalog.__all__
    body = datalog.parse_query("?- path(1, x), x > 2.")
    assert [str(literal) for literal in body] == ["path(1, x)", "x > 2"]


@pytest.mark.parametrize("body, columns, types", [
    ("path(x, y), x < y, !edge(x, y)", ["x", "y"], "number number"),
    ("name(x, s), path(x, y), weight(y, w)", ["x", "s", "y", "w"], "number symbol number float"),
    ("path(_, y), n = count : { path(y, _) }", ["y", "n"], "number number"),
    ("edge(x, y), t = cat(to_string(x), \"-\")", ["x", "y", "t"], "number number symbol"),
    ("path(y, x), (x = 2 ; x = 4)", ["y", "x"], "number number"),
    ("path(1, x), x > 2", ["x"], "number"),                    # one atom and a test: read off the relation
    ("path(3, 2)", [], ""),
    ("path(3, 1)", [], ""),
])
def test_any_repl_query_equals_its_rule_from_scratch(body, columns, types):
    result = engine_of().query(f"?- {body}.")
    assert result.columns == columns
    assert result.rows == twin_answers(PROGRAM, {}, columns, body, types.split())


def test_values_are_python_values_and_tables_have_duckdbs_names():
    result = engine_of().query("?- name(x, s), weight(x, w).")
    assert result.rows == [(1, "one", 0.5)]
    assert [type(v) for v in result.rows[0]] == [int, str, float]
    frame = result.df()
    assert list(frame.columns) == ["x", "s", "w"] and frame.to_dict("list") == {"x": [1], "s": ["one"], "w": [0.5]}
    table = result.arrow()
    assert [str(t) for t in table.schema.types] == ["int64", "string", "double"]
    assert table.to_pylist() == [{"x": 1, "s": "one", "w": 0.5}]
    polars = pytest.importorskip("polars")
    assert result.pl().equals(polars.from_arrow(table)) and result.pl().rows() == result.rows


def test_the_old_forms_still_give_what_they_gave():
    engine = engine_of()
    assert engine.query("path(1, X)") == [row for row in engine.rows("path") if row[0] == 1]
    assert engine.query("path(_, 2).") == [row for row in engine.rows("path") if row[1] == 2]
    with pytest.raises(DatalogError) as err:
        engine.query("path(x, y), x > 1")
    assert err.value.code == "syntax_error" and "?- path(x, y), x > 1." in err.value.message


def test_an_unevaluated_engine_is_evaluated_first():
    engine = Engine.from_source(PROGRAM)
    assert engine.query("?- path(4, x).").rows == [(2,), (3,), (4,)]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("query, code, culprit", [
    ("?- path(x y).", "syntax_error", "y"),
    ("?- nosuch(x).", "undefined_relation", "nosuch(x)"),
    ("?- path(x).", "arity_mismatch", "path(x)"),
    ("?- path(x, y), x > z.", "unbound_variable", "z"),
    ("?- name(x, 5).", "type_mismatch", "5"),
    ("?- edge(x, \"a\").", "type_mismatch", '"a"'),
    ("?- path(1, X, Y).", "arity_mismatch", "path(1, X, Y)"),
    ("?- edge(x, y), z = x / (y - 2).", "division_by_zero", "x / (y - 2)"),      # at run time
])
def test_a_wrong_query_is_a_coded_error_with_a_caret_into_it(query, code, culprit):
    engine = engine_of()
    before = {name: engine.rows(name) for name in engine.relations()}
    for ask in (engine.query, engine.ask):
        with pytest.raises(DatalogError) as err:
            ask(query)
        rendered = err.value.render()
        assert err.value.code == code and f"error[{code}]" in rendered and "?answer" not in rendered
        where = query.index(culprit, 3)
        assert rendered.splitlines()[1:] == ["  " + query, "  " + " " * where + "^" * len(culprit)], rendered
    assert {name: engine.rows(name) for name in engine.relations()} == before


# ---------------------------------------------------------------- the same everywhere

QUERIES = ["?- path(x, y), x < y, !edge(x, y).", "?- path(1, x).", "?- n = count : { path(_, _) }.",
           "?- path(x, x)."]


def test_the_repl_and_the_python_api_give_the_same_answers():
    engine = engine_of()
    session = Session(engine)
    for statement in split("\n".join(QUERIES))[0]:
        answers = session.answer(statement)
        result = engine.query(statement.original())
        assert (answers.columns, answers.rows) == (result.columns, result.rows)


def test_a_one_atom_query_in_the_repl_is_checked_as_any_query():
    """The REPL read a one-atom query off its relation unchecked: a constant of the wrong type gave
    no rows (0 rows) where the same atom with a comparison was a type_mismatch."""
    session = Session(engine_of())
    for text in ('?- edge(x, "a").', '?- edge(x, "a"), x > 1.'):
        (statement,), _ = split(text)
        with pytest.raises(DatalogError) as err:
            session.run(statement)
        assert err.value.code == "type_mismatch" and err.value.span.column == text.index('"a"') + 1


def test_a_workspaces_writer_and_reader_answer_as_a_plain_engine(tmp_path):
    plain = engine_of()
    plain.commit(inserts={"edge": [(4, 5)]})
    want = [(plain.query(q).columns, plain.query(q).rows) for q in QUERIES]
    with Workspace.create(tmp_path / "ws", PROGRAM) as ws:
        ws.engine.commit(inserts={"edge": [(4, 5)]})
        assert [(ws.engine.query(q).columns, ws.engine.query(q).rows) for q in QUERIES] == want
        assert ws.engine.ask(QUERIES[0]) == plain.ask(QUERIES[0])
        seq = ws.seq
    with Workspace.open(tmp_path / "ws", readonly=True) as ws:
        assert [(ws.engine.query(q).columns, ws.engine.query(q).rows) for q in QUERIES] == want
        with pytest.raises(DatalogError) as err:
            ws.engine.query("?- path(x, y), y > z.")
        assert err.value.code == "unbound_variable"
        assert ws.seq == seq


def test_datalog_query_answers_a_workspace_query_as_the_engine_does(tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    assert main(["init", str(tmp_path / "ws"), str(program)]) == 0
    capsys.readouterr()
    assert main(["query", str(tmp_path / "ws"), "?- path(x, y), x > 2, !edge(x, y)"]) == 0
    result = engine_of().query("?- path(x, y), x > 2, !edge(x, y).")
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["\t".join(result.columns)] + ["\t".join(map(str, row)) for row in result.rows]


# ---------------------------------------------------------------- the property

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_query_equals_its_rule_evaluated_from_scratch(data):
    """engine.query(?- body.) on a drawn program, after a drawn commit, equals ``ans(vars) :- body.``
    added to the program and evaluated from scratch over the committed EDB; the columns are the
    body's variables in the order they first appear."""
    generated = data.draw(programs(max_groups=2))
    body = data.draw(query_bodies(generated))
    engine = Engine.from_source(generated.text)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    edb = {name: set(rows) for name, rows in generated.edb.items()}
    name = data.draw(st.sampled_from(sorted(edb)))
    gone = data.draw(st.sets(st.sampled_from(sorted(edb[name]))))
    engine.commit(retracts={name: sorted(gone)})
    edb[name] -= gone
    result = engine.query(f"?- {body}.")
    columns = list(dict.fromkeys(QUERY_VARIABLE.findall(body)))
    assert result.columns == columns
    assert result.rows == twin_answers(generated.text, edb, columns, body)
    assert engine.ask(f"?- {body}.") == (result.columns, result.rows)
