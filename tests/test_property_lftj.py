"""Differential tests: the engine (leapfrog triejoin) against the naive reference evaluator
on random small programs from :mod:`strategies`.

When a run disagrees, hypothesis shrinks it and prints the ``GeneratedProgram(...)``,
ready to paste into an ``@example`` below as a regression test.
"""

import pytest
from hypothesis import example, given, settings

from datalog.language import naive
from datalog.language.parser import parse
from strategies import GeneratedProgram, program_of, programs, unsigned_programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)


def naive_result(generated: GeneratedProgram) -> dict[str, list[tuple]]:
    db = naive.evaluate(parse(generated.text), {k: set(v) for k, v in generated.edb.items()})
    return {name: sorted(rows) for name, rows in db.items()}



# Shrunk counterexamples found by this test.
RECURSION_THROUGH_A_WILDCARD_ATOM = program_of("""\
.decl e0(c0: number, c1: number)
.decl e1(c0: number)
.decl r(c0: number)
r(x) :- e1(x), r(_).
r(x) :- e0(x, x).""", {"e0": {(0, 0), (0, 1)}, "e1": {(0,), (1,)}})  # r = {0, 1}

NEGATION_OF_AN_EMPTY_RELATION = program_of("""\
.decl e0(c0: number)
.decl r(c0: number)
.decl s(c0: number)
r(0) :- e0(2).
s(0) :- e0(0), !r(_).""", {"e0": {(0,), (1,)}})  # s = {0}

COUNT_OF_A_TWO_ATOM_BODY = program_of("""\
.decl e0(c0: number)
.decl r(c0: number)
r(a) :- a = count : { e0(l), e0(_) }.""", {"e0": {(0,), (1,)}})  # distinct l: r = {2}


@settings(max_examples=examples(200), deadline=None)
@given(programs())
@example(RECURSION_THROUGH_A_WILDCARD_ATOM)
@example(NEGATION_OF_AN_EMPTY_RELATION)
@example(COUNT_OF_A_TWO_ATOM_BODY)
def test_lftj_matches_naive(generated: GeneratedProgram):
    engine_module = pytest.importorskip("datalog.engine.engine")
    engine = engine_module.Engine.from_source(generated.text)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    expected = naive_result(generated)
    for name in generated.relations:
        assert engine.rows(name) == expected[name], name


# the sum of nothing is an unsigned 0 where its target is unsigned: 0u - 1 wraps
UNSIGNED_SUM_OF_NOTHING = program_of("""\
.decl e0(c0: unsigned)
.decl r2_0(c0: unsigned, c1: unsigned)
r2_0(x, (a0 - 1) / 2) :- e0(x), a0 = sum 1u : { e0(l0_0), !e0(l0_0) }.""", {"e0": {(0,), (1,)}})


# the empty sum of an unsigned column is 0u (the naive evaluator had it as the number 0)
UNSIGNED_COLUMN_SUM_OF_NOTHING = program_of("""\
.decl e0(c0: unsigned, c1: unsigned)
.decl r2_0(c0: unsigned, c1: unsigned)
r2_0(x, (a0 - 1) / 2) :- e0(_, x), a0 = sum l0_1 : { e0(x, l0_1) }.""", {"e0": {(0, 0), (0, 1)}})


@settings(max_examples=examples(100), deadline=None)
@given(unsigned_programs())
@example(generated=UNSIGNED_SUM_OF_NOTHING)
@example(generated=UNSIGNED_COLUMN_SUM_OF_NOTHING)
def test_lftj_matches_naive_on_unsigned(generated: GeneratedProgram):
    """The same programs over unsigned columns (issue 18): the engine's marked operations against
    the naive evaluator's Unsigned values, values above 2^63 in the EDB."""
    engine_module = pytest.importorskip("datalog.engine.engine")
    engine = engine_module.Engine.from_source(generated.text)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    expected = naive_result(generated)
    for name in generated.relations:
        assert engine.rows(name) == expected[name], name


@settings(max_examples=examples(100), deadline=None)
@given(programs())
def test_generated_programs_round_trip(generated: GeneratedProgram):
    program = parse(generated.text)
    assert parse(str(program)) == program


@settings(max_examples=examples(100), deadline=None)
@given(programs())
def test_generated_programs_are_safe_and_finite(generated: GeneratedProgram):
    # the naive evaluator raises UnboundVariable on an unsafe rule and CyclicNegation
    # on an unstratified program; termination shows recursion stays finite
    result = naive_result(generated)
    assert set(generated.relations) <= set(result)
    assert all(len(rows) < 10_000 for rows in result.values())
