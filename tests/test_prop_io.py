"""Properties of the I/O constructs (issue 18) on random programs.

Random stratified programs over input relations read from files in random layouts (a nullary
flag, numbers, symbols with quotes, delimiters and line breaks; headers, rfc4180, any
delimiter, gzip), with nullary relations derived, joined and negated:

1. the engine, reading the files, computes what the naive reference evaluator computes from
   the same relations given directly (so the files were read as they were written);
2. maintaining the program incrementally over random batches of insertions and retractions,
   nullary facts included, gives what recomputing gives, relation for relation.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language import ast
from datalog.language.naive import evaluate
from datalog.language.parser import parse
from datalog.sources import files
from datalog.sources.textformat import TextFormat
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

INPUTS = {"e": ["number", "number"], "s": ["number", "symbol"], "f": [], "g": []}
VARS = ["x", "y", "z"]
SYMBOLS = st.text(st.sampled_from(list('ab ,;\t"\n') + ["é", "\u00a0"]), max_size=5)


@st.composite
def layouts(draw, quoted: bool = False) -> TextFormat:
    """A layout; ``quoted`` (rfc4180) for a relation whose symbols may hold delimiters and line breaks."""
    rfc4180 = quoted or draw(st.booleans())
    return TextFormat(draw(st.sampled_from(["\t", ",", ";;"])), draw(st.booleans()), rfc4180, draw(st.booleans()))


@st.composite
def atoms(draw, relations: dict[str, int], bound: list[str] | None = None) -> tuple[str, set[str]]:
    """An atom over one of ``relations`` (name -> arity) and its variables: its arguments are
    variables (from ``bound`` if given) or small constants."""
    name = draw(st.sampled_from(sorted(relations)))
    pool = bound if bound is not None else VARS
    args = [draw(st.sampled_from(pool)) if pool and draw(st.integers(0, 4)) else str(draw(st.integers(1, 3)))
            for _ in range(relations[name])]
    return f"{name}({', '.join(args)})", {a for a in args if a in VARS}


@st.composite
def programs(draw) -> str:
    """Derived relations d0, d1, ... (all number columns, arity 0 to 2), each defined by rules
    over the inputs, earlier relations and itself; a negated atom names an input or an earlier
    relation, its variables bound by the positive atoms."""
    numeric = {"e": 2, "f": 0, "g": 0}
    lines = []
    for i in range(draw(st.integers(1, 4))):
        name, arity = f"d{i}", draw(st.integers(0, 2))
        lines.append(f".decl {name}({', '.join(f'c{k}: number' for k in range(arity))})")
        lines.append(f".output {name}")
        for _ in range(draw(st.integers(1, 2))):
            lines.append(draw(rules(name, arity, dict(numeric))))
        numeric[name] = arity
    flag, _ = draw(atoms({k: 0 for k, a in numeric.items() if a == 0}))
    lines.append(f".decl named(x: number, t: symbol)\n.output named\nnamed(x, t) :- s(x, t), {flag}.")
    return "\n".join(lines)


@st.composite
def rules(draw, head: str, arity: int, earlier: dict[str, int]) -> str:
    positive = draw(st.lists(atoms({**earlier, head: arity}), min_size=1, max_size=3))
    body = [text for text, _ in positive]
    bound = sorted(set().union(*(v for _, v in positive)))
    if not bound and arity:
        body.append("e(x, y)")
        bound = ["x", "y"]
    if draw(st.booleans()):
        negated, _ = draw(atoms(earlier, bound))
        body.append("!" + negated)
    args = [draw(st.sampled_from(bound)) for _ in range(arity)]
    return f"{head}({', '.join(args)}) :- {', '.join(body)}."


@st.composite
def inputs(draw) -> dict[str, set]:
    number = st.integers(1, 4)
    return {"e": set(draw(st.lists(st.tuples(number, number), max_size=8))),
            "s": set(draw(st.lists(st.tuples(number, SYMBOLS), max_size=4))),
            "f": {()} if draw(st.booleans()) else set(), "g": {()} if draw(st.booleans()) else set()}


def _declarations(layouts_of: dict[str, TextFormat]) -> str:
    out = []
    for name, types in INPUTS.items():
        fmt = layouts_of[name]
        columns = ", ".join(f"c{i}: {t}" for i, t in enumerate(types))
        params = (f'delimiter="{fmt.delimiter}", headers={str(fmt.headers).lower()}, '
                  f'rfc4180={str(fmt.rfc4180).lower()}, compress={str(fmt.compress).lower()}')
        out.append(f".decl {name}({columns})\n.input {name}({params}, filename=\"{name}.in\")")
    return "\n".join(out) + "\n"


def _write_inputs(where: Path, relations: dict[str, set], layouts_of: dict[str, TextFormat]) -> None:
    for name, rows in relations.items():
        fmt = layouts_of[name]
        params = (("filename", f"{name}.in"), ("delimiter", fmt.delimiter), ("headers", str(fmt.headers).lower()),
                  ("rfc4180", str(fmt.rfc4180).lower()), ("compress", str(fmt.compress).lower()))
        files.write_outputs([ast.Directive("output", name, params)], lambda _, rows=rows: sorted(rows), str(where),
                            columns_of=lambda _, n=name: [f"c{i}" for i in range(len(INPUTS[n]))])


def _everything(engine: Engine) -> dict[str, set]:
    return {name: set(engine.rows(name)) for name in engine.relations()}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(program=programs(), relations=inputs(), data=st.data())
def test_engine_reading_files_agrees_with_the_naive_evaluator(tmp_path, program, relations, data):
    layouts_of = {name: data.draw(layouts(quoted=name == "s")) for name in INPUTS}
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    _write_inputs(where, relations, layouts_of)
    text = _declarations(layouts_of) + program
    engine = Engine.from_source(text, where)
    engine.run()
    expected = evaluate(parse(text), relations)
    assert _everything(engine) == {name: expected.get(name, set()) for name in engine.relations()}


@st.composite
def batches(draw) -> list[tuple[dict, dict]]:
    """Up to three batches of (inserts, retracts) over the inputs, nullary facts included."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        change = draw(inputs())
        gone = draw(inputs())
        out.append(({k: sorted(v) for k, v in change.items() if v}, {k: sorted(v) for k, v in gone.items() if v}))
    return out


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(program=programs(), relations=inputs(), updates=batches())
def test_maintenance_of_nullary_relations_agrees_with_recomputation(tmp_path, program, relations, updates):
    layouts_of = {name: TextFormat(",", False, True, False) for name in INPUTS}
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    _write_inputs(where, relations, layouts_of)
    text = _declarations(layouts_of) + program
    maintained = Engine.from_source(text, where, maintenance="incremental")
    recomputed = Engine.from_source(text, where, maintenance="recompute")
    for engine in (maintained, recomputed):
        engine.run()
    for number, (inserts, retracts) in enumerate(updates, 1):
        retracts = {k: [r for r in v if r not in inserts.get(k, [])] for k, v in retracts.items()}
        maintained.commit(inserts, retracts)
        recomputed.commit(inserts, retracts)
        assert _everything(maintained) == _everything(recomputed), f"batch {number}"
