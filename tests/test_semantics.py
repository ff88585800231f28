"""Issue 18's relation semantics, what the golden folders (tests/constructs/) cannot show:
warnings of pragmas, what is rewritten away, which row choice-domain keeps, what stats() says."""

from __future__ import annotations

import time

from datalog.engine.engine import Engine
from datalog.engine.updates import apply_batch
from datalog.language.parser import parse, parse_updates
from datalog.language.semantics import lower


def _engine(text: str) -> Engine:
    engine = Engine.from_source(text)
    engine.run()
    return engine


def test_unknown_pragma_warns_and_no_warn_silences():
    text = '.pragma "jobs" "4"\n.decl a(x: number)\na(1).\n'
    assert [w.code for w in Engine.from_source(text).warnings] == ["ignored_pragma"]
    assert Engine.from_source('.pragma "no-warn"\n' + text).warnings == []


def test_pragma_prints_back():
    program = parse('.pragma "magic-transform" "a, b"\n.pragma "legacy"\n')
    assert str(program) == '.pragma "magic-transform" "a, b"\n.pragma "legacy"'
    assert parse(str(program)) == program


def test_inline_relation_is_never_computed():
    # 3000 x 3000 pairs if nat_pair were materialised
    text = """.decl nat(x: number)
nat(0).
nat(x + 1) :- nat(x), x < 3000.
.decl nat_pair(x: number, y: number) inline
nat_pair(x, y) :- nat(x), nat(y).
.decl query(x: number)
query(x) :- nat_pair(x, x), x < 2.
"""
    start = time.perf_counter()
    engine = _engine(text)
    assert engine.rows("query") == [(0,), (1,)]
    assert "nat_pair" not in engine.relations()
    assert time.perf_counter() - start < 20


def test_magic_transform_adorns_the_named_relation():
    text = """.pragma "magic-transform" "reach"
.decl e(x: number, y: number)
e(1, 2). e(2, 3). e(7, 8).
.decl reach(x: number, y: number)
reach(x, y) :- e(x, y).
reach(x, z) :- reach(x, y), e(y, z).
.decl q(y: number)
q(y) :- reach(1, y).
.output q
"""
    lowered = lower(parse(text))
    assert {d.relation for d in lowered.declarations} >= {"reach@bf", "reach@magic@bf"}
    engine = _engine(text)
    assert engine.rows("q") == [(2,), (3,)]
    assert (7, 8) not in engine.rows("reach@bf")        # only what 1 reaches is computed


def test_choice_domain_keeps_the_program_s_symbols_first():
    # "zed" is named by the program before "amy": it comes first, as in Soufflé's symbol table
    text = """.decl named(who: symbol)
named("zed").
.decl likes(who: symbol, what: number)
likes("amy", 1). likes("zed", 1). likes("bob", 2).
.decl first(who: symbol, what: number) choice-domain what
first(w, x) :- likes(w, x).
"""
    assert _engine(text).rows("first") == [("bob", 2), ("zed", 1)]


def test_constrained_strata_say_they_are_recomputed():
    text = """.decl e(x: number, y: number)
e(1, 2). e(1, 3).
.decl pick(x: number, y: number) choice-domain x
pick(x, y) :- e(x, y).
"""
    engine = _engine(text)
    for batch in parse_updates("-e(1, 2). commit."):
        delta = apply_batch(engine, batch)
    assert engine.rows("pick") == [(1, 3)]
    assert set(delta["pick"].inserted) == {(1, 3)} and set(delta["pick"].retracted) == {(1, 2)}
    assert [s["strategy"] for s in engine.stats().values()] == ["recompute stratum (choice-domain / subsumption)"]
    assert "recomputed on change" in engine.explain()


def test_an_aggregate_in_an_atom_s_arguments_is_read_first_and_one_in_a_negation_is_lifted():
    # q(count : { s(_) }) reads s: its stratum comes first; !q(count : { s(_) }) is
    # !q(_e0), _e0 = count : { s(_) }: Soufflé's answers (p holds, n does not); a relation
    # undeclared inside the negated atom's aggregate is undefined_relation, not a crash
    import pytest
    from datalog.language.errors import DatalogError
    text = (".decl r(x: number)\nr(1). r(2).\n.decl s(x: number)\ns(x) :- r(x).\n.decl q(x: number)\nq(2).\n"
            ".decl p()\np() :- q(count : { s(_) }).\n.decl n()\nn() :- !q(count : { s(_) }).\n"
            ".decl m()\nm() :- !q(count : { s(x), x > 1 }).\n")
    engine = _engine(text)
    assert engine.rows("p") == [()] and engine.rows("n") == [] and engine.rows("m") == [()]
    with pytest.raises(DatalogError) as raised:
        Engine.from_source(".decl q(x: number)\n.decl p()\np() :- !q(count : r()).\n")
    assert raised.value.code == "undefined_relation"
