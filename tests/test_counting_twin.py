"""The benchmark's counting twin (bench/counting.py: delta rules with support counts) against
evaluating the rule again: random conjunctive rules (self-joins, a variable repeated in an atom,
a head projecting variables away) under random insert/retract batches; after every batch its
rows and the change it reports are those of evaluation from scratch."""

from __future__ import annotations

from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.counting import Counting
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

VARS = "abcd"
RELS = {"r": 2, "s": 2, "t": 1}


def evaluate(head, body, db) -> set:
    """The rule by brute force: every choice of one row per atom whose variables agree."""
    out = set()
    for rows in product(*(sorted(db[rel]) for rel, _ in body)):
        b: dict = {}
        if all(b.setdefault(v, row[p]) == row[p] for (_, vars_), row in zip(body, rows) for p, v in enumerate(vars_)):
            out.add(tuple(b[v] for v in head[1]))
    return out


@st.composite
def rules(draw):
    body = [(rel, "".join(draw(st.sampled_from(VARS)) for _ in range(RELS[rel])))
            for rel in draw(st.lists(st.sampled_from(sorted(RELS)), min_size=1, max_size=4))]
    used = sorted({v for _, vars_ in body for v in vars_})
    head = draw(st.lists(st.sampled_from(used), min_size=1, max_size=3, unique=True))
    return ("h", "".join(head)), body


def rows_of(rel):
    return st.tuples(*[st.integers(0, 3)] * RELS[rel])


batches = st.lists(st.tuples(st.sampled_from(sorted(RELS)), st.booleans(), st.integers(0, 3), st.integers(0, 3)),
                   max_size=6)


@settings(max_examples=examples(150), deadline=None)
@given(rules(), st.fixed_dictionaries({rel: st.sets(rows_of(rel), max_size=8) for rel in RELS}),
       st.lists(batches, max_size=8))
def test_counting_twin_matches_evaluation_from_scratch(rule, initial, stream):
    head, body = rule
    db = {rel: set(rows) for rel, rows in initial.items()}
    twin = Counting(head, body, db)
    assert twin.rows() == evaluate(head, body, db)
    for batch in stream:
        inserts, retracts = {}, {}
        for rel, insert, x, y in batch:
            row = (x, y)[:RELS[rel]]
            (inserts if insert else retracts).setdefault(rel, []).append(row)
        before = evaluate(head, body, db)
        for rel, rows in retracts.items():
            db[rel] -= set(rows) - set(inserts.get(rel, ()))
        for rel, rows in inserts.items():
            db[rel] |= set(rows)
        after = evaluate(head, body, db)
        assert twin.apply(inserts, retracts) == (after - before, before - after)
        assert twin.rows() == after
        assert all(count > 0 for count in twin.count.values())


def test_triangles_counts_each_rotation():
    """A directed triangle derives its three rotations, each once; retracting an edge loses them."""
    body = [("edge", "xy"), ("edge", "yz"), ("edge", "zx")]
    twin = Counting(("tri", "xyz"), body, {"edge": [(1, 2), (2, 3)]})
    assert twin.rows() == set()
    gained, lost = twin.apply({"edge": [(3, 1)]}, {})
    assert gained == {(1, 2, 3), (2, 3, 1), (3, 1, 2)} and lost == set()
    assert set(twin.count.values()) == {1}
    assert twin.apply({}, {"edge": [(2, 3)]}) == (set(), {(1, 2, 3), (2, 3, 1), (3, 1, 2)})
