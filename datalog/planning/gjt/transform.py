"""Equivalence-preserving rewrites of GJT pairs (Idris et al., §3 Prop. 1-3, App. C.2 Prop. 9).

* :func:`compress` - culprit removal (proof of Prop. 9): splice out an interior
  child labelled like its parent with no predicate on the edge, when N stays sibling-closed.
* :func:`make_sibling_closed` - the sibling-closed transform (Lemmas 2-3, violators of type 1 and 2).
* :func:`binarize` - Fig. 5: a node with k > 2 children becomes a left-deep chain of k-2 copies.

Each keeps at(T), pred(T) and var(N) (an *equivalent* pair).
"""

from __future__ import annotations

from .tree import GJT, Node


def compress(gjt: GJT) -> GJT:
    """Remove culprits: interior c with var(c) = var(parent) and pred(parent -> c) = ∅."""
    changed = True
    while changed:
        changed = False
        for n in gjt.nodes():
            for c in list(n.children):
                if c.atom is None and c.varset == n.varset and not c.pred_in and _splice_keeps_closed(gjt, n, c):
                    _splice(gjt, n, c)
                    changed = True
        while gjt.root.atom is None and len(gjt.root.children) == 1 \
                and gjt.root.children[0].varset == gjt.root.varset and gjt.root.children[0].atom is None:
            child = gjt.root.children[0]                      # a unary root labelled like its child
            if gjt.root.id in gjt.connex:
                gjt.connex.add(child.id)
            gjt.connex.discard(gjt.root.id)
            child.parent, child.pred_in, gjt.root = None, (), child
    return gjt


def _splice_keeps_closed(gjt: GJT, n: Node, c: Node) -> bool:
    if c.id not in gjt.connex:
        return True
    grandchildren_in = [g.id in gjt.connex for g in c.children]
    return all(grandchildren_in) or (len(n.children) == 1 and not any(grandchildren_in))


def _splice(gjt: GJT, n: Node, c: Node) -> None:
    position = n.children.index(c)
    for g in c.children:
        g.parent = n
    n.children[position:position + 1] = c.children
    gjt.connex.discard(c.id)


def make_sibling_closed(gjt: GJT) -> GJT:
    """Remove violators (n ∈ N with some but not all children in N) one at a time (Prop. 2)."""
    while (n := _violator(gjt)) is not None:
        guards_in_n = [c for c in n.children if c.id in gjt.connex and n.is_guarded_by(c)]
        if guards_in_n:
            _remove_type1(gjt, n, guards_in_n[0])
        else:
            _remove_type2(gjt, n)
    return gjt


def _violator(gjt: GJT) -> Node | None:
    for n in gjt.nodes():
        inside = [c.id in gjt.connex for c in n.children]
        if n.id in gjt.connex and any(inside) and not all(inside):
            return n
    return None


def _remove_type1(gjt: GJT, n: Node, g: Node) -> None:
    """Type 1 (Lemma 2): move ch(n)∖N under a new copy p of a leaf guard l below g."""
    outside = [c for c in n.children if c.id not in gjt.connex]
    leaf = g
    while leaf.children:
        leaf = leaf.guard_child()
    p = Node.interior(leaf.varset)
    _replace(leaf, p)
    p.attach(leaf)
    for c in outside:
        n.detach(c)
        p.attach(c, c.pred_in)
    if leaf.id in gjt.connex:
        gjt.connex.discard(leaf.id)
        gjt.connex.add(p.id)


def _remove_type2(gjt: GJT, n: Node) -> None:
    """Type 2 (Lemma 3): a new child p of n, labelled var(n), adopts ch(n)∖N; N' = N ∪ {p}."""
    p = Node.interior(n.varset)
    for c in [c for c in n.children if c.id not in gjt.connex]:
        n.detach(c)
        p.attach(c, c.pred_in)
    n.attach(p)
    gjt.connex.add(p.id)


def _replace(old: Node, new: Node) -> None:
    """Put ``new`` where ``old`` hangs (same parent, same edge label); ``old`` is left detached."""
    parent = old.parent
    parent.children[parent.children.index(old)] = new
    new.parent, new.pred_in = parent, old.pred_in
    old.parent, old.pred_in = None, ()


def binarize(gjt: GJT) -> GJT:
    """Fig. 5: c1 (a guard) under m1, m1 under m2, ..., m_{k-2} under n; edge labels kept."""
    for n in gjt.nodes():
        if len(n.children) <= 2:
            continue
        guard = n.guard_child()
        rest = [c for c in n.children if c is not guard]
        add_to_connex = any(c.id in gjt.connex for c in n.children)
        n.children = []
        below = guard
        for c in rest[:-1]:
            m = Node.interior(n.varset)
            m.attach(below, below.pred_in)
            m.attach(c, c.pred_in)
            if add_to_connex:
                gjt.connex.add(m.id)
            below = m
        n.attach(below, below.pred_in)
        n.attach(rest[-1], rest[-1].pred_in)
    return gjt
