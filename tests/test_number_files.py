"""Fact files of numbers read in C (datalog/sources/numberfile.py) give exactly the rows the
careful reader gives, or leave the file to it (which then reports what is wrong); a relation
loaded so holds its words until read as tuples, and everything after agrees with the tuples."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings, strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog.sources import files, numberfile
from datalog.sources.textformat import TextFormat
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

# fields a file may hold: plain numbers, int64's extremes and one beyond, and what the C reader
# must leave to the careful one (a sign, blanks, hex, a symbol, nothing)
NUMBERS = st.integers(-1000, 1000).map(str)
FIELDS = st.one_of(NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS,   # mostly plain
                   st.sampled_from(["9223372036854775807", "-9223372036854775808", "9223372036854775808",
                                    "-9223372036854775809", "-0", "007", "+5", " 5", "5 ", "0x1f", "a", "",
                                    "99999999999999999999999", "-"]))
ENDS = st.sampled_from(["\n", "\n", "\n", "\r\n"])


@st.composite
def number_files(draw):
    arity = draw(st.integers(1, 3))
    delimiter = draw(st.sampled_from(["\t", ",", "|", " "]))
    plain = draw(st.booleans())                   # half the files as the C reader takes them
    fields = NUMBERS | st.sampled_from(["9223372036854775807", "-9223372036854775808", "-0", "007"]) \
        if plain else FIELDS
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        width = arity if plain or draw(st.integers(0, 9)) else draw(st.integers(0, arity + 1))   # now and then wrong
        lines.append(delimiter.join(draw(fields) for _ in range(width)) + ("\n" if plain else draw(ENDS)))
    text = "".join(lines)
    if text and draw(st.booleans()):
        text = text.rstrip("\n")                  # no newline after the last line
    return arity, delimiter, draw(st.booleans()), text


def read(path, arity, delimiter, headers, in_c: bool):
    fmt = TextFormat(delimiter, headers=headers)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numberfile, "FROM_BYTES", 0 if in_c else 1 << 62)
        try:
            rows = files.read_facts(path, ["number"] * arity, fmt)
        except DatalogError as exc:
            return "error", exc.code, str(exc)
    return "rows", type(rows).__name__, list(rows)


@settings(max_examples=examples(300), deadline=None)
@given(number_files())
def test_the_c_reader_gives_the_careful_readers_rows_or_leaves_the_file_to_it(tmp_path_factory, case):
    arity, delimiter, headers, text = case
    path = tmp_path_factory.mktemp("facts") / "r.facts"
    path.write_text(text)
    in_c, careful = read(path, arity, delimiter, headers, True), read(path, arity, delimiter, headers, False)
    assert careful[1] != "NumberRows"
    event("read in C" if in_c[1] == "NumberRows" else "left to the careful reader")
    if in_c[1] == "NumberRows":
        assert in_c[0] == careful[0] == "rows" and in_c[2] == careful[2]
    else:
        assert in_c == careful                    # left to the careful reader: the same rows or error


def test_a_large_plain_file_is_read_in_c_and_held_as_words(tmp_path):
    rows = [(i, (i * 7919) % 5000 - 2500) for i in range(10_000)] + [(3, 2**63 - 1), (-2**63, 0), (3, 2**63 - 1)]
    (tmp_path / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in rows))
    assert (tmp_path / "e.facts").stat().st_size >= numberfile.FROM_BYTES
    assert type(files.read_facts(tmp_path / "e.facts", ["number", "number"])).__name__ == "NumberRows"
    text = (".decl e(a: number, b: number)\n.input e\n.decl p(a: number)\n.decl q(a: number)\n"
            "p(b) :- e(_, b).\nq(a) :- e(a, _), !p(a).\n")
    engine = Engine.from_source(text, facts_dir=tmp_path)
    engine.load_inputs()
    held = engine.db["e"]
    assert type(held).__name__ == "LazyRelation" and len(held) == len(set(rows))
    assert held.sorted_rows() == sorted(set(rows)) and type(held).__name__ == "LazyRelation"   # from its words
    engine.run()                                  # q's negation: the tuple path reads e as tuples
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numberfile, "FROM_BYTES", 1 << 62)
        twin = Engine.from_source(text, facts_dir=tmp_path)
        twin.run()
    assert type(twin.db["e"]).__name__ == "Relation"
    assert {n: engine.rows(n) for n in "epq"} == {n: twin.rows(n) for n in "epq"}
    change = {"inserts": {"e": [(10**6, 3)]}, "retracts": {"e": [(3, 2**63 - 1)]}}
    assert engine.commit(**change) == twin.commit(**change)
    assert {n: engine.rows(n) for n in "epq"} == {n: twin.rows(n) for n in "epq"}
