"""Strata evaluated on the compiled kernel (datalog/evaluation/columnar.py) give what the tuple
path and the naive reference evaluator give; eligible strata really run there, the others fall
back; ``DATALOG_COLUMNAR=0`` turns it off; Ctrl-C still stops a run on the kernel within a second."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from datalog.engine.engine import Engine
from datalog.language import naive
from datalog.language.parser import parse
from lftj.trie import sorted_rows as trie_rows
from interrupts import interrupted_within_a_second, resident_bytes
from strategies import programs, unsigned_programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

DATALOG = str(Path(sys.executable).with_name("datalog"))
VALUES = st.integers(-2, 3) | st.sampled_from([2**63 - 1, -2**63, 0])
VARIABLES = ("x", "y", "z")
# symbols: the empty one, a space, escapes, non-ASCII, a long one, and ones that look like numbers
SYMBOLS = st.sampled_from(["a", "b", "c", "", "a b", 'q"uote', "tab\t", "é", "ünï", "x" * 300, "1", "-2"])


@contextmanager
def columnar(on: bool):
    before = os.environ.get("DATALOG_COLUMNAR")
    os.environ["DATALOG_COLUMNAR"] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["DATALOG_COLUMNAR"]
        else:
            os.environ["DATALOG_COLUMNAR"] = before


def tuple_path(text: str, edb: dict) -> Engine:
    """The program run on the tuple path (the kernel off): the twin an engine is compared with."""
    with columnar(False):
        engine = Engine.from_source(text)
        for name, rows in edb.items():
            engine.insert(name, sorted(rows))
        engine.run()
    return engine


def evaluated(text: str, edb: dict, on: bool) -> tuple[dict, list[str]]:
    """Every relation's rows, and the progress lines, with the kernel on or off."""
    told: list[str] = []
    with columnar(on):
        engine = Engine.from_source(text)
        for name, rows in edb.items():
            engine.insert(name, sorted(rows))
        engine.run(told.append)
    return {name: engine.rows(name) for name in engine.schema}, told


def reference(text: str, edb: dict) -> dict:
    db = naive.evaluate(parse(text), {k: set(v) for k, v in edb.items()})
    return {name: sorted(rows) for name, rows in db.items()}


# ---------------------------------------------------------------- random eligible programs

def constant(value) -> str:
    """A value as a Datalog constant (a symbol quoted, its quote and tab escaped)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
    return str(value)


@st.composite
def atoms(draw, relations: dict[str, int], values=VALUES) -> str:
    name = draw(st.sampled_from(sorted(relations)))
    args = [draw(st.sampled_from(VARIABLES) | st.just("_") | values.map(constant)) for _ in range(relations[name])]
    return f"{name}({', '.join(args)})"


@st.composite
def eligible_programs(draw, type_: str = "number") -> tuple[str, dict]:
    """Positive rules of 1-3 atoms over columns of ``type_`` of arity 1-3, in 1-3 strata (IDB
    relation p_i reads the EDB, p_j for j < i and itself); numbers with 0, negatives and int64's
    extremes, symbols with the empty one, escapes, non-ASCII and a long one."""
    values = SYMBOLS if type_ == "symbol" else VALUES
    edb = {f"e{i}": draw(st.integers(1, 3)) for i in range(draw(st.integers(1, 2)))}
    relations, lines, facts = dict(edb), [], {}
    for name, width in edb.items():
        facts[name] = draw(st.sets(st.tuples(*[values] * width), max_size=8))
    for i in range(draw(st.integers(1, 3))):
        head, width = f"p{i}", draw(st.integers(1, 3))
        relations[head] = width
        for _ in range(draw(st.integers(1, 3))):
            body = draw(st.lists(atoms(relations, values), min_size=1, max_size=3))
            bound = [v for v in VARIABLES if any(v in a.split("(")[1].replace(")", "").split(", ") for a in body)]
            if not bound:
                body.append(f"{next(iter(edb))}({', '.join(['x'] * edb[next(iter(edb))])})")
                bound = ["x"]
            args = [draw(st.sampled_from(bound)) for _ in range(width)]
            for _ in range(draw(st.integers(0, 2))):    # x < 3, x != -1 (signed, with int64's extremes), x != y
                left, op = draw(st.sampled_from(bound)), draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
                body.append(f"{left} {op} {draw(st.one_of(values.map(constant), st.sampled_from(bound)))}")
            lines.append(f"{head}({', '.join(args)}) :- {', '.join(body)}.")
    decls = [f".decl {n}({', '.join(f'c{c}: {type_}' for c in range(w))})" for n, w in relations.items()]
    return "\n".join(decls + lines), facts


@settings(max_examples=examples(60), deadline=None)
@given(eligible_programs())
def test_kernel_matches_the_tuple_path_and_the_reference(program):
    text, edb = program
    on, told = evaluated(text, edb, True)
    off, told_off = evaluated(text, edb, False)
    assert on == off
    expected = reference(text, edb)
    assert on == {name: expected.get(name, []) for name in on}
    assert any("on the compiled kernel" in line for line in told), told      # eligible: it ran there
    assert not any("kernel" in line for line in told_off)


@settings(max_examples=examples(60), deadline=None)
@given(eligible_programs("symbol"))
def test_symbols_on_the_kernel_match_the_tuple_path_and_the_reference(program):
    # symbols join as their words in one symbol table; x < "b" between symbols is not a
    # comparison of words, so a stratum with one stays on the tuple path
    text, edb = program
    on, told = evaluated(text, edb, True)
    assert on == evaluated(text, edb, False)[0]
    expected = reference(text, edb)
    assert on == {name: expected.get(name, []) for name in on}
    ordered = any(op in text for op in ("<", ">"))
    assert ordered or any("on the compiled kernel" in line for line in told), told


@settings(max_examples=examples(40), deadline=None)
@given(programs())
def test_mixed_programs_agree_with_the_kernel_on_or_off(generated):
    """Programs with negation, comparisons, arithmetic and aggregates: eligible strata on the
    kernel, the others on the tuple path, together the same as the tuple path alone."""
    edb = {k: set(v) for k, v in generated.edb.items()}
    on, _ = evaluated(generated.text, edb, True)
    off, _ = evaluated(generated.text, edb, False)
    assert on == off
    expected = reference(generated.text, edb)
    assert {n: on[n] for n in generated.relations} == {n: expected[n] for n in generated.relations}


@settings(max_examples=25, deadline=None)
@given(unsigned_programs())
def test_unsigned_programs_agree_with_the_kernel_on_or_off(generated):
    edb = {k: set(v) for k, v in generated.edb.items()}
    assert evaluated(generated.text, edb, True)[0] == evaluated(generated.text, edb, False)[0]


# ---------------------------------------------------------------- recursion: many rounds, many runs

RECURSIVE_RULES = [
    "p(x, z) :- p(x, y), e(y, z).",                       # linear (transitive closure)
    "p(x, z) :- p(x, y), p(y, z).",                       # non-linear: p read whole, as a trie
    "p(x, y) :- e(x, a), p(a, b), e(y, b).",              # same generation
    "p(x, y) :- q(x, y).\nq(y, x) :- p(x, y), e(x, _).",   # mutual recursion through q
    "p(x, x) :- p(x, _), e(x, 0).",                       # a repeated head variable, a constant
    "p(x, y) :- p(x, y), e(1, _).",                       # a guard of no variable
]
GRAPH_VALUES = st.integers(0, 12) | st.sampled_from([2**63 - 1, -2**63, -1])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(RECURSIVE_RULES), min_size=1, max_size=3, unique=True),
       st.sets(st.tuples(GRAPH_VALUES, GRAPH_VALUES), max_size=40))
def test_recursive_strata_on_the_kernel_match_the_tuple_path_and_the_reference(rules, edges):
    # up to 40 edges of a graph of 12 nodes and int64's extremes, none, or one: tens of rounds,
    # so a relation's known rows make several runs that merge, and tries of p rebuilt per version
    text = TC.replace("p(x, z) :- p(x, y), e(y, z).\n", "") + ".decl q(a: number, b: number)\n" + "\n".join(rules) + "\n"
    if "q(" not in "".join(rules):
        text += "q(x, y) :- e(x, y).\n"
    edb = {"e": edges}
    on, told = evaluated(text, edb, True)
    assert on == evaluated(text, edb, False)[0]
    expected = reference(text, edb)
    assert on == {name: expected.get(name, []) for name in on}
    assert any("kernel" in line for line in told)


def test_the_rows_come_back_as_shared_ints_from_a_narrow_column():
    # a column of node numbers decodes through one table of ints: its equal values are one object
    # (ints beyond CPython's small ones, -5..256, which are always one object)
    on, _ = evaluated(TC, {"e": {(1000 + i, 1000 + (i + 1) % 50) for i in range(50)}}, True)
    rows = on["p"]
    assert len(rows) == 50 * 50
    for column in range(2):
        firsts: dict = {}
        assert all(firsts.setdefault(row[column], row[column]) is row[column] for row in rows)


# ---------------------------------------------------------------- which strata run on the kernel

TC = ".decl e(a: number, b: number)\n.decl p(a: number, b: number)\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n"


def test_unsigned_words_beyond_int64_come_back_as_they_went_in():
    text = TC.replace("number", "unsigned") + ".decl big(a: unsigned, b: unsigned)\nbig(x, y) :- p(x, y), x > y, y >= 9223372036854775808u.\n"
    edb = {"e": {(2**64 - 1, 2**63), (2**63, 0), (0, 2**64 - 1)}}
    on, told = evaluated(text, edb, True)
    expected = reference(text, edb)
    assert on["p"] == expected["p"] and len(on["p"]) == 9
    assert on["big"] == expected["big"] == [(2**64 - 1, 2**63)]       # compared as unsigned, not as int64
    assert any("kernel" in line for line in told)


@pytest.mark.parametrize("rule", [
    "q(x) :- p(x, y), x < y ^ 2.",           # a power
    "q(x) :- p(x, y), x = max(y, 3).",       # a functor in an assignment
    "q(c) :- c = count : { p(_, _) }.",      # an aggregate with no atom beside it
    'q(x) :- p(x, y), cat(to_string(y), "") != "1".',     # a functor
])
def test_an_ineligible_stratum_falls_back_to_the_tuple_path(rule):
    text = TC + ".decl q(a: number)\n" + rule + "\n"
    edb = {"e": {(1, 2), (2, 3), (3, 1), (3, 4)}}
    on, told = evaluated(text, edb, True)
    stratum_lines = [i for i, line in enumerate(told) if line.startswith("stratum")]
    q_at = next(i for i in stratum_lines if told[i].endswith(": q"))
    after_q = told[q_at + 1:next((i for i in stratum_lines if i > q_at), len(told))]
    assert not any("kernel" in line for line in after_q)        # q on the tuple path
    assert any("kernel" in line for line in told[:q_at])          # p on the kernel
    assert on == evaluated(text, edb, False)[0]


def test_a_comparison_of_two_variables_runs_on_the_kernel_at_the_depth_that_binds_it():
    # the kernel tests a < b once b is bound, so the join makes the pairs that pass, not all 1200**2
    text = ".decl n(a: number)\n.decl t(a: number, b: number)\nt(a, b) :- n(a), n(b), a < b.\n"
    on, told = evaluated(text, {"n": {(i,) for i in range(1200)}}, True)
    assert on["t"] == [(a, b) for a in range(1200) for b in range(a + 1, 1200)]
    assert sum("on the compiled kernel" in line for line in told) == 1, told


def test_symbols_run_on_the_kernel_and_come_back_as_the_strings_that_went_in():
    text = TC.replace("number", "symbol") + '.decl q(a: symbol)\nq(y) :- p("a", y), y != "c".\n'
    a, b, c = "".join(["a"]), "".join(["b"]), "".join(["c"])      # strings made at run time
    on, told = evaluated(text, {"e": {(a, b), (b, c)}}, True)
    assert on["p"] == [("a", "b"), ("a", "c"), ("b", "c")] and on["q"] == [("b",)]
    assert sum("on the compiled kernel" in line for line in told) == 2, told
    assert {id(v) for row in on["p"] for v in row} <= {id(a), id(b), id(c)}


def test_an_ordered_comparison_of_symbols_takes_the_tuple_path():
    text = TC.replace("number", "symbol") + '.decl q(a: symbol)\nq(y) :- p(_, y), y < "c".\n'
    on, told = evaluated(text, {"e": {("a", "b"), ("b", "c")}}, True)
    assert on["q"] == [("b",)] and sum("on the compiled kernel" in line for line in told) == 1, told


def test_the_uncompiled_twin_runs_the_same_strata(tmp_path):
    (tmp_path / "e.facts").write_text("".join(f"{i}\t{(i * 7) % 30}\n" for i in range(30)))
    prog = tmp_path / "tc.dl"
    prog.write_text(TC + ".input e\n.output p\n")
    outputs = []
    for env in ({"DATALOG_KERNEL": "python", "DATALOG_COLUMNAR": "1"}, {"DATALOG_COLUMNAR": "0"}):
        out = tmp_path / env.get("DATALOG_KERNEL", "tuples")
        out.mkdir()
        done = subprocess.run([DATALOG, "run", str(prog), "-F", str(tmp_path), "-D", str(out)],
                              capture_output=True, text=True, timeout=60, env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
        outputs.append(sorted((out / "p.csv").read_text().splitlines()))
    assert outputs[0] == outputs[1] and len(outputs[0]) > 30


def test_the_engine_is_maintained_after_a_run_on_the_kernel():
    with columnar(True):
        engine = Engine.from_source(TC)
        engine.insert("e", [(1, 2), (2, 3)])
        engine.run()
        delta = engine.commit(inserts={"e": [(3, 4)]}, retracts={"e": [(1, 2)]})
    assert engine.rows("p") == [(2, 3), (2, 4), (3, 4)]
    assert sorted(delta["p"].inserted) == [(2, 4), (3, 4)] and sorted(delta["p"].retracted) == [(1, 2), (1, 3)]


@pytest.mark.parametrize("type_, edges", [("number", [(1, 2), (2, 3), (-5, 1)]),
                                           ("symbol", [("b", "c"), ("c", "a"), ("a", "b")]),
                                           ("unsigned", [(2**64 - 1, 0), (0, 2**63), (1, 0)])])
def test_a_derived_relation_holds_the_kernels_words_until_its_rows_are_read(type_, edges):
    # counted and read in order without its set of tuples; its rows, then a commit through it,
    # as the tuple path's
    text = TC.replace("number", type_)
    with columnar(True):
        engine = Engine.from_source(text)
        engine.insert("e", edges)
        engine.run()
        held = engine.db["p"]
        twin = tuple_path(text, {"e": edges})
        assert type(held).__name__ == "LazyRelation" and len(held) == len(twin.db["p"]) >= 5
        assert engine.rows("p") == twin.rows("p") and type(held).__name__ == "LazyRelation"   # in order, unread
        new = (edges[0][1], edges[0][0])
        assert engine.commit(inserts={"e": [new]}) == twin.commit(inserts={"e": [new]})
        assert engine.rows("p") == twin.rows("p") and type(held).__name__ == "Relation"


@pytest.mark.parametrize("type_, edges", [("number", [(1, 2), (2, 3), (3, 1)]),
                                           ("symbol", [("b", "c"), ("c", "a"), ("a", "b")]),
                                           ("unsigned", [(2**64 - 1, 0), (0, 2**63), (1, 0)])])
def test_the_next_stratum_on_the_kernel_reads_a_held_relation_as_its_words(type_, edges):
    # q's stratum reads p's words as the kernel left them, not tuples decoded and encoded again
    text = TC.replace("number", type_) + f".decl q(a: {type_}, n: number)\nq(x, n) :- e(x, _), n = count : {{ p(x, _) }}.\n"
    with columnar(True):
        engine = Engine.from_source(text)
        engine.insert("e", edges)
        engine.run()
        twin = tuple_path(text, {"e": edges})
        assert type(engine.db["p"]).__name__ == "LazyRelation"        # not decoded by q's stratum
        assert engine.rows("q") == twin.rows("q") and engine.rows("p") == twin.rows("p")
        assert len(engine.rows("q")) == len({x for x, _ in edges})


@pytest.mark.parametrize("types", [("symbol", "number"), ("unsigned", "number"), ("number", "number")])
def test_held_words_sorted_for_the_output_are_read_sorted_as_words(types):
    # a relation's words sorted in value order (for its output) are sorted as words again when a
    # stratum reads them; words read as they are are shared, so the output's sort copies them
    from types import SimpleNamespace
    from datalog.evaluation.columnar import Columns
    from datalog.evaluation.symbols import SymbolTable
    from datalog.evaluation.words import DecodedRows, encode
    from lftj.csr import distinct_rows
    from lftj.relation import Relation
    table = SymbolTable()
    values = {"symbol": ["b", "a", "c"], "unsigned": [2**64 - 1, 0, 5], "number": [3, -1, 2]}
    rows = list(zip(values[types[0]], [7, 8, 9]))
    words = distinct_rows(encode(rows, types, table))
    for sort_first in (False, True):
        relation = Relation("p", 2)
        held = DecodedRows(words.copy(), types, table)
        relation.hold(held)
        if sort_first:
            held.ordered_words()
        got = Columns({"p": relation}, {"p": SimpleNamespace(types=list(types))}, table).held_words("p")
        assert got.tolist() == words.tolist()
        assert relation.sorted_rows() == sorted(rows)
        assert got.tolist() == words.tolist()              # not sorted in place for the output


@settings(max_examples=examples(40), deadline=None)
@given(st.sets(st.tuples(SYMBOLS, st.sampled_from([0, 1, 2**63 - 1, 2**63, 2**64 - 1]), VALUES), max_size=30))
def test_rows_of_symbols_unsigned_and_numbers_come_in_the_order_of_their_values(rows):
    # the kernel's words sorted by symbol rank, unsigned as unsigned, numbers as they are
    text = (".decl e(a: symbol, b: unsigned, c: number)\n.decl p(a: symbol, b: unsigned, c: number)\n"
            "p(x, y, z) :- e(x, y, z).\n")
    on, told = evaluated(text, {"e": rows}, True)
    assert on["p"] == sorted(rows) and any("on the compiled kernel" in line for line in told)


# ---------------------------------------------------------------- Ctrl-C

def test_ctrl_c_stops_a_run_on_the_kernel_within_a_second(tmp_path):
    # a chain of 3,000 edges: 4.5M paths in 3,000 rounds, each round a kernel call
    (tmp_path / "e.facts").write_text("".join(f"{i}\t{i + 1}\n" for i in range(3000)))
    prog = tmp_path / "tc.dl"
    prog.write_text(TC + ".input e\n.output p\n")
    (tmp_path / "out").mkdir()
    child = subprocess.Popen([DATALOG, "run", str(prog), "-F", str(tmp_path), "-D", str(tmp_path / "out")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "DATALOG_COLUMNAR": "1"})
    # evaluating: past its imports it holds about 45 MB; 90 MB some 3 s into an 8 s run here
    interrupted_within_a_second(child, lambda: resident_bytes(child.pid) >= 90 << 20)


def test_the_memory_budget_stops_a_run_on_the_kernel_between_rounds():
    import random
    import datalog.evaluation.columnar  # noqa: F401   numpy and the kernel, loaded before the reading
    from datalog.language.errors import DatalogError
    from maintenance.budget import resident
    rng = random.Random(7)
    edges = sorted({(rng.randrange(1000), rng.randrange(1000)) for _ in range(3000)})
    with columnar(True):
        engine = Engine.from_source(TC, memory_budget=(resident() or 0) + (10 << 20))
        engine.insert("e", edges)
        told: list[str] = []
        with pytest.raises(DatalogError) as caught:
            engine.run(told.append)
    assert caught.value.code == "memory_budget"
    assert any("kernel" in line for line in told) and not engine.evaluated
    assert engine.stored_relation("p").sorted_rows() == []          # nothing half-made is left


TRIANGLES = ".decl e(a: number, b: number)\n.decl t(a: number, b: number, c: number)\nt(x, y, z) :- e(x, y), e(y, z), e(z, x).\n"


def test_by_default_the_kernel_takes_the_strata_that_read_many_rows_recursive_or_not():
    from datalog.evaluation import fixpoint
    before = os.environ.pop("DATALOG_COLUMNAR", None)
    edges = [(i, j) for i in range(70) for j in range(70) if (i * 7 + j * 3) % 11 < 3]
    assert len(edges) >= fixpoint.SMALL
    try:
        runs = {}
        for name, text, rows in (("few", TRIANGLES, edges[:50]), ("many", TRIANGLES, edges), ("tc", TC, edges),
                                 ("tc few", TC, edges[:50])):
            engine = Engine.from_source(text)
            engine.insert("e", rows)
            told: list[str] = []
            engine.run(told.append)
            runs[name] = any("kernel" in line for line in told)
            with columnar(False):
                twin = Engine.from_source(text)
                twin.insert("e", rows)
                twin.run()
                assert {n: engine.rows(n) for n in engine.schema} == {n: twin.rows(n) for n in twin.schema}
    finally:
        if before is not None:
            os.environ["DATALOG_COLUMNAR"] = before
    assert runs == {"few": False, "many": True, "tc": True, "tc few": False}


# ---------------------------------------------------------------- the sorted words a stratum leaves

WORDS_PROGRAM = """
.decl e(a: number, b: number)
.input e
.decl path(a: number, b: number)
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
.output path
.output path(IO=file, filename="path.h.csv", headers=true, delimiter=",")
.output path(IO=file, filename="path.gz", compress=true)
.output path(IO=file, filename="path.rfc.csv", rfc4180=true)
.output path(IO=file, filename="path.tabs", delimiter="::")
.output path(IO=file, filename="path.dash", delimiter="-")
.output path(IO=file, filename="path.bar", delimiter="|")
"""


@settings(max_examples=examples(20), deadline=None)
@given(st.sets(st.tuples(VALUES, VALUES), max_size=25))
def test_outputs_and_rows_from_the_kept_words_equal_the_tuples_way(tmp_path_factory, edges):
    """A relation of numbers the kernel derived keeps its rows as sorted int64 words (lftj.relation
    Relation.keep_words); rows() and the output files read from them (by the kernel), or from the
    held rows without kept words (DecodedRows.lines), equal, byte for byte, what the tuple path
    gives with the kernel off (thresholds set so that every relation keeps them, or none; the
    kernel writing the lines of 3 rows at a time, so that the pieces meet inside every file)."""
    from datalog.engine import outputs as outputs_module
    from datalog.evaluation import columnar as columnar_module, fixpoint
    answers = {}
    for way in ("kept", "held", "tuples"):
        out = tmp_path_factory.mktemp("out")
        (out / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(edges)))
        with pytest.MonkeyPatch.context() as patch, columnar(way != "tuples"):
            patch.setattr(fixpoint, "SMALL", 0)
            patch.setattr(columnar_module, "KEEP_WORDS", 0 if way == "kept" else 1 << 62)
            patch.setattr(outputs_module, "LINES_CHUNK", 3)
            engine = Engine.from_source(WORDS_PROGRAM, facts_dir=out)
            engine.run()
            engine.write_outputs(out)
            assert (engine.db["path"].current_words() is not None) == (way == "kept" and bool(edges))
        answers[way] = (engine.rows("path"), {p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert answers["kept"] == answers["held"] == answers["tuples"]
    assert answers["kept"][0] == reference(WORDS_PROGRAM, {"e": edges})["path"]


MIXED_WORDS_PROGRAM = WORDS_PROGRAM.replace("e(a: number, b: number)", "e(a: symbol, b: unsigned)") \
    .replace("path(a: number, b: number)", "path(a: symbol, b: unsigned)") \
    .replace("path(x, z) :- path(x, y), e(y, z).", "path(x, z) :- path(x, y), e(w, y), path(w, z).")


@settings(max_examples=examples(20), deadline=None)
@given(st.sets(st.tuples(SYMBOLS.filter(lambda s: "\t" not in s), st.sampled_from([0, 1, 7, 2**63, 2**64 - 1])),
               max_size=25))
def test_outputs_of_symbols_held_unread_equal_the_tuples_way(tmp_path_factory, edges):
    """Symbols (and unsigned words beside them) the kernel derived are written from the held
    words, a column at a time: byte for byte what the tuples give with the kernel off."""
    answers = {}
    for on in (True, False):
        out = tmp_path_factory.mktemp("out")
        (out / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(edges)))
        with columnar(on):
            engine = Engine.from_source(MIXED_WORDS_PROGRAM, facts_dir=out)
            engine.run()
            assert (type(engine.db["path"]).__name__ == "LazyRelation") == (on and bool(edges))
            engine.write_outputs(out)
        answers[on] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert answers[True] == answers[False]


@pytest.mark.parametrize("type_, edges", [("number", [(i, i + 1) for i in range(30)]),
                                           ("symbol", [(f"n{i}", f"n{i + 1}") for i in range(30)])])
def test_a_relation_with_an_index_takes_the_kernels_rows_as_tuples_and_keeps_it_up(type_, edges):
    # an index to keep up to date: the rows go in as tuples (into it too), not held as words
    text = TC.replace("number", type_)
    with columnar(True):
        engine = Engine.from_source(text)
        engine.insert("e", edges)
        engine.load_inputs()
        index = engine.db["p"].index((1, 0))
        engine.run()
        assert type(engine.db["p"]).__name__ == "Relation" and engine.db["p"].indexes[(1, 0)] is index
        assert len(engine.db["p"]) == 30 * 31 // 2
        twin = tuple_path(text, {"e": edges})
        assert engine.rows("p") == twin.rows("p")
        assert sorted(trie_rows(index, 2)) == sorted((b, a) for a, b in twin.rows("p"))


@settings(max_examples=examples(20), deadline=None)
@given(st.sets(st.tuples(VALUES, VALUES), max_size=25), st.booleans())
def test_an_arrow_table_of_kept_words_equals_the_tuples_one(edges, ordered):
    # numbers from the words (a column's buffer each) or from the tuples: the same table
    from datalog.evaluation import columnar as columnar_module, fixpoint
    tables = {}
    for keep in (True, False):
        with pytest.MonkeyPatch.context() as patch, columnar(True):
            patch.setattr(fixpoint, "SMALL", 0)
            patch.setattr(columnar_module, "KEEP_WORDS", 0 if keep else 1 << 62)
            engine = Engine.from_source(TC)
            engine.insert("e", sorted(edges))
            engine.run()
            assert (engine.db["p"].current_words() is not None) == (keep and bool(edges))
            table = engine.relation("p").to_arrow(ordered)
        tables[keep] = (table.schema, table.to_pylist() if ordered else sorted(map(str, table.to_pylist())))
    assert tables[True] == tables[False]
