"""Evaluation from scratch: every stratum in order, semi-naive inside a recursive one.

>>> from datalog.engine import Engine
>>> e = Engine.from_source('e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).')
>>> e.run(); e.rows("p")
[(1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

import os
from typing import Callable

from datalog.evaluation.expressions import reset_autoinc
from datalog.evaluation.constrained import inserter
from datalog.planning.planner import counts
from datalog.evaluation.evaluate import Derivation, derive
from datalog.evaluation.seminaive import Variable, rounds
from datalog.evaluation import worklist
from datalog.evaluation.symbols import SymbolTable
from datalog.planning.plan import Lookup
from datalog.language.display import plural

Progress = Callable[[str], None]


def evaluate(strata, plans: dict, db, intersect: str = "hash", progress: Progress | None = None,
             only: set[str] | None = None, tuple_at_a_time: bool = True, schema: dict | None = None) -> None:
    """Every stratum in order, or only those holding a relation of ``only``; ``plans`` are the
    compiled plans by clause index, ``db`` the relations (the IDB ones receive what is derived).
    ``tuple_at_a_time``: a stratum of linear rules runs from a worklist (:mod:`worklist`).
    Given the ``schema`` (the column types), a stratum the kernel can evaluate runs on it
    (:mod:`datalog.evaluation.columnar`) unless ``DATALOG_COLUMNAR=0`` (:func:`columnar_on`)."""
    from datalog.evaluation.kernel_plan import kernel_rules    # (5 ms of imports: not for `datalog --help`)
    if only is None:
        reset_autoinc()                           # a run from scratch counts autoinc() from 0
    symbols = SymbolTable()                       # the words of symbols on the kernel, for every stratum
    for number, stratum in enumerate(strata):
        clauses = [c for c in stratum.clauses if c.body]
        if (not clauses and not stratum.constrained) or (only is not None and only.isdisjoint(stratum.relations)):
            continue
        if progress:
            progress(f"stratum {number + 1}/{len(strata)}: {', '.join(stratum.relations)}")
        rules = kernel_rules(stratum, [plans[c.index] for c in clauses], schema, symbols)
        if rules is not None and columnar_on(read_rows(rules, db)) and \
                all(db[n].stored for r in rules for n in (r.head, *r.relations())):
            from datalog.evaluation import columnar       # numpy and the kernel: only when used
            if columnar.evaluate_stratum(stratum, rules, db, schema, progress, symbols):
                continue                          # (else its rounds grew thin: the tuple path goes on)
        if stratum.recursive or stratum.constrained:
            fixpoint(stratum, [plans[c.index] for c in clauses], db, intersect, progress, tuple_at_a_time)
        else:
            for clause in clauses:
                derived = derive(plans[clause.index], db, intersect=intersect)
                if counts(clause):                # autoinc(): its numbers, for its maintenance
                    plans[clause.index].counted = derived
                db[clause.head.relation].insert(derived)


SMALL = 1000                # rows read below which a stratum stays on the tuple path by default


def columnar_on(rows: int) -> bool:
    """Whether an eligible stratum reading ``rows`` rows runs on the kernel: ``DATALOG_COLUMNAR=0``
    no, ``=1`` yes (even on the kernel's uncompiled twin, ``DATALOG_KERNEL=python``); unset, when
    the kernel is compiled and the stratum reads at least :data:`SMALL` rows (importing numpy and
    the kernel costs a 10-fact program 0.2 s, more than its whole evaluation). Recursive strata
    too: their rounds cost what is new in them, not the whole relation (:mod:`lftj.runs`), and
    transitive closure, same generation, a points-to analysis and a chain of 1,000 edges all
    ran in less CPU there than on the tuple path."""
    choice = os.environ.get("DATALOG_COLUMNAR", "")
    if choice in ("0", "1"):
        return choice == "1"
    if rows < SMALL:
        return False
    try:
        from lftj import kernels                  # (imports numpy: only once a stratum is eligible)
    except ImportError:                           # not built: no C compiler at install
        return False
    return kernels.which() == "compiled"


def read_rows(rules, db) -> int:
    """How many rows the rules' atoms read (each relation once)."""
    return sum(len(db[n]) for n in {name for r in rules for name in r.relations()})


def fixpoint(stratum, plans: list, db, intersect: str = "hash", progress: Progress | None = None,
             tuple_at_a_time: bool = True) -> None:
    """Semi-naive: each round joins one ``recent`` atom with the full relations; or, when every
    rule is linear in the stratum (and ``tuple_at_a_time``), each tuple from a worklist
    (:func:`worklist.saturate`, the same fixpoint).

    An atom with no variable to open (``r(_)``, ``r(1, _)``) is a Lookup, not a join
    participant; when its relation grew, its rule is derived again in full."""
    members = set(stratum.relations)
    recursive = {p.index: [a for a, atom in enumerate(p.atoms) if atom.relation in members] for p in plans}
    lookups = {p.index: {f.filter.relation for f in p.filters if isinstance(f.filter, Lookup)
                         and not f.filter.negated and f.filter.relation in members} for p in plans}
    # choice-domain and subsumption: every insert of this stratum goes through their check
    insert = {n: inserter(stratum, n, db, intersect) for n in members}
    for add in insert.values():                 # the facts already in: dominated ones go
        add(())
    for plan in plans:                          # base rules: no atom of this stratum
        if not recursive[plan.index] and not lookups[plan.index]:
            insert[plan.clause.head.relation](derive(plan, db, intersect=intersect))
    linear = worklist.linear(stratum, plans) if tuple_at_a_time else None
    if linear is not None:
        worklist.saturate(linear, members, db, intersect, progress)
        return
    variables = {n: Variable(n, db[n].arity, insert[n], recent=db[n].tuples) for n in members}
    # each rule's join plan made once for all rounds, not once a round
    derivations = {p.index: Derivation(p, db, intersect) for p in plans if recursive[p.index] or lookups[p.index]}

    def report(number: int) -> None:
        if progress:
            progress(f"  iteration {number}: {plural(sum(len(db[n]) for n in members), 'tuple')}")
    steps = [(derivations[p.index], variables[p.clause.head.relation], [variables[r] for r in lookups[p.index]],
              [(a, variables[p.atoms[a].relation]) for a in recursive[p.index]])
             for p in plans if p.index in derivations]
    for _ in rounds(list(variables.values()), report):
        if stratum.limits and any(len(db[name]) >= n for name, n in stratum.limits.items()):
            break                               # .limitsize: Soufflé's loop exits at the limit
        for derived, head, grown, reads in steps:
            if grown and any(v.recent for v in grown):
                # q(x) :- e(x), p(_).   p grew: the whole rule again
                head.to_add.update(derived())
                continue
            for a, variable in reads:
                if variable.recent:
                    # path(x, z) :- path(x, y), edge(y, z).   path read from its recent tuples
                    head.to_add.update(derived({a: variable.recent}))
