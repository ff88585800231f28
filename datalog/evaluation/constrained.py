"""Inserting into a relation with choice-domain or subsumption (issue 18): the semantics of
:mod:`datalog.language.semantics.constraints`, enforced on every insert of a stratum's fixpoint.

``inserter(stratum, name, db)`` is the ``insert`` of that relation's semi-naive Variable: it
keeps the first row of each choice-domain key (smallest first within one insert) and, after the
rows are in, removes every dominated row (a subsumption), returning the new rows that stay --
the round's ``recent``. A dominated row never fires a rule after its round.
"""

from __future__ import annotations

from datalog.evaluation.evaluate import derive
from datalog.language.semantics.constraints import choose, dominated_rows


def inserter(stratum, name: str, db, intersect: str = "hash"):
    """The constrained insert of relation ``name`` (the plain ``db[name].insert`` when unconstrained)."""
    relation = db[name]
    domains, order = stratum.choice.get(name, ((), None))
    dominance = stratum.dominance.get(name, ())
    if not domains and not dominance:
        return relation.insert
    taken = [set() for _ in domains]
    if domains:                       # facts and inputs first: they too keep one row per key
        kept = choose(list(relation), domains, taken, order)
        relation.erase(set(relation) - set(kept))

    def insert(rows) -> list:
        if domains:
            rows = choose([r for r in rows if r not in relation], domains, taken, order)
        new = relation.insert(rows)
        if dominance:
            removed = dominated(dominance, db, relation.arity, intersect)
            if removed:
                relation.erase(removed)
                new = [row for row in new if row not in removed]
        return new
    return insert


def dominated(plans, db, arity: int, intersect: str = "hash") -> set:
    """The rows some subsumption rule says another row of the relation dominates."""
    out: set = set()
    for plan in plans:
        out |= dominated_rows(derive(plan, db, intersect=intersect), arity)
    return out

