"""Plain Datalog (a program with no .decl, .type or component) against Soufflé
programs (any of them): which relations need a declaration, what a relation only read holds,
and what a variable inside one negated atom means."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError


def _refused(text: str) -> DatalogError:
    """The error that building an engine on ``text`` (named prog.dl) raises."""
    with pytest.raises(DatalogError) as info:
        Engine.from_source(text, name="prog.dl")
    return info.value


def _rows(text: str, name: str) -> list:
    engine = Engine.from_source(text, name="prog.dl")
    engine.run()
    return engine.rows(name)


def test_a_relation_only_read_is_empty_in_plain_datalog():
    text = "edge(1, 2).\nedge(2, 3).\nfree(x) :- edge(x, _), !banned(x).\nblocked(x) :- banned(x).\n"
    assert _rows(text, "free") == [(1,), (2,)]
    assert _rows(text, "blocked") == []


def test_a_relation_only_read_is_undefined_in_a_souffle_program():
    text = ".decl edge(a: number, b: number)\nedge(1, 2).\n.decl free(a: number)\nfree(x) :- edge(x, _), !banned(x).\n"
    refusal = _refused(text)
    assert refusal.code == "undefined_relation"
    assert (refusal.span.line, refusal.span.column) == (4, 25)
    assert "banned/1" in refusal.message


def test_a_misspelt_head_is_undefined_where_relations_are_declared():
    text = ('.decl user(u: symbol)\n.decl can(u: symbol, r: symbol)\nuser("ann").\ncan(u, "read") :- user(u).\n'
            'cann(u, "write") :- user(u).\n')
    refusal = _refused(text)
    assert refusal.code == "undefined_relation"
    assert (refusal.span.line, refusal.span.column) == (5, 1)
    assert "cann/2" in refusal.message


def test_a_type_makes_a_souffle_program():
    refusal = _refused(".type Id <: number\nf(x) :- x = 100.\n")
    assert refusal.code == "undefined_relation"
    assert (refusal.span.line, refusal.span.column) == (2, 1)
    assert _rows("f(x) :- x = 100.\n", "f") == [(100,)]


@pytest.mark.parametrize("directive", [".output f", ".printsize f"])
def test_an_output_names_a_declared_relation_in_plain_datalog_too(directive):
    """Soufflé's negative test semantic/type_system7 is ``F(x) :- x = 100. .output F``."""
    refusal = _refused(f"f(x) :- x = 100.\n{directive}\n")
    assert refusal.code == "undefined_relation"
    assert (refusal.span.line, refusal.span.column) == (2, len(directive))
    assert "f in ." in refusal.message and "REPL or Python" in refusal.message


def test_a_variable_inside_one_negated_atom_is_existential_in_plain_datalog():
    text = "e(1, 2, 2).\ne(3, 4, 5).\nn(1). n(3). n(7).\nloopless(x) :- n(x), !e(x, y, y).\n"
    assert _rows(text, "loopless") == [(3,), (7,)]


def test_a_variable_inside_one_negated_atom_is_unsafe_in_a_souffle_program():
    text = (".decl e(a: number, b: number, c: number)\n.decl n(a: number)\n.decl loopless(a: number)\n"
            "loopless(x) :- n(x), !e(x, y, y).\n")
    refusal = _refused(text)
    assert refusal.code == "unsafe_negation"


def test_a_variable_in_two_negated_atoms_stays_unsafe_in_plain_datalog():
    refusal = _refused("n(1).\ne(1, 2).\np(x) :- n(x), !e(x, y), !e(y, x).\n")
    assert refusal.code == "unsafe_negation"


FACTS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), max_size=12)


@settings(max_examples=25, deadline=None)
@given(FACTS, st.lists(st.integers(0, 3), max_size=4))
def test_existential_negation_equals_the_relation_written_out(edges, nodes):
    """``!e(x, y, y)`` (y nowhere else) is ``!some(x)`` with ``some(x) :- e(x, y, y).``"""
    facts = "".join(f"e({a}, {b}, {c}).\n" for a, b, c in edges) + "".join(f"n({k}).\n" for k in nodes)
    facts += "e(9, 9, 8).\nn(9).\n"                     # every relation used has a fact: arity, types
    implicit = facts + "p(x, z) :- n(x), n(z), !e(x, y, y), !e(z, w, x).\n"
    written = facts + ("some(x) :- e(x, y, y).\nthird(x, z) :- e(z, w, x).\n"
                       "p(x, z) :- n(x), n(z), !some(x), !third(x, z).\n")
    assert _rows(implicit, "p") == _rows(written, "p")
    expected = sorted({(x, z) for x in nodes + [9] for z in nodes + [9]
                       if not any(a == x and b == c for a, b, c in edges + [(9, 9, 8)])
                       and not any(a == z and c == x for a, b, c in edges + [(9, 9, 8)])})
    assert _rows(implicit, "p") == expected
