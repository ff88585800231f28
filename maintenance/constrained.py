"""Maintenance of a stratum with choice-domain or subsumption (issue 18): recomputed, not
maintained. Which row of a choice-domain key stays depends on the order rows arrived in, and a
subsumed row comes back when the row that dominated it goes: no delta rule says either, so on a
change of anything the stratum reads, its relations are evaluated again from their facts (and,
for one without rules, its current rows) and the difference is the stratum's delta.
"""

from __future__ import annotations

from datalog.evaluation import fixpoint
from lftj.relation import Relation
from maintenance.delta import Change, diff
from datalog.language.strata import dependencies

STRATEGY = "recompute stratum (choice-domain / subsumption)"


def reads(stratum) -> set[str]:
    """Every relation the stratum's rules read, and its own."""
    out = set(stratum.relations)
    for clause in stratum.clauses:
        out |= {rel for rel, _, _ in dependencies(clause)}
    return out


def recompute(program, db, stratum) -> dict:
    """The stratum's relations evaluated again over ``db``: relation -> its Change (only those
    that changed); ``db`` itself is not touched."""
    idb = program.idb
    scratch = dict(db)
    for name in stratum.relations:
        rows = program.facts_of({name}).get(name, []) if name in idb else list(db[name])
        scratch[name] = Relation(name, db[name].arity, rows)
    fixpoint.evaluate([stratum], program.plans, scratch, program.intersect)
    changes = {name: diff(set(db[name].tuples), set(scratch[name].tuples)) for name in stratum.relations}
    return {name: change for name, change in changes.items() if change}


def net(first: Change, then: Change) -> Change:
    """Two changes of one relation, one after the other, as one."""
    inserted = (first.inserted - then.retracted) | (then.inserted - first.retracted)
    retracted = (first.retracted - then.inserted) | (then.retracted - first.inserted)
    return Change(inserted, retracted)
