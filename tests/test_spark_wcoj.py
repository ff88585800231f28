"""Worst-case optimal joins on Spark (:mod:`datalog.spark.wcoj`): the HyperCube shuffle and the
triejoin per cell give the same bindings as Spark's binary joins and as in-process evaluation.

The shares and the routing are checked without Spark; with Spark, cyclic bodies (triangles and
4-cycles over random graphs, with constants, repeated variables, symbol and float columns, under
negation and aggregates) and random programs with every body forced through the HyperCube
(``join="wcoj"``) are compared with ``Engine.run()``.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark", reason="Spark evaluation needs pyspark: pip install 'datalog-lftj[spark]'")

from datalog.engine.engine import Engine  # noqa: E402
from datalog.spark import resident, wcoj  # noqa: E402
from datalog.spark.resident import Resident  # noqa: E402
from strategies import programs  # noqa: E402


# ---------------------------------------------------------------- without Spark

@given(st.lists(st.lists(st.sampled_from("xyzuvw"), min_size=1, max_size=3), min_size=1, max_size=5),
       st.integers(1, 64))
def test_shares_multiply_to_at_most_the_cells(atoms, cells):
    order = wcoj.variable_order(atoms)
    assert sorted(order) == sorted({v for a in atoms for v in a})
    share = wcoj.shares(order, cells)
    product = 1
    for name in order:
        product *= share[name]
    assert product <= cells < product * 2
    assert all(share[name] == 1 for name in order[3:])


def test_auto_joins_cyclic_bodies_only():
    assert wcoj.candidate("auto", [["x", "y"], ["y", "z"], ["x", "z"]], False)
    assert wcoj.candidate("auto", [["x", "y"], ["y", "z"], ["z", "w"], ["w", "x"]], False)
    assert not wcoj.candidate("auto", [["x", "y"], ["y", "z"], ["z", "w"]], False)   # a path
    assert not wcoj.candidate("auto", [["x", "y"], ["y", "z"], ["x", "z"]], True)    # a delta round
    assert not wcoj.candidate("binary", [["x", "y"], ["y", "z"], ["x", "z"]], False)
    assert wcoj.candidate("wcoj", [["x", "y"], ["y", "z"]], False)


def test_auto_chooses_by_the_estimate_of_the_largest_pairwise_join():
    never = lambda: pytest.fail("estimated")                # noqa: E731
    assert wcoj.chosen("wcoj", 10, never) == (True, None)
    assert wcoj.chosen("auto", wcoj.MIN_ROWS - 1, never) == (False, None)
    inputs = 5 * wcoj.MIN_ROWS
    assert wcoj.chosen("auto", inputs, lambda: wcoj.RATIO * inputs) == (False, wcoj.RATIO * inputs)
    assert wcoj.chosen("auto", inputs, lambda: wcoj.RATIO * inputs + 1) == (True, wcoj.RATIO * inputs + 1)


def test_explain_names_the_rules_joined_worst_case_optimally():
    engine = Engine.from_source(TRIANGLES)
    lines = resident.explain_lines(engine)
    chosen = [line.split("  joined")[0].strip() for line in lines if "worst-case optimally" in line]
    assert [c.split(" :-")[0] for c in chosen] == ["tri(x, y, z)", "square(x, w)"]   # loop3, one: acyclic
    assert not [line for line in resident.explain_lines(engine, "binary") if "worst-case" in line]


# ---------------------------------------------------------------- with Spark

TRIANGLES = """.decl e(a: number, b: number)
.decl tri(x: number, y: number, z: number)
tri(x, y, z) :- e(x, y), e(y, z), e(x, z).
.decl wedge(x: number, z: number)
wedge(x, z) :- e(x, y), e(y, z).
.decl square(x: number, w: number)
square(x, w) :- e(x, y), e(y, z), e(z, w), e(w, x), x < z.
.decl loop3(x: number)
loop3(x) :- e(x, x), e(x, y), e(y, x), !e(y, y).
.decl hub(x: number, n: number)
hub(x, n) :- e(x, _), n = count : { tri(x, _, _) }, n > 0.
.decl one(y: number, z: number)
one(y, z) :- e(1, y), e(y, z), e(1, z).
"""


def _compare(text: str, edb: dict, spark, **kw) -> None:
    local = Engine.from_source(text)
    spread = Engine.from_source(text)
    for engine in (local, spread):
        for name, rows in edb.items():
            engine.insert(name, sorted(rows))
    local.run()
    evaluator = Resident(spread, spark, **kw)
    evaluator.run()
    for name in local.db:
        assert set(evaluator.sorted_rows(name)) == set(local.db[name].tuples), name


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), cells=st.integers(1, 9))
def test_cyclic_bodies_equal_in_process(seed, cells, spark):
    rng = random.Random(seed)
    nodes = rng.randrange(3, 25)
    edges = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(rng.randrange(0, 120))}
    _compare(TRIANGLES, {"e": edges}, spark, cells=cells)


def test_symbols_and_floats_go_through_the_cells(spark):
    text = """.decl e(a: symbol, b: float)
.decl f(b: float, a: symbol)
.decl t(a: symbol, b: float)
t(a, b) :- e(a, b), f(b, c), e(c, b2), f(b2, a), b2 != b.
"""
    names, values = ["a", "b", "é", "tab\\there"], [0.5, -0.0, 1e300, 2.25]
    rng = random.Random(7)
    edb = {"e": {(rng.choice(names), rng.choice(values)) for _ in range(12)},
           "f": {(rng.choice(values), rng.choice(names)) for _ in range(12)}}
    _compare(text, edb, spark, join="wcoj", cells=4)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=programs(max_groups=2))
def test_random_programs_with_every_body_through_the_hypercube(generated, spark):
    engine = Engine.from_source(generated.text)
    if any(c.reason for c in resident.choices(engine)):
        return
    local = Engine.from_source(generated.text)
    for e in (engine, local):
        for name, rows in generated.edb.items():
            e.insert(name, sorted(rows))
    try:
        local.run()
    except Exception:                               # run-time errors: test_spark_resident's concern
        return
    evaluator = Resident(engine, spark, join="wcoj", cells=8)
    evaluator.run()
    assert {n: set(evaluator.sorted_rows(n)) for n in engine.db} == {n: set(r.tuples) for n, r in local.db.items()}


def _hub_graph(rng: random.Random, nodes: int, edges: int, hub_degree: int) -> set:
    out = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)}
    for _ in range(hub_degree):
        out |= {(0, rng.randrange(nodes)), (rng.randrange(nodes), 0)}
    return out


def test_auto_takes_the_hypercube_where_a_hub_makes_the_pairwise_join_explode(spark):
    """A hub of in- and out-degree ~1,500: ~2.2M wedges through it against ~4.2k edges (3 atoms: 175x); a
    graph without one: a few wedges per edge. The estimate is exact (one count per pair)."""
    rng = random.Random(3)
    text = TRIANGLES.split(".decl wedge")[0]
    for edb, expected in ((_hub_graph(rng, 3000, 1200, 1500), True), (_hub_graph(rng, 2000, 3000, 0), False)):
        local = Engine.from_source(text)
        local.insert("e", sorted(edb))
        local.run()
        spread = Engine.from_source(text)
        spread.insert("e", sorted(edb))
        evaluator = Resident(spread, spark)
        evaluator.run()
        [(_, picked, estimate, inputs)] = evaluator.joins
        out, into = Counter(x for x, _ in edb), Counter(y for _, y in edb)
        pairs = [sum(into[v] * out[v] for v in into),             # e(x, y), e(y, z) on y
                 sum(d * d for d in out.values()),                # e(x, y), e(x, z) on x
                 sum(d * d for d in into.values())]               # e(y, z), e(x, z) on z
        assert estimate == max(pairs) and inputs == 3 * len(edb)
        assert picked is expected
        assert set(evaluator.sorted_rows("tri")) == set(local.db["tri"].tuples)
