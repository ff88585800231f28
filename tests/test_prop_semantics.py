"""Property tests of issue 18's relation semantics on random programs: eqrel, choice-domain,
subsumption, inline and the magic-transform pragma.

* the engine equals the naive reference evaluator, which enforces eqrel, choice-domain and
  subsumption itself (naive/constrained.py) and ignores ``inline`` (it materialises the
  relation: the substitution must not change a tuple);
* a program with ``.pragma "magic-transform"`` gives the outputs of the one without;
* maintenance under random insert/retract batches equals recomputation from scratch.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from datalog.engine.engine import Engine
from datalog.engine.pipeline import run
from datalog.language.naive import evaluate
from datalog.language.parser import parse
from tests.strategies import programs as stratified_programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

VALUES = st.integers(0, 5)
EDGES = st.sets(st.tuples(VALUES, VALUES), max_size=10)
WEIGHTED = st.sets(st.tuples(VALUES, VALUES, st.integers(0, 4)), max_size=10)


def _facts(name: str, rows) -> str:
    return "\n".join(f"{name}({', '.join(map(str, row))})." for row in sorted(rows))


@st.composite
def programs(draw) -> str:
    """e (and w, weighted) as facts, and a random choice of the constructs over them."""
    k, c = draw(VALUES), draw(VALUES)
    parts = [".decl e(x: number, y: number)", _facts("e", draw(EDGES)),
             ".decl w(x: number, y: number, k: number)", _facts("w", draw(WEIGHTED))]
    if draw(st.booleans()):                     # eqrel, and a rule reading it
        parts += [".decl s(x: number, y: number) eqrel", "s(x, y) :- e(x, y), x != " + str(k) + ".",
                  ".decl cls(x: number)", f"cls(x) :- s(x, {c})."]
    if draw(st.booleans()):                     # choice-domain, one or two domains
        domains = draw(st.sampled_from(["x", "y", "x, y", "(x, y)"]))
        parts += [f".decl pick(x: number, y: number) choice-domain {domains}", "pick(x, y) :- e(x, y).",
                  ".decl picked(x: number)", "picked(y) :- pick(_, y)."]
    if draw(st.booleans()):                     # subsumption: shortest distances from c
        parts += [".decl d(x: number, n: number)", f"d({c}, 0).", "d(y, n + k) :- d(x, n), w(x, y, k).",
                  "d(x, n1) <= d(x, n2) :- n2 <= n1."]
    if draw(st.booleans()):                     # inline, used positively and under negation
        parts += [".decl h(x: number, y: number) inline", "h(x, y) :- e(x, y).", f"h(x, y) :- e(y, x), x < {k}.",
                  ".decl two(x: number, y: number)", "two(x, y) :- h(x, z), h(z, y).",
                  ".decl free(x: number)", f"free(x) :- e(x, _), !h(x, {c})."]
    return "\n".join(parts)


def _engine_rows(text: str) -> dict[str, set]:
    return {name: set(rel.tuples) for name, rel in run(text).items()}


@settings(max_examples=examples(40), deadline=None)
@given(programs())
def test_engine_equals_naive(text):
    engine = _engine_rows(text)
    naive = evaluate(parse(text))
    for name, rows in engine.items():
        assert rows == naive.get(name, set()), name


@settings(max_examples=25, deadline=None)
@given(EDGES, VALUES, st.sampled_from(['"r"', '"*"', '"r, q"']))
def test_magic_transform_keeps_outputs(edges, start, which):
    text = "\n".join([".decl e(x: number, y: number)", _facts("e", edges),
                      ".decl r(x: number, y: number)", "r(x, y) :- e(x, y).", "r(x, z) :- r(x, y), e(y, z).",
                      ".decl q(y: number)", f"q(y) :- r({start}, y), !e(y, {start}).", ".output q"])
    assert _engine_rows(f".pragma \"magic-transform\" {which}\n" + text)["q"] == _engine_rows(text)["q"]


@st.composite
def queried(draw) -> str:
    """A random stratified program (tests/strategies.py: recursion, negation, aggregates) with its
    EDB as facts and an output ``goal`` asking one relation with a constant first argument."""
    generated = draw(stratified_programs())
    facts = [_facts(name, rows) for name, rows in generated.edb.items()]
    asked = draw(st.sampled_from([n for n in generated.relations if n not in generated.edb]))
    width, constant = generated.arity[asked], draw(VALUES)
    rest = [f"v{i}" for i in range(1, width)]
    head = f"goal({', '.join(rest)})"
    decl = f".decl goal({', '.join(f'{v}: number' for v in rest)})"
    return "\n".join([generated.text, *facts, decl, f"{head} :- {asked}({', '.join([str(constant), *rest])}).",
                      ".output goal"])


@settings(max_examples=examples(40), deadline=None)
@given(queried(), st.sampled_from(['"*"', '"r0_0"', '"r1_0, r2_0"']))
def test_magic_transform_keeps_outputs_of_random_programs(text, which):
    with_pragma = _engine_rows(f".pragma \"magic-transform\" {which}\n" + text)
    assert with_pragma["goal"] == _engine_rows(text)["goal"] == evaluate(parse(text))["goal"]


BATCHES = st.lists(st.tuples(st.sampled_from("+-"), st.sampled_from("ew"), st.tuples(VALUES, VALUES, st.integers(0, 4))),
                   min_size=1, max_size=6)


@settings(max_examples=25, deadline=None)
@given(programs(), st.lists(BATCHES, min_size=1, max_size=3))
def test_maintenance_equals_recomputation(text, batches):
    maintained = Engine.from_source(text, maintenance="incremental")
    recomputed = Engine.from_source(text, maintenance="recompute")
    for engine in (maintained, recomputed):
        engine.run()
    for batch in batches:
        inserts, retracts = {}, {}
        for sign, name, row in batch:
            row = row if name == "w" else row[:2]
            (inserts if sign == "+" else retracts).setdefault(name, set()).add(row)
        for engine in (maintained, recomputed):
            engine.commit(inserts=inserts, retracts=retracts)
        for name in recomputed.relations():
            assert set(maintained.rows(name)) == set(recomputed.rows(name)), name
