"""Generalized join trees: the theta-join backend's plan (Idris, Ugarte, Vansummeren, Voigt,
Kaminski - "General dynamic Yannakakis: conjunctive queries with theta joins under updates").

The package knows nothing of the rest of ``datalog/``: it works on its own small GCQ
(:mod:`.query`: atoms = relation + variable names, predicates ``left op right + offset``,
out = the free variables). Planning builds a GJT for a rule routed to the theta-join backend
(:mod:`datalog.planning.backend`); :mod:`maintenance.gjt` keeps the T-reduct over it.

==================  =====================================================================
``query.py``        GCQ, Atom, Predicate (§2); ``parse_gcq`` for tests and examples
``gyo.py``          GYO reduction for GCQs: ISO, CSE, FLT on GJF triplets, two stages,
                    Algorithm 3 -> a sibling-closed GJT pair (T, N), or ``Cyclic(reason)``;
                    ``classify`` decides acyclic / free-connex (Theorem 3) (§6.2); its
                    ``reduce`` finds each step by the definitions (the slow twin)
``ears.py``         the same steps in the same order, found from indexes and per-hyperedge
                    ear statuses: near-linear in the body (issue 23)
``tree.py``         Node, GJT pair, ``describe()``, ``violations()`` (Definitions 1-5)
``transform.py``    culprit removal, sibling-closed transform, binarization (§3, Prop. 1-3)
``build.py``        ``build_gjt(query)``: Algorithm 3 followed by the rewrites
==================  =====================================================================

    gjt = build_gjt(query)            # GJT, or Cyclic (falsy) with .reason
"""

from .build import build_gjt
from .gyo import Classification, Cyclic, classify
from .query import GCQ, Atom, Predicate, parse_gcq
from .tree import GJT, Node

__all__ = ["GCQ", "GJT", "Atom", "Classification", "Cyclic", "Node", "Predicate", "build_gjt", "classify",
           "parse_gcq"]
