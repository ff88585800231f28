"""Aggregates on the compiled kernel (datalog/evaluation/column_aggregates.py) give what the tuple
path and the naive reference give: count, sum, min and max over random bodies of one or two atoms,
grouped by one or two variables of the rule's atoms, over numbers with int64's extremes (sums past
the range are the same coded error) and unsigned words; ineligible aggregates stay on the tuple path."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings, strategies as st

from datalog.language.errors import DatalogError
from test_columnar_eval import constant, evaluated, reference
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

NUMBERS = st.integers(-2, 3) | st.sampled_from([2**63 - 1, -2**63, 2**62])
UNSIGNED = st.integers(0, 3) | st.sampled_from([2**64 - 1, 2**63, 2**63 - 1])
KINDS = ("count", "sum", "min", "max")


@st.composite
def aggregate_programs(draw, type_: str = "number") -> tuple[str, dict]:
    """``a(...) :- e0(x, ...), n = kind y : { e1(x, y, ...), ... }.``: the rule's atom binds the
    group variables (x, or x and w), the body joins one or two atoms over them and its own
    variables (y, z), with wildcards and constants; the head reads the groups and the value."""
    values = UNSIGNED if type_ == "unsigned" else NUMBERS
    widths = {"e0": draw(st.integers(1, 3)), "e1": draw(st.integers(2, 3)), "e2": draw(st.integers(1, 2))}
    facts = {name: draw(st.sets(st.tuples(*[values] * w), max_size=10)) for name, w in widths.items()}
    groups = ["x"] if widths["e0"] == 1 or draw(st.booleans()) else ["x", "w"]
    outer = groups + [draw(st.sampled_from(["_", "v"])) for _ in range(widths["e0"] - len(groups))]
    def term(names):
        return draw(st.sampled_from(names + ["_"]) | values.map(constant))
    body = [f"e1({', '.join(groups + ['y'] + [term(['y', 'z']) for _ in range(widths['e1'] - len(groups) - 1)])})"
            if widths["e1"] > len(groups) else f"e1({', '.join(groups)})"]
    if draw(st.booleans()):
        body.append(f"e2({', '.join(term(groups + ['y']) for _ in range(widths['e2']))})")
    local = sorted({v for atom in body for v in ("y", "z") if v in atom.replace(")", ",").split("(")[1].split(", ")})
    kind = draw(st.sampled_from(KINDS if local else ("count",)))
    target = "" if kind == "count" else " " + draw(st.sampled_from(local))
    value_type = "number" if kind == "count" else type_
    if draw(st.booleans()):
        body.append(f"{draw(st.sampled_from(groups + local))} != {constant(draw(values))}")
    head = groups + ["n"]
    text = "\n".join([f".decl {n}({', '.join(f'c{i}: {type_}' for i in range(w))})" for n, w in widths.items()] +
                     [f".decl a({', '.join(f'c{i}: {type_}' for i in range(len(groups)))}, n: {value_type})",
                      f"a({', '.join(head)}) :- e0({', '.join(outer)}), n = {kind}{target} : {{ {', '.join(body)} }}."])
    return text, facts


def outcome(text: str, edb: dict, on: bool):
    """The relations and progress lines, or the coded error's class (a sum past the range)."""
    try:
        return evaluated(text, edb, on)
    except DatalogError as e:
        return type(e).__name__, []


@settings(max_examples=examples(80), deadline=None)
@given(st.sampled_from(["number", "unsigned"]).flatmap(aggregate_programs))
@example((".decl e0(c0: number)\n.decl e1(c0: number, c1: number)\n.decl e2(c0: number)\n"
          ".decl a(c0: number, n: number)\na(x, n) :- e0(x), n = sum y : { e1(x, y) }.",
          {"e0": {(1,)}, "e1": {(1, 2**63 - 1), (1, 1)}, "e2": set()}))       # past the range: the error
def test_aggregates_on_the_kernel_match_the_tuple_path_and_the_reference(program):
    text, edb = program
    on, told = outcome(text, edb, True)
    off, _ = outcome(text, edb, False)
    assert on == off
    if isinstance(on, dict):
        expected = reference(text, edb)
        assert on == {name: expected.get(name, []) for name in on}
        assert sum("on the compiled kernel" in line for line in told) == 1, told     # a's stratum


@pytest.mark.parametrize("rule", [
    "a(x, n) :- e0(x), n = mean y : { e1(x, y) }.",                       # mean: a float
    "a(x, n) :- e0(x), n = count : { e1(x, _) ; e1(_, x) }.",             # two alternatives
    "a(x, n) :- e0(x), n = sum y + 1 : { e1(x, y) }.",                     # an expression as the target
    "a(x, n) :- e0(x), n = count : { e1(y, _), y < x }.",                  # x bound by no atom of the body
])
def test_other_aggregates_stay_on_the_tuple_path(rule):
    text = ".decl e0(c0: number)\n.decl e1(c0: number, c1: number)\n.decl a(c0: number, n: number)\n" + rule
    edb = {"e0": {(1,), (2,)}, "e1": {(1, 2), (1, 3), (2, 2)}}
    on, told = evaluated(text, edb, True)
    assert not any("kernel" in line for line in told), told
    assert on == evaluated(text, edb, False)[0]


def test_a_group_with_no_contribution_counts_0_and_has_no_min():
    text = (".decl e0(c0: number)\n.decl e1(c0: number, c1: number)\n.decl c(x: number, n: number)\n"
            ".decl m(x: number, n: number)\nc(x, n) :- e0(x), n = count : { e1(x, _) }.\n"
            "m(x, n) :- e0(x), n = min y : { e1(x, y) }.")
    on, told = evaluated(text, {"e0": {(1,), (2,)}, "e1": {(1, 5), (1, -3)}}, True)
    assert on["c"] == [(1, 2), (2, 0)] and on["m"] == [(1, -3)]
    assert sum("on the compiled kernel" in line for line in told) == 2, told
