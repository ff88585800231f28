"""Plain Datalog's mixed columns (datalog/language/mixed.py): a column the facts give both numbers
and symbols holds both, evaluated, maintained, shown, stored and exchanged like any other, and
compared with the naive evaluator (which keeps plain ints and strs) and with recomputation."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog import DatalogError, Engine
from datalog.language.mixed import MixedNumber, MixedSymbol
from datalog.language.naive import evaluate
from datalog.language.parser import parse
from datalog.workspace.workspace import Workspace
from tests.cli_process import run_datalog
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

PROGRAM = """
p(1). p("a"). p(5). p("5").
e(1, "x"). e("a", 2). e(5, 5).
q(x) :- p(x).
r(x, y) :- e(x, y), p(x).
s(y) :- e(_, y), !p(y).
t(x) :- p(x), x != 5.
u(x) :- p(x), x = 5.
v(x) :- p(x), x = "a".
c(n) :- n = count : { p(_) }.
c("none").
n(x + 1) :- num(x).
num(1). num(2).
n("z").
k(y) :- p(x), x = y.
l(x) :- p(5), p(x), x != "a".
"""


def _naive(text: str, edb=None) -> dict[str, set]:
    return evaluate(parse(text), edb)


def test_a_column_of_numbers_and_symbols_holds_both():
    engine = Engine(PROGRAM)
    assert engine.rows("q") == [(1,), (5,), ("5",), ("a",)]
    assert [type(v) for (v,) in engine.rows("q")] == [MixedNumber, MixedNumber, MixedSymbol, MixedSymbol]
    assert engine.rows("t") == [(1,), ("5",), ("a",)]                  # "5" is not 5
    assert engine.rows("u") == [(5,)] and engine.rows("v") == [("a",)]
    assert engine.rows("s") == [(2,), ("x",)]
    assert engine.rows("c") == [(4,), ("none",)]
    assert engine.rows("n") == [(2,), (3,), ("z",)]
    assert engine.rows("l") == [(1,), (5,), ("5",)]
    for name, rows in _naive(PROGRAM).items():
        assert set(engine.rows(name)) == rows, name


def test_a_variable_joining_a_mixed_column_makes_the_others_mixed():
    """``w(x) :- p(x), m(x).`` with m only numbers: m's column becomes mixed too (its lookups
    then compare numbers with the symbols of p), and so does a column equated with one."""
    text = 'p(1). p("a"). m(1). m(2). sy("a").\nw(x) :- p(x), m(x).\nz(y) :- m(y), sy(x), x = y.\n'
    engine = Engine(text)
    assert engine.schema["m"].types == ["mixed"] and engine.schema["sy"].types == ["mixed"]
    assert engine.rows("w") == [(1,)] and engine.rows("z") == []
    assert {n: set(engine.rows(n)) for n in ("w", "z")} == {n: _naive(text)[n] for n in ("w", "z")}


def test_a_souffle_program_keeps_one_type_per_column():
    with pytest.raises(DatalogError) as refused:
        Engine('.decl p(x: number)\np(1).\np("a").\n')
    assert refused.value.code == "type_mismatch"
    assert (refused.value.span.line, refused.value.span.column) == (3, 3)


@pytest.mark.parametrize("body, column, words", [
    ("p(x), x < 3", 15, "compared with = and != only"),
    ("p(x), y = x + 1", 19, "arithmetic on x"),
    ('p(x), y = cat(x, "a")', 19, "cat on x"),
    ("p(x), y = max x : { p(x) }", 19, "max on x"),
    ("p(x), num(y), x = y + 1", 23, "equate it with a variable or a constant"),
    ("num(x), z = x + 1, !p(z)", 31, "z is a number computed in the rule"),
])
def test_a_mixed_value_is_only_compared_for_equality(body, column, words):
    with pytest.raises(DatalogError) as refused:
        Engine(f'p(1). p("a"). num(3).\nr(x) :- {body}.\n')
    assert refused.value.code == "type_mismatch"
    assert (refused.value.span.line, refused.value.span.column) == (2, column), refused.value.span
    assert words in refused.value.message and "mixed" in refused.value.message


def test_values_from_python_and_arrow_enter_a_mixed_column():
    engine = Engine('p(1). p("a").\nq(x) :- p(x).\n')
    engine.insert("p", [(7,), ("7",)])
    engine.insert("p", pa.table({"c0": [11]}))
    engine.insert("p", pa.table({"c0": ["12", '"12"', "b", '"say \\"hi\\""']}))
    assert engine.rows("q") == [(1,), (7,), (11,), (12,), ("12",), ("7",), ("a",), ("b",), ('say "hi"',)]
    for bad in (True, 1.5, None):
        with pytest.raises(DatalogError) as refused:
            engine.insert("p", [(bad,)])
        assert refused.value.code == "type_mismatch"
    with pytest.raises(DatalogError):
        engine.insert("p", pa.table({"c0": [1.5]}))
    table = engine.relation("q").to_arrow()
    assert table.column("c0").to_pylist()[:3] == ["1", "7", "11"] and '"7"' in table.column("c0").to_pylist()
    again = Engine('p(1). p("a").\nq(x) :- p(x).\n')
    again.insert("p", table)                      # the text reads back to the same values
    assert again.rows("q") == engine.rows("q")
    answers = engine.query('?- q(x), x != "a".')
    assert answers.df()["x"].tolist()[:2] == ["1", "7"]


def test_a_fact_file_of_a_mixed_column_reads_numbers_and_symbols(tmp_path):
    (tmp_path / "e.facts").write_text('5\tb\n"6"\t7\n', encoding="utf-8")
    engine = Engine.from_source('.input e\ne(1, "a").\ne("x", 2).\nf(y) :- e(_, y).\n', facts_dir=tmp_path)
    engine.load_inputs()
    assert engine.rows("e") == [(1, "a"), (5, "b"), ("6", 7), ("x", 2)]
    assert engine.rows("f") == [(2,), (7,), ("a",), ("b",)]


def test_the_cli_shows_a_mixed_column_in_datalog_syntax(tmp_path):
    (tmp_path / "m.dl").write_text('p(1). p("1"). p("a").\n', encoding="utf-8")
    done = run_datalog("repl", "m.dl", cwd=tmp_path, input='?- p(x).\n?- p("1").\n?- p(1).\n')
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:5] == ["x", "---", "1", '"1"', '"a"'], done.stdout


def test_a_workspace_keeps_a_mixed_column(tmp_path):
    text = 'p(1). p("a").\nq(x) :- p(x).\n'
    with Workspace.create(tmp_path / "ws", text) as ws:
        ws.engine.commit(inserts={"p": [(5,), ("5",)]}, retracts={"p": [("a",)]})
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.engine.rows("q") == [(1,), (5,), ("5",)]
        assert [type(v) for (v,) in ws.engine.rows("q")] == [MixedNumber, MixedNumber, MixedSymbol]
        ws.engine.commit(inserts={"p": [("b",), (6,)]})
        assert ws.engine.rows("q") == [(1,), (5,), (6,), ("5",), ("b",)]
        assert ws.verify() == []
    done = run_datalog("query", str(tmp_path / "ws"), "q(X)")
    assert done.stdout.split() == ["1", "5", "6", '"5"', '"b"'], done.stdout


def test_rules_added_later_may_make_a_stored_column_mixed():
    """``extend`` (the REPL's rules, a workspace's addblock) with rules that make e's and q's
    columns mixed: their stored rows become mixed values, and later changes of either kind fit."""
    engine = Engine("e(1). e(2).\nq(x) :- e(x).\n")
    engine.insert("e", [(3,)])
    engine.extend('s("a"). s(2).\nj(x) :- e(x), s(x).\nk(x) :- s(x).\nk(x) :- e(x).\n')
    assert engine.schema["e"].types == engine.schema["q"].types == ["mixed"]
    assert {type(v) for name in ("e", "q") for (v,) in engine.rows(name)} == {MixedNumber}
    engine.insert("e", [("zz",), (4,)])
    assert engine.rows("q") == [(1,), (2,), (3,), (4,), ("zz",)]
    assert engine.rows("k") == [(1,), (2,), (3,), (4,), ("a",), ("zz",)] and engine.rows("j") == [(2,)]
    with pytest.raises(DatalogError) as refused:          # a fact inserted must fit the column as it is
        Engine("n(1).\nm(x) :- n(x).\n").insert("n", [("b",)])
    assert refused.value.code == "type_mismatch"


# ---------------------------------------------------------------- against the twins

DOMAIN = st.sampled_from([0, 1, 2, "0", "1", "a"])
RULES = [
    "path(x, y) :- e(x, y).",
    "path(x, z) :- path(x, y), e(y, z).",
    "lone(x) :- n(x), !path(x, x).",
    "hit(x) :- e(x, {c}).",
    "other(x, y) :- e(x, y), x != y.",
    "same(x) :- e(x, y), y = {c}.",
    "mark({c}) :- n(_).",
    "both(x) :- n(x), e(x, _), !e(_, x).",
    "size(k) :- k = count : {{ e(_, _) }}.",
]
SEED = 'e(9, "b").\ne("c", 8).\nn(9).\nn("c").\nsize("none").\nmark("m").\nmark(9).\n'   # outside DOMAIN


def _literal(value) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


@st.composite
def mixed_programs(draw):
    chosen = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=6, unique=True))
    if "path(x, y) :- e(x, y)." not in chosen and any("path" in r for r in chosen):
        chosen.insert(0, "path(x, y) :- e(x, y).")
    rules = [rule.format(c=_literal(draw(DOMAIN))) for rule in chosen]
    edges = draw(st.sets(st.tuples(DOMAIN, DOMAIN), max_size=8))
    nodes = draw(st.sets(st.tuples(DOMAIN), max_size=4))
    return SEED + "\n".join(rules) + "\n", {"e": edges, "n": nodes}


@st.composite
def batches(draw):
    return [[(draw(st.sampled_from("+-")), draw(st.sampled_from(["e", "n"])), None) for _ in range(k)]
            for k in draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))]


def _engine(text, edb, maintenance):
    engine = Engine(text, maintenance=maintenance)
    for name, rows in edb.items():
        engine.insert(name, sorted(rows, key=repr))
    engine.run()
    return engine


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_programs(), st.data())
def test_maintained_mixed_columns_equal_recomputation_and_the_naive_evaluator(generated, data):
    text, edb = generated
    incremental, reference = _engine(text, edb, "incremental"), _engine(text, edb, "recompute")
    current = {name: set(rows) for name, rows in edb.items()}
    for batch in data.draw(batches()):
        inserts, retracts = {}, {}
        for sign, name, _ in batch:
            row = data.draw(st.tuples(*[DOMAIN] * (2 if name == "e" else 1)))
            (inserts if sign == "+" else retracts).setdefault(name, []).append(row)
        for name, rows in retracts.items():
            retracts[name] = [row for row in rows if row not in inserts.get(name, [])]
        for engine in (incremental, reference):
            engine.commit(inserts=inserts, retracts=retracts)
        for name in ("e", "n"):
            current[name] = (current[name] - set(retracts.get(name, []))) | set(inserts.get(name, []))
        expected = _naive(text, {name: set(rows) for name, rows in current.items()})
        for name, rows in expected.items():
            assert set(incremental.rows(name)) == rows, name
            assert incremental.rows(name) == reference.rows(name), name
