"""Maintenance work is bounded by the trace edit distance (Veldhuizen §1.1).

For ``F(x, y) :- G(x, z), H(y, z), I(x, y, z), R(z).`` over relations of a few
thousand tuples, each random update is maintained, and the iterator operations
the maintenance performed are compared with the edit distance between the
full LFTJ traces before and after the update (each operation with where it
landed, recorded by a debug evaluation from scratch). The edit distance is
bounded below by the multiset difference of the two traces, which is what
the test uses -- so the bound it checks is, if anything, stricter.
"""

from __future__ import annotations

import random
from collections import Counter

from datalog.engine.engine import Engine
from maintenance.change_oracle import Registry
from maintenance.rule import RuleMaintainer

PROGRAM = """
.decl G(x: number, z: number)
.decl H(y: number, z: number)
.decl I(x: number, y: number, z: number)
.decl R(z: number)
F(x, y) :- G(x, z), H(y, z), I(x, y, z), R(z).
.decl F(c0: number, c1: number)
"""
C = 4     # maintenance operations <= C * (trace edit distance + |delta| + 1)


def _full_trace(engine: Engine) -> Counter:
    clause = next(c for c in engine.checked.clauses if c.body)
    rule = RuleMaintainer(clause, engine.compiled[clause.index], engine.db, Registry())
    rule.log = []
    rule.evaluate(rule.root, None, None, Counter())
    return Counter(rule.log)


def _random_rows(rng, n, width, domain):
    return {tuple(rng.randrange(domain) for _ in range(width)) for _ in range(n)}


def test_operations_bounded_by_trace_edit_distance():
    rng = random.Random(7)
    tables = {"G": _random_rows(rng, 2000, 2, 60), "H": _random_rows(rng, 2000, 2, 60),
              "I": _random_rows(rng, 3000, 3, 60), "R": _random_rows(rng, 40, 1, 60)}
    engine = Engine.from_source(PROGRAM)
    for name, rows in tables.items():
        engine.insert(name, rows)
    engine.run()
    engine.commit()                                   # builds the sensitivity indices
    (rule,) = engine.maintainer.rules.values()
    worst = 0.0
    for step in range(60):
        name = rng.choice("GHIR")
        width = len(next(iter(tables[name])))
        size = 1 if step % 3 else rng.randint(2, 10)
        inserts = _random_rows(rng, size, width, 60) if rng.random() < 0.5 else set()
        retracts = set(rng.sample(sorted(engine.db[name].tuples), size)) if not inserts else set()
        before = _full_trace(engine)
        delta = engine.commit(inserts={name: inserts}, retracts={name: retracts})
        after = _full_trace(engine)
        distance = sum(((before - after) + (after - before)).values())
        changed = sum(len(c.inserted) + len(c.retracted) for c in delta.values())
        assert rule.operations <= C * (distance + changed + 1), (step, rule.operations, distance, changed)
        worst = max(worst, rule.operations / (distance + changed + 1))
    assert worst > 0                                  # the updates did reach the rule
