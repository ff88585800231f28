"""Relations as tables (issue 20, part 2): every column type through Arrow, pandas and Polars and
back, equal to the tuple API; bad tables refused with a coded error, changing nothing."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from datalog import DatalogError, Engine, Relation
from datalog.language import numbers
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

PROGRAM = """
.type Age <: unsigned
.decl t(n: number, u: unsigned, a: Age, f: float, s: symbol)
.decl copy(n: number, u: unsigned, a: Age, f: float, s: symbol)
copy(n, u, a, f, s) :- t(n, u, a, f, s).
"""

RECORDS = """
.type P = [x: number, s: symbol]
.type Shape = Circle {r: float} | Named {p: P} | Empty {}
.type List = [head: symbol, tail: List]
.decl rec(p: P, sh: Shape, l: List)
"""

ROWS = [
    (numbers.INT_MIN, 0, 0, -math.inf, ""),
    (numbers.INT_MAX, numbers.INT_MAX, 7, math.inf, "a, b"),
    (0, 1, 2, 0.5, 'quote " and \\ backslash'),
    (-1, 5, 3, -2.25, "ünïcödé ✓"),
    (42, 9, 9, 1e300, "x"),
]

SYMBOLS = st.text(max_size=6)
ROW = st.tuples(st.integers(numbers.INT_MIN, numbers.INT_MAX), st.integers(0, numbers.INT_MAX),
                st.integers(0, numbers.INT_MAX),
                st.floats(allow_nan=False), SYMBOLS)


def engine_with(rows, program=PROGRAM, relation="t") -> Engine:
    engine = Engine.from_source(program)
    engine.insert(relation, rows)
    engine.run()
    return engine


def state(engine: Engine) -> dict:
    return {name: engine.rows(name) for name in engine.relations()}


def test_schema_is_typed_by_the_declaration():
    view = engine_with(ROWS).relation("t")
    assert isinstance(view, Relation)
    assert view.schema() == pa.schema([("n", pa.int64()), ("u", pa.uint64()), ("a", pa.uint64()),
                                       ("f", pa.float64()), ("s", pa.string())])
    assert view.columns == ["n", "u", "a", "f", "s"]


def test_view_reads_as_the_tuple_api():
    engine = engine_with(ROWS)
    view = engine.relation("copy")
    assert len(view) == len(ROWS)
    assert list(view) == view.rows() == engine.rows("copy")
    table = view.to_arrow()
    assert [tuple(r.values()) for r in table.to_pylist()] == engine.rows("copy")
    assert pa.table(view).equals(table)                       # through __arrow_c_stream__
    unordered = view.to_arrow(ordered=False)
    assert unordered.schema == table.schema and sorted(tuple(r.values()) for r in unordered.to_pylist()) == view.rows()
    assert ROWS[0] in view and (1, 2, 3, 4.0, "no") not in view


def test_view_is_live():
    engine = engine_with(ROWS[:1])
    view = engine.relation("copy")
    engine.commit(inserts={"t": ROWS[1:2]})
    assert len(view) == 2 and view.rows() == engine.rows("copy")


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(ROW, max_size=30))
def test_arrow_round_trip(rows):
    source = engine_with(rows)
    table = source.relation("copy").to_arrow()
    assert table.num_rows == len(source.rows("copy"))
    target = engine_with(table)                                  # a Table in
    assert state(target) == state(source)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=7))
    assert state(engine_with(reader)) == state(source)         # a RecordBatchReader in


class Stream:
    """Only the Arrow PyCapsule interface: no pyarrow, pandas or Polars type."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def test_any_arrow_stream_in():
    source = engine_with(ROWS)
    target = engine_with(Stream(source.relation("t").to_arrow()))
    assert state(target) == state(source)


def test_pandas_round_trip():
    pytest.importorskip("pandas")
    source = engine_with(ROWS)
    frame = source.relation("copy").to_pandas()
    assert list(frame.columns) == ["n", "u", "a", "f", "s"]
    assert [tuple(r) for r in frame.itertuples(index=False)] == source.rows("copy")
    assert state(engine_with(frame)) == state(source)
    shuffled = frame[["s", "f", "a", "u", "n"]].iloc[::-1]    # by name, whatever the order and index
    assert state(engine_with(shuffled)) == state(source)


def test_polars_round_trip():
    polars = pytest.importorskip("polars")
    source = engine_with(ROWS)
    frame = source.relation("copy").to_polars()
    assert frame.columns == ["n", "u", "a", "f", "s"]
    assert frame.rows() == source.rows("copy")
    assert polars.DataFrame(source.relation("copy")).rows() == source.rows("copy")   # PyCapsule
    assert state(engine_with(frame)) == state(source)


def test_columns_by_position_when_no_name_matches():
    table = pa.table({"0": [1], "1": [2], "2": [3], "3": [1.5], "4": ["s"]})
    assert engine_with(table).rows("t") == [(1, 2, 3, 1.5, "s")]


def test_integers_into_float_and_narrow_types():
    table = pa.table({"n": pa.array([1], pa.int8()), "u": pa.array([2], pa.uint16()),
                      "a": pa.array([3], pa.uint64()), "f": pa.array([4], pa.int32()),
                      "s": pa.array(["x"], pa.large_string())})
    engine = engine_with(table)
    assert engine.rows("t") == [(1, 2, 3, 4.0, "x")] and isinstance(engine.rows("t")[0][3], float)
    dictionary = table.set_column(4, "s", pa.array(["x"]).dictionary_encode())
    assert engine_with(dictionary).rows("t") == engine.rows("t")


def record_rows():
    from datalog.language.composites import NIL, Branch, Record
    nested = Record(("a, b", Record(('q"uote', NIL))))
    return [
        (Record((1, "x")), Branch(("Circle", 2.5)), nested),
        (NIL, Branch(("Empty",)), NIL),
        (Record((-3, "]")), Branch(("Named", Record((4, "$y")))), Record(("", NIL))),
    ]


def test_records_and_adts_as_text_round_trip():
    rows = record_rows()
    source = engine_with(rows, RECORDS, "rec")
    table = source.relation("rec").to_arrow()
    assert table.schema.types == [pa.string()] * 3
    texts = table.to_pylist()
    assert {"p": "nil", "sh": "$Empty", "l": "nil"} in texts
    assert {"p": '[1, "x"]', "sh": "$Circle(2.5)", "l": '["a, b", ["q\\"uote", nil]]'} in texts
    assert state(engine_with(table, RECORDS, "rec")) == state(source)


# ---------------------------------------------------------------- refused, changing nothing

GOOD = pa.table({"n": [1], "u": [1], "a": [1], "f": [1.0], "s": ["x"]})


def replaced(name, values, type_=None):
    index = GOOD.column_names.index(name)
    return GOOD.set_column(index, name, pa.array(values, type_))


BAD = [
    ("float into number", replaced("n", [1.5]), "type_mismatch", "t column n"),
    ("string into number", replaced("n", ["1"]), "type_mismatch", "t column n"),
    ("bool into number", replaced("n", [True]), "type_mismatch", "t column n"),
    ("number into symbol", replaced("s", [1]), "type_mismatch", "t column s"),
    ("null", replaced("s", [None], pa.string()), "type_mismatch", "t column s"),
    ("null number", replaced("n", [None], pa.int64()), "type_mismatch", "t column n"),
    ("NaN", replaced("f", [float("nan")]), "number_out_of_range", "t column f"),
    ("beyond int64", replaced("n", [2 ** 63], pa.uint64()), "number_out_of_range", "t column n"),
    ("negative unsigned", replaced("u", [-1]), "number_out_of_range", "t column u"),
    ("negative alias of unsigned", replaced("a", [-5]), "number_out_of_range", "t column a"),
    ("extra column", GOOD.append_column("z", pa.array([1])), "type_mismatch", "no column 'z'"),
    ("missing column", GOOD.drop_columns(["f"]), "arity_mismatch", "arity 5"),
    ("half the names", GOOD.rename_columns(["n", "u", "a", "f", "other"]), "type_mismatch", "'s'"),
]


@pytest.mark.parametrize("why, table, code, mentions", BAD, ids=[b[0] for b in BAD])
def test_bad_tables_change_nothing(why, table, code, mentions):
    engine = engine_with(ROWS)
    before, number = state(engine), engine.commit_number
    many = pa.concat_tables([pa.table({n: pa.array([c[0].as_py()] * 3, c.type) for n, c in
                                       zip(table.column_names, table.columns)}), table])
    for attempt in (lambda: engine.insert("t", many), lambda: engine.commit(inserts={"t": many}),
                    lambda: engine.commit(retracts={"t": many})):
        with pytest.raises(DatalogError) as caught:
            attempt()
        assert caught.value.code == code and mentions in caught.value.message, caught.value.message
        assert state(engine) == before and engine.commit_number == number
    with engine.transaction() as tx:                           # a refused request leaves none behind
        tx.insert("t", [(5, 5, 5, 5.0, "kept")])
        with pytest.raises(DatalogError):
            tx.insert("t", many)
    assert tx.pending == {"t": {(5, 5, 5, 5.0, "kept"): 1}}
    assert state(engine)["t"] == sorted(before["t"] + [(5, 5, 5, 5.0, "kept")])


def test_bad_record_text_is_refused():
    engine = engine_with(record_rows(), RECORDS, "rec")
    before = state(engine)
    table = engine.relation("rec").to_arrow()
    bad = table.set_column(1, "sh", pa.array(["$Square(1)"] * table.num_rows))
    with pytest.raises(DatalogError) as caught:
        engine.commit(inserts={"rec": bad})
    assert caught.value.code == "type_mismatch" and "rec column sh" in caught.value.message
    assert state(engine) == before


def test_tuples_in_a_transaction_are_all_or_nothing():
    engine = engine_with(ROWS)
    with engine.transaction() as tx:
        with pytest.raises(DatalogError):
            tx.insert("t", [(1, 1, 1, 1.0, "fine"), (1, 1, 1, 1.0, 2)])
    assert tx.pending.get("t", {}) == {}


def test_derived_relations_are_not_changed_by_tables():
    engine = engine_with(ROWS)
    with pytest.raises(DatalogError) as caught:
        engine.commit(inserts={"copy": GOOD})
    assert caught.value.code == "not_edb"


def test_a_frame_arrow_cannot_read_is_a_type_mismatch():
    pandas = pytest.importorskip("pandas")
    engine = engine_with(ROWS)
    before = state(engine)
    frame = pandas.DataFrame({"n": [1, "two"], "u": [1, 1], "a": [1, 1], "f": [1.0, 1.0], "s": ["x", "y"]},
                             dtype=object)
    with pytest.raises(DatalogError) as caught:
        engine.commit(inserts={"t": frame})
    assert caught.value.code == "type_mismatch" and caught.value.message.startswith("t: ")
    assert state(engine) == before


# ---------------------------------------------------------------- kept Arrow tables against fresh ones

CACHED_PROGRAM = """
.decl e(x: number, y: symbol)
.decl blocked(y: symbol)
.decl reach(x: number, y: symbol)
reach(x, y) :- e(x, y), !blocked(y).
reach(x, y) :- reach(x, z), e(z2, z), e(z2, y), x != z2.
"""
NODE_ROW = st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "c"]))
STEP = st.one_of(
    st.tuples(st.just("commit"), st.lists(st.tuples(st.sampled_from("+-"), NODE_ROW), max_size=4), st.booleans()),
    st.tuples(st.just("block"), st.sampled_from("+-"), st.sampled_from(["a", "b", "c"])),
    st.tuples(st.just("extend"), st.integers(0, 3)))


def fresh_table(engine: Engine, name: str) -> pa.Table:
    """The slow twin of ``relation(name).to_arrow()``: built from ``engine.rows`` every time."""
    from datalog.engine import arrow
    from datalog.engine.tables import column_kinds
    return arrow.table_of(column_kinds(engine, name), engine.rows(name))


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(STEP, max_size=10), st.sampled_from(["incremental", "recompute"]))
def test_kept_tables_are_the_relations_rows(steps, maintenance):
    """A table read again is the table of the relation's rows now: after commits, rolled-back
    transactions, commits that change nothing and rules added (``extend``)."""
    engine = Engine.from_source(CACHED_PROGRAM, maintenance=maintenance)
    engine.insert("e", [(0, "a"), (1, "b")])
    engine.run()
    added = 0
    for step in steps:
        for name in engine.relations():                    # read (and keep) before the step
            engine.relation(name).to_arrow()
        if step[0] == "commit":
            try:
                with engine.transaction() as tx:
                    for sign, row in step[1]:
                        (tx.insert if sign == "+" else tx.retract)("e", [row])
                    if step[2]:
                        raise KeyError("rolled back")
            except KeyError:
                pass
        elif step[0] == "block":
            engine.commit(**{"inserts" if step[1] == "+" else "retracts": {"blocked": [(step[2],)]}})
        else:
            added += 1
            engine.extend(f".decl extra{added}(x: number)\nextra{added}(x) :- reach(x, _), x >= {step[1]}.")
        for name in engine.relations():
            view = engine.relation(name)
            assert view.to_arrow().equals(fresh_table(engine, name)), name
            unordered = view.to_arrow(ordered=False).to_pylist()
            assert sorted(tuple(r.values()) for r in unordered) == engine.rows(name)


def test_an_unchanged_relation_gives_its_kept_table():
    engine = engine_with(ROWS)
    view = engine.relation("t")
    first = view.to_arrow()
    assert view.to_arrow() is first and engine.relation("t").to_arrow(ordered=False) is first
    engine.commit(inserts={"t": [ROWS[0]]})                  # no change: the table stays
    assert view.to_arrow() is first
    engine.commit(inserts={"t": [(7, 7, 7, 7.0, "seven")]})
    assert view.to_arrow() is not first and view.to_arrow().num_rows == len(ROWS) + 1


def test_kept_tables_of_a_workspace_follow_its_commits(tmp_path):
    from datalog import Workspace
    path = tmp_path / "ws"
    with Workspace.create(path, CACHED_PROGRAM) as ws:
        ws.engine.commit(inserts={"e": [(0, "a"), (1, "b"), (1, "a")]})
    for change in ({"inserts": {"e": [(2, "c")]}}, {"retracts": {"e": [(1, "a")]}},
                   {"inserts": {"blocked": [("b",)]}}):
        with Workspace.open(path) as ws:                  # relations read from the snapshot when first used
            views = [ws.engine.relation(name) for name in ws.engine.relations()]
            assert all(view.to_arrow().equals(fresh_table(ws.engine, view.name)) for view in views)
            ws.engine.commit(**change)
            assert all(view.to_arrow().equals(fresh_table(ws.engine, view.name)) for view in views)


PLAIN_KINDS = [("n", "number"), ("u", "unsigned"), ("f", "float"), ("s", "symbol")]
PLAIN_ROW = st.tuples(st.integers(-3, 3) | st.sampled_from([numbers.INT_MIN, numbers.INT_MAX]),
                      st.integers(0, 3), st.sampled_from([0.0, -0.0, 1.5, -math.inf, math.inf, 1e-300]),
                      st.sampled_from(["", "a", "b", "ä", "✓", "a\x00", "A"]))


@settings(max_examples=examples(200), deadline=None)
@given(st.sets(PLAIN_ROW, max_size=40), st.sets(PLAIN_ROW, max_size=12), st.data(), st.booleans())
def test_a_patched_table_is_the_table_of_the_changed_rows(rows, new, data, ordered):
    """arrow.patched (a kept table changed by a commit) against building the table again."""
    from datalog.engine import arrow
    rows = set(rows)
    retracted = set(data.draw(st.lists(st.sampled_from(sorted(rows)), max_size=8))) if rows else set()
    inserted = {row for row in new if row not in rows}
    before = arrow.table_of(PLAIN_KINDS, sorted(rows) if ordered else list(rows))
    asked = {(n, u, -f if f == 0 else f, s) for n, u, f, s in retracted}    # -0.0 retracts 0.0, as in a set
    after = arrow.patched(before, PLAIN_KINDS, inserted, asked, ordered)
    expected = sorted((rows - retracted) | inserted)
    got = [tuple(r.values()) for r in after.to_pylist()]
    assert (got if ordered else sorted(got)) == expected
    assert after.schema == before.schema


def test_a_view_read_before_any_run_sees_the_derived_rows():
    """``engine.relation(name)`` before any ``run``: every read runs the program first, as
    ``engine.rows`` does (it was an empty derived relation: a stale answer)."""
    for read in (len, lambda r: r.rows(), lambda r: r.to_arrow().num_rows, lambda r: list(r)):
        engine = Engine("e(1, 2). e(2, 3).\np(x, z) :- e(x, y), e(y, z).\n")
        answer = read(engine.relation("p"))
        assert answer in (1, [(1, 3)]), answer
        assert engine.evaluated


def test_an_engine_takes_a_program_text():
    assert Engine("p(1). q(x) :- p(x).").rows("q") == [(1,)]
    with pytest.raises(DatalogError) as refused:
        Engine("p(1")
    assert refused.value.code == "syntax_error"
    with pytest.raises(TypeError, match="from_file"):
        Engine(42)
