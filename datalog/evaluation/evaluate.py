"""Running a compiled plan: bind it to relations, then leapfrog triejoin.

``run_plan`` turns the plan's atoms into trie roots (each positioned below its constant
levels) and its filters into checks, and hands both to :func:`lftj.triejoin.triejoin`.
``sources`` lets semi-naive evaluation read one atom from the ``recent`` tuples and the rest
from the full relations; :func:`derive` collects the head tuples of every binding.
"""

from __future__ import annotations

from lftj.leapfrog import hash_intersect, hash_intersect_unordered, leapfrog_intersect
from lftj.triejoin import JoinPlan, product_tail, triejoin

from datalog.evaluation.emitters import bulk_emitter, product_emitter
from datalog.evaluation.scan import scan, scannable

# how each depth's levels are intersected: "hash" (the hash intersection, the default; "probe" is
# its old name) or "leapfrog" (the paper's loop): the same keys in the same order
INTERSECT = {"hash": hash_intersect, "probe": hash_intersect, "leapfrog": leapfrog_intersect}
BULK_INTERSECT = {"hash": hash_intersect_unordered, "probe": hash_intersect_unordered, "leapfrog": None}


def join_plan(plan, db, add_many=None) -> JoinPlan:
    """The triejoin of a compiled plan over the relations ``db``: which atoms join at each
    depth, which repeat a variable, and the checks of the filters placed there."""
    depth = plan.depth
    checks = [[] for _ in range(depth + 1)]
    for f in plan.filters:
        checks[f.depth + 1].append(f.make(db))
    joined = JoinPlan(depth, plan.participants, plan.repeats, checks, plan.needed, len(plan.slots),
                      generators=plan.generators)
    if add_many is not None:                       # the head collects into a set: emit in bulk
        joined.emit_last = bulk_emitter(plan, add_many)
        tail = product_tail(joined)
        if tail is not None:
            joined.emit_product = product_emitter(plan, add_many, tail)
    return joined


def run_plan(plan, db, emit, binding=None, sources=None, intersect="hash", add_many=None) -> None:
    """Call ``emit(binding)`` for each satisfying binding of the plan's body.

    ``db`` maps relation names to Relations; ``sources`` optionally maps an atom position to
    the Relation to read instead (semi-naive ``recent``)."""
    binding = binding if binding is not None else [None] * len(plan.slots)
    triejoin(join_plan(plan, db, add_many), roots(plan, db, binding, sources), emit, INTERSECT[intersect],
             binding, BULK_INTERSECT[intersect])


def roots(plan, db, binding, sources=None) -> list:
    """Each atom's trie (from ``sources`` or ``db``), positioned below its constant levels."""
    out = []
    for a, atom in enumerate(plan.atoms):
        relation = sources.get(a, db[atom.relation]) if sources else db[atom.relation]
        node = relation.index(atom.order)
        for value in atom.prefix:
            if node is None:
                break
            node = node.children.get(value(binding))
        out.append(node)
    return out


def derive(plan, db, sources=None, intersect: str = "hash") -> set:
    """Every head tuple the plan derives over ``db`` (some atoms read from ``sources``); a body
    of one atom by a scan of its rows (:mod:`datalog.evaluation.scan`)."""
    if scannable(plan):
        relation = sources.get(0, db[plan.atoms[0].relation]) if sources else db[plan.atoms[0].relation]
        if relation.stored:
            return scan(plan, relation, db)
    out: set = set()
    add, head = out.add, plan.head
    run_plan(plan, db, lambda b: add(head(b)), sources=sources, intersect=intersect, add_many=out.update)
    return out


class Derivation:
    """A plan bound to ``db`` once and derived many times, as the rounds of a fixpoint derive it:
    its join plan (checks, emitters) is made once, not per round (a round of one tuple spent a
    fifth of its time making it). ``derivation(sources)`` lists the head tuples of one run.
    Sound because a check reads its relations' rows and indexes, which grow in place."""

    def __init__(self, plan, db, intersect: str = "hash"):
        self.plan, self.db, self.size = plan, db, len(plan.slots)
        self.out: list = []
        head, append = plan.head, self.out.append
        self.emit = lambda b: append(head(b))
        self.joined = join_plan(plan, db, self.out.extend)
        self.intersect, self.bulk = INTERSECT[intersect], BULK_INTERSECT[intersect]

    def __call__(self, sources=None) -> list:
        binding = [None] * self.size
        triejoin(self.joined, roots(self.plan, self.db, binding, sources), self.emit, self.intersect, binding,
                 self.bulk)
        out = self.out[:]
        self.out.clear()
        return out
