"""Decimal text in and out of int64 rows (``lftj.text``): the compiled module against its twin
against Python's own ``str`` of each value.

Rows of numbers, unsigned words and symbols (empty, ASCII, multi-byte UTF-8, holding the
delimiter), the int64 extremes, every one-byte ASCII delimiter the formats use; and the checks
that keep the loop from indexing outside its inputs.
"""

import doctest

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from datalog.evaluation.symbols import SymbolTable
from lftj import kernels
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

COMPILED, TWIN = kernels.load("compiled", "text"), kernels.load("python", "text")
BOTH = pytest.mark.parametrize("k", [COMPILED, TWIN], ids=["compiled", "twin"])
LOW, HIGH = -2**63, 2**63 - 1
values = st.one_of(st.integers(-3, 3), st.sampled_from([LOW, LOW + 1, HIGH - 1, HIGH]))
KIND = {"number": COMPILED.NUMBER, "unsigned": COMPILED.UNSIGNED, "symbol": COMPILED.SYMBOL}


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.lists(st.tuples(*[values] * k), max_size=20)),
       st.sampled_from([b"\t", b",", b"|", b" "]))
def test_delimited_rows_are_their_decimal_lines(rows, delimiter):
    a = np.array(rows, dtype=np.int64).reshape(len(rows), -1) if rows else np.zeros((0, 2), np.int64)
    expected = "".join(delimiter.decode().join(map(str, row)) + "\n" for row in a.tolist()).encode()
    assert COMPILED.delimited(a, delimiter) == TWIN.delimited(a, delimiter) == expected


@st.composite
def typed_rows(draw):
    """-> (types, rows of Python values): numbers, unsigned values and symbols per column."""
    types = draw(st.lists(st.sampled_from(list(KIND)), min_size=1, max_size=4))
    value = {"number": st.integers(LOW, HIGH) | values, "unsigned": st.integers(0, 2**64 - 1),
             "symbol": st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)}
    return types, draw(st.lists(st.tuples(*[value[t] for t in types]), max_size=12))


@settings(max_examples=examples(200), deadline=None)
@given(typed_rows(), st.sampled_from([b"\t", b",", b"|"]))
def test_symbols_and_unsigned_values_are_written_as_str_gives_them(typed, delimiter):
    types, rows = typed
    table = SymbolTable()
    words = np.zeros((len(rows), len(types)), np.int64)
    for c, t in enumerate(types):
        column = [row[c] for row in rows]
        words[:, c] = (table.words(column) if t == "symbol" else
                       [v - 2**64 if v >= 2**63 else v for v in column])     # an unsigned word: two's complement
    expected = "".join(delimiter.decode().join(map(str, row)) + "\n" for row in rows).encode("utf-8")
    kinds = [KIND[t] for t in types]
    text, starts = table.text()
    assert COMPILED.delimited(words, delimiter, kinds, text, starts) == expected
    assert TWIN.delimited(words, delimiter, kinds, text, starts) == expected


@BOTH
@pytest.mark.parametrize("a, delimiter, message", [
    (np.zeros((1, 2), np.int64), b"", "one ASCII byte"), (np.zeros((1, 2), np.int64), "\t", "one ASCII byte"),
    (np.zeros((1, 2), np.int64), "é".encode(), "one ASCII byte"), (np.zeros((1, 0), np.int64), b"\t", "no column"),
    (np.zeros((2,), np.int64), b"\t", "2-D int64"), (np.zeros((1, 2)), b"\t", "2-D int64")])
def test_delimited_takes_int64_rows_and_one_ascii_byte(k, a, delimiter, message):
    with pytest.raises(ValueError, match=message):
        k.delimited(a, delimiter)


TEXT, STARTS = np.frombuffer(b"abc", np.uint8), np.array([0, 1, 3])     # two symbols, "a" and "bc"


@BOTH
@pytest.mark.parametrize("words, kinds, text, starts, message", [
    ([[2]], [2], TEXT, STARTS, "no symbol of the 2"), ([[-1]], [2], TEXT, STARTS, "no symbol of the 2"),
    ([[0]], [2], None, None, "needs the symbols' text"), ([[0]], [2], TEXT, STARTS.astype(np.int32), "needs"),
    ([[0]], [2], TEXT, np.array([0, 2, 1]), "rise from 0"), ([[0]], [2], TEXT, np.array([1, 3]), "rise from 0"),
    ([[0]], [2], TEXT, np.array([0, 1, 4]), "rise from 0"), ([[0]], [3], TEXT, STARTS, "kinds must name"),
    ([[0, 1]], [2], TEXT, STARTS, "kinds must name")])
def test_a_symbol_word_outside_the_text_is_a_value_error(k, words, kinds, text, starts, message):
    with pytest.raises(ValueError, match=message):
        k.delimited(np.array(words, np.int64), b",", kinds, text, starts)


@BOTH
def test_the_text_doctests(k):
    result = doctest.testmod(k, verbose=False)
    assert result.attempted >= 3 and result.failed == 0
