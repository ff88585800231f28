"""Records and ADTs (issue 18) on random programs: the engine against the naive reference
evaluator, and incremental maintenance against recomputation.

The programs share one schema -- a record type ``P``, a recursive list type ``L``, an ADT ``S``
-- and draw their rules from building blocks: atoms whose arguments are record and branch
patterns (with ``_`` and repeated variables), ``q = [x, y]`` taking a bound record apart,
comparisons, negations (with ``_`` inside patterns), aggregates over patterns, heads that build records, branches and lists.
Every value of a derived relation recombines input values (lists only grow strictly
decreasing), so every program is finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language import naive
from datalog.language.composites import NIL, Branch, Record
from datalog.language.errors import DatalogError
from datalog.language.parser import parse
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

SCHEMA = """\
.type P = [a: number, b: number]
.type L = [h: number, t: L]
.type S = A {x: number} | B {x: number, y: number} | C {}
.decl e0(x: number, y: number)
.decl e1(p: P)
.decl e2(s: S)
.decl rp(p: P)
.decl rs(s: S)
.decl rn(x: number)
.decl rl(l: L)
rl(nil).
"""
INPUTS = ("e0", "e1", "e2")
DERIVED = ("rp", "rs", "rn", "rl")
NUMBERS = st.integers(0, 2)
NUMS = ("x", "y", "z")


def _value(kind: str):
    if kind == "e0":
        return st.tuples(NUMBERS, NUMBERS)
    if kind == "e1":
        return st.builds(lambda a, b: (Record((a, b)),), NUMBERS, NUMBERS)
    return st.one_of(st.builds(lambda x: (Branch(("A", x)),), NUMBERS),
                     st.builds(lambda x, y: (Branch(("B", x, y)),), NUMBERS, NUMBERS),
                     st.just((Branch(("C",)),)))


@dataclass
class Generated:
    text: str
    edb: dict[str, set]

    def __repr__(self) -> str:
        return f"Generated(text={self.text!r}, edb={self.edb!r})"


# ---------------------------------------------------------------- rule building blocks

@st.composite
def _source(draw) -> tuple[str, set[str], set[str]]:
    """A positive literal: (text, numeric variables it binds, record/ADT variables it binds)."""
    v = lambda: draw(st.sampled_from(NUMS))          # noqa: E731
    w = lambda: draw(st.sampled_from(NUMS + ("_",)))  # noqa: E731
    choice = draw(st.integers(0, 9))
    if choice == 0:
        a, b = v(), v()
        return f"e0({a}, {b})", {a, b}, set()
    if choice == 1:
        a, b = v(), w()
        return f"e1([{a}, {b}])", {a, b} - {"_"}, set()
    if choice == 2:
        return "e1(q)", set(), {"q"}
    if choice == 3:
        a = v()
        return f"e2($A({a}))", {a}, set()
    if choice == 4:
        a, b = v(), w()
        return f"e2($B({a}, {b}))", {a, b} - {"_"}, set()
    if choice == 5:
        return "e2(s)", set(), {"s"}
    if choice == 6:
        a, b = v(), w()
        return f"rp([{a}, {b}])", {a, b} - {"_"}, set()
    if choice == 7:
        a = v()
        return f"rs($A({a}))", {a}, set()
    if choice == 8:
        a = v()
        return f"rl([{a}, _])", {a}, set()
    a = v()
    return f"rn({a})", {a}, set()


@st.composite
def _filter(draw, nums: list[str], records: set[str]) -> tuple[str, set[str]]:
    """A literal over bound variables (``q = [x, y]`` may bind new ones)."""
    options = ["compare"] + (["unpack_q"] if "q" in records else []) + (["unpack_s"] if "s" in records else [])
    kind = draw(st.sampled_from(options + ["negate", "aggregate"]))
    a, b = draw(st.sampled_from(nums)), draw(st.sampled_from(nums))
    if kind == "unpack_q":
        x, y = draw(st.sampled_from(NUMS + ("_",))), draw(st.sampled_from(NUMS))
        return f"q = [{x}, {y}]", {x, y} - {"_"}
    if kind == "unpack_s":
        x = draw(st.sampled_from(NUMS))
        return draw(st.sampled_from([f"s = $A({x})", f"s = $B(_, {x})", f"$B({x}, _) = s"])), {x}
    if kind == "negate":
        return draw(st.sampled_from([f"!e1([{a}, {b}])", f"!e2($A({a}))", f"!e2($B({a}, {b}))",
                                     f"!e1([_, {a}])", f"!e2($B(_, {b}))"])), set()
    if kind == "aggregate" and "k" not in nums:
        body = draw(st.sampled_from([f"e1([{a}, _])", f"e2($B({a}, _))", f"e1([{a}, y0]), y0 < {b}"]))
        return f"k = {draw(st.sampled_from(['count', 'sum y0', 'max y0']))} : {{ {body} }}" \
            if "y0" in body else f"k = count : {{ {body} }}", {"k"}
    return f"{a} {draw(st.sampled_from(['<', '!=', '=', '<=']))} {b}", set()


@st.composite
def _head(draw, nums: list[str], records: set[str]) -> str:
    a, b = draw(st.sampled_from(nums)), draw(st.sampled_from(nums))
    options = [f"rp([{a}, {b}])", f"rs($A({a}))", f"rs($B({a}, {b}))", f"rn({a})", "rs($C)"]
    options += ["rp(q)", "rs($B(0, 9))"] if "q" in records else []
    options += ["rs(s)"] if "s" in records else []
    return draw(st.sampled_from(options))


@st.composite
def _rule(draw) -> str:
    literals, nums, records = [], set(), set()
    for _ in range(draw(st.integers(1, 2))):
        text, bound, recs = draw(_source())
        literals.append(text)
        nums |= bound
        records |= recs
    if not nums:
        literals.append("e0(x, _)")
        nums.add("x")
    for _ in range(draw(st.integers(0, 2))):
        text, bound = draw(_filter(sorted(nums), records))
        literals.append(text)
        nums |= bound
    return f"{draw(_head(sorted(nums), records))} :- {', '.join(literals)}."


# a list grows by an item smaller than its head: finite
LIST_RULES = ("rl([x, nil]) :- e0(x, _).", "rl([x, [y, t]]) :- rl([y, t]), e0(_, x), x < y.")


@st.composite
def programs(draw) -> Generated:
    rules = draw(st.lists(_rule(), min_size=1, max_size=4))
    lists = draw(st.sampled_from([(), LIST_RULES[:1], LIST_RULES]))
    text = SCHEMA + "\n".join(rules + list(lists)) + "\n"
    edb = {name: draw(st.sets(_value(name), min_size=2, max_size=6)) for name in INPUTS}
    return Generated(text, edb)


def _engine(generated: Generated, maintenance: str = "incremental") -> Engine:
    engine = Engine.from_source(generated.text, maintenance=maintenance)
    for name, rows in generated.edb.items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine


PROPERTY = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(programs())
def test_engine_matches_naive_on_records(generated: Generated):
    expected = naive.evaluate(parse(generated.text), {k: set(v) for k, v in generated.edb.items()})
    engine = _engine(generated)
    for name in DERIVED:
        assert engine.rows(name) == sorted(expected.get(name, ())), name


@PROPERTY
@given(programs())
def test_record_programs_round_trip(generated: Generated):
    program = parse(generated.text)
    assert parse(str(program)) == program


@st.composite
def _batches(draw):
    batches = []
    for _ in range(draw(st.integers(1, 3))):
        batch = []
        for _ in range(draw(st.integers(0, 4))):
            name = draw(st.sampled_from(INPUTS))
            batch.append((draw(st.sampled_from("+-")), name, draw(_value(name))))
        batches.append(batch)
    return batches


def _commit(engine: Engine, batch) -> dict:
    with engine.transaction() as tx:
        for sign, name, row in batch:
            (tx.insert if sign == "+" else tx.retract)(name, [row])
    return tx.delta


@PROPERTY
@given(programs(), _batches())
def test_maintenance_of_records_matches_recomputation(generated: Generated, batches):
    incremental, reference = _engine(generated, "incremental"), _engine(generated, "recompute")
    for batch in batches:
        got, expected = _commit(incremental, batch), _commit(reference, batch)
        for name in DERIVED + INPUTS:
            assert incremental.rows(name) == reference.rows(name), name
        assert {n: c for n, c in got.items() if c} == {n: c for n, c in expected.items() if c}


def test_nil_orders_before_every_record_and_branches_by_name():
    """The value order the tries rely on: one total order within a column's type."""
    values = [Record((2, NIL)), NIL, Record((1, Record((0, NIL)))), Record((1, NIL))]
    assert sorted(values) == [NIL, Record((1, NIL)), Record((1, Record((0, NIL)))), Record((2, NIL))]
    assert sorted([Branch(("C",)), Branch(("B", 0, 0)), Branch(("A", 5))])[0] == Branch(("A", 5))


def test_an_inserted_value_of_the_wrong_shape_is_refused():
    engine = Engine.from_source(SCHEMA)
    with pytest.raises(DatalogError) as caught:
        engine.insert("e1", [(Record((1, 2, 3)),)])
    assert caught.value.code == "type_mismatch"
    for bad in [(Branch(("D", 1)),), (Branch(("A", "x")),), (Record((2 ** 70, 1)),), (Record((1, "a")),)]:
        with pytest.raises(DatalogError):
            engine.insert("e2" if isinstance(bad[0], Branch) else "e1", [bad])
    engine.insert("e1", [(Record((1, 2)),)])
    assert engine.rows("e1") == [(Record((1, 2)),)]


QUERIES = st.sampled_from(["rp([x, y])", "rp([x, x])", "rp([1, _])", "rs($A(x))", "rs($B(_, x))", "rs($C)",
                           "rl(nil)", "rl([x, [y, _]])", "rl([_, nil])"])


@PROPERTY
@given(programs(), QUERIES)
def test_queries_with_patterns_match_as_the_naive_evaluator_unifies(generated: Generated, text: str):
    from datalog.language.naive.rules import RuleEvaluator
    from datalog.language.parser import parse_atom
    engine, atom = _engine(generated), parse_atom(text)
    unifier = RuleEvaluator({}, parse(f"{text} :- {text}.").rules[0])
    assert engine.query(atom) == [row for row in engine.rows(atom.relation)
                                  if unifier._match(atom, row, {}) is not None]


def test_repl_changes_and_queries_take_records_and_branches():
    """A REPL transaction inserts and retracts record and ADT constants; a query takes patterns;
    the relation then holds what a recomputing engine given the same facts holds."""
    from datalog.cli.repl import Session
    from datalog.cli.statements import split
    session = Session(Engine.from_source(SCHEMA))
    script = 'begin +e1([1, 2]). +e1([2, 2]). +e2($B(1, 1)). +e2($C). commit -e1([2, 2]). ?- e1([x, 2]).'
    outputs = [session.run(statement) for statement in split(script)[0]]
    twin = Engine.from_source(SCHEMA + "e1([1, 2]). e2($B(1, 1)). e2($C).\n")
    twin.run()
    for name in INPUTS + DERIVED:
        assert session.engine.rows(name) == twin.rows(name), name
    (answer,) = twin.query("e1([x, 2])")                          # the query's one row
    assert outputs[-1].split("\n")[2].strip() == str(answer[0][0])


def test_an_atom_of_unpacked_variables_is_a_lookup_not_a_join():
    """``q(x)`` after ``p([x, _])`` is looked up once per p tuple (a semijoin), not joined as a
    trie level under every p tuple (which made the rule a product of p and q)."""
    from datalog.language.checks import check
    from datalog.planning.plan import Lookup
    from datalog.planning.planner import plan_clause
    checked = check(parse(SCHEMA + "rn(x) :- e1([x, _]), rn(x), e0(x, y)."))
    plan = plan_clause(checked.clauses[-1], checked.schema)
    assert [a.relation for a in plan.atoms] == ["e1", "e0"]                # e0 binds y: joined
    assert [(f.relation, f.negated) for f in plan.filters if isinstance(f, Lookup)] == [("rn", False)]
