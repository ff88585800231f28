"""build_gjt: Algorithm 3, then culprit removal, the sibling-closed transform and binarization.

>>> from datalog.planning.gjt.query import parse_gcq
>>> print(build_gjt(parse_gcq("r(x, y), s(y, z, w), t(u, v) | x < z, w < u", out="y z w u")).describe())
* {}
  * {w}
    * {u}  pred({w}->{u}) = {w < u}
        t(u, v)
    * {w,y,z}
        r(x, y)  pred({w,y,z}->r(x, y)) = {x < z}
        s(y, z, w)
"""

from __future__ import annotations

from .gyo import Cyclic, algorithm3
from .query import GCQ
from .transform import binarize, compress, make_sibling_closed
from .tree import GJT

REWRITES = (compress, make_sibling_closed, binarize)


def build_gjt(query: GCQ, by_definition: bool = False) -> GJT | Cyclic:
    """A binary, sibling-closed GJT pair (T, N) for ``query`` with var(N) minimal, or Cyclic
    (``by_definition``: Algorithm 3's steps found by the slow twin, for the tests)."""
    result = algorithm3(query, by_definition)
    if isinstance(result, Cyclic):
        return result
    for rewrite in REWRITES:
        result = rewrite(result)
    return result
