"""Running a RulePlan: bind it to relations, then leapfrog triejoin.

``run_plan`` turns the plan's atoms into trie roots (each positioned below its
constant levels) and its placed literals into checks, and hands both to
:func:`lftj.triejoin.triejoin`. ``sources`` lets semi-naive evaluation read
one atom from the ``recent`` tuples and the rest from the full relations.
"""

from __future__ import annotations

from lftj.leapfrog import leapfrog_intersect, hash_intersect, hash_intersect_unordered
from lftj.triejoin import JoinPlan, product_tail, triejoin

from datalog.planning.plan import RulePlan, bulk_emitter, product_emitter

INTERSECT = {"probe": hash_intersect, "leapfrog": leapfrog_intersect}
BULK_INTERSECT = {"probe": hash_intersect_unordered, "leapfrog": None}


def join_plan(plan: RulePlan, db, add_many=None) -> JoinPlan:
    depth = plan.depth
    participants = [[] for _ in range(depth)]
    repeats = [[] for _ in range(depth)]
    for a, atom in enumerate(plan.atoms):
        previous = None
        for d in atom.depths:
            (repeats if d == previous else participants)[d].append(a)
            previous = d
    checks = [[] for _ in range(depth + 1)]
    for placed in plan.placed:
        checks[placed.depth + 1].append(placed.make(db))
    joined = JoinPlan(depth, participants, repeats, checks, plan.needed, len(plan.slots))
    if add_many is not None:                       # the head collects into a set: emit in bulk
        joined.emit_last = bulk_emitter(plan, add_many)
        tail = product_tail(joined)
        if tail is not None:
            joined.emit_product = product_emitter(plan, add_many, tail)
    return joined


def run_plan(plan: RulePlan, db, emit, binding=None, sources=None, intersect="probe",
             add_many=None) -> None:
    """Call ``emit(binding)`` for each satisfying binding of the plan's body.

    ``db`` maps relation names to Relations; ``sources`` optionally maps an
    atom position to the Relation to read instead (semi-naive ``recent``)."""
    binding = binding if binding is not None else [None] * len(plan.slots)
    roots = []
    for a, atom in enumerate(plan.atoms):
        relation = sources.get(a, db[atom.relation]) if sources else db[atom.relation]
        node = relation.index(atom.order)
        for value in atom.prefix:
            if node is None:
                break
            node = node.children.get(value(binding))
        roots.append(node)
    triejoin(join_plan(plan, db, add_many), roots, emit, INTERSECT[intersect], binding,
             BULK_INTERSECT[intersect])
