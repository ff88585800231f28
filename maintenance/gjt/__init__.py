"""Theta-join backend: generalized join trees and T-reducts (Idris, Ugarte, Vansummeren, Voigt,
Kaminski - "General dynamic Yannakakis: conjunctive queries with theta joins under updates").

The package knows nothing of ``datalog/``: it works on its own small GCQ
(:mod:`.query`: atoms = relation + variable names, predicates ``left op right + offset``,
out = the free variables).  The pieces, in pipeline order:

==================  =====================================================================
``query.py``        GCQ, Atom, Predicate (§2); ``parse_gcq`` for tests and examples
``gyo.py``          GYO reduction for GCQs: ISO, CSE, FLT on GJF triplets, two stages,
                    Algorithm 3 -> a sibling-closed GJT pair (T, N), or ``Cyclic(reason)``;
                    ``classify`` decides acyclic / free-connex (Theorem 3) (§6.2)
``tree.py``         Node, GJT pair, ``describe()``, ``violations()`` (Definitions 1-5)
``transform.py``    culprit removal, sibling-closed transform, binarization (§3, Prop. 1-3)
``build.py``        ``build_gjt(query)``: Algorithm 3 followed by the rewrites
``index.py``        IEDyn indexes: hash on the equality variables, then sorted on the
                    inequality variables (lexicographic, binary search per level) (§5)
``reduct.py``       TReduct: rho[n] per node, P_n / S_n indexes, Algorithm 2 (updates)
``join.py``         Algorithm 2 line 10: index nested loop, and §4's hybrid sort-merge join
``enumerate.py``    Algorithm 1 (full enumeration) and delta enumeration (§7 push mode)
``bulk.py``         Algorithm 1's walk with the output built in blocks by C-level iterators
``approx.py``       free-connex approximation of acyclic non-free-connex queries (§7)
``oracle.py``       the slow twin: brute force over the cross product, for the tests
==================  =====================================================================

Entry points for the engine::

    gjt = build_gjt(query)            # GJT, or Cyclic (falsy) with .reason
    view = maintain(query)            # TReduct if free-connex, else ProjectedView (§7)
    view.update(relation, row, +1)    # or update_batch([(relation, row, mult), ...])
    view.enumerate_delta()            # ΔQ of that update: (tuple, signed multiplicity)
    view.enumerate()                  # Q(db): (tuple over view.output_vars, multiplicity)
    view.enumerate_bulk()             # the same, faster, in blocks (no constant delay)
"""

from .approx import ProjectedView, maintain
from .build import build_gjt
from .gyo import Classification, Cyclic, classify
from .query import GCQ, Atom, Predicate, parse_gcq
from .reduct import TReduct
from .tree import GJT, Node

__all__ = ["GCQ", "GJT", "Atom", "Classification", "Cyclic", "Node", "Predicate", "ProjectedView",
           "TReduct", "build_gjt", "classify", "maintain", "parse_gcq"]
