"""User errors: golden CLI diagnostics in tests/errors/, plus Python-level checks of code and span.

Golden cases
------------
A regression test is two files and no Python::

    tests/errors/<case>.dl          a program that must fail
    tests/errors/<case>.expected    the exact stderr the CLI prints for it

The CLI runs as a subprocess with ``cwd=tests/errors`` and the bare file name,
so paths in the diagnostics are relative and reproducible. The command is

* ``datalog run <case>.dl -F <case>.facts -D <tmp>`` when the directory
  ``<case>.facts/`` exists (fact-file cases);
* otherwise ``datalog run <case>.dl -D <tmp>``; and when the expected error is
  a static one (found before anything is evaluated), ``datalog check <case>.dl``
  must print exactly the same diagnostic too;
* ``<case>.args``, when present, replaces all of this: one shell-quoted line of
  CLI arguments, ``{out}`` standing for the temporary output directory (used
  when the case has no program, e.g. a missing program file).

Every case must exit 1, print nothing to stdout, write nothing to ``-D`` and
show no traceback. A ``<case>.xfail`` file (its text is the reason) marks a
case that documents a known engine bug (strict xfail; its ``.expected`` is
written by hand and says what the engine *should* print).

Regenerate expectations with ``UPDATE_GOLDEN=1 pytest tests/test_errors.py``,
then review every changed ``.expected`` (does the caret point at the right
token? does the message name the relation or variable?). Cases with a
``.xfail`` file are never overwritten.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from tests.cli_process import run_datalog

ERRORS_DIR = Path(__file__).resolve().parent / "errors"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

# Codes reported by `datalog check` (before anything is evaluated or loaded).
STATIC_CODES = {"syntax_error", "undefined_relation", "arity_mismatch", "type_mismatch",
                "unbound_variable", "unsafe_negation", "wildcard_in_head", "cyclic_negation",
                "redefined_relation", "unknown_parameter",
                "unknown_component", "component_arity", "bad_override", "component_cycle",   # components
                "include_path", "unsupported",
                "duplicate_attribute", "redefined_type", "invalid_subtype", "name_clash",   # Soufflé's
                "redefined_directive", "recursive_counter", "invalid_plan", "dependent_aggregates",   # rejections
                "invalid_inline"}
RUNTIME_CODES = {"division_by_zero", "invalid_conversion", "bad_fact_file", "missing_input"}
_CODE = re.compile(r"error\[(\w+)\]")


# ---------------------------------------------------------------- discovery

def _case_names() -> list[str]:
    names = set()
    for pattern in ("*.dl", "*.args", "*.expected"):
        names |= {p.name[: -len(p.suffix)] for p in ERRORS_DIR.glob(pattern)}
    return sorted(names)


def _params(names):
    out = []
    for name in names:
        xfail = ERRORS_DIR / f"{name}.xfail"
        marks = [pytest.mark.xfail(strict=True, reason=xfail.read_text().strip())] if xfail.exists() else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


CASES = _case_names()


def _expected_code(name: str) -> str | None:
    expected = ERRORS_DIR / f"{name}.expected"
    if not expected.exists():
        return None
    match = _CODE.search(expected.read_text())
    return match.group(1) if match else None


def _run_cli(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}       # a warning on stderr would break the comparison
    return run_datalog(*args, cwd=ERRORS_DIR, env=env)


def _command(name: str, out: Path) -> list[str]:
    args_file = ERRORS_DIR / f"{name}.args"
    if args_file.exists():
        return [a.replace("{out}", str(out)) for a in shlex.split(args_file.read_text())]
    facts = ERRORS_DIR / f"{name}.facts"
    if facts.is_dir():
        return ["run", f"{name}.dl", "-F", f"{name}.facts", "-D", str(out)]
    return ["run", f"{name}.dl", "-D", str(out)]


def _compare(name: str, result: subprocess.CompletedProcess, *, update: bool) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == 1, f"exit code {result.returncode}\n{output}"
    assert result.stdout == "", f"stdout should be empty on an error:\n{result.stdout}"
    expected = ERRORS_DIR / f"{name}.expected"
    if update and not (ERRORS_DIR / f"{name}.xfail").exists():
        expected.write_text(result.stderr)
        return
    assert expected.exists(), f"{expected.name} is missing; create it with UPDATE_GOLDEN=1 and review it"
    assert result.stderr == expected.read_text()


# ---------------------------------------------------------------- golden tests

def test_golden_cases_exist():
    assert len(CASES) >= 25


@pytest.mark.parametrize("name", _params(CASES))
def test_golden(name: str, tmp_path: Path):
    """`datalog run` (or the .args command) fails with exactly the expected diagnostic, writing nothing."""
    out = tmp_path / "out"
    out.mkdir()
    result = _run_cli(_command(name, out))
    _compare(name, result, update=UPDATE)
    assert sorted(p.name for p in out.iterdir()) == [], "an output was written despite the error"


STATIC_CASES = [n for n in CASES if _expected_code(n) in STATIC_CODES
                and not (ERRORS_DIR / f"{n}.args").exists() and not (ERRORS_DIR / f"{n}.facts").is_dir()]


@pytest.mark.parametrize("name", _params(STATIC_CASES))
def test_golden_check(name: str):
    """`datalog check` reports a static error exactly as `datalog run` does."""
    _compare(name, _run_cli(["check", f"{name}.dl"]), update=False)


def test_every_code_has_a_golden_case():
    covered = {_expected_code(n) for n in CASES if not (ERRORS_DIR / f"{n}.xfail").exists()}
    required = {"syntax_error", "undefined_relation", "arity_mismatch", "type_mismatch",
                "unbound_variable", "unsafe_negation", "wildcard_in_head", "cyclic_negation",
                "division_by_zero", "invalid_conversion", "bad_fact_file", "missing_input",
                "number_out_of_range", "invalid_arithmetic", "output_path", "input_path"}
    assert required <= covered, f"no golden case for {sorted(required - covered)}"


def test_expected_files_name_their_own_file():
    """A diagnostic with a location uses the case's relative file name, never an absolute path."""
    for name in CASES:
        expected = ERRORS_DIR / f"{name}.expected"
        if not expected.exists():
            continue
        first = expected.read_text().splitlines()[0]
        assert not first.startswith("/"), f"{expected.name}: absolute path in {first!r}"
        if re.match(r"^[^:\s]+:\d+:\d+: ", first):
            assert first.startswith((f"{name}.dl:", f"{name}.facts/")), f"{expected.name}: {first!r}"


# ---------------------------------------------------------------- Python API: code and span

# (code, program, line, column, words the message must contain); compile-time errors.
STATIC = [
    ("syntax_error", ".decl e(a: number)\ne(1)\ne(2).\n", 2, 5, ["missing '.'"]),     # after e(1), not at e(2)
    ("syntax_error", ".decl e(a: number)\np(x) :- e(x) & e(x).\n", 2, 14, ["'&'"]),
    ("syntax_error", ".decl e(a: number)\np(x) :- (e(x).\n", 2, 14, ["')'"]),
    ("syntax_error", '.decl e(a: symbol)\ne("abc).\n', 2, 3, []),
    ("syntax_error", ".decl e(a: number)\np(x) :- e(x)", 2, 13, ["end of input"]),
    ("undefined_relation", ".decl e(a: number)\np(x) :- e(x), f(x, 1).\n.decl p(a: number)\n", 2, 15, ["f/2"]),
    ("undefined_relation", ".decl e(a: number)\n.output g\n", 2, 9, ["g"]),
    ("arity_mismatch", ".decl e(a: number, b: number)\np(x) :- e(x).\n.decl p(a: number)\n", 2, 9, ["e", "2", "1"]),
    ("arity_mismatch", "q(x) :- r(x), r(x, x).\nr(1).\n", 1, 15, ["r", "1", "2"]),
    ("type_mismatch", ".decl e(a: number)\n.decl p(a: symbol)\np(x) :- e(x), p(x).\n", 3, 17, ["x"]),
    ("type_mismatch", ".decl e(a: symbol)\np(y) :- e(x), y = x + 1.\n.decl p(a: number)\n", 2, 19, ["symbol"]),
    ("type_mismatch", ".decl e(a: number, b: symbol)\np(x) :- e(x, y), x < y.\n.decl p(a: number)\n", 2, 18, ["x < y"]),
    ("type_mismatch", '.decl e(a: number, b: symbol)\ne(1, "a").\ne("b", "c").\n', 3, 3, ['"b"', "e/2"]),
    ("type_mismatch", ".decl e(a: numbr)\n", 1, 9, ["numbr"]),
    ("unbound_variable", ".decl e(a: number)\np(x, y) :- e(x).\n.decl p(a: number, b: number)\n", 2, 6, ["y", "p"]),
    ("unbound_variable", ".decl e(a: number)\np(x) :- e(x), x < z.\n.decl p(a: number)\n", 2, 19, ["z"]),
    ("unbound_variable", ".decl e(a: number)\np(x + y) :- e(x).\n.decl p(a: number)\n", 2, 7, ["y"]),
    ("unsafe_negation", ".decl e(a: number)\np(x) :- e(x), !e(y), !e(y).\n.decl p(a: number)\n", 2, 18, ["y", "!e"]),
    ("wildcard_in_head", ".decl e(a: number)\np(x, _) :- e(x).\n.decl p(a: number, b: number)\n", 2, 6, ["p"]),
    ("wildcard_in_head", "p(1, _).\n", 1, 6, ["p"]),
    ("cyclic_negation", ".decl e(a: number)\np(x) :- e(x), !p(x).\n.decl p(a: number)\n", 2, 15, ["p -> p"]),
    ("cyclic_negation", ".decl m(a: number, b: number)\nw(x) :- m(x, y), !l(y).\nl(y) :- m(_, y), w(y).\n.decl w(a: number)\n.decl l(a: number)\n",
     2, 18, ["w -> l -> w"]),
    ("cyclic_negation", ".decl e(a: number, b: number)\nc(x, n) :- e(x, _), n = count : { c(x, _) }.\n.decl c(a: number, b: number)\n",
     2, 25, ["aggregation", "c -> c"]),
    ("redefined_relation", ".decl e(a: number)\n.decl e(a: number)\n", 2, 1, ["e"]),
    ("unknown_parameter", ".decl e(a: number)\n.input e(foo=1)\n", 2, 8, ["foo"]),
]

# Run-time errors: the program checks, ``run()`` fails.
RUNTIME = [
    ("division_by_zero", ".decl e(a: number, b: number)\ne(1, 0).\nq(z) :- e(x, y), z = x / y.\n.decl q(a: number)\n", 3, 22,
     ["q", "1 / 0"]),
    ("division_by_zero", ".decl e(a: number, b: number)\ne(1, 0).\nq(z) :- e(x, y), z = x % y.\n.decl q(a: number)\n", 3, 22,
     ["q"]),
    ("division_by_zero", ".decl e(a: number, b: number)\ne(1, 0).\n"
                         "s(n) :- n = sum z : { e(x, y), z = x / y }.\n.decl s(a: number)\n", 3, 36, ["s"]),
    ("division_by_zero", ".decl e(a: number)\ne(3). e(0).\np(x) :- e(x).\np(y) :- p(x), y = 6 / x.\n.decl p(a: number)\n",
     4, 19, ["p"]),
    ("invalid_conversion", '.decl e(a: symbol)\ne("abc").\nn(x) :- e(s), x = to_number(s).\n.decl n(a: number)\n', 3, 19,
     ["n", "abc"]),
    ("invalid_conversion", '.decl e(a: symbol)\ne("abc").\nn(to_number(s)) :- e(s).\n.decl n(a: number)\n', 3, 3, ["n"]),
    ("invalid_conversion", '.decl e(a: symbol)\ne("x").\np(y) :- e(s), y = to_float(s).\n.decl p(a: float)\n', 3, 19,
     ["p"]),
]


def _raises(text: str, *, run: bool) -> DatalogError:
    with pytest.raises(DatalogError) as info:
        engine = Engine.from_source(text, name="prog.dl")
        if run:
            engine.run()
    return info.value


def _assert_error(err: DatalogError, code: str, line: int, column: int, words: list[str]) -> None:
    assert err.code == code, err.render()
    assert err.span is not None, err.render()
    assert (err.span.line, err.span.column) == (line, column), err.render()
    for word in words:
        assert word in err.message, err.render()
    rendered = err.render().splitlines()
    assert rendered[0].startswith(f"prog.dl:{line}:{column}: error[{code}]: ")
    assert len(rendered) == 3 and rendered[2].startswith("  " + " " * (column - 1) + "^"), err.render()


@pytest.mark.parametrize("code, text, line, column, words", STATIC,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(STATIC)])
def test_static_error_code_and_span(code, text, line, column, words):
    _assert_error(_raises(text, run=False), code, line, column, words)


@pytest.mark.parametrize("code, text, line, column, words", RUNTIME,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(RUNTIME)])
def test_runtime_error_code_and_span(code, text, line, column, words):
    engine = Engine.from_source(text, name="prog.dl")         # checks pass: the error is at run time
    with pytest.raises(DatalogError) as info:
        engine.run()
    _assert_error(info.value, code, line, column, words)


def test_every_code_is_exercised_from_python():
    codes = {c[0] for c in STATIC + RUNTIME} | {"bad_fact_file", "missing_input"}
    assert {"syntax_error", "undefined_relation", "arity_mismatch", "type_mismatch", "unbound_variable",
            "unsafe_negation", "wildcard_in_head", "cyclic_negation", "division_by_zero",
            "invalid_conversion", "bad_fact_file", "missing_input"} <= codes


def _facts_engine(tmp_path: Path, decl: str, facts: str) -> Engine:
    (tmp_path / "e.facts").write_text(facts)
    return Engine.from_source(f".decl e({decl})\n.input e\n", tmp_path, name="prog.dl")


@pytest.mark.parametrize("decl, facts, line, column, words", [
    ("a: number, b: number, c: number", "1\t2\t3\n3\t4\n", 2, 1, ["3 fields", "found 2"]),
    ("a: number, b: number", "1\t2\n3\tx\n", 2, 3, ["'x'", "number"]),
    ("a: number, b: number", "1\t2\n3\n", 2, 1, ["found 1"]),
    ("a: symbol, b: number", "ann\t1\nbob\tten\n", 2, 5, ["'ten'", "number"]),
    ("a: float, b: symbol", "1.5\tx\noops\ty\n", 2, 1, ["'oops'", "float"]),
    ("a: number, b: number", "1\t2\n3\t4.5\n", 2, 3, ["'4.5'"]),
])
def test_bad_fact_file_span_is_the_fact_file(tmp_path, decl, facts, line, column, words):
    engine = _facts_engine(tmp_path, decl, facts)
    with pytest.raises(DatalogError) as info:
        engine.run()
    err = info.value
    assert err.code == "bad_fact_file", err.render()
    assert err.span.file == str(tmp_path / "e.facts")
    assert (err.span.line, err.span.column) == (line, column), err.render()
    for word in words:
        assert word in err.message, err.render()
    assert err.render().splitlines()[1] == "  " + facts.splitlines()[line - 1]


def test_bad_fact_file_short_row_mixed_types(tmp_path):
    engine = _facts_engine(tmp_path, "a: symbol, b: number", "ann\t1\nbob\n")
    with pytest.raises(DatalogError) as info:
        engine.run()
    assert info.value.code == "bad_fact_file"
    assert (info.value.span.line, info.value.span.column) == (2, 1)


def test_blank_line_fact_file_mixed_types(tmp_path):
    engine = _facts_engine(tmp_path, "a: symbol, b: number", "\n")
    engine.run()
    assert engine.rows("e") == []


def test_missing_fact_file(tmp_path):
    engine = Engine.from_source(".decl e(a: number)\n.input e\n", tmp_path, name="prog.dl")
    with pytest.raises(DatalogError) as info:
        engine.run()
    err = info.value
    assert err.code == "missing_input"
    assert (err.span.line, err.span.column) == (2, 8)            # the relation in `.input e`
    assert "e.facts" in err.message and "relation e" in err.message


def test_missing_program_file(tmp_path):
    with pytest.raises(DatalogError) as info:
        Engine.from_file(tmp_path / "nope.dl")
    assert info.value.code == "missing_input"
    assert info.value.span is None
    assert "nope.dl" in info.value.message
    assert info.value.render() == f"error[missing_input]: program file {tmp_path / 'nope.dl'} does not exist"


def test_input_of_undeclared_unused_relation():
    with pytest.raises(DatalogError) as info:
        engine = Engine.from_source(".input r\n", name="prog.dl")
        engine.run()
    assert info.value.code == "undefined_relation"
    assert (info.value.span.line, info.value.span.column) == (1, 8)


# ---------------------------------------------------------------- all or nothing

def _cli(args, cwd):
    return run_datalog(*args, cwd=cwd)


GOOD_PREFIX = """\
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
.output path
.printsize path
edge(1, 2). edge(2, 3).
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_good_prefix_alone_writes_output(tmp_path):
    (tmp_path / "prog.dl").write_text(GOOD_PREFIX)
    result = _cli(["run", "prog.dl", "-D", "out"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n2\t3\n"


@pytest.mark.parametrize("bad", [
    "bad(x) :- path(x, y), y < z.",          # unbound variable
    "bad(x) :- path(x).",                    # arity mismatch
    "bad(x) :- path(x, _), !bad(x).",        # cyclic negation
    "bad(x) :- path(x, _)",                  # syntax error at the very end
])
def test_bad_statement_anywhere_means_nothing_written(tmp_path, bad):
    (tmp_path / "prog.dl").write_text(GOOD_PREFIX + bad + "\n")
    result = _cli(["run", "prog.dl", "-D", "out"], tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stdout == ""                                  # not even the .printsize line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    with pytest.raises(DatalogError):
        Engine.from_source(GOOD_PREFIX + bad + "\n")


def test_runtime_division_by_zero_writes_no_output(tmp_path):
    program = GOOD_PREFIX + ".decl ratio(a: number)\n.output ratio\nratio(x / (y - 2)) :- path(x, y).\n"
    (tmp_path / "prog.dl").write_text(program)
    out = tmp_path / "out"
    out.mkdir()
    (out / "path.csv").write_text("stale\n")                    # a previous run's output stays untouched
    result = _cli(["run", "prog.dl", "-D", "out"], tmp_path)
    assert result.returncode == 1
    assert "error[division_by_zero]" in result.stderr and "ratio" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == ["path.csv"]
    assert (out / "path.csv").read_text() == "stale\n"


def test_bad_fact_file_loads_nothing(tmp_path):
    """Input loading is all or nothing: one bad file means no relation is filled."""
    (tmp_path / "a.facts").write_text("1\n2\n")
    (tmp_path / "b.facts").write_text("1\nx\n")
    engine = Engine.from_source(".decl a(x: number)\n.decl b(x: number)\n.input a\n.input b\n", tmp_path)
    with pytest.raises(DatalogError):
        engine.run()
    assert engine.stored_relation("a").sorted_rows() == [] and engine.stored_relation("b").sorted_rows() == []
    with pytest.raises(DatalogError, match="not a number"):     # an answer runs it again: the same error
        engine.rows("a")
