"""Admission of values through the Python API: every Python, numpy, Arrow and Polars value a caller
may pass, checked against its column's type before anything changes (``datalog.engine.admission``),
for an Engine and a Workspace; what admission lets in, a workspace reads back, and what it refuses
is a coded error that changes nothing, in memory and on disk."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from datalog import DatalogError, Engine, Workspace
from datalog.engine import admission
from datalog.language.composites import NIL, Branch, Record
from datalog.language.numbers import INT_MAX, INT_MIN, UINT_MAX
from datalog.language.types import RelationInfo
from datalog.workspace import format as wsfile
from datalog.workspace import validate
from datalog.workspace.workspace import LOG
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

PROGRAM = """
.decl n(x: number)
.decl u(x: unsigned)
.decl f(x: float)
.decl s(x: symbol)
.decl m(x: number)
m(x + 1) :- n(x).
.decl g(x: float)
g(x) :- f(x).
.decl t(x: symbol)
t(x) :- s(x).
"""
RELATION = {"number": "n", "unsigned": "u", "float": "f", "symbol": "s"}
CODES = ("type_mismatch", "number_out_of_range")


class Refused:
    """The expected refusal of a value: its error code."""

    def __init__(self, code: str = "type_mismatch"):
        self.code = code

    def __repr__(self) -> str:
        return f"Refused({self.code})"


class Weird:
    pass


SURROGATE = "\ud800"
# (column type, value given, what the relation stores or Refused): every type a caller may pass
CASES = [
    ("number", 7, 7), ("number", INT_MIN, INT_MIN), ("number", INT_MAX, INT_MAX),
    ("number", 2 ** 63, Refused("number_out_of_range")), ("number", -2 ** 63 - 1, Refused("number_out_of_range")),
    ("number", 10 ** 400, Refused("number_out_of_range")),
    ("number", True, Refused()), ("number", False, Refused()), ("number", np.bool_(True), Refused()),
    *[("number", kind(5), 5) for kind in (np.int8, np.int16, np.int32, np.int64,
                                          np.uint8, np.uint16, np.uint32, np.uint64)],
    ("number", np.int64(INT_MAX), INT_MAX), ("number", np.uint64(UINT_MAX), Refused("number_out_of_range")),
    ("number", np.float64(2.0), Refused()), ("number", np.float16(1.5), Refused()), ("number", 2.0, Refused()),
    ("number", Fraction(3, 2), Refused()), ("number", Fraction(4, 2), Refused()),
    ("number", Decimal("2"), Refused()), ("number", Decimal("1.5"), Refused()),
    ("number", None, Refused()), ("number", b"1", Refused()), ("number", 1j, Refused()),
    ("number", Weird(), Refused()), ("number", "1", Refused()), ("number", np.str_("1"), Refused()),
    ("number", pa.scalar(5), 5), ("number", pa.scalar(5, pa.uint8()), 5), ("number", pa.scalar(None, pa.int64()), Refused()),
    ("number", pa.scalar(1.5), Refused()), ("number", float("nan"), Refused()),
    ("unsigned", 0, 0), ("unsigned", UINT_MAX, UINT_MAX), ("unsigned", -1, Refused("number_out_of_range")),
    ("unsigned", 2 ** 64, Refused("number_out_of_range")), ("unsigned", np.uint64(UINT_MAX), UINT_MAX),
    ("unsigned", np.int8(-1), Refused("number_out_of_range")), ("unsigned", True, Refused()),
    ("unsigned", Fraction(1, 1), Refused()), ("unsigned", None, Refused()), ("unsigned", 1.0, Refused()),
    ("unsigned", Weird(), Refused()), ("unsigned", pa.scalar(UINT_MAX, pa.uint64()), UINT_MAX),
    ("float", 1.5, 1.5), ("float", -0.0, -0.0), ("float", math.inf, math.inf), ("float", -math.inf, -math.inf),
    ("float", 3, 3.0), ("float", 2 ** 53 + 1, float(2 ** 53)), ("float", 2 ** 63, Refused("number_out_of_range")),
    ("float", float("nan"), Refused("number_out_of_range")), ("float", np.float64("nan"), Refused("number_out_of_range")),
    *[("float", kind(1.5), 1.5) for kind in (np.float16, np.float32, np.float64)],
    ("float", np.longdouble(1.5), 1.5), ("float", np.longdouble(1) / np.longdouble(3), Refused()),
    ("float", np.int64(3), 3.0), ("float", np.uint64(UINT_MAX), Refused("number_out_of_range")),
    ("float", True, Refused()), ("float", np.bool_(False), Refused()),
    ("float", Fraction(3, 2), Refused()), ("float", Decimal("1.5"), Refused()), ("float", None, Refused()),
    ("float", 1j, Refused()), ("float", b"1.5", Refused()), ("float", "1.5", Refused()), ("float", Weird(), Refused()),
    ("float", pa.scalar(2.5), 2.5), ("float", pa.scalar(2.5, pa.float16()), 2.5),
    ("symbol", "a", "a"), ("symbol", "", ""), ("symbol", "ünï ✓", "ünï ✓"), ("symbol", "\U0001F600", "\U0001F600"),
    ("symbol", np.str_("a"), "a"), ("symbol", pa.scalar("x"), "x"), ("symbol", pa.scalar("x", pa.large_string()), "x"),
    ("symbol", SURROGATE, Refused()), ("symbol", "a\udfffb", Refused()), ("symbol", np.str_(SURROGATE), Refused()),
    ("symbol", b"a", Refused()), ("symbol", 1, Refused()), ("symbol", 1.5, Refused()), ("symbol", True, Refused()),
    ("symbol", None, Refused()), ("symbol", Weird(), Refused()), ("symbol", np.int64(1), Refused()),
    ("symbol", Decimal("1"), Refused()), ("symbol", 1j, Refused()), ("symbol", pa.scalar(1), Refused()),
]
IDS = [f"{kind}-{type(value).__module__.split('.')[0]}.{type(value).__name__}-{i}"
       for i, (kind, value, _) in enumerate(CASES)]


def same(a, b) -> bool:
    """Equal values of the same Python type (-0.0 is not 0.0 here)."""
    return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))) \
        and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def state(engine: Engine) -> dict:
    return {name: engine.rows(name) for name in engine.relations()}


def refusal(attempt) -> DatalogError:
    with pytest.raises(DatalogError) as caught:
        attempt()
    return caught.value


def committed(kind: str, stored):
    """What committing ``stored`` gives: ``m(x + 1) :- n(x)`` refuses 2^63 - 1 as it would be
    refused in any program whose rule adds one to it."""
    return Refused("number_out_of_range") if kind == "number" and stored == INT_MAX else stored


@pytest.mark.parametrize("kind, value, stored", CASES, ids=IDS)
def test_a_value_is_admitted_as_its_column_stores_it_or_refused_by_every_engine_entry(kind, value, stored):
    name = RELATION[kind]
    engine, unrun = Engine.from_source(PROGRAM), Engine.from_source(PROGRAM)
    engine.run()
    before = state(engine)
    if isinstance(stored, Refused):
        for attempt in (lambda: engine.commit(inserts={name: [(value,)]}),
                        lambda: engine.commit(retracts={name: [(value,)]}),
                        lambda: engine.transaction().insert(name, [(value,)]),
                        lambda: unrun.insert(name, [(value,)])):
            err = refusal(attempt)
            assert err.code == stored.code, err
            assert f"{name} column 1 (x)" in err.message, err.message
            assert state(engine) == before and engine.commit_number == 0
        assert unrun.stored_relation(name).sorted_rows() == []
        return
    unrun.insert(name, [(value,)])
    assert same(unrun.stored_relation(name).sorted_rows()[0][0], stored)
    if isinstance(committed(kind, stored), Refused):
        assert refusal(lambda: engine.commit(inserts={name: [(value,)]})).code == "number_out_of_range"
        assert state(engine) == before
        return
    engine.commit(inserts={name: [(value,)]})
    (row,) = engine.rows(name)
    assert same(row[0], stored), (row, stored)
    if kind == "number":
        assert engine.rows("m") == [(stored + 1,)]
    unrun.run()
    assert state(unrun) == state(engine)


def test_a_number_plus_one_beyond_the_range_is_refused_for_a_numpy_integer_as_for_an_int():
    """numpy's int64 wraps at 2^63: kept as it was, ``x + 1`` gave -2^63 silently."""
    for value in (INT_MAX, np.int64(INT_MAX)):
        engine = Engine.from_source(PROGRAM)
        engine.run()
        err = refusal(lambda: engine.commit(inserts={"n": [(value,)]}))
        assert err.code == "number_out_of_range" and "+ 1" in err.message
        assert state(engine) == {name: [] for name in engine.relations()}


@pytest.mark.parametrize("kind, value, stored", CASES, ids=IDS)
def test_a_workspace_commit_admits_the_same_values_and_reopens(tmp_path, kind, value, stored):
    """A bool into a number column was made durable, after which every open was workspace_corrupt."""
    name, path = RELATION[kind], tmp_path / "ws"
    stored = committed(kind, stored)
    with Workspace.create(path, PROGRAM) as ws:
        ws.engine.commit(inserts={name: [(rows_value(kind),)]})
        before, seq, log = state(ws.engine), ws.seq, (path / LOG).read_bytes()
        if isinstance(stored, Refused):
            assert refusal(lambda: ws.engine.commit(inserts={name: [(value,)]})).code == stored.code
            assert state(ws.engine) == before and ws.seq == seq and (path / LOG).read_bytes() == log
        else:
            ws.engine.commit(inserts={name: [(value,)]})
            after = state(ws.engine)
    with Workspace.open(path) as ws:
        assert state(ws.engine) == (before if isinstance(stored, Refused) else after)
        if not isinstance(stored, Refused):
            assert any(same(row[0], stored) for row in ws.engine.rows(name))
        ws.engine.commit(inserts={name: [(rows_value(kind),)]})       # still a working writer


def rows_value(kind: str):
    return {"number": 1, "unsigned": 1, "float": 0.5, "symbol": "a"}[kind]


def test_a_refused_value_among_good_ones_in_a_workspace_commit_changes_nothing(tmp_path):
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.engine.commit(inserts={"n": [(1,)]})
        log = (path / LOG).read_bytes()
        err = refusal(lambda: ws.engine.commit(inserts={"s": [("fine",)], "n": [(2,), (True,)]}))
        assert err.code == "type_mismatch" and "n column 1 (x)" in err.message and "row 2" in err.message
        assert (path / LOG).read_bytes() == log and ws.engine.rows("s") == []
        with pytest.raises(DatalogError):
            with ws.engine.transaction() as tx:
                tx.insert("n", [(3,)])
                tx.insert("f", [(Fraction(1, 2),)])
        assert ws.engine.rows("n") == [(1,)] and (path / LOG).read_bytes() == log
    with Workspace.open(path, readonly=True) as ws:
        assert ws.engine.rows("n") == [(1,)] and ws.engine.rows("m") == [(2,)]


# ---------------------------------------------------------------- rows from numpy and pandas

def test_numpy_rows_from_records_zips_and_2d_arrays_are_python_ints():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"a": [1, 2], "b": [3, INT_MAX]})
    program = ".decl e(a: number, b: number)\n.decl next(a: number, b: number)\nnext(a, b + 1) :- e(a, b).\n"
    for rows in (list(frame.itertuples(index=False)), list(zip(frame.a.values, frame.b.values)),
                 frame.to_numpy(), [tuple(r)[1:] for r in frame.to_records()]):
        engine = Engine.from_source(program)
        engine.insert("e", rows)
        assert all(type(v) is int for row in engine.stored_relation("e").sorted_rows() for v in row)
        with pytest.raises(DatalogError) as caught:               # 2^63 - 1 + 1: refused, not wrapped
            engine.run()
        assert caught.value.code == "number_out_of_range"
    floats = np.array([[0.5, 1.0]], dtype=np.float32)
    engine = Engine.from_source(".decl p(x: float, y: float)\n")
    engine.insert("p", floats)
    assert engine.rows("p") == [(0.5, 1.0)] and type(engine.rows("p")[0][0]) is float


@pytest.mark.parametrize("rows, mentions", [
    ("ab", "iterable of tuples"), (b"ab", "iterable of tuples"), (5, "iterable of tuples"), (None, "iterable of tuples"),
    ([1, 2], "row 1 of e is 1"), (["ab"], "row 1 of e is 'ab'"), ([{1: 2}], "row 1"), ([{1, 2}], "row 1"),
    ([Record((1, 2))], "row 1"), ([(1, 2), 3], "row 2 of e is 3")])
def test_rows_that_are_not_rows_are_coded_errors(rows, mentions):
    engine = Engine.from_source(".decl e(a: number, b: number)\n")
    for attempt in (lambda: engine.insert("e", rows), lambda: engine.commit(inserts={"e": rows})):
        err = refusal(attempt)
        assert err.code == "type_mismatch" and mentions in err.message, err.message
    assert engine.rows("e") == []
    err = refusal(lambda: engine.insert("e", [(1, 2, 3)]))
    assert err.code == "arity_mismatch"
    engine.insert("e", [[1, 2], np.array([3, 4]), range(5, 7)])        # lists and other sequences are rows
    assert engine.rows("e") == [(1, 2), (3, 4), (5, 6)]


# ---------------------------------------------------------------- tables: Arrow, pandas, Polars

def test_tables_into_a_float_column_take_integers_in_range_and_refuse_the_rest_with_codes():
    """A large int into a float column was a raw ArrowInvalid."""
    engine = Engine.from_source(PROGRAM)
    engine.insert("f", pa.table({"x": pa.array([2 ** 53 + 1, -3], pa.int64())}))
    assert engine.rows("f") == [(-3.0,), (float(2 ** 53),)]
    for table, code in [(pa.table({"x": pa.array([UINT_MAX], pa.uint64())}), "number_out_of_range"),
                        (pa.table({"x": pa.array([Decimal("1.5")], pa.decimal128(5, 2))}), "type_mismatch"),
                        (pa.table({"x": pa.array([True])}), "type_mismatch"),
                        (pa.table({"x": pa.array([None], pa.float64())}), "type_mismatch"),
                        (pa.table({"x": pa.array([float("nan")])}), "number_out_of_range")]:
        err = refusal(lambda: engine.commit(inserts={"f": table}))
        assert err.code == code and "f column x (1)" in err.message, err.message
    assert engine.rows("f") == [(-3.0,), (float(2 ** 53),)]


def test_categorical_columns_of_polars_and_pandas_are_their_values():
    """A Polars Categorical (dictionary of string_view) was a raw ArrowNotImplementedError."""
    polars = pytest.importorskip("polars")
    pandas = pytest.importorskip("pandas")
    tables = [polars.DataFrame({"x": ["a", "b", "a"]}, schema={"x": polars.Categorical}),
              polars.DataFrame({"x": ["a", "b"]}, schema={"x": polars.Enum(["b", "a"])}),
              pandas.DataFrame({"x": pandas.Categorical(["a", "b"])})]
    for table in tables:
        engine = Engine.from_source(PROGRAM)
        engine.insert("s", table)
        engine.run()
        assert engine.rows("t") == [("a",), ("b",)]
        err = refusal(lambda: engine.commit(inserts={"n": table}))
        assert err.code == "type_mismatch" and "n column x (1)" in err.message
    engine = Engine.from_source(PROGRAM)
    err = refusal(lambda: engine.insert("s", polars.DataFrame({"x": ["a", None]}, schema={"x": polars.Categorical})))
    assert err.code == "type_mismatch" and "null" in err.message


@pytest.mark.parametrize("make, relation, code", [
    (lambda pd, pl: pl.DataFrame({"x": [1, None]}), "n", "type_mismatch"),
    (lambda pd, pl: pd.DataFrame({"x": pd.array([1, None], dtype="Int64")}), "n", "type_mismatch"),
    (lambda pd, pl: pd.DataFrame({"x": ["a", None]}), "s", "type_mismatch"),
    (lambda pd, pl: pl.DataFrame({"x": [2 ** 63 - 1]}).with_columns(pl.col("x").cast(pl.UInt64) * 2), "n",
     "number_out_of_range"),
    (lambda pd, pl: pd.DataFrame({"x": [-1]}), "u", "number_out_of_range"),
    (lambda pd, pl: pd.DataFrame({"x": [True]}), "n", "type_mismatch"),
    (lambda pd, pl: pd.DataFrame({"x": [b"a"]}), "s", "type_mismatch"),
    (lambda pd, pl: pd.DataFrame({"x": [Decimal("1")]}), "f", "type_mismatch"),
    (lambda pd, pl: pd.DataFrame({"x": [1j]}), "f", "type_mismatch"),
    (lambda pd, pl: pl.DataFrame({"x": [[1]]}), "n", "type_mismatch"),
    (lambda pd, pl: pl.DataFrame({"x": [object()]}, schema={"x": pl.Object}), "s", "type_mismatch")])
def test_bad_frames_are_coded_errors_and_change_nothing(tmp_path, make, relation, code):
    pandas = pytest.importorskip("pandas")
    polars = pytest.importorskip("polars")
    table = make(pandas, polars)
    path = tmp_path / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        log = (path / LOG).read_bytes()
        for attempt in (lambda: ws.engine.commit(inserts={relation: table}),
                        lambda: ws.engine.commit(retracts={relation: table})):
            err = refusal(attempt)
            assert err.code == code and err.message.startswith(f"{relation}"), err.message
        assert (path / LOG).read_bytes() == log and ws.seq == 0


# ---------------------------------------------------------------- records and ADTs

RECORDS = """
.type P = [x: number, s: symbol]
.type Shape = Circle {r: float} | Named {p: P} | Empty {}
.type List = [head: unsigned, tail: List]
.decl rec(p: P, sh: Shape, l: List)
"""


@pytest.mark.parametrize("row, stored", [
    ((Record((1, "a")), Branch(("Circle", 2)), NIL), (Record((1, "a")), Branch(("Circle", 2.0)), NIL)),
    ((NIL, Branch(("Named", Record((np.int64(3), np.str_("b"))))), Record((np.uint64(UINT_MAX), NIL))),
     (NIL, Branch(("Named", Record((3, "b")))), Record((UINT_MAX, NIL)))),
    ((Record((1, "a")), Branch(("Empty",)), Record((0, Record((1, NIL))))), None)])
def test_records_and_adts_are_admitted_field_by_field(row, stored):
    engine = Engine.from_source(RECORDS)
    engine.insert("rec", [row])
    (got,) = engine.rows("rec")
    assert got == (stored or row)
    flat = []

    def leaves(value):
        if isinstance(value, tuple):
            for part in (value[1:] if isinstance(value, Branch) else value):
                leaves(part)
        else:
            flat.append(value)
    leaves(got)
    assert {type(v) for v in flat} <= {int, float, str}
    if stored is not None:
        assert type(got[1][1]) is type(stored[1][1])       # a Circle's radius: a float, as declared


@pytest.mark.parametrize("value, column, mentions", [
    ((1, "a"), 1, "not a record of P"), (Record((1,)), 1, "P has 2 fields"), (Record((1, "a", 2)), 1, "P has 2 fields"),
    (Record(("a", 1)), 1, "field 1 of P"), (Record((True, "a")), 1, "a bool"), (Record((1, SURROGATE)), 1, "surrogate"),
    (Record((2 ** 63, "a")), 1, "beyond"), (Record((Fraction(1, 2), "a")), 1, "Fraction"),
    (Branch(("Square", 1)), 2, "Circle, Empty, Named"), (Branch(("Circle",)), 2, "has 1 arguments"),
    (Branch(("Circle", "x")), 2, "field 1 of $Circle"), (Branch(("Circle", float("nan"))), 2, "NaN"),
    (Branch(("Named", (1, "a"))), 2, "not a record of P"), (Record((1, "a")), 2, "not a value of Shape"),
    (Record((-1, NIL)), 3, "beyond the unsigned"), (Record((1, Record((2,)))), 3, "List has 2 fields"),
    (None, 3, "None"), ("nil", 3, "a str")])
def test_a_record_or_adt_of_the_wrong_structure_is_refused(tmp_path, value, column, mentions):
    good = [Record((1, "a")), Branch(("Empty",)), NIL]
    row = tuple(value if i == column - 1 else g for i, g in enumerate(good))
    path = tmp_path / "ws"
    with Workspace.create(path, RECORDS) as ws:
        log = (path / LOG).read_bytes()
        err = refusal(lambda: ws.engine.commit(inserts={"rec": [row]}))
        assert err.code in CODES and f"rec column {column}" in err.message and mentions in err.message, err.message
        assert ws.engine.rows("rec") == [] and (path / LOG).read_bytes() == log
        ws.engine.commit(inserts={"rec": [tuple(good)]})
    with Workspace.open(path, readonly=True) as ws:
        assert ws.engine.rows("rec") == [tuple(good)]


# ---------------------------------------------------------------- columns no declaration types

def test_an_auto_column_takes_one_type_and_a_workspace_reopens(tmp_path):
    """Mixed ints and strings were a raw TypeError; ints after floats were made durable and the
    workspace could not be opened again; a bool was stored."""
    (tmp_path / "q.facts").write_text("")
    program = ".input q\nr(x) :- q(x).\n"
    path = tmp_path / "ws"
    with Workspace.create(path, program, tmp_path) as ws:
        for rows, code in [([(1,), ("a",)], "type_mismatch"), ([(True,)], "type_mismatch"),
                           ([(None,)], "type_mismatch"), ([(Record((1,)),)], "type_mismatch"),
                           ([(2 ** 63,)], "number_out_of_range"), ([(SURROGATE,)], "type_mismatch")]:
            assert refusal(lambda: ws.engine.commit(inserts={"q": rows})).code == code
        with pytest.raises(DatalogError) as caught:
            with ws.engine.transaction() as tx:                    # one transaction: one type too
                tx.insert("q", [(1.5,)])
                tx.insert("q", [("a",)])
        assert caught.value.code == "type_mismatch" and "got 'a'" in caught.value.message
        assert ws.seq == 0
        ws.engine.commit(inserts={"q": [(1.5,), (np.int64(2),), (np.float32(0.5),)]})
        assert ws.engine.rows("r") == [(0.5,), (1.5,), (2.0,)]
        assert refusal(lambda: ws.engine.commit(inserts={"q": [("a",)]})).code == "type_mismatch"
        ws.engine.commit(inserts={"q": [(3,)]})                     # an int into a column of floats: a float
    with Workspace.open(path) as ws:
        assert ws.engine.rows("r") == [(0.5,), (1.5,), (2.0,), (3.0,)]
        assert {type(v) for (v,) in ws.engine.rows("q")} == {float}


# ---------------------------------------------------------------- the reader refuses what admission refuses

def _forged_log(path: Path, relation: str, value) -> None:
    stored = wsfile.read_file(path / LOG, "log", torn_tail=True)
    stored.records[-1]["insert"][relation]["values"][0] = value
    extra = {k: v for k, v in stored.header.items() if k not in ("format", "kind", "version")}
    wsfile.write_file(path / LOG, "log", extra, stored.records)


@pytest.mark.parametrize("program, relation, good, forged", [
    (".input q\nr(x) :- q(x).\n", "q", 1, True),             # a column no declaration types
    (".input q\nr(x) :- q(x).\n", "q", 1, 2 ** 63),
    (PROGRAM, "s", "a", SURROGATE), (PROGRAM, "s", "a", "x\udc80")])
def test_a_forged_value_that_admission_refuses_is_corrupt_to_the_reader(tmp_path, program, relation, good, forged):
    (tmp_path / "q.facts").write_text("")
    path = tmp_path / "ws"
    with Workspace.create(path, program, tmp_path) as ws:
        ws.engine.commit(inserts={relation: [(good,)]})
    _forged_log(path, relation, forged)
    err = refusal(lambda: Workspace.open(path, readonly=True))
    assert err.code == "workspace_corrupt" and f"column 1 of {relation}" in err.message, err.message


# ---------------------------------------------------------------- admission and the reader agree

ANY_VALUE = st.one_of(
    st.integers(), st.integers(INT_MIN, UINT_MAX), st.floats(), st.text(max_size=4),
    st.sampled_from([True, False, None, b"x", 1j, Fraction(1, 2), Fraction(2, 1), Decimal("2"), Weird(),
                     SURROGATE, "a\udfff", np.bool_(True), np.str_("s")]),
    st.integers(-128, 127).map(np.int8), st.integers(0, UINT_MAX).map(np.uint64),
    st.integers(INT_MIN, INT_MAX).map(np.int64), st.floats(width=16).map(np.float16),
    st.floats(width=32).map(np.float32), st.floats().map(np.float64))
KINDS = st.sampled_from(["number", "unsigned", "float", "symbol", "auto"])


@settings(max_examples=examples(300), deadline=None)
@given(kind=KINDS, values=st.lists(ANY_VALUE, min_size=1, max_size=3))
def test_what_admission_lets_in_the_workspace_reader_reads_back(kind, values):
    """The reader's check of a stored column (``validate.Columns``) against admission, for every
    kind of value: each admitted column is read back as it is; each refusal is coded."""
    try:
        admitted = admission.rows("r", [("x", kind)], [(v,) for v in values])
    except DatalogError as err:
        assert err.code in CODES, err
        return
    column = [v for (v,) in admitted]
    assert {type(v) for v in column} <= {int, float, str}
    assert not any(isinstance(v, float) and math.isnan(v) for v in column)
    stored = {"number": "number", "unsigned": "unsigned", "float": "float", "symbol": "symbol"}.get(kind, "auto")
    validate.Columns({"r": RelationInfo("r", 1, [stored])}).check("r", list(column), 1, "ws/log", "commit 1")
    assert len({type(v) for v in column}) == 1                   # one type per column, auto too
    plain = [v for v in values if type(v) in (int, float, str)]
    if len(plain) == len(values) and kind != "auto":            # the reader's own values: admitted as they are
        assert all(same(a, b if kind != "float" else float(b)) for a, b in zip(column, values))


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(sorted(RELATION)), value=ANY_VALUE)
def test_any_admitted_value_round_trips_through_a_workspace_and_any_refused_one_changes_nothing(
        tmp_path_factory, kind, value):
    name, path = RELATION[kind], tmp_path_factory.mktemp("ws") / "ws"
    with Workspace.create(path, PROGRAM) as ws:
        ws.engine.commit(inserts={name: [(rows_value(kind),)]})
        before, log = state(ws.engine), (path / LOG).read_bytes()
        try:
            ws.engine.commit(inserts={name: [(value,)]})
        except DatalogError as err:
            assert err.code in CODES, err
            assert state(ws.engine) == before and (path / LOG).read_bytes() == log and ws.seq == 1
            refused = True
        else:
            refused = False
        after = state(ws.engine)
    with Workspace.open(path, readonly=True) as ws:
        reopened = state(ws.engine)
    assert reopened == after and (not refused or reopened == before)
    assert all(same(a[0], b[0]) for a, b in zip(reopened[name], after[name]))


# ---------------------------------------------------------------- lone surrogates from programs and files

def test_a_lone_surrogate_in_a_program_or_a_json_file_is_a_coded_error_not_a_raw_one_at_output(tmp_path):
    """A string literal's ``\\ud800`` escape, or one in a JSON input, ended in a raw
    UnicodeEncodeError when the relation was written; a pair of surrogates is one character."""
    for program in ['.decl s(x: symbol)\n.output s\ns("\\ud800").\n',
                    '.decl s(x: symbol)\n.output s\ns(cat("a", "\\udc80")) :- true.\n']:
        err = refusal(lambda: Engine.from_source(program))
        assert err.code == "syntax_error" and "surrogate" in err.message and err.span is not None
    engine = Engine.from_source('.decl s(x: symbol)\n.output s\ns("\\ud83d\\ude00").\n')
    engine.run()
    assert engine.rows("s") == [("\U0001F600",)]
    engine.write_outputs(str(tmp_path / "out"))
    assert (tmp_path / "out" / "s.csv").read_text(encoding="utf-8") == "\U0001F600\n"
    (tmp_path / "s.json").write_text('[["a"], ["\\ud800"]]')
    engine = Engine.from_source(".decl s(x: symbol)\n.input s(IO=jsonfile)\n", tmp_path)
    err = refusal(engine.run)
    assert err.code == "bad_fact_file" and "row 2" in err.message


def test_an_insert_before_run_into_a_column_its_input_file_types_takes_the_files_type(tmp_path):
    """Inserted before ``run``, an int joined the symbols of the ``.input`` file: a raw TypeError."""
    (tmp_path / "q.facts").write_text("a\n")
    engine = Engine.from_source(".input q\nr(x) :- q(x).\n", tmp_path)
    err = refusal(lambda: engine.insert("q", [(1,)]))
    assert err.code == "type_mismatch" and "q column 1" in err.message
    engine.insert("q", [(np.str_("b"),)])
    engine.run()
    assert engine.rows("r") == [("a",), ("b",)]


# ---------------------------------------------------------------- tables and tuples: one set of rules

PLAIN = st.one_of(st.integers(INT_MIN - 5, UINT_MAX + 5), st.floats(), st.text(max_size=3), st.booleans(),
                  st.none(), st.sampled_from([2 ** 53 + 1, -0.0, INT_MAX, INT_MIN]))


@settings(max_examples=examples(300), deadline=None)
@given(kind=st.sampled_from(["number", "unsigned", "float", "symbol"]),
       values=st.lists(PLAIN, min_size=1, max_size=4))
def test_an_arrow_column_is_admitted_as_the_same_values_as_tuples(kind, values):
    """The twin of the Arrow path (column checks in Arrow compute) is the tuple path (value by
    value): the same rows, or refusals with the same code."""
    try:
        table = pa.table({"x": pa.array(values)})
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return                                                   # no one Arrow column holds them
    outcomes = []                                                # (the values as the column holds them:
    for data in (table, [(v,) for v in table.column(0).to_pylist()]):     # pyarrow makes [0.0, False] floats)
        try:
            outcomes.append(("rows", admission.rows("r", [("x", kind)], data)))
        except DatalogError as err:
            outcomes.append(("refused", err.code))
    (how, arrow), (how_tuples, tuples) = outcomes
    assert how == how_tuples, (outcomes, table.schema)
    if how == "rows":
        assert len(arrow) == len(tuples) and all(same(a[0], b[0]) for a, b in zip(arrow, tuples)), outcomes
    elif None not in table.column(0).to_pylist():                # (Arrow looks for nulls first)
        assert arrow == tuples, outcomes
