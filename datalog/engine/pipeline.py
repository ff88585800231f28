"""The pipeline: from program text to evaluated relations, one stage a line.

    parse -> rewrite -> check -> stratify -> plan -> compile -> load -> settle types -> evaluate

:func:`run` is the whole pipeline. :class:`datalog.engine.Engine` runs the same stages and keeps
what they made, to answer queries and to maintain the relations under changes. Each stage is
one call, found from here:

==============  =============================================================================
parse           :func:`datalog.language.parser.parse`: the lark grammar -> the AST, with spans
rewrite         :data:`datalog.language.rewrites.REWRITES`: rules -> one-head conjunctive clauses
check           :data:`datalog.language.checks.CHECKS`: declarations, arity, safety, types (every
                mistake an error with a code and a caret; nothing runs after one)
stratify        :func:`datalog.language.strata.stratify`: strongly connected components, in order
plan            :func:`datalog.planning.planner.plan_program`: per rule its variable order, trie
                indexes, filters and backend, as data
compile         :func:`datalog.evaluation.compile.compile_plan`: a plan's terms and filters as closures
load            :mod:`datalog.engine.loading`: the program's facts; ``.input`` files and Spark tables
settle types    :func:`datalog.language.typecheck.settle_types`: ``auto`` columns take their values' types
evaluate        :func:`datalog.evaluation.fixpoint.evaluate`: stratum by stratum, semi-naive triejoins
==============  =============================================================================

>>> db = run('e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).')
>>> db["p"].sorted_rows()
[(1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from datalog.engine.loading import Loaded, program_facts, read_inputs, settled
from datalog.evaluation import fixpoint
from datalog.evaluation.compile import CompiledPlan, compile_plan
from datalog.language import ast
from datalog.language.checks import Checked, check
from datalog.language.parser import parse
from datalog.language.rewrites import rewrite
from datalog.language.semantics import lower
from datalog.language.semantics.constraints import (choice_domains, dominance_clauses, subsumption_dependencies,
                                                      row_order, symbol_ranks)
from datalog.language.semantics.pragmas import pragma_values
from datalog.language.strata import limited, stratify
from datalog.planning.plan import RulePlan
from datalog.planning.planner import plan_clause, plan_program
from datalog.sources.numberfile import NumberRows
from lftj.relation import Relation


def run(text: str, facts_dir: str | Path = ".", name: str = "<input>", intersect: str = "hash",
        allow_paths: bool = False) -> dict:
    """Evaluate the program ``text`` (its ``.input`` files read from ``facts_dir``, none outside
    it unless ``allow_paths``); the relations by name."""
    program = parse(text, name)                                   # parse
    checked = analyse(program)                                    # rewrite, check, stratify
    plans = compiled(plan(checked))                               # plan, compile
    db = relations(checked)
    fill(db, program_facts(checked))                              # load: the program's facts
    loaded = read_inputs(checked, checked.directives("input"), Path(facts_dir),   # and its inputs
                         allow_paths=allow_paths)
    checked = settled(checked, loaded)                            # settle types
    fill(db, loaded)
    fixpoint.evaluate(checked.strata, plans, db, intersect, schema=checked.schema)   # evaluate
    return db


def analyse(program: ast.Program, known=None) -> Checked:
    """The program checked: its semantic constructs lowered (:func:`lower`), rewritten into
    clauses (REWRITES), checked (CHECKS), stratified."""
    program = lower(program)                      # eqrel, inline, pragmas: plain rules
    clauses = rewrite(program)
    checked = check(program, clauses, known)
    if pragma_values(program, "no-warn"):         # .pragma "no-warn": Soufflé's --no-warn
        checked.warnings.clear()
    return stratified(checked)


def stratified(checked: Checked) -> Checked:
    """The checked program with its strata (dependency order; ``cyclic_negation`` if a negation
    or an aggregate is inside a recursion)."""
    ordering = subsumption_dependencies(checked.program)   # what subsumption bodies read comes first
    strata = limited(stratify(checked.clauses + ordering, checked.schema), checked.program, checked.schema)
    for stratum in strata:
        stratum.clauses = [c for c in stratum.clauses if not any(c is o for o in ordering)]
    attach_constraints(strata, checked)
    return replace(checked, strata=strata)


def attach_constraints(strata, checked: Checked) -> None:
    """Each stratum learns its relations' choice-domains and the compiled plans of their
    subsumptions' dominated tuples (enforced by the fixpoint, :mod:`datalog.evaluation.constrained`)."""
    order = row_order(symbol_ranks(checked.program))
    choice = {name: (domains, order) for name, domains in choice_domains(checked.program).items()}
    subsumptions = dominance_clauses(checked.program, checked.schema)
    schema = checked.schema
    if subsumptions:                    # their bodies pass the checks of any rule body
        rules = tuple(c.rule for clauses in subsumptions.values() for c in clauses)
        declared = {d.relation for d in checked.program.declarations}
        earlier = {n: info for n, info in checked.schema.items() if info.declared and n not in declared}
        schema = check(ast.Program(checked.program.statements + rules), known=earlier).schema
    dominance = {name: [compile_plan(plan_clause(c, schema)) for c in clauses]
                 for name, clauses in subsumptions.items()}
    for stratum in strata:
        stratum.choice = {n: choice[n] for n in stratum.relations if n in choice}
        stratum.dominance = {n: dominance[n] for n in stratum.relations if n in dominance}


def plan(checked: Checked) -> dict[int, RulePlan]:
    """Every rule's plan, by clause index, with its backend."""
    return plan_program(checked.clauses, checked.strata, checked.schema)


def compiled(plans: dict[int, RulePlan]) -> dict[int, CompiledPlan]:
    return {index: compile_plan(p) for index, p in plans.items()}


def relations(checked: Checked) -> dict[str, Relation]:
    """An empty relation for every relation of the schema."""
    return {name: Relation(name, info.arity) for name, info in checked.schema.items()}


def fill(db: dict, loaded: Loaded) -> None:
    """Add loaded rows to their relations; a fact file's numbers read as words
    (:class:`datalog.sources.numberfile.NumberRows`) into an empty relation stay words."""
    for name, rows in loaded:
        relation = db[name]
        if isinstance(rows, NumberRows) and relation.can_hold() and not relation.tuples:
            from datalog.evaluation.words import hold_numbers    # numpy: loaded already
            hold_numbers(relation, rows.words)
        else:
            relation.insert(rows)
