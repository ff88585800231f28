"""Distributed evaluation (``datalog run --engine spark``) equals in-process evaluation.

Every program in programs/ is evaluated by :func:`datalog.spark.distributed.evaluate_on_spark` and
compared relation by relation with ``Engine.run()``; programs with a Spark-incompatible feature
would be listed in ``EXCEPTIONS`` with the reason (there are none). Random small programs from
:mod:`strategies` are compared too, with a few shrunk cases as examples. One Spark session serves
the whole file (starting one costs 4-10 s, every job 0.2-0.6 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="distributed evaluation needs pyspark: pip install 'datalog-lftj[spark]'")

from hypothesis import HealthCheck, example, given, settings  # noqa: E402

from datalog.engine.pipeline import analyse  # noqa: E402
from datalog.spark.distributed import _levels, _variant, evaluate_on_spark  # noqa: E402
from datalog.engine.engine import Engine  # noqa: E402
from datalog.language.errors import DatalogError  # noqa: E402
from datalog.language.parser import parse  # noqa: E402
from datalog.planning.planner import plan_clause  # noqa: E402
from strategies import GeneratedProgram, program_of, programs  # noqa: E402
from test_property_lftj import RECURSION_THROUGH_A_WILDCARD_ATOM  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(p.parent for p in ROOT.glob("programs/*/prog.dl"))
EXCEPTIONS: dict[str, str] = {}       # program -> the feature Spark evaluation lacks: none so far


def _relations(engine: Engine) -> dict[str, set]:
    return {name: set(relation.tuples) for name, relation in engine.db.items()}


def _both(make_engine, spark, partitions: int = 2) -> tuple[dict, dict]:
    """The relations after ``Engine.run()`` and after Spark evaluation of the same program."""
    local = make_engine()
    local.run()
    distributed = make_engine()
    distributed.load_inputs()
    evaluate_on_spark(distributed, spark, partitions)
    return _relations(local), _relations(distributed)


# ---------------------------------------------------------------- programs/

def test_every_program_is_compared_or_excused():
    assert len(PROGRAMS) >= 8
    assert set(EXCEPTIONS) <= {p.name for p in PROGRAMS}


@pytest.mark.parametrize("program_dir", [p for p in PROGRAMS if p.name not in EXCEPTIONS],
                         ids=[p.name for p in PROGRAMS if p.name not in EXCEPTIONS])
def test_program_on_spark_equals_in_process(program_dir: Path, spark):
    local, distributed = _both(lambda: Engine.from_file(program_dir / "prog.dl", program_dir / "facts"), spark)
    assert local.keys() == distributed.keys()
    for name in local:
        assert distributed[name] == local[name], f"{program_dir.name}: {name} differs"


# ---------------------------------------------------------------- partitioning and scheduling (no Spark)

def _plans(text: str):
    checked = analyse(parse(text))
    return checked, [plan_clause(c, checked.schema) for c in checked.clauses if c.body]


def test_atoms_are_keyed_on_the_first_variable_and_the_others_broadcast():
    _, (plan,) = _plans(".decl e(a: number, b: number)\n.decl bad(a: number)\n"
                        "t(x, y, z) :- e(x, y), e(y, z), e(z, x), !bad(x).\n.decl t(c0: number, c1: number, c2: number)")
    variant = _variant(plan)
    assert plan.variable_order[0] == "x"
    assert variant.keys == [0, None, 1]           # e(x, y) on column 0, e(y, z) broadcast, e(z, x) on 1
    assert variant.broadcast == {("e", False), ("bad", False)}


def test_a_delta_atom_reads_recent_tuples():
    _, plans = _plans(".decl edge(a: number, b: number)\npath(x, y) :- edge(x, y).\n"
                      "path(x, z) :- path(x, y), edge(y, z).\n.decl path(c0: number, c1: number)")
    variant = _variant(plans[1], delta_at=[a.relation for a in plans[1].atoms].index("path"))
    assert ("path", True) in variant.sources and ("edge", False) in variant.sources
    assert None not in variant.keys               # both atoms hold y, the first variable


def test_independent_strata_share_a_level():
    checked, _ = _plans(".decl e(a: number)\np(x) :- e(x).\nq(x) :- e(x), x > 1.\nr(x) :- p(x), !q(x).\n.decl p(c0: number)\n.decl q(c0: number)\n.decl r(c0: number)")
    levels = [[s.relations for s in level] for level in _levels(checked.strata)]
    assert levels == [[("p",), ("q",)], [("r",)]] or levels == [[("q",), ("p",)], [("r",)]]


# ---------------------------------------------------------------- random and edge-case programs

RULES_WITHOUT_VARIABLES = program_of("""\
.decl e0(c0: number)
.decl r(c0: number)
.decl s(c0: number)
r(a) :- a = count : { e0(l), e0(_) }.
s(0) :- e0(2), !r(1).""", {"e0": {(0,), (1,), (2,)}})              # run once, on a marker record

MEMBER_IN_TWO_POSITIONS = program_of("""\
.decl e0(c0: number, c1: number)
.decl r(c0: number, c1: number)
r(x, y) :- e0(x, y).
r(x, z) :- r(x, y), r(y, z), x != 3.
r(y, y) :- r(y, y), e0(y, 1).""", {"e0": {(0, 1), (1, 2), (2, 0), (3, 4), (1, 1)}})


def _generated(generated: GeneratedProgram):
    def make():
        engine = Engine.from_source(generated.text)
        for name, rows in generated.edb.items():
            engine.insert(name, sorted(rows))
        return engine
    return make


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=programs(max_groups=2))
@example(generated=RECURSION_THROUGH_A_WILDCARD_ATOM)
@example(generated=RULES_WITHOUT_VARIABLES)
@example(generated=MEMBER_IN_TWO_POSITIONS)
def test_random_programs_on_spark_equal_in_process(generated: GeneratedProgram, spark):
    try:
        local, distributed = _both(_generated(generated), spark, partitions=3)
    except DatalogError as exc:                   # a run-time error must be the same on both sides
        with pytest.raises(type(exc)):
            engine = _generated(generated)()
            engine.load_inputs()
            evaluate_on_spark(engine, spark, 3)
        return
    assert local == distributed


def test_a_run_time_error_in_an_executor_is_raised_on_the_driver(spark):
    engine = Engine.from_source(".decl e(a: number)\nr(y) :- e(x), y = 10 / x.\n.decl r(c0: number)\n", name="div.dl")
    engine.insert("e", [(1,), (0,), (5,)])
    with pytest.raises(DatalogError) as caught:
        evaluate_on_spark(engine, spark)
    assert caught.value.code == "division_by_zero"
    assert caught.value.span is not None and caught.value.span.file == "div.dl"


def test_cli_engine_spark_prints_what_the_in_process_engine_prints(spark, capsys):
    from datalog.cli.commands import main
    program = ROOT / "programs" / "transitive_closure"
    args = ["run", str(program / "prog.dl"), "-F", str(program / "facts"), "-D", "-"]
    assert main(args) == 0
    expected = capsys.readouterr().out
    assert main(args + ["--engine", "spark"]) == 0
    assert capsys.readouterr().out == expected and expected.count("\n") > 10
