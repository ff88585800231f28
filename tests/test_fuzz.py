"""Fuzzing: whatever text comes in, the engine raises a DatalogError or nothing at all.

Generators feed ``Engine.from_source`` then ``run()`` (and ``rows`` / ``explain``):
random bytes decoded with ``errors='replace'`` and random text, soups of Datalog
tokens, statement-shaped random programs, and the programs in ``programs/``
with a few random edits (run on their real fact files, with both join
strategies). Any exception other than a :class:`DatalogError` fails the test. Crashes the
fuzzers found once have a regression test each at the end of this file.

Evaluation runs under a budget (recursive iterations and tuple count): a random
program such as ``p(x + 1) :- p(x).`` legitimately never terminates.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(p.parent for p in ROOT.glob("programs/*/prog.dl"))
FUZZ = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _OverBudget(Exception):
    """Raised from the progress callback to stop a program that keeps growing."""


def _exercise(text: str, facts_dir=None, intersect: str = "probe") -> None:
    """Build, run and read a program; only DatalogError (or a known bug) may escape."""
    engine = None
    try:
        engine = Engine.from_source(text, facts_dir, name="fuzz.dl", intersect=intersect)
        calls = 0

        def budget(_message: str) -> None:
            nonlocal calls
            calls += 1
            if calls > 100 or sum(len(r) for r in engine.db.values()) > 50_000:
                raise _OverBudget
        engine.run(progress=budget)
        for name in engine.relations():
            engine.rows(name)
        engine.explain()
    except (DatalogError, _OverBudget):
        return


# ---------------------------------------------------------------- random bytes

@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data: bytes):
    _exercise(data.decode("utf-8", errors="replace"))


@FUZZ
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_random_text(text: str):
    _exercise(text)


# ---------------------------------------------------------------- token soup

KEYWORDS = [".decl", ".input", ".output", ".printsize", ".type", "number", "symbol", "float", "unsigned",
            "count", "sum", "min", "max", "mean", "cat", "strlen", "substr", "to_number", "to_string",
            "to_float", "btree", "brie", "IO", "file", "stdout", "filename", "delimiter"]
PUNCTUATION = ["(", ")", "(", ")", ",", ",", ".", ".", ":-", ":", ";", "!", "_", "{", "}", "<:", "=",
               "//", "/*", "*/", "\"", "@", "?-"]
OPERATORS = ["=", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "^"]
NAMES = st.sampled_from(["p", "q", "r", "e", "edge", "path", "x", "y", "z", "X", "Y", "n", "s", "a1", "_x",
                         "q?"])
NUMBERS = st.one_of(st.integers(-3, 40).map(str), st.sampled_from(["0x1f", "2.5", "1e3", "0.0", "-1.5"]))
STRINGS = st.sampled_from(['"a"', '""', '"b c"', '"\\n"', '"\\t"', '"x\\"y"', '"12"', '"é"', '"\\q"'])
TOKENS = st.one_of(st.sampled_from(KEYWORDS), st.sampled_from(PUNCTUATION), st.sampled_from(OPERATORS),
                   NAMES, NAMES, NUMBERS, STRINGS)


@st.composite
def token_soups(draw) -> str:
    tokens = draw(st.lists(TOKENS, min_size=1, max_size=50))
    separators = draw(st.lists(st.sampled_from([" ", " ", " ", "\n", "\t"]), min_size=len(tokens),
                               max_size=len(tokens)))
    if tokens.count("^") > 1:                 # `9 ^ 9 ^ 9` is a legitimately huge number, not a bug
        first = tokens.index("^")
        tokens = tokens[: first + 1] + [t for t in tokens[first + 1:] if t != "^"]
    return "".join(t + s for t, s in zip(tokens, separators))


@FUZZ
@given(token_soups())
def test_token_soup(text: str):
    _exercise(text)


# Statement-shaped programs: mostly well-formed, so they reach the checks, the planner and the evaluator.
RELATIONS = st.sampled_from(["p", "q", "r", "e"])        # few names: recursion and clashes are common
VARIABLES = st.sampled_from(["x", "y", "z", "_"])
CONSTANTS = st.sampled_from(["0", "1", "2", "-3", "2.5", '"a"', '"1"', '""'])


@st.composite
def terms(draw, depth: int = 0) -> str:
    shape = draw(st.sampled_from(["var", "var", "const"] if depth >= 2 else
                                 ["var", "var", "var", "const", "const", "binary", "functor", "aggregate", "negate"]))
    if shape == "var":
        return draw(VARIABLES)
    if shape == "const":
        return draw(CONSTANTS)
    if shape == "binary":
        return f"{draw(terms(depth + 1))} {draw(st.sampled_from('+-*/%^'))} {draw(terms(depth + 1))}"
    if shape == "functor":
        name = draw(st.sampled_from(["cat", "strlen", "substr", "to_number", "to_string", "to_float", "min", "max"]))
        args = draw(st.lists(terms(depth + 1), max_size=3))
        return f"{name}({', '.join(args)})"
    if shape == "aggregate":
        kind = draw(st.sampled_from(["count", "sum", "min", "max", "mean"]))
        target = "" if kind == "count" and draw(st.booleans()) else " " + draw(st.one_of(VARIABLES, CONSTANTS))
        if draw(st.booleans()):
            return f"{kind}{target} : {draw(atoms(depth + 1))}"
        return f"{kind}{target} : {{ {draw(bodies(depth + 1))} }}"
    return f"-{draw(terms(depth + 1))}"


@st.composite
def atoms(draw, depth: int = 0) -> str:
    return f"{draw(RELATIONS)}({', '.join(draw(st.lists(terms(depth + 1), max_size=3)))})"


@st.composite
def bodies(draw, depth: int = 0) -> str:
    literals = []
    for _ in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from(["atom", "atom", "negation", "comparison"] + (["group"] if depth < 2 else [])))
        if shape == "atom":
            literals.append(draw(atoms(depth)))
        elif shape == "negation":
            literals.append("!" + draw(atoms(depth)))
        elif shape == "comparison":
            op = draw(st.sampled_from(["=", "=", "!=", "<", "<=", ">", ">="]))
            literals.append(f"{draw(terms(depth))} {op} {draw(terms(depth))}")
        else:
            literals.append(f"({draw(bodies(depth + 1))}; {draw(bodies(depth + 1))})")
    return ", ".join(literals)


@st.composite
def statements(draw) -> str:
    kind = draw(st.sampled_from(["decl", "type", "io", "fact", "fact", "rule", "rule", "rule"]))
    if kind == "decl":
        types = draw(st.lists(st.sampled_from(["number", "symbol", "float", "unsigned", "T"]), max_size=3))
        return f".decl {draw(RELATIONS)}({', '.join(f'c{i}: {t}' for i, t in enumerate(types))})"
    if kind == "type":
        return f".type T {draw(st.sampled_from(['<:', '=']))} {draw(st.sampled_from(['number', 'symbol', 'T']))}"
    if kind == "io":
        return f"{draw(st.sampled_from(['.input', '.output', '.printsize']))} {draw(RELATIONS)}"
    if kind == "fact":
        return draw(atoms()) + "."
    return f"{draw(atoms())} :- {draw(bodies())}."


@st.composite
def statement_soups(draw) -> str:
    text = "\n".join(draw(st.lists(statements(), min_size=1, max_size=6)))
    if draw(st.integers(0, 3)) == 0:                       # sometimes one small edit on top
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(["", "(", ")", ".", ",", '"', "_", "!", "0"])) + text[i + 1:]
    return text


@FUZZ
@given(text=statement_soups())
def test_statement_soup(text: str, tmp_path_factory):
    _exercise(text, tmp_path_factory.getbasetemp() / "no-facts-here")   # `.input r`: missing_input


# ---------------------------------------------------------------- mutated real programs

@st.composite
def mutated_programs(draw):
    program = draw(st.sampled_from(PROGRAMS))
    text = (program / "prog.dl").read_text()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        edit = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        token = draw(TOKENS)
        if edit == "delete":
            text = text[:i] + text[j:]
        elif edit == "insert":
            text = text[:i] + " " + token + " " + text[i:]
        elif edit == "replace":
            text = text[:i] + token + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text, program / "facts"


@FUZZ
@given(mutated_programs(), st.sampled_from(["probe", "leapfrog"]))
def test_mutated_programs(case, intersect: str):
    text, facts = case
    _exercise(text, facts, intersect)


def test_unmutated_programs_run_cleanly():
    """The fuzz harness itself: real programs run within the budget and raise nothing."""
    for program in PROGRAMS:
        engine = Engine.from_source((program / "prog.dl").read_text(), program / "facts")
        engine.run(progress=lambda _m: None)


# ---------------------------------------------------------------- known bugs, one regression each

def _only_datalog_errors(text: str) -> None:
    try:
        engine = Engine.from_source(text, name="bug.dl")
        engine.run()
        for name in engine.relations():
            engine.rows(name)
    except DatalogError:
        pass


@pytest.mark.parametrize("text", [
    pytest.param(".input r\n", id="input-of-undeclared-unused-relation"),
    pytest.param(".decl q(a: number)\nq(1).\ne(count : { q(_) }) :- q(_).\n.decl e(c0: number)\n", id="aggregate-in-rule-head"),
    pytest.param(".decl q(a: number)\nq(1).\ne(max 2 : q(_)).\n.decl e(c0: number)\n", id="aggregate-in-fact"),
    pytest.param("e(count : { q(_) }).\n", id="aggregate-in-head-over-undeclared"),
    pytest.param(".decl q(a: number)\nq(1).\ne(n) :- q(_), n = count : { q(_) } + 1.\n.decl e(c0: number)\n",
                 id="aggregate-nested-in-expression"),
    pytest.param(".decl p(a: number, b: number)\np(1, 2).\nr(x) :- p(x, _ * 2).\n.decl r(c0: number)\n", id="wildcard-in-expression"),
    pytest.param(".decl p(a: number)\np(1).\nr(x) :- p(x), !p(_ + 1).\n.decl r(c0: number)\n", id="wildcard-in-negated-expression"),
    pytest.param(".decl e(a: number)\ne(3).\np(y) :- e(x), y = max(x).\n", id="max-of-one-number"),
    pytest.param("e(min(2.5)).\n", id="min-of-one-float"),
    pytest.param("r().\ne() :- !r().\n", id="negated-nullary-atom"),
    pytest.param("s(1).\ne(x) :- s(x), !r().\n.decl r()\n.decl s(c0: number)\n.decl e(c0: number)\n", id="negated-nullary-atom-declared"),
    pytest.param("p(" + "1 + " * 1000 + "1).\n", id="long-sum-recursion-error"),
])
def test_known_crash_raises_only_datalog_errors(text: str):
    _only_datalog_errors(text)


def test_max_of_one_symbol_is_the_symbol():
    engine = Engine.from_source('.decl s(a: symbol)\ns("zebra").\ne(y) :- s(x), y = max(x, x).\n.decl e(c0: symbol)\n')
    engine.run()
    assert engine.rows("e") == [("zebra",)]


@pytest.mark.parametrize("rule, facts", [
    ("p(y) :- r(x), y = x + 1.", "abc\n"),
    ("p(y) :- r(x), y = x + 1.", "2.5\n"),
    ('p(y) :- r(x), y = cat(x, "!").', "7\n"),
    ("p(x) :- r(x), x < 5.", "a\n"),
    ("p(y) :- r(x), y = strlen(x).", "7\n"),
    ("p(y) :- r(x), y = sum x : { r(x) }.", "abc\n"),
])
def test_undeclared_input_values_of_the_wrong_type(tmp_path, rule, facts):
    (tmp_path / "r.facts").write_text(facts)
    engine = Engine.from_source(f".input r\n{rule}\n", tmp_path)
    with pytest.raises(DatalogError) as info:
        engine.run()
    assert info.value.code == "type_mismatch", info.value.render()
    assert engine.schema["r"].types == ["auto"] and len(engine.db["r"]) == 0   # nothing loaded


@pytest.mark.parametrize("text, relation, rows", [
    (".decl q(a: number)\nq(1).\nq(2).\ne(n) :- q(_), n = count : { q(_) } + 1.\n.decl e(c0: number)\n", "e", [(3,)]),
    (".decl q(a: number)\nq(1).\ne(n) :- n = 2 * max x : { q(x) }, n > 0.\n.decl e(c0: number)\n", "e", [(2,)]),
    (".decl e(a: number)\ne(3).\np(y) :- e(x), y = max(x, x).\n.decl p(c0: number)\n", "p", [(3,)]),
    ("e(min(2.5, 2.5)).\n", "e", [(2.5,)]),
    ("r().\ne() :- !r().\nf() :- r().\n", "e", []),
    ("r().\ne() :- !r().\nf() :- r().\n", "f", [()]),
    ("s(1).\ne(x) :- s(x), !r().\n.decl r()\n.decl s(c0: number)\n.decl e(c0: number)\n", "e", [(1,)]),
    (".decl r(a: number)\ns(1).\ne(x) :- s(x), !r(_).\n.decl s(c0: number)\n.decl e(c0: number)\n", "e", [(1,)]),
])
def test_fixed_crashes_give_the_right_answer(text, relation, rows):
    engine = Engine.from_source(text)
    engine.run()
    assert engine.rows(relation) == rows


def test_undeclared_input_symbol_times_two(tmp_path):
    (tmp_path / "r.facts").write_text("abc\n")
    engine = Engine.from_source(".input r\np(y) :- r(x), y = x * 2.\n", tmp_path)
    with pytest.raises(DatalogError):
        engine.run()
