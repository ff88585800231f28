"""Hostile numbers (issue 23, item 2): NaN, infinities, integers beyond 64 bits, conversions and the
text of numbers in fact files. Each case is a coded error at its position or IEEE 754's answer,
never a hang, a traceback or a MemoryError; the CLI cases run as real subprocesses under a timeout
(a regression to the NaN hang fails by timing out, not by hanging the suite)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.evaluation.aggregates import exact_sum
from datalog.language import numbers
from datalog.language.errors import DatalogError
from tests.cli_process import run_datalog
from maintenance.exact_sum import ExactSum
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

ROOT = Path(__file__).resolve().parent.parent
INT_MAX, INT_MIN = 2 ** 63 - 1, -2 ** 63


def cli(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return run_datalog(*args, cwd=cwd, env=env, input=stdin, timeout=20)


def failure(result: subprocess.CompletedProcess, code: str) -> str:
    """The stderr of a run that failed with ``code`` and no traceback."""
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"error[{code}]" in result.stderr, result.stderr
    return result.stderr


def error_of(text: str, facts_dir: Path | None = None) -> DatalogError:
    with pytest.raises(DatalogError) as info:
        Engine.from_source(text, facts_dir, name="prog.dl").run()
    return info.value


def at(err: DatalogError, code: str, line: int, column: int) -> DatalogError:
    assert err.code == code, err.render()
    assert (err.span.line, err.span.column) == (line, column), err.render()
    return err


def rows_of(text: str, facts_dir: Path | None = None, name: str = "r") -> list[tuple]:
    engine = Engine.from_source(text, facts_dir)
    engine.run()
    return engine.rows(name)


# ---------------------------------------------------------------- 1. NaN: refused, never a hang

FLOAT_PROGRAM = ".decl f(x: float)\n.input f\n.decl g(x: float)\ng(x) :- f(x).\n.output g\n"


@pytest.mark.parametrize("spelling", ["nan", "NaN", "-nan", "+NAN"])
def test_nan_in_a_fact_file_is_bad_fact_file_at_its_line(tmp_path, spelling):
    (tmp_path / "f.facts").write_text(f"1.5\n{spelling}\n")
    err = at(error_of(FLOAT_PROGRAM, tmp_path), "bad_fact_file", 2, 1)
    assert err.span.file == str(tmp_path / "f.facts") and "NaN" in err.message


def test_nan_does_not_hang_init_run_or_updates(tmp_path):
    """The issue's hang: one nan made `datalog init` loop forever in the recording leapfrog."""
    (tmp_path / "prog.dl").write_text(FLOAT_PROGRAM)
    (tmp_path / "f.facts").write_text("1.5\nnan\nNaN\ninf\n")
    (tmp_path / "up.dl").write_text("+f(2.5).\ncommit.\n")
    assert "f.facts:2:1" in failure(cli(["init", "ws", "prog.dl", "-F", "."], tmp_path), "bad_fact_file")
    assert not (tmp_path / "ws").exists()                       # a failed init leaves no workspace
    failure(cli(["run", "prog.dl", "-F", ".", "-D", "-", "--updates", "up.dl"], tmp_path), "bad_fact_file")
    failure(cli(["run", "prog.dl", "-F", ".", "-D", "-"], tmp_path), "bad_fact_file")


def test_infinities_load_join_and_maintain(tmp_path):
    """inf and -inf are values: a workspace holds them and a commit retracting one works."""
    (tmp_path / "prog.dl").write_text(FLOAT_PROGRAM)
    (tmp_path / "f.facts").write_text("1.5\ninf\n-Infinity\n")
    (tmp_path / "up.dl").write_text("-f(1.5).\ncommit.\n")
    assert cli(["init", "ws", "prog.dl", "-F", "."], tmp_path).returncode == 0
    result = cli(["update", "ws", "up.dl"], tmp_path)
    assert result.returncode == 0, result.stderr
    result = cli(["query", "ws", "g(x)"], tmp_path)
    assert sorted(result.stdout.split()) == ["-inf", "inf"], result.stdout + result.stderr


@pytest.mark.parametrize("value", [math.nan, -math.nan])
def test_nan_is_refused_by_insert_and_transactions(value):
    engine = Engine.from_source(".decl f(x: float)\ng(x) :- f(x).\n.decl g(c0: float)\n")
    with pytest.raises(DatalogError) as info:
        engine.insert("f", [(value,)])
    assert info.value.code == "number_out_of_range" and "NaN" in info.value.message
    engine.insert("f", [(1.0,)])
    engine.run()
    with pytest.raises(DatalogError) as info:
        with engine.transaction() as tx:
            tx.insert("f", [(2.0,), (value,)])
    assert info.value.code == "number_out_of_range"
    assert engine.rows("g") == [(1.0,)]                         # the transaction changed nothing


@pytest.mark.parametrize("expression, line_text", [
    ("x = a - b", "inf - inf"), ("x = a * 0.0", "inf * 0.0"), ("x = a / b", "inf / inf"),
    ("x = a % 2.0", "inf % 2.0"), ("x = (0.0 - 8.0) ^ 0.5", "-8.0 ^ 0.5"),
])
def test_arithmetic_with_a_nan_result_is_invalid_arithmetic(expression, line_text):
    program = (".decl f(a: float, b: float)\nf(1e308 * 10.0, 1e308 * 10.0).\n"
               f"r(x) :- f(a, b), {expression}.\n.decl r(x: float)\n")
    err = at(error_of(program), "invalid_arithmetic", 3, 22)
    assert line_text in err.message and "NaN" in err.message and "r" in err.message


def test_float_arithmetic_follows_ieee_754_for_infinities():
    program = (".decl f(a: float)\nf(1e308).\n"
               "r(x) :- f(a), x = a * 10.0.\nr(x) :- f(a), x = a * 10.0 + 1.0.\n"
               "r(x) :- f(a), x = 0.0 - a * 10.0.\nr(x) :- f(a), x = a ^ 2.0.\nr(x) :- f(a), x = (0.0 - a) ^ 3.0.\n"
               "r(x) :- f(a), x = 1.0 / (a * 10.0).\n.decl r(c0: float)\n")
    assert sorted(rows_of(program)) == [(-math.inf,), (0.0,), (math.inf,)]


# ---------------------------------------------------------------- 2. sums of infinities

SUM = ".decl f(x: float)\n.input f\n.decl s(x: float)\ns(n) :- n = sum x : { f(x) }.\n"


@pytest.mark.parametrize("facts, expected", [
    ("inf\n1\n", math.inf), ("-inf\n1e308\n", -math.inf),
    ("1e308\n1.7e308\n-1e308\n", 1.7e308),                      # fsum raised OverflowError here
    ("1.7e308\n1.6e308\n", math.inf),                           # the exact sum passes the largest double
    ("1e308\n1.5e308\ninf\n", math.inf),                         # fsum overflowed, then Fraction(inf) crashed
    ("1e308\n1.5e308\n-inf\n", -math.inf),                       # (soak seed 28-facts-10328)
])
def test_float_sums_are_ieee_754_sums(tmp_path, facts, expected):
    (tmp_path / "f.facts").write_text(facts)
    assert rows_of(SUM, tmp_path, "s") == [(expected,)]


@pytest.mark.parametrize("facts", ["inf\n-inf\n", "1e308\n1.5e308\ninf\n-inf\n"])
def test_sum_of_inf_and_minus_inf_is_invalid_arithmetic(tmp_path, facts):
    (tmp_path / "f.facts").write_text(facts)
    err = at(error_of(SUM, tmp_path), "invalid_arithmetic", 4, 13)
    assert "sum" in err.message and "s" in err.message
    (tmp_path / "mean.dl").write_text(SUM.replace("sum", "mean"))
    (tmp_path / "prog.dl").write_text(SUM + ".output s\n")
    assert "prog.dl:4:13" in failure(cli(["run", "prog.dl", "-F", ".", "-D", "-"], tmp_path), "invalid_arithmetic")
    failure(cli(["run", "mean.dl", "-F", ".", "-D", "-"], tmp_path), "invalid_arithmetic")


def test_maintained_sum_reaching_nan_is_an_error_and_changes_nothing():
    """Maintenance keeps the float sum exactly (ExactSum); the commit that adds -inf to a group
    holding inf fails with the same code as evaluation from scratch, and is undone."""
    engine = Engine.from_source(".decl f(g: number, x: float)\ns(g, n) :- f(g, _), n = sum x : { f(g, x) }.\n.decl s(c0: number, c1: float)\n")
    engine.insert("f", [(1, math.inf), (2, 1.0)])
    engine.run()
    with pytest.raises(DatalogError) as info:
        engine.commit(inserts={"f": [(1, -math.inf), (2, 2.0)]})
    assert info.value.code == "invalid_arithmetic"
    assert sorted(engine.rows("s")) == [(1, math.inf), (2, 1.0)]
    assert sorted(engine.rows("f")) == [(1, math.inf), (2, 1.0)]
    engine.commit(inserts={"f": [(2, math.inf)]})               # the engine still maintains
    assert sorted(engine.rows("s")) == [(1, math.inf), (2, math.inf)]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False), st.integers(-10, 10)), max_size=8))
def test_from_scratch_sum_equals_the_maintained_sum(values):
    """Evaluation from scratch (exact_sum) and maintenance (ExactSum) agree on every float sum."""
    values = [float(v) for v in values]
    total = ExactSum()
    for v in values:
        total.add(v)
    expected, got = total.value(), exact_sum(values)
    assert (math.isnan(expected) and math.isnan(got)) or (got == expected and
                                                          math.copysign(1, got) == math.copysign(1, expected)
                                                          or got == expected == 0.0)


# ---------------------------------------------------------------- 3. integers: signed 64-bit

def test_an_integer_literal_of_5000_digits_is_number_out_of_range(tmp_path):
    digits = "9" * 5000
    err = at(error_of(f".decl r(x: number)\nr({digits}).\n"), "number_out_of_range", 2, 3)
    assert "5000 digits" in err.message and len(err.message) < 200
    (tmp_path / "prog.dl").write_text(f".decl r(x: number)\nr({digits}).\n.output r\n")
    failure(cli(["check", "prog.dl"], tmp_path), "number_out_of_range")


@pytest.mark.parametrize("literal, ok", [
    (str(INT_MAX), True), (str(INT_MAX + 1), False), ("0x7fffffffffffffff", True), ("0x8000000000000000", False),
    (f"-{INT_MAX}", True), ("1e308", True), ("1e309", False), ("2.5e-400", True),
])
def test_literal_bounds(literal, ok):
    program = f".decl r(x: {'float' if 'e' in literal else 'number'})\nr({literal}).\n"
    if ok:
        assert len(rows_of(program)) == 1
    else:
        at(error_of(program), "number_out_of_range", 2, 3)


@pytest.mark.parametrize("expression, column, words", [
    ("x = 2 ^ 40000000000", 13, ["2 ^ 40000000000"]),                 # was a MemoryError
    ("x = 10 ^ 400", 13, ["10 ^ 400"]),
    ("x = 9223372036854775807 + 1", 13, ["+ 1"]),
    ("x = 0 - 9223372036854775807 - 2", 13, ["- 2"]),
    ("x = 4294967296 * 4294967296", 13, ["*"]),
    ("x = -(0 - 9223372036854775807 - 1)", 13, ["-("]),
    ("x = (0 - 9223372036854775807 - 1) / -1", 13, ["/ -1"]),
    ('x = to_number("99999999999999999999")', 13, ["to_number", "range"]),
])
def test_integer_overflow_is_number_out_of_range_at_the_operation(expression, column, words):
    err = at(error_of(f"r(x) :- {expression}.\n"), "number_out_of_range", 1, column)
    for word in words:
        assert word in err.message, err.render()


def test_to_float_of_a_huge_integer_is_an_error_not_an_overflow():
    """to_float(10 ^ 400) raised OverflowError: now 10 ^ 400 itself is out of range."""
    at(error_of(".decl r(x: float)\nr(x) :- x = to_float(10 ^ 400).\n"), "number_out_of_range", 2, 22)
    assert rows_of(".decl r(x: float)\nr(x) :- x = to_float(9223372036854775807).\n") == [(2.0 ** 63,)]


def test_the_integer_range_is_reachable_exactly():
    program = (f"r(x) :- x = {INT_MAX} - 1 + 1.\nr(x) :- x = 0 - {INT_MAX} - 1.\nr(x) :- x = (0 - 2) ^ 63.\n"
               "r(x) :- x = 2 ^ 62.\nr(x) :- x = 1 ^ 40000000000.\nr(x) :- x = (0 - 1) ^ 40000000001.\n")
    assert sorted(rows_of(program)) == [(INT_MIN,), (-1,), (1,), (2 ** 62,), (INT_MAX,)]


def test_an_integer_sum_beyond_the_range_is_number_out_of_range():
    err = error_of(f".decl f(x: number)\nf({INT_MAX}). f(1).\ns(n) :- n = sum x : {{ f(x) }}.\n.decl s(n: number)\n")
    assert at(err, "number_out_of_range", 3, 13) and "sum" in err.message
    engine = Engine.from_source(".decl f(x: number)\ns(n) :- n = sum x : { f(x) }.\n.decl s(c0: number)\n")
    engine.insert("f", [(INT_MAX,)])
    engine.run()
    with pytest.raises(DatalogError) as info:                   # maintained: the same error
        engine.commit(inserts={"f": [(1,)]})
    assert info.value.code == "number_out_of_range"
    assert engine.rows("s") == [(INT_MAX,)]


def test_an_out_of_range_insert_is_refused():
    engine = Engine.from_source(".decl f(x: number)\n")
    with pytest.raises(DatalogError) as info:
        engine.insert("f", [(2 ** 63,)])
    assert info.value.code == "number_out_of_range" and "f column 1" in info.value.message
    with pytest.raises(DatalogError) as info:
        engine.insert("f", [(10 ** 5000,)])                     # its message does not print 5000 digits
    assert "about 5001 digits" in info.value.message


def test_to_string_and_output_of_extreme_values_write_complete_files(tmp_path):
    """Printing a huge integer raised ValueError and left a 0-byte temporary file in -D."""
    (tmp_path / "prog.dl").write_text(
        f".decl r(x: number, s: symbol)\nr(x, to_string(x)) :- x = 0 - {INT_MAX} - 1.\n.output r\n"
        ".decl big(x: number)\nbig(x) :- x = 10 ^ 19.\n.output big\n")
    failure(cli(["run", "prog.dl", "-D", "out"], tmp_path), "number_out_of_range")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
    (tmp_path / "prog.dl").write_text(
        f".decl r(x: number, s: symbol)\nr(x, to_string(x)) :- x = 0 - {INT_MAX} - 1.\n.output r\n")
    assert cli(["run", "prog.dl", "-D", "out"], tmp_path).returncode == 0
    assert (tmp_path / "out" / "r.csv").read_text() == f"{INT_MIN}\t{INT_MIN}\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.csv"]


@pytest.mark.parametrize("argument, code", [
    ('"1_0"', "invalid_conversion"), ('"\u0661\u0662"', "invalid_conversion"), ('"0x1g"', "invalid_conversion"),
    ('"12345678901234567890123"', "number_out_of_range"), ('"9" ', None),
])
def test_to_number_reads_ascii_decimal_integers_only(argument, code):
    program = f"r(x) :- x = to_number({argument.strip()}).\n"
    if code is None:
        assert rows_of(program) == [(9,)]
    else:
        at(error_of(program), code, 1, 13)


def test_to_number_reads_hex_and_binary_as_souffle():
    # Soufflé's to_number is strtoll of base 0 for 0x, with 0b as its own extension (issue 18)
    assert rows_of('r(x) :- x = to_number("0x10") + to_number("-0b11").\n') == [(13,)]


# ---------------------------------------------------------------- 4. the text of numbers in fact files

MIXED = ".decl f(x: float, n: number, s: symbol)\n.input f\n"


@pytest.mark.parametrize("line, column, words", [
    ("1_0.5\t1\ta", 1, ["'1_0.5'", "not a float"]),             # Python's float() read 10.5
    ("1.5\t1_0\ta", 5, ["'1_0'", "not a number"]),
    ("1.5\t\u0661\u0662\ta", 5, ["not a number"]),               # int() reads Arabic-Indic digits
    ("\u0661.5\t1\ta", 1, ["not a float"]),
    ("1.5\t\uff11\ta", 5, ["not a number"]),                     # fullwidth digit one
    ("1.5\t99999999999999999999\ta", 5, ["beyond the signed 64-bit range"]),
    ("1.5\t0x10000000000000000\ta", 5, ["beyond"]),
    ("1e400\t1\ta", 1, ["beyond the largest double"]),
    ("0x1p3\t1\ta", 1, ["not a float"]),
    ("1.5\t1.0\ta", 5, ["not a number"]),
])
def test_fact_files_reject_what_souffle_rejects(tmp_path, line, column, words):
    (tmp_path / "f.facts").write_text(f"2.5\t2\tb\n{line}\n", encoding="utf-8")
    err = at(error_of(MIXED, tmp_path), "bad_fact_file", 2, column)
    for word in words:
        assert word in err.message, err.render()


@pytest.mark.parametrize("types", [["number"], ["number", "number"], ["number", "symbol"], ["auto"]])
@pytest.mark.parametrize("text", ["\u0661\u0662", "9223372036854775808", "-9223372036854775809", "1_0"])
def test_the_fast_reader_rejects_non_ascii_and_huge_integers(tmp_path, types, text):
    """Files of integers take a bulk path through int(); it must refuse what the careful one does
    (an auto column that does not hold 64-bit integers is a symbol column)."""
    row = "\t".join([text] + ["7"] * (len(types) - 1))
    (tmp_path / "f.facts").write_text(f"1{chr(9) + '7' if len(types) == 2 else ''}\n{row}\n".replace(
        "1\n", "\t".join(["1"] + ["7"] * (len(types) - 1)) + "\n", 1), encoding="utf-8")
    decl = ", ".join(f"c{i}: {t}" for i, t in enumerate(types) if t != "auto")
    program = (f".decl f({decl})\n.decl r(x: {types[0]})\n" if decl else "") + ".input f\nr(x) :- f(x" + \
        ", _" * (len(types) - 1) + ").\n"
    if types == ["auto"]:
        assert sorted(rows_of(program, tmp_path)) == sorted([("1",), (text,)])
    else:
        at(error_of(program, tmp_path), "bad_fact_file", 2, 1)


@pytest.mark.parametrize("text, value", [
    ("+7", 7), ("-7", -7), ("0x1F", 31), ("-0x10", -16), ("0b101", 5), (f"{INT_MIN}", INT_MIN),
    (f"{INT_MAX}", INT_MAX), ("007", 7), ("0x" + "0" * 80 + "1", 1),
])
def test_fact_files_read_souffle_integers(tmp_path, text, value):
    (tmp_path / "f.facts").write_text(f"{text}\n")
    assert rows_of(".decl f(x: number)\n.input f\nr(x) :- f(x).\n.decl r(c0: number)\n", tmp_path) == [(value,)]


@pytest.mark.parametrize("text, value", [
    ("2", 2.0), ("-2.5", -2.5), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E-3", 0.001),
    ("inf", math.inf), ("+Infinity", math.inf), ("-INF", -math.inf),
])
def test_fact_files_read_souffle_floats(tmp_path, text, value):
    (tmp_path / "f.facts").write_text(f"{text}\n")
    assert rows_of(".decl f(x: float)\n.input f\nr(x) :- f(x).\n.decl r(c0: float)\n", tmp_path) == [(value,)]


@pytest.mark.parametrize("types, text, expected", [
    ("x: symbol", "ann\nbob\n", [("ann",), ("bob",)]),
    ("x: number", "1\n2\n", [(1,), (2,)]),
    ("x: float, y: symbol", "1.5\tann\n", [(1.5, "ann")]),
])
def test_a_byte_order_mark_is_dropped(tmp_path, types, text, expected):
    (tmp_path / "f.facts").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert sorted(rows_of(f".decl f({types})\n.input f\n.decl r({types})\nr(x{', y' * (',' in types)}) :- "
                          f"f(x{', y' * (',' in types)}).\n", tmp_path)) == expected


def test_a_byte_order_mark_is_only_dropped_at_the_start(tmp_path):
    (tmp_path / "f.facts").write_text("ann\n\ufeffbob\n", encoding="utf-8")
    assert rows_of(".decl f(x: symbol)\n.input f\nr(x) :- f(x).\n.decl r(c0: symbol)\n", tmp_path) == [("ann",), ("\ufeffbob",)]


@pytest.mark.parametrize("data, line, column", [
    (b"ann\nb\xffb\n", 2, 2), (b"\xc3\n", 1, 1), (b"a\tb\nc\td\n\xe2\x82\n", 3, 1),
    ("\u00e9t\u00e9\t\xff".encode("utf-8")[:-2] + b"\xff\n", 1, 5),
])
def test_invalid_utf8_is_bad_fact_file_at_its_line(tmp_path, data, line, column):
    """It was reported as missing_input, without a position."""
    (tmp_path / "f.facts").write_bytes(data)
    types = "a: symbol, b: symbol" if b"\t" in data else "a: symbol"
    err = at(error_of(f".decl f({types})\n.input f\n", tmp_path), "bad_fact_file", line, column)
    assert "UTF-8" in err.message and err.span.file == str(tmp_path / "f.facts")
    assert err.render().count("\n") == 2                        # the line is shown, with a caret


def test_fact_file_numbers_never_raise_anything_but_coded_errors(tmp_path):
    """Bounded fuzz of single fields: the reader accepts exactly what numbers.parse_* accept."""
    (tmp_path / "prog.dl").write_text(".decl f(x: number, y: float)\n.input f\nr(x, y) :- f(x, y).\n.decl r(c0: number, c1: float)\n")

    @settings(max_examples=examples(150), deadline=None)
    @given(st.text(alphabet="0123456789+-.eExXbBnaif_ \u0661\uff11", max_size=12),
           st.text(alphabet="0123456789+-.eExXbBnaif_ \u0661\uff11", max_size=12))
    def check(a, b):
        if "\t" in a + b or "\n" in a + b or "\r" in a + b:
            return
        (tmp_path / "f.facts").write_text(f"{a}\t{b}\n", encoding="utf-8")
        x, y = numbers.parse_int(a), numbers.parse_float(b)
        try:
            rows = rows_of((tmp_path / "prog.dl").read_text(), tmp_path)
        except DatalogError as err:
            assert err.code == "bad_fact_file" and (x is None or y is None), err.render()
            return
        assert rows == [(x, y)] and not math.isnan(y)
    check()


# ---------------------------------------------------------------- 5. the REPL: codes, not "internal error"

def test_repl_big_integer_failures_have_codes(tmp_path):
    script = (".decl e, r, q(x: number) .decl t(x: float)\n"
              f"e({'9' * 5000}).\n"
              "r(x) :- x = 2 ^ 100.\n"
              "+e(99999999999999999999).\n"
              'q(x) :- x = to_number("123456789012345678901234").\n'
              "t(x) :- x = to_float(10 ^ 400).\n"
              "+e(5).\n"
              "?- e(x).\n")
    result = cli(["repl"], tmp_path, stdin=script)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.stderr.count("error[number_out_of_range]") == 5, result.stderr
    for position in ("<stdin>:2:3", "<stdin>:3:13", "<stdin>:4:4", "<stdin>:5:13", "<stdin>:6:22"):
        assert position in result.stderr
    assert result.returncode == 1
    assert result.stdout.endswith("e +1\nx\n-\n5\n1 row\n"), result.stdout   # the session went on, unharmed


# ---------------------------------------------------------------- Spark sources: the same refusal

def test_a_spark_source_with_nan_is_refused_and_loads_nothing(spark, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    pq.write_table(pa.table({"x": [1.5, math.nan]}), tmp_path / "nan.parquet")
    pq.write_table(pa.table({"x": [1.5, math.inf]}), tmp_path / "inf.parquet")
    program = ".decl f(x: float)\n.input f(IO=spark, path=\"{}\", format=parquet)\ng(x) :- f(x).\n.decl g(c0: float)\n"
    with pytest.raises(DatalogError) as info:
        Engine.from_source(program.format("nan.parquet"), tmp_path).run()
    assert info.value.code == "bad_fact_file" and "NaN" in info.value.message
    assert rows_of(program.format("inf.parquet"), tmp_path, name="g") == [(1.5,), (math.inf,)]


def test_repl_row_counts_are_checked_not_converted_blindly(tmp_path):
    """`.limit` and `.facts R N` took str.isdigit() text to int(): 5,000 digits or '²' was an
    "internal error ... ValueError"; now a bad_command like any malformed argument."""
    script = (".decl e(x: number)\n+e(1).\n"
              f".limit {'9' * 5000}\n.limit \u00b2\n.facts e \u0661\n.limit 99999999999999999999\n.limit 2\n")
    result = cli(["repl"], tmp_path, stdin=script)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.stderr.count("error[bad_command]") == 4, result.stderr
    assert result.stdout.endswith("showing at most 2 rows\n"), result.stdout


def test_an_overflowing_commit_to_a_workspace_is_refused_and_changes_nothing(tmp_path):
    (tmp_path / "prog.dl").write_text(".decl f(x: number)\n.input f\n.decl s(x: number)\n"
                                      "s(n) :- n = sum x : { f(x) }.\n.output s\n")
    (tmp_path / "f.facts").write_text(f"{INT_MAX}\n")
    (tmp_path / "sum.dl").write_text("+f(1).\ncommit.\n")
    (tmp_path / "huge.dl").write_text("+f(1).\ncommit.\n+f(99999999999999999999).\ncommit.\n")
    assert cli(["init", "ws", "prog.dl", "-F", "."], tmp_path).returncode == 0
    assert "error[number_out_of_range]" in failure(cli(["update", "ws", "sum.dl"], tmp_path), "number_out_of_range")
    assert "huge.dl:3:4" in failure(cli(["update", "ws", "huge.dl"], tmp_path), "number_out_of_range")
    result = cli(["query", "ws", "s(x)"], tmp_path)
    assert result.stdout.split() == [str(INT_MAX)], result.stdout + result.stderr
    result = cli(["query", "ws", "f(x)"], tmp_path)
    assert result.stdout.split() == [str(INT_MAX)], result.stdout + result.stderr
