"""Relation.sorted_rows (grouped sort) against sorted() of the tuples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from datalog.relation import Relation

VALUES = st.one_of(st.integers(-5, 5), st.integers())


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.tuples(st.just(k), st.sets(st.tuples(*[VALUES] * k), max_size=300))))
def test_sorted_rows_equals_sorted(case):
    arity, rows = case
    assert Relation("r", arity, rows).sorted_rows() == sorted(rows)


@settings(max_examples=100, deadline=None)
@given(st.sets(st.tuples(st.text(max_size=3), st.floats(allow_nan=False), st.text(max_size=2)), max_size=200))
def test_sorted_rows_of_symbols_and_floats(rows):
    assert Relation("r", 3, rows).sorted_rows() == sorted(rows)
