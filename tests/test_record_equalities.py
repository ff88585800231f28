"""Atoms whose variables follow from a record pattern through equalities are tested as lookups,
not joined: what inlining a relation with record arguments writes (``cell([r, c])`` inlined into
``safe([r1, c1], ...)`` gives ``[r1, c1] = [_i_r, _i_c], coord(_i_r), coord(_i_c)``). Joined, each
such atom was a level of the join under every pair of records: 4^4 bindings per pair here."""

from datalog import Engine
from datalog.language.checks import check
from datalog.language.naive import evaluate
from datalog.language.parser import parse
from datalog.planning.planner import plan_clause

QUEENS = """
.type Cell = [row: number, col: number]
.type Placement = [cell: Cell, rest: Placement]
.decl n(k: number)
.decl coord(i: number)
coord(1).
coord(i + 1) :- coord(i), n(k), i < k.
.decl cell(c: Cell) inline
cell([r, c]) :- coord(r), coord(c).
.decl safe(a: Cell, b: Cell) inline
safe([r1, c1], [r2, c2]) :- cell([r1, c1]), cell([r2, c2]), r1 != r2, c1 != c2, r1 - r2 != c1 - c2, r1 - r2 != c2 - c1.
.decl partial(p: Placement, size: number)
partial([c, nil], 1) :- cell(c).
partial([c, [d, rest]], m + 1) :- partial([d, rest], m), partial([c, rest], m), safe(c, d), c = [r1, _], d = [r2, _], r1 > r2.
.decl solutions(count: number)
solutions(x) :- n(k), x = count : { partial(_, k) }.
"""


def test_queens_by_records_and_inlining():
    # 4 queens have 2 placements, 5 queens 10 (rows strictly falling: each placement once)
    for k, placements in ((4, 2), (5, 10)):
        engine = Engine.from_source(QUEENS + f"n({k}).")
        engine.run()
        assert engine.rows("solutions") == [(placements,)]


def test_the_reference_evaluator_agrees_on_the_partial_placements():
    text = QUEENS + "n(4)."
    engine = Engine.from_source(text)
    engine.run()
    reference = evaluate(parse(text))
    assert len(engine.rows("partial")) == len(reference["partial"]) > 0
    assert set(map(str, engine.rows("solutions"))) == set(map(str, reference["solutions"]))


def test_atoms_bound_through_equalities_are_lookups():
    text = """.type P = [a: number, b: number]
.decl r(q: P)
.decl e(x: number)
.decl f(x: number)
.decl s(x: number, y: number)
s(x, y) :- r([a, b]), [a, b] = [x, z], y = z + 1, e(x), f(y).
"""
    checked = check(parse(text))
    clause = checked.clauses[-1]
    plan = plan_clause(clause, checked.schema, 0)
    assert [a.relation for a in plan.atoms] == ["r"]
    engine = Engine.from_source(text + "r([1, 2]). r([3, 4]). r([5, 6]). e(1). e(3). f(3). f(7).")
    engine.run()
    assert engine.rows("s") == [(1, 3)]


def test_a_pattern_with_a_wildcard_is_no_value_to_follow():
    """``s = $B(_, z)`` takes s apart; it computes no s, so e2(s) stays a join (found by the
    records property test: the rule could not be placed)."""
    text = """.type S = A {x: number} | B {x: number, y: number}
.type P = [a: number, b: number]
.decl e1(p: P)
.decl e2(s: S)
.decl rp(p: P)
rp([z, z]) :- e2(s), e1([z, z]), s = $B(_, z).
e1([0, 0]). e1([0, 1]). e2($B(5, 0)). e2($A(0)).
"""
    engine = Engine.from_source(text)
    engine.run()
    assert [str(r) for (r,) in engine.rows("rp")] == ["[0, 0]"]
