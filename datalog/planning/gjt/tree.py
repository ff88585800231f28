"""GJT and GJT pair (Idris et al., §3, Definitions 1-5).

A node is a leaf labelled by an atom or an interior node labelled by a hyperedge.
The edge ``parent -> n`` carries ``n.pred_in`` = pred(parent -> n).  A GJT pair
``(T, N)`` adds the connex subset ``N`` (ids of nodes).

Invariants (checked by :func:`violations`): leaves are exactly the atoms; every
interior node has a guard child (var(n) ⊆ var(c)); the connectedness condition;
var(θ) ⊆ var(p) ∪ var(c) for θ on p -> c; N contains the root and is connex.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .query import Atom, Predicate

_ids = itertools.count()


@dataclass(eq=False)
class Node:
    """A GJT node: ``vars`` is the tuple order of the tuples stored at the node (rho[n])."""

    vars: tuple[str, ...]
    atom: Atom | None = None
    children: list[Node] = field(default_factory=list)
    pred_in: tuple[Predicate, ...] = ()
    parent: Node | None = None
    id: int = field(default_factory=lambda: next(_ids))

    @staticmethod
    def leaf(atom: Atom) -> Node:
        return Node(tuple(dict.fromkeys(atom.vars)), atom)

    @staticmethod
    def interior(varset, children=(), preds=None) -> Node:
        node = Node(tuple(sorted(varset)))
        for i, child in enumerate(children):
            node.attach(child, preds[i] if preds else ())
        return node

    @property
    def varset(self) -> frozenset[str]:
        return frozenset(self.vars)

    def attach(self, child: Node, preds=()) -> None:
        child.parent, child.pred_in = self, tuple(preds)
        self.children.append(child)

    def detach(self, child: Node) -> None:
        self.children.remove(child)
        child.parent = None

    def is_guarded_by(self, other: Node) -> bool:
        return self.varset <= other.varset

    def guard_child(self) -> Node:
        return next(c for c in self.children if self.is_guarded_by(c))

    def sibling(self) -> Node | None:
        if self.parent is None:
            return None
        others = [c for c in self.parent.children if c is not self]
        return others[0] if len(others) == 1 else None

    def pred(self) -> tuple[Predicate, ...]:
        """pred(n): the predicates on n's outgoing edges."""
        return tuple(p for c in self.children for p in c.pred_in)

    def label(self) -> str:
        return str(self.atom) if self.atom else "{" + ",".join(self.vars) + "}"

    def walk(self):
        """Pre-order (with a stack: the tree of a long chain is as deep as the chain is long)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def bottom_up(self):
        """Post-order: children before parents (Algorithm 2's traversal); the reverse of
        visiting each node before its children taken last to first."""
        order, stack = [], [self]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        return reversed(order)


@dataclass(eq=False)
class GJT:
    """A GJT pair (T, N) for ``query``: ``root`` and the connex subset ``connex`` (node ids)."""

    root: Node
    connex: set[int]
    query: object = None

    def nodes(self) -> list[Node]:
        return list(self.root.walk())

    def leaves(self) -> list[Node]:
        return [n for n in self.root.walk() if n.atom is not None]

    def in_connex(self, node: Node) -> bool:
        return node.id in self.connex

    def frontier(self) -> list[Node]:
        """F(N): nodes of N with no child in N."""
        return [n for n in self.root.walk()
                if n.id in self.connex and not any(c.id in self.connex for c in n.children)]

    def connex_vars(self) -> frozenset[str]:
        return frozenset(v for n in self.root.walk() if n.id in self.connex for v in n.vars)

    def depth(self) -> int:
        """The number of nodes on the longest root-to-leaf path."""
        deepest, stack = 0, [(self.root, 1)]
        while stack:
            node, depth = stack.pop()
            deepest = max(deepest, depth)
            stack.extend((c, depth + 1) for c in node.children)
        return deepest

    def is_binary(self) -> bool:
        return all(len(n.children) <= 2 for n in self.root.walk())

    def is_sibling_closed(self) -> bool:
        return all(all(c.id in self.connex for c in n.children)
                   for n in self.root.walk()
                   if any(c.id in self.connex for c in n.children))

    def describe(self) -> str:
        """The tree, one node per line; ``*`` marks N; each edge shows ``pred(n->c)``."""
        lines, stack = [], [(self.root, 0)]
        while stack:                                  # pre-order with a stack (deep trees)
            node, depth = stack.pop()
            edge = f"  pred({node.parent.label()}->{node.label()}) = " \
                   f"{{{', '.join(map(str, node.pred_in))}}}" if node.pred_in else ""
            mark = "*" if node.id in self.connex else " "
            lines.append(f"{'  ' * depth}{mark} {node.label()}{edge}")
            stack.extend((c, depth + 1) for c in reversed(node.children))
        return "\n".join(lines)


def violations(gjt: GJT) -> list[str]:
    """Every way ``gjt`` fails Definitions 1-3 (an empty list for a valid GJT pair)."""
    found = []
    nodes = gjt.nodes()
    for n in nodes:
        if n.atom is None and not n.children:
            found.append(f"leaf {n.label()} is not an atom")
        if n.atom is not None and n.children:
            found.append(f"atom {n.label()} is not a leaf")
        if n.children and not any(n.is_guarded_by(c) for c in n.children):
            found.append(f"{n.label()} has no guard child")
        for c in n.children:
            if c.parent is not n:
                found.append(f"{c.label()} has a wrong parent link")
            for p in c.pred_in:
                if not p.variables() <= n.varset | c.varset:
                    found.append(f"{p} on {n.label()}->{c.label()} mentions other variables")
    found += _disconnected_variables(gjt.root)
    if gjt.root.id not in gjt.connex:
        found.append("N does not contain the root")
    for n in nodes:
        if n.id in gjt.connex and n.parent is not None and n.parent.id not in gjt.connex:
            found.append(f"N is not connex at {n.label()}")
    return found


def _disconnected_variables(root: Node) -> list[str]:
    """Connectedness: the nodes holding x form a connected subtree (one topmost node)."""
    tops: dict[str, int] = {}
    for n in root.walk():
        for v in n.vars:
            if n.parent is None or v not in n.parent.varset:
                tops[v] = tops.get(v, 0) + 1
    return [f"variable {v} occurs in {k} disconnected parts" for v, k in tops.items() if k > 1]


def atoms_and_predicates(gjt: GJT) -> tuple[list[Atom], list[Predicate]]:
    """at(T) with multiplicity and pred(T) with multiplicity (each θ once per edge)."""
    nodes = gjt.nodes()
    return [n.atom for n in nodes if n.atom], [p for n in nodes for p in n.pred_in]
