"""T-reducts: the theta-join backend's maintained state (Idris, Ugarte, Vansummeren, Voigt,
Kaminski - "General dynamic Yannakakis: conjunctive queries with theta joins under updates").

A T-reduct is kept over a generalized join tree built by planning
(:mod:`datalog.planning.gjt`: the GCQ, GYO reduction, the GJT and its rewrites). The pieces:

==================  =====================================================================
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

    view = maintain(query)            # TReduct if free-connex, else ProjectedView (§7)
    view.update(relation, row, +1)    # or update_batch([(relation, row, mult), ...])
    view.enumerate_delta()            # ΔQ of that update: (tuple, signed multiplicity)
    view.enumerate()                  # Q(db): (tuple over view.output_vars, multiplicity)
    view.enumerate_bulk()             # the same, faster, in blocks (no constant delay)
"""

from .approx import ProjectedView, maintain
from .reduct import TReduct

__all__ = ["ProjectedView", "TReduct", "maintain"]
