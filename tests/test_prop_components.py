"""Components are a front-end expansion, so a program inside a component must mean exactly what
it means outside one. Random programs (tests/strategies.programs) are wrapped in components, in
three shapes drawn at random:

- ``plain``: ``.comp C<T> { P }``, P's ``number`` columns of type T;
- ``inherit``: P's declarations and some of its rules in a base ``B<T>``, the others in ``C<T> : B<T>``;
- ``override``: as ``inherit``, one relation declared ``overridable`` in the base with a wrong extra
  rule there, and ``C`` overriding it with P's own rules for it;

instantiated twice (``.init a = C<number>``, ``.init b = C<number>``) with different EDBs. Then:

- the engine on the component program agrees with the reference evaluator on it (instance by
  instance), and with the reference evaluator on P alone (``a.r`` is P's ``r`` over a's EDB);
- maintenance of the instances' EDB relations agrees with recomputation, batch after batch.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError
from datalog.language.naive import evaluate
from datalog.language.parser import parse
from tests.strategies import DOMAIN, programs
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

BOUNDED = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
INSTANCES = ("a", "b")


@st.composite
def component_programs(draw):
    """(the component program, the plain program, EDB by instance, arity by plain name)."""
    generated = draw(programs(max_groups=2))
    shape = draw(st.sampled_from(("plain", "inherit", "override")))
    lines = generated.text.replace(": number", ": T").splitlines()
    decls = [line for line in lines if line.startswith(".decl")]
    rules = [line for line in lines if not line.startswith(".decl")]
    if shape == "plain":
        text = _comp("C<T>", decls + rules)
    else:
        cut = draw(st.integers(0, len(rules)))
        base_rules, own_rules = rules[:cut], rules[cut:]
        if shape == "override":
            target = draw(st.sampled_from([n for n in generated.arity if n.startswith("r")]))
            decls = [d + " overridable" if d.startswith(f".decl {target}(") else d for d in decls]
            # the base's rules for target are dropped; C gives P's own ones
            mine = [r for r in rules if _head(r) == target]
            base_rules = [r for r in base_rules if _head(r) != target] + mine + [_wrong_rule(target, generated.arity)]
            own_rules = [".override " + target] + [r for r in own_rules if _head(r) != target] + mine
        text = _comp("B<T>", decls + base_rules) + "\n" + _comp("C<T> : B<T>", own_rules)
    text += "\n" + "\n".join(f".init {i} = C<number>" for i in INSTANCES)
    edbs = {"a": generated.edb,
            "b": {n: draw(st.frozensets(st.tuples(*[DOMAIN] * generated.arity[n]), max_size=6))
                  for n in generated.edb}}
    return text, generated.text, edbs, generated.arity


def _comp(head: str, body: list[str]) -> str:
    return f".comp {head} {{\n  " + "\n  ".join(body) + "\n}"


def _head(rule: str) -> str | None:
    match = re.match(r"\s*([A-Za-z_]\w*)\(", rule)
    return match.group(1) if match else None


def _wrong_rule(target: str, arity: dict) -> str:
    """A fact the override must remove: a value no generated rule derives (DOMAIN is 0..5)."""
    return f"{target}({', '.join(['99'] * arity[target])})."


def _qualified_edb(edbs: dict) -> dict:
    return {f"{i}.{n}": set(rows) for i, edb in edbs.items() for n, rows in edb.items()}


def _engine(text: str, edbs: dict, maintenance: str = "incremental") -> Engine:
    engine = Engine.from_source(text, maintenance=maintenance)
    for name, rows in _qualified_edb(edbs).items():
        engine.insert(name, sorted(rows))
    engine.run()
    return engine


@BOUNDED
@given(component_programs())
def test_instances_mean_what_the_plain_program_means(case):
    text, plain, edbs, arity = case
    try:
        engine = _engine(text, edbs)
    except DatalogError:
        return                                   # e.g. a division by zero, as in the plain program
    reference = evaluate(parse(text), _qualified_edb(edbs))
    for instance in INSTANCES:
        alone = evaluate(parse(plain), {n: set(r) for n, r in edbs[instance].items()})
        for name in arity:
            qualified = f"{instance}.{name}"
            assert set(engine.rows(qualified)) == reference[qualified] == alone[name], qualified


@st.composite
def component_updates(draw):
    text, plain, edbs, arity = draw(component_programs())
    names = sorted(f"{i}.{n}" for i in INSTANCES for n in edbs["a"])
    batches = []
    for _ in range(draw(st.integers(1, 3))):
        batch = []
        for _ in range(draw(st.integers(1, 5))):
            name = draw(st.sampled_from(names))
            batch.append((draw(st.sampled_from("+-")), name,
                          draw(st.tuples(*[DOMAIN] * arity[name.split(".", 1)[1]]))))
        batches.append(batch)
    return text, edbs, batches


def _commit(engine: Engine, batch) -> dict:
    with engine.transaction() as tx:
        for sign, name, row in batch:
            (tx.insert if sign == "+" else tx.retract)(name, [row])
    return tx.delta


@BOUNDED
@given(component_updates())
def test_maintained_instances_agree_with_recomputation(case):
    text, edbs, batches = case
    try:
        maintained, recomputed = _engine(text, edbs), _engine(text, edbs, "recompute")
    except DatalogError:
        return
    for batch in batches:
        try:
            expected = _commit(recomputed, batch)
        except DatalogError:
            with pytest.raises(DatalogError):
                _commit(maintained, batch)
            continue
        got = _commit(maintained, batch)
        for name in recomputed.relations():
            assert maintained.rows(name) == recomputed.rows(name), name
        assert {n: c for n, c in got.items() if c} == {n: c for n, c in expected.items() if c}
