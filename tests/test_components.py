"""Components, qualified names, multi-name declarations, the C preprocessor, .include/.once,
.functor, .plan, .limitsize, .number_type, unsupported constructs named, Soufflé's warnings
(issue 18, the components area). Outputs of whole programs are in tests/constructs/."""

from __future__ import annotations

import pytest

from datalog.engine.engine import Engine
from datalog.language import ast
from datalog.language.checks import check
from datalog.language.errors import DatalogError, Source
from datalog.language.parser import ParseOptions, parse, parse_file
from datalog.language.parser.lalr import parse_tree
from datalog.language.parser.to_ast import ToAst


def raw(text: str) -> ast.Program:
    """The program as written: no include read, no component expanded."""
    source = Source("<input>", text)
    return ToAst(source).transform(parse_tree(text, source))


def code_of(text: str, **options) -> tuple[str, int, int]:
    with pytest.raises(DatalogError) as info:
        Engine(parse(text, "p.dl", ParseOptions(**options)))
    return info.value.code, info.value.span.line, info.value.span.column


# ---------------------------------------------------------------- printing parses back

@pytest.mark.parametrize("text", [
    ".comp G<N, M> : Base<N>, Other {\n  .decl e(a: N, b: M) overridable\n  .override p\n  e(1, 2).\n}",
    ".comp Outer {\n  .comp Inner {\n    .decl q(x: number)\n  }\n  .init i = Inner\n}",
    ".init g = Graph<number, symbol>",
    '.include "lib/x.dl"',
    ".once",
    ".functor f(x: number, symbol): number stateful",
    ".functor g(): symbol",
    ".limitsize a.b.r(n=10)",
    "a.r(x) :- b.s(x, y), c(y). .plan 0: (2, 1), 1: (1, 2)",
    ".decl a.r(x: a.T)",
    ".type a.T <: number",
])
def test_every_new_node_prints_as_text_that_parses_back_to_it(text):
    program = raw(text)
    assert str(program) == text
    assert raw(str(program)) == program


def test_a_multi_name_declaration_is_one_declaration_per_name():
    program = parse(".decl a, b.c, d(x: number, y: symbol)")
    assert [(d.relation, [c.type for c in d.columns]) for d in program.declarations] == \
        [(n, ["number", "symbol"]) for n in ("a", "b.c", "d")]


def test_number_type_symbol_type_and_a_bare_type_are_subtypes_with_a_warning():
    program = parse(".number_type N\n.symbol_type S\n.type T")
    assert str(program) == ".type N <: number\n.type S <: symbol\n.type T <: symbol"
    assert [w.message for w in program.warnings] == ["Deprecated type declaration used"] * 3


# ---------------------------------------------------------------- expansion

def test_nested_instances_orphans_and_type_parameters_passed_on():
    program = parse("""
        .comp Box<T> { .decl v(x: T)  seen(x) :- v(x). }
        .comp Two<A, B> { .init left = Box<A>  .init right = Box<B> }
        .init t = Two<number, symbol>
        .decl seen(x: number)""")
    decls = {d.relation: d.columns[0].type for d in program.declarations}
    assert decls == {"t.left.v": "number", "t.right.v": "symbol", "seen": "number"}
    assert sorted(str(r) for r in program.rules) == ["seen(x) :- t.left.v(x).", "seen(x) :- t.right.v(x)."]


def test_a_component_declared_in_a_base_is_visible_in_the_derived_one():
    program = parse("""
        .comp Base { .comp Part { .decl p(x: number) } }
        .comp Derived : Base { .init part = Part }
        .init d = Derived""")
    assert [d.relation for d in program.declarations] == ["d.part.p"]


def test_types_declared_in_a_component_are_qualified_like_relations():
    program = parse(".comp C<T> { .type Id <: T  .decl r(x: Id) }\n.init c = C<symbol>")
    assert str(program) == ".type c.Id <: symbol\n.decl c.r(x: c.Id)"


def test_override_drops_the_base_rules_only_for_the_overridden_relation():
    engine = Engine.from_source("""
        .comp Base { .decl r(x: number) overridable  .decl s(x: number)  r(1). s(1). }
        .comp Derived : Base { .override r  r(2). }
        .init d = Derived""")
    engine.run()
    assert engine.rows("d.r") == [(2,)] and engine.rows("d.s") == [(1,)]


@pytest.mark.parametrize("text, code, line, column", [
    (".init g = Nowhere", "unknown_component", 1, 11),
    (".comp C<T> { .decl r(x: T) }\n.init c = C", "component_arity", 2, 11),
    (".comp B { .decl r(x: number) }\n.comp D : B { .override r }\n.init d = D", "bad_override", 2, 15),
    (".comp B { .decl r(x: number) }\n.comp D : B { .override s }\n.init d = D", "bad_override", 2, 15),
    (".comp A : A { .decl r(x: number) }\n.init a = A", "component_cycle", 1, 11),
    (".comp A { .init a = A }\n.init a = A", "component_cycle", 1, 11),
])
def test_component_errors_are_coded_with_their_position(text, code, line, column):
    assert code_of(text) == (code, line, column)


def test_a_type_parameter_used_as_a_base_is_resolved_at_each_instance():
    engine = Engine.from_source("""
        .comp M { .decl R(s: symbol)  R("M"). }
        .comp X<T> : T { .override R  R("X"). }
        .init y = X<M>""")
    engine.run()
    assert engine.rows("y.R") == [("X",)]


def test_qualified_names_in_directives_name_the_files(tmp_path):
    (tmp_path / "g.edge.facts").write_text("1\t2\n")
    engine = Engine.from_source(".comp G { .decl edge(a: number, b: number) .input edge }\n.init g = G",
                                tmp_path)
    engine.load_inputs()
    engine.run()
    assert engine.rows("g.edge") == [(1, 2)]


# ---------------------------------------------------------------- the preprocessor

def test_macros_with_arguments_conditionals_and_command_line_definitions():
    text = "#define TWICE(x) ((x) * 2)\n#ifdef BIG\nr(TWICE(N)).\n#else\nr(0).\n#endif\n"
    engine = Engine(parse(text, "p.dl", ParseOptions(macros=("BIG N=21",))))
    engine.run()
    assert engine.rows("r") == [(42,)]


def test_errors_point_into_the_original_file_and_line(tmp_path):
    (tmp_path / "inc.dl").write_text("// included\n.decl s(x: number)\ns(\"a\").\n")
    (tmp_path / "main.dl").write_text('#define N 3\n\n#include "inc.dl"\n.decl r(x: number)\nr(N).\n')
    with pytest.raises(DatalogError) as info:
        Engine(parse_file(tmp_path / "main.dl"))
    assert info.value.span.file.endswith("inc.dl") and info.value.span.line == 3
    (tmp_path / "inc.dl").write_text(".decl s(x: number)\n")
    (tmp_path / "main.dl").write_text('#define N 3\n\n#include "inc.dl"\n.decl r(x: number)\nr(N).\nr(q).\n')
    with pytest.raises(DatalogError) as info:
        Engine(parse_file(tmp_path / "main.dl"))
    assert (info.value.span.file, info.value.span.line) == (str(tmp_path / "main.dl"), 6)
    assert info.value.render().splitlines()[1].strip() == "r(q)."


def test_a_directive_without_the_preprocessor_is_an_error_naming_it():
    assert code_of("#define N 1\nr(N).", preprocess=False)[0] == "unsupported"


def test_includes_outside_the_program_directory_need_allow_paths(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.dl").write_text(".decl x(a: number)\nx(1).\n")
    (tmp_path / "prog").mkdir()
    for include in ('#include "../lib/x.dl"', '.include "../lib/x.dl"'):
        (tmp_path / "prog" / "p.dl").write_text(include + "\n")
        with pytest.raises(DatalogError) as info:
            parse_file(tmp_path / "prog" / "p.dl")
        assert info.value.code == "include_path"
        assert parse_file(tmp_path / "prog" / "p.dl", ParseOptions(allow_paths=True)).declarations
        assert parse_file(tmp_path / "prog" / "p.dl", ParseOptions(include_dirs=(str(tmp_path / "lib"),)))


def test_include_dirs_are_searched_after_the_including_files_directory(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.dl").write_text(".decl x(a: number)\n")
    (tmp_path / "p.dl").write_text('.include "x.dl"\n#include "x.dl"\n')
    with pytest.raises(DatalogError) as info:
        parse_file(tmp_path / "p.dl")
    assert info.value.code == "missing_input"
    (tmp_path / "lib" / "x.dl").write_text(".once\n.decl x(a: number)\n")
    (tmp_path / "p.dl").write_text('.include "x.dl"\n.include "x.dl"\n')
    program = parse_file(tmp_path / "p.dl", ParseOptions(include_dirs=(str(tmp_path / "lib"),)))
    assert [d.relation for d in program.declarations] == ["x"]


def test_line_and_file_are_where_they_are_written():
    engine = Engine(parse('.decl at(f: symbol, l: number)\n\nat(__FILE__, __LINE__).', "p.dl"))
    engine.run()
    assert engine.rows("at") == [("p.dl", 3)]


# ---------------------------------------------------------------- unsupported, named

@pytest.mark.parametrize("text, named, column", [
    (".lattice Interval<T> {}", ".lattice", 1),
    ("r(x) :- s(x), x = @f(x).", "@f", 19),
    (".decl r(x: number)\n.decl d = debug_delta(r)", "debug_delta", 9),
])
def test_a_soufflé_construct_the_engine_lacks_is_unsupported_at_its_position(text, named, column):
    with pytest.raises(DatalogError) as info:
        parse(text)
    assert info.value.code == "unsupported" and named in info.value.message
    assert info.value.span.column == column


def test_a_plain_typo_stays_a_syntax_error():
    with pytest.raises(DatalogError) as info:
        parse("r(x) :- s(x),, t(x).")
    assert info.value.code == "syntax_error"


# ---------------------------------------------------------------- warnings

def warnings(text: str) -> list[str]:
    return [w.message for w in check(parse(text)).warnings]


def test_a_variable_once_in_a_rule_is_warned_about_and_underscored_ones_are_not():
    assert warnings(".decl e(a: number, b: number)\n.decl p(a: number)\ne(1, 2).\np(x) :- e(x, y), e(x, _z).") == \
        ["Variable y only occurs once"]


def test_a_variable_once_in_each_alternative_and_nowhere_else_is_warned_once():
    text = ".decl e(a: number, b: number)\n.decl p(a: number)\ne(1, 2).\np(x) :- e(x, x), (e(y, 1) ; e(1, y))."
    assert warnings(text) == ["Variable y only occurs once"]
    assert warnings(text.replace("e(1, y)", "e(y, y)")) == []


def test_a_declared_relation_nothing_fills_is_warned_about():
    assert warnings(".decl e(a: number)\n.decl f(a: number)\n.decl p(a: number)\n.input f\np(x) :- e(x), f(x).") == \
        ["No rules/facts defined for relation e"]


# ---------------------------------------------------------------- .plan

def test_a_plan_orders_the_rules_variables_by_its_atom_order():
    text = """.decl a(x: number, y: number)
.decl r(x: number, z: number)
a(1, 2). a(2, 3).
r(x, y) :- a(x, y).
r(x, z) :- r(x, y), r(y, z).{}"""                       # a plan is for a recursive rule (as in Soufflé)
    for plan, order in ((" .plan 0: (1, 2)", ["x", "y", "z"]), (" .plan 0: (2, 1)", ["y", "z", "x"]),
                        (" .plan 1: (1, 2), 0: (2, 1)", ["y", "z", "x"])):
        engine = Engine.from_source(text.format(plan))
        (rule,) = [p for p in engine.plans.values() if p.clause.rule.plan]
        assert rule.variable_order == order
        engine.run()
        assert engine.rows("r") == [(1, 2), (1, 3), (2, 3)]


# ---------------------------------------------------------------- .limitsize

LIMITED = """.decl e(a: number, b: number)
.decl p(a: number, b: number)
p(x, y) :- e(x, y).
p(x, z) :- p(x, y), e(y, z).
.limitsize p(n={n})
"""
CHAIN = {(i, i + 1) for i in range(12)} | {(3, 0)}


@pytest.mark.parametrize("n", [1, 5, 12, 30, 200])
def test_a_limited_recursion_stops_at_the_round_that_reaches_the_limit(n):
    from datalog.language.naive import evaluate
    engine = Engine.from_source(LIMITED.format(n=n))
    engine.insert("e", sorted(CHAIN))
    engine.run()
    reference = evaluate(parse(LIMITED.format(n=n)), {"e": CHAIN})["p"]
    assert set(engine.rows("p")) == reference
    unlimited = evaluate(parse(LIMITED.format(n=10 ** 9)), {"e": CHAIN})["p"]
    assert len(reference) >= min(n, len(unlimited)) and reference <= unlimited


def test_a_limited_program_is_maintained_by_recomputation_and_says_so():
    text = LIMITED.format(n=20)
    engine = Engine.from_source(text)
    engine.insert("e", sorted(CHAIN))
    engine.run()
    engine.commit(inserts={"e": [(12, 13)]}, retracts={"e": [(3, 0)]})
    scratch = Engine.from_source(text)
    scratch.insert("e", sorted(CHAIN - {(3, 0)} | {(12, 13)}))
    scratch.run()
    assert engine.rows("p") == scratch.rows("p")
    assert engine.stats()[".limitsize p(n=20)"] == {"maintenance": "recomputed"}


def test_a_limit_on_an_undefined_relation_is_an_error():
    assert code_of("r(1).\n.limitsize q(n=3)")[:2] == ("undefined_relation", 2)


def test_a_subsumption_inside_a_component_is_the_instance_s():
    # best(k, v1) <= best(k, v2) :- v1 < v2 keeps the greatest v per k, in each instance
    text = """.comp Best<T> {
  .decl best(k: T, v: number)
  best(k, v1) <= best(k, v2) :- v1 < v2.
}
.init a = Best<number>
.init b = Best<symbol>
a.best(1, 5). a.best(1, 7). a.best(2, 1).
b.best("x", 3). b.best("x", 2)."""
    engine = Engine.from_source(text)
    engine.run()
    assert engine.rows("a.best") == [(1, 7), (2, 1)]
    assert engine.rows("b.best") == [("x", 3)]
