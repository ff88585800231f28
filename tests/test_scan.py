"""A one-atom body read by a scan of its rows (datalog.evaluation.scan) against the triejoin of
the same compiled plan (run_plan, the general path), on random one-atom rules: constants,
repeated variables, wildcards, comparisons, assignments and negations."""

from hypothesis import given, settings, strategies as st

from datalog.evaluation.compile import compile_plan
from datalog.evaluation.evaluate import run_plan
from datalog.evaluation.scan import RowReader, scan, scannable
from datalog.language.checks import check
from datalog.language.parser import parse
from datalog.planning.planner import plan_clause
from lftj.relation import Relation
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

TERMS = st.sampled_from(["x", "y", "z", "_", "1", "2"])
FILTERS = st.sampled_from(["", ", x < y", ", x != 2", ", w = x + 1, w > 2", ", !n(x)", ", y = 1", ", x <= z, z < 3"])
ROWS = st.sets(st.tuples(*[st.integers(0, 3)] * 3), max_size=40)


def _plan(rule: str):
    text = ".decl e(a: number, b: number, c: number)\n.decl n(a: number)\n" \
           ".decl h(a: number, b: number)\n.decl g(a: number, b: number, c: number)\n" + rule
    checked = check(parse(text))
    return compile_plan(plan_clause(checked.clauses[-1], checked.schema, 0))


@settings(max_examples=examples(300), deadline=None)
@given(args=st.tuples(TERMS, TERMS, TERMS), extra=FILTERS, head=st.sampled_from(["x, y", "x, x", "y, 7", "x, x + y"]),
       rows=ROWS, negated=st.sets(st.integers(0, 3)))
def test_scan_derives_what_the_triejoin_derives(args, extra, head, rows, negated):
    body = f"e({', '.join(args)}){extra}"
    for var in ("x", "y", "z"):                       # a variable of the head or a filter: bound by e
        if var not in args and (var in head or var in extra):
            body += f", {var} = 0"
    plan = _plan(f"h({head}) :- {body}.")
    db = {"e": Relation("e", 3, rows), "n": Relation("n", 1, [(v,) for v in negated]),
          "h": Relation("h", 2)}
    expected: set = set()
    run_plan(plan, db, lambda b: expected.add(plan.head(b)))
    if scannable(plan):
        assert scan(plan, db["e"], db) == expected
    else:
        assert len(plan.atoms) != 1 or plan.atoms[0].prefix


def test_a_copy_is_the_rows_themselves():
    plan = _plan("h(x, y) :- e(x, y, _), x < y.".replace("e(x, y, _)", "e(x, y, 1)"))
    rows = {(0, 1, 1), (1, 0, 1), (0, 2, 2)}
    db = {"e": Relation("e", 3, rows), "n": Relation("n", 1), "h": Relation("h", 2)}
    assert scannable(plan) and scan(plan, db["e"], db) == {(0, 1)}


@settings(max_examples=examples(100), deadline=None)
@given(rows=ROWS, rule=st.sampled_from(["g(x, y, z) :- e(x, y, z).", "g(x, y, z) :- e(x, y, z), x < y.",
                                        "g(z, y, x) :- e(x, y, z), x != z, !n(y).", "h(y, x) :- e(x, y, z)."]))
def test_a_row_that_is_the_binding(rows, rule):
    """The rows read as bindings as they are (slot c is column c): copies, reorders, filters."""
    plan = _plan(rule)
    assert RowReader(plan.atoms[0].atom, plan.slots).is_binding(len(plan.slots))
    db = {"e": Relation("e", 3, rows), "n": Relation("n", 1, [(1,)]), "h": Relation("h", 2), "g": Relation("g", 3)}
    expected: set = set()
    run_plan(plan, db, lambda b: expected.add(plan.head(b)))
    assert scan(plan, db["e"], db) == expected
