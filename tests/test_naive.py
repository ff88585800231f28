"""The reference evaluator on small programs whose answers are worked out by hand."""

import pytest

from datalog.language import errors
from datalog.language.naive import evaluate, stratify
from datalog.language.parser import parse


def run(text: str, edb=None) -> dict[str, set[tuple]]:
    return evaluate(parse(text), edb)


def rows(text: str, relation: str, edb=None) -> list[tuple]:
    return sorted(run(text, edb)[relation])


# ---------------------------------------------------------------- recursion

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_transitive_closure_with_a_cycle():
    edge = {(1, 2), (2, 3), (3, 2), (4, 4)}
    assert rows(TC, "path", {"edge": edge}) == [
        (1, 2), (1, 3), (2, 2), (2, 3), (3, 2), (3, 3), (4, 4)]


def test_every_relation_is_returned_even_when_empty():
    db = run(TC)
    assert db == {"edge": set(), "path": set()}


def test_edb_facts_and_program_facts_are_merged():
    text = TC + "edge(1, 2)."
    assert rows(text, "path", {"edge": {(2, 3)}}) == [(1, 2), (1, 3), (2, 3)]


def test_mutual_recursion():
    # even(0). odd(y) :- even(x), succ(x, y). even(y) :- odd(x), succ(x, y).
    text = """
    even(0).
    odd(y) :- even(x), succ(x, y).
    even(y) :- odd(x), succ(x, y).
    """
    db = run(text, {"succ": {(i, i + 1) for i in range(5)}})
    assert sorted(db["even"]) == [(0,), (2,), (4,)]
    assert sorted(db["odd"]) == [(1,), (3,), (5,)]


def test_same_generation():
    text = """
    sg(x, y) :- parent(x, p), parent(y, p), x != y.
    sg(x, y) :- parent(x, a), sg(a, b), parent(y, b), x != y.
    """
    parent = {("b", "a"), ("c", "a"), ("d", "b"), ("e", "c")}
    assert rows(text, "sg", {"parent": parent}) == [
        ("b", "c"), ("c", "b"), ("d", "e"), ("e", "d")]


# ---------------------------------------------------------------- atoms

def test_constants_repeated_variables_and_wildcards():
    r = {(1, 1, 5), (1, 2, 5), (2, 2, 6), (3, 3, 5)}
    assert rows("loop(x) :- r(x, x, _).", "loop", {"r": r}) == [(1,), (2,), (3,)]
    assert rows("fives(x) :- r(x, x, 5).", "fives", {"r": r}) == [(1,), (3,)]
    assert rows("firsts(x) :- r(x, 2, _).", "firsts", {"r": r}) == [(1,), (2,)]


def test_expression_argument_in_a_body_atom():
    # next(x) :- n(x), n(x + 1).   -- x + 1 is computed once x is bound
    assert rows("next(x) :- n(x), n(x + 1).", "next", {"n": {(1,), (2,), (4,)}}) == [(1,)]
    # step(x) :- e(x, x + 1).      -- x is bound by the same atom
    assert rows("step(x) :- e(x, x + 1).", "step", {"e": {(1, 2), (2, 4)}}) == [(1,)]


def test_multiple_heads_each_get_the_tuple():
    text = "left(x), right(y), both(x, y) :- e(x, y)."
    db = run(text, {"e": {(1, 2), (3, 4)}})
    assert sorted(db["left"]) == [(1,), (3,)]
    assert sorted(db["right"]) == [(2,), (4,)]
    assert sorted(db["both"]) == [(1, 2), (3, 4)]


def test_multiple_heads_in_different_strata():
    # big is used negatively by small's rule, yet shares a rule with mark
    text = """
    big(x), mark(x) :- n(x), x > 2.
    small(x) :- n(x), !big(x).
    """
    db = run(text, {"n": {(1,), (3,)}})
    assert db["big"] == db["mark"] == {(3,)}
    assert db["small"] == {(1,)}


def test_facts_with_expressions():
    assert rows("f(1 + 2, cat(\"a\", \"b\")).", "f") == [(3, "ab")]


def test_disjunction():
    text = "d(x) :- n(x), (x < 2 ; x > 4 ; x = 3)."
    assert rows(text, "d", {"n": {(i,) for i in range(7)}}) == [(0,), (1,), (3,), (5,), (6,)]


def test_disjunction_of_atoms():
    text = "u(x) :- (a(x) ; b(x), c(x))."
    assert rows(text, "u", {"a": {(1,)}, "b": {(2,), (3,)}, "c": {(3,)}}) == [(1,), (3,)]


# ---------------------------------------------------------------- negation

def test_stratified_negation():
    # unreachable(x) :- node(x), !path(1, x).
    text = TC + "unreachable(x) :- node(x), !path(1, x)."
    edb = {"edge": {(1, 2), (2, 3)}, "node": {(1,), (2,), (3,), (4,)}}
    assert rows(text, "unreachable", edb) == [(1,), (4,)]


def test_negation_with_wildcard():
    text = "sink(x) :- node(x), !edge(x, _)."
    edb = {"edge": {(1, 2)}, "node": {(1,), (2,)}}
    assert rows(text, "sink", edb) == [(2,)]


def test_cyclic_negation_is_an_error():
    with pytest.raises(errors.CyclicNegation):
        run("p(x) :- n(x), !q(x). q(x) :- n(x), !p(x).")
    with pytest.raises(errors.CyclicNegation):
        run("p(x) :- n(x), !p(x).")


def test_aggregation_through_recursion_is_an_error():
    with pytest.raises(errors.CyclicNegation):
        run("p(c) :- n(x), c = count : { p(x) }.")


def test_strata_come_dependencies_first():
    prog = parse("""
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), edge(y, z).
        out(x) :- node(x), !path(x, _).
        c(n) :- n = count : out(_).
    """)
    order = stratify(prog.rules, ["c", "out", "path", "edge", "node"])
    position = {name: i for i, stratum in enumerate(order) for name in stratum}
    assert position["edge"] < position["path"] < position["out"] < position["c"]
    assert position["node"] < position["out"]
    assert {"path"} in order


# ---------------------------------------------------------------- aggregates

SALES = {"sale": {("n", "ann", 5), ("n", "bob", 5), ("n", "cy", 2), ("s", "dee", 7)},
         "region": {("n",), ("s",), ("e",)}}


def test_count_of_one_atom_counts_its_tuples():
    # a wildcard of a one-atom body is a column of its own: 3 sales in n, 1 in s, 0 in e
    text = "c(r, n) :- region(r), n = count : sale(r, _, _)."
    assert rows(text, "c", SALES) == [("e", 0), ("n", 3), ("s", 1)]


def test_count_of_a_two_atom_body_counts_distinct_variables():
    # Soufflé materialises {x, p | sale(r, p, x), region(r)} without the wildcard:
    # count : { sale(r, _, a), region(r) } counts distinct amounts a
    text = "c(r, n) :- region(r), n = count : { sale(r, _, a), region(r) }."
    assert rows(text, "c", SALES) == [("e", 0), ("n", 2), ("s", 1)]


def test_count_with_a_repeated_variable_counts_distinct_variables():
    text = "c(n) :- n = count : { r(x, x, _) }."
    assert rows(text, "c", {"r": {(1, 1, 5), (1, 1, 6), (2, 3, 5)}}) == [(1,)]


def test_sum_adds_equal_amounts_of_different_tuples():
    # ann and bob both booked 5 in n: 5 + 5 + 2
    text = "t(r, s) :- region(r), s = sum x : { sale(r, _, x) }."
    assert rows(text, "t", SALES) == [("e", 0), ("n", 12), ("s", 7)]


def test_sum_of_a_two_atom_body_sums_distinct_assignments():
    # locals of { sale(r, _, x), region(r) } are just x: 5 + 2
    text = "t(r, s) :- region(r), s = sum x : { sale(r, _, x), region(r) }."
    assert rows(text, "t", SALES) == [("e", 0), ("n", 7), ("s", 7)]


def test_min_max_mean_have_no_value_over_nothing():
    text = """
    lo(r, m) :- region(r), m = min x : { sale(r, _, x) }.
    hi(r, m) :- region(r), m = max x : { sale(r, _, x) }.
    avg(r, m) :- region(r), m = mean x : { sale(r, _, x) }.
    """
    db = run(text, SALES)
    assert sorted(db["lo"]) == [("n", 2), ("s", 7)]
    assert sorted(db["hi"]) == [("n", 5), ("s", 7)]
    assert sorted(db["avg"]) == [("n", 4.0), ("s", 7.0)]


def test_aggregate_without_group_by():
    text = "total(t) :- t = sum x : { sale(_, _, x) }. n(c) :- c = count : { sale(_, _, _) }."
    db = run(text, SALES)
    assert db["total"] == {(19,)} and db["n"] == {(4,)}


def test_aggregate_of_an_empty_relation():
    text = "n(c) :- c = count : { e(_) }. s(c) :- c = sum x : { e(x) }. m(c) :- c = max x : { e(x) }."
    db = run(text)
    assert db["n"] == {(0,)} and db["s"] == {(0,)} and db["m"] == set()


def test_aggregate_body_with_a_filter_and_negation():
    # amounts over 2 of people not on leave
    text = "t(r, s) :- region(r), s = sum x : { sale(r, p, x), x > 2, !leave(p) }."
    edb = {**SALES, "leave": {("bob",)}}
    assert rows(text, "t", edb) == [("e", 0), ("n", 5), ("s", 7)]


def test_argmax():
    text = "best(r, p) :- sale(r, p, a), a = max x : { sale(r, _, x) }."
    assert rows(text, "best", SALES) == [("n", "ann"), ("n", "bob"), ("s", "dee")]


def test_aggregate_over_a_lower_stratum():
    text = TC + "reach(x, n) :- node(x), n = count : { path(x, _) }."
    edb = {"edge": {(1, 2), (2, 3), (3, 1), (4, 1)}, "node": {(i,) for i in range(1, 6)}}
    assert rows(text, "reach", edb) == [(1, 3), (2, 3), (3, 3), (4, 3), (5, 0)]


def test_nested_aggregate():
    # the number of regions whose sale count is above 1
    text = "busy(n) :- n = count : { region(r), c = count : sale(r, _, _), c > 1 }."
    assert rows(text, "busy", SALES) == [(1,)]


# ---------------------------------------------------------------- arithmetic

def test_integer_division_truncates_toward_zero_and_remainder_takes_the_dividend_sign():
    text = "q(a, b, a / b, a % b) :- pair(a, b)."
    pairs = {(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3)}
    assert rows(text, "q", {"pair": pairs}) == [
        (-7, -2, 3, -1), (-7, 2, -3, -1), (6, 3, 2, 0), (7, -2, -3, 1), (7, 2, 3, 1)]


def test_division_and_modulo_by_zero_are_errors():
    with pytest.raises(errors.DivisionByZero):
        run("q(x / y) :- pair(x, y).", {"pair": {(1, 0)}})
    with pytest.raises(errors.DivisionByZero):
        run("q(x % y) :- pair(x, y).", {"pair": {(1, 0)}})


def test_filters_run_before_bindings():
    # y != 0 is checked before z = x / y is computed
    text = "q(z) :- pair(x, y), z = x / y, y != 0."
    assert rows(text, "q", {"pair": {(6, 0), (6, 3)}}) == [(2,)]


def test_power_unary_minus_and_precedence():
    text = "v(2 ^ 3 ^ 2, -(x), 1 + 2 * 3 - 4, 2 ^ -1, x * 2 ^ 2) :- n(x)."
    assert rows(text, "v", {"n": {(5,)}}) == [(512, -5, 3, 0, 20)]


def test_float_arithmetic():
    text = "f(x / 2, x + 1, x * 0.5) :- n(x)."
    assert rows(text, "f", {"n": {(3.0,)}}) == [(1.5, 4.0, 1.5)]


def test_binding_then_comparison():
    text = "sq(x, y) :- n(x), y = x * x, y > 3."
    assert rows(text, "sq", {"n": {(1,), (2,), (3,)}}) == [(2, 4), (3, 9)]


def test_equality_filter_and_binding_both_ways():
    text = "a(x, y) :- n(x), x + 1 = y. b(x) :- n(x), n(y), y = x + 1."
    db = run(text, {"n": {(1,), (2,), (4,)}})
    assert sorted(db["a"]) == [(1, 2), (2, 3), (4, 5)]
    assert sorted(db["b"]) == [(1,)]


def test_comparisons():
    text = """
    lt(x, y) :- n(x), n(y), x < y.
    le(x, y) :- n(x), n(y), x <= y.
    ne(x, y) :- n(x), n(y), x != y.
    word(w) :- s(w), w >= "b".
    """
    db = run(text, {"n": {(1,), (2,)}, "s": {("a",), ("b",), ("ca",)}})
    assert db["lt"] == {(1, 2)}
    assert db["le"] == {(1, 1), (1, 2), (2, 2)}
    assert db["ne"] == {(1, 2), (2, 1)}
    assert db["word"] == {("b",), ("ca",)}


def test_comparing_a_number_with_a_symbol_is_a_type_error():
    with pytest.raises(errors.TypeMismatch):
        run('q(x) :- n(x), x < "a".', {"n": {(1,)}})


# ---------------------------------------------------------------- functors

def test_string_functors():
    text = """
    f(cat(a, "-", b), strlen(a), substr(a, 1, 2), to_number(n), to_string(7), to_float(2))
        :- s(a, b, n).
    """
    assert rows(text, "f", {"s": {("hello", "x", "-42")}}) == [("hello-x", 5, "el", -42, "7", 2.0)]


def test_substr_reaching_past_the_end_is_clipped():
    assert rows('f(substr("abc", 1, 10), substr("abc", 3, 1)).', "f") == [("bc", "")]


def test_min_and_max_functors():
    assert rows('f(min(3, 1, 2), max(3, 1, 2), min("b", "a")).', "f") == [(1, 3, "a")]


def test_invalid_conversions():
    with pytest.raises(errors.InvalidConversion):
        run('f(to_number("12a")).')
    with pytest.raises(errors.InvalidConversion):
        run('f(substr("abc", 4, 1)).')
    with pytest.raises(errors.InvalidConversion):
        run('f(substr("abc", -1, 1)).')
    with pytest.raises(errors.InvalidConversion):
        run('f(to_float("x")).')


def test_to_string_of_a_float():
    # Soufflé's to_string is C++'s std::to_string: "%f" of a float
    assert rows("f(to_string(1.5)).", "f") == [("1.500000",)]


# ---------------------------------------------------------------- safety

def test_unbound_head_variable_is_an_error():
    with pytest.raises(errors.UnboundVariable):
        run("p(x, y) :- n(x).", {"n": {(1,)}})


def test_unbound_comparison_variable_is_an_error():
    with pytest.raises(errors.UnboundVariable):
        run("p(x) :- n(x), y < 3.", {"n": {(1,)}})


def test_fact_with_a_variable_is_an_error():
    with pytest.raises(errors.UnboundVariable):
        run("p(x).")
