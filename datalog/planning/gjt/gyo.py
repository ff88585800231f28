"""GYO reduction for GCQs and Algorithm 3 (Idris et al., §6.2, Theorems 3-4).

A *GJF triplet* is (forest, out, pred): the hypergraph it induces has one
hyperedge per non-empty root label.  Three reduction operations rewrite it, and
each is *enacted* on the forest by adding nodes:

* ISO(e, X)  remove isolated variables X ⊆ isol(e):   roots labelled e -> n(e) -> p(e∖X)
* CSE(e ⊑ ℓ) conditional subset elimination:          p(ℓ) with children n(e) [pred θ touching e∖ℓ] and m(ℓ)
* FLT(e, Θ)  filter elimination, var(Θ) ⊆ e:          n(e) over the e-roots, Θ on one edge

Stage 1 reduces with out(Q); its roots X become the connex subset's frontier.
Stage 2 reduces the residual (out = ∅).  The query is acyclic iff stage 2 ends
with the empty triplet, free-connex iff moreover var(hyp(I)) = out(Q) (Theorem 3).

>>> from datalog.planning.gjt.query import parse_gcq
>>> classify(parse_gcq("r(x, y), s(y, z, w), t(u, v) | x < z, w < u", out="x u"))
Classification(acyclic=True, free_connex=False, connex_vars=('u', 'w', 'x', 'y', 'z'), reason='')
>>> print(classify(parse_gcq("r(x, y), s(y, z), t(x, z)")).reason)
cyclic: no ear among r(x, y) | s(y, z) | t(x, z)
"""

from __future__ import annotations

from dataclasses import dataclass

from .ears import IndexedTriplet
from .query import GCQ, Predicate
from .tree import GJT, Node


@dataclass(frozen=True)
class Cyclic:
    """build_gjt's answer for a cyclic GCQ; ``reason`` names the atoms and predicates left."""

    reason: str

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True)
class Classification:
    acyclic: bool
    free_connex: bool
    connex_vars: tuple[str, ...]   # var(hyp(I)): the minimal free-connex extension of out(Q)
    reason: str


@dataclass
class ForestTriplet:
    """The GJF triplet 𝔽 = (forest, out, pred) of Algorithm 3."""

    roots: list[Node]
    out: frozenset[str]
    preds: list[Predicate]

    def hyp(self) -> list[frozenset[str]]:
        """hyp(F): the distinct non-empty root labels (in a deterministic order)."""
        return sorted({r.varset for r in self.roots if r.vars}, key=sorted)

    def jev(self) -> set[str]:
        """Equijoin variables: in out or in at least two hyperedges."""
        seen, twice = set(), set()
        for e in self.hyp():
            twice |= seen & e
            seen |= e
        return twice | set(self.out)

    def isol(self, e: frozenset[str]) -> set[str]:
        in_preds = {v for p in self.preds for v in p.variables()}
        return set(e) - self.jev() - in_preds

    def ext(self, e) -> set[str]:
        """ext(e): the other variables of the predicates that touch e."""
        return {v for p in self.preds if p.variables() & e for v in p.variables()} - set(e)

    def conditional_subset(self, e: frozenset[str], l: frozenset[str]) -> bool:
        """e ⊑ ℓ  iff  jev(e) ⊆ ℓ  and  ext(e ∖ ℓ) ⊆ ℓ."""
        return (self.jev() & e) <= l and self.ext(e - l) <= l

    def is_empty(self) -> bool:
        return not self.hyp() and not self.preds

    def reduce(self) -> ForestTriplet:
        return reduce(self)

    def clear_out(self) -> None:
        self.out = frozenset()


# -- the three reduction operations: find one, then enact it on the forest --------

def find_flt(f: ForestTriplet):
    for e in f.hyp():
        theta = [p for p in f.preds if p.variables() <= e]
        if theta:
            return enact_flt, e, theta
    return None


def find_iso(f: ForestTriplet):
    for e in f.hyp():
        if isolated := f.isol(e):
            return enact_iso, e, isolated
    return None


def find_cse(f: ForestTriplet):
    for e in f.hyp():
        for l in f.hyp():
            if e != l and f.conditional_subset(e, l):
                return enact_cse, e, l
    return None


REDUCTIONS = (find_flt, find_iso, find_cse)


def _merge(f: ForestTriplet, e: frozenset[str]) -> Node:
    """Take the roots labelled e out of the forest, joined under one node n(e)."""
    group = [r for r in f.roots if r.varset == e]
    f.roots = [r for r in f.roots if r.varset != e]
    return group[0] if len(group) == 1 else Node.interior(e, group)


def enact_iso(f: ForestTriplet, e, isolated) -> None:
    n = _merge(f, e)
    f.roots.append(Node.interior(e - isolated, [n]))


def enact_cse(f: ForestTriplet, e, l) -> None:
    gone = e - l
    theta = tuple(p for p in f.preds if p.variables() & gone)
    n, m = _merge(f, e), _merge(f, l)
    f.roots.append(Node.interior(l, [n, m], preds=[theta, ()]))
    f.preds = [p for p in f.preds if p not in theta]


def enact_flt(f: ForestTriplet, e, theta) -> None:
    group = [r for r in f.roots if r.varset == e]
    f.roots = [r for r in f.roots if r.varset != e]
    f.roots.append(Node.interior(e, group, preds=[tuple(theta)] + [()] * (len(group) - 1)))
    f.preds = [p for p in f.preds if p not in theta]


def reduce(f: ForestTriplet) -> ForestTriplet:
    """Enact reduction steps until 𝔽 is in normal form (lines 3-4 and 7-8 of Algorithm 3)."""
    while step := next(filter(None, (find(f) for find in REDUCTIONS)), None):
        enact, *args = step
        enact(f, *args)
    return f


def algorithm3(query: GCQ, by_definition: bool = False) -> GJT | Cyclic:
    """Algorithm 3: a sibling-closed GJT pair (T, N) for ``query``, or Cyclic. The steps are
    found by the indexed triplet (:mod:`.ears`), or ``by_definition`` (:func:`reduce`: the slow
    twin, same steps in the same order)."""
    f = _triplet(query, by_definition)
    f.reduce()                                                   # stage 1, with out(Q)
    frontier = [r.id for r in f.roots]                           # X
    f.clear_out()
    f.reduce()                                                   # stage 2, the residual
    if not f.is_empty():
        return Cyclic(_cycle_reason(f))
    root = Node.interior((), f.roots)
    return GJT(root, _with_ancestors(root, set(frontier)), query)


def _triplet(query: GCQ, by_definition: bool) -> ForestTriplet | IndexedTriplet:
    kind = ForestTriplet if by_definition else IndexedTriplet
    return kind([Node.leaf(a) for a in query.atoms], query.out, list(query.predicates))


def _with_ancestors(root: Node, ids: set[int]) -> set[int]:
    """N ← X ∪ {all ancestors in T of nodes in X}."""
    connex = set(ids)
    for n in root.walk():
        if n.id in ids:
            while n.parent is not None and n.parent.id not in connex:   # the rest is in already
                n = n.parent
                connex.add(n.id)
    return connex


def _cycle_reason(f: ForestTriplet) -> str:
    stuck = [r for r in f.roots if r.vars]
    atoms = " | ".join(", ".join(str(n.atom) for n in r.walk() if n.atom) for r in stuck)
    text = f"cyclic: no ear among {atoms}"
    if f.preds:
        text += " with predicates " + ", ".join(map(str, f.preds))
    return text


def classify(query: GCQ, by_definition: bool = False) -> Classification:
    """Theorem 3 on the hypergraph triplet H(Q), without building a tree."""
    f = _triplet(query, by_definition).reduce()
    connex_vars = tuple(sorted({v for r in f.roots for v in r.vars}))
    f.clear_out()
    f.reduce()
    if not f.is_empty():
        return Classification(False, False, connex_vars, _cycle_reason(f))
    return Classification(True, set(connex_vars) == set(query.out), connex_vars, "")
