"""The incremental maintainer's state as data records, and back (workspace format, see
``datalog/workspace.md``): support counts, and per non-recursive rule what maintains it --

  * an LFTJ rule (:class:`maintenance.rule.RuleMaintainer`): its trace tree and sensitivity
    entries, and the same for the body of each aggregate it reads (an
    :class:`maintenance.aggregate.AggregateView`, whose per-group accumulators are folded
    again from the restored trace's leaves: each leaf is one contribution);
  * a theta-join rule (:class:`maintenance.theta_rule.ThetaRule`): ``rho[n]`` of every node
    of its T-reduct (the indexes are rebuilt from them) and, for the §7 approximation, the
    materialized projection;
  * a whole-rule fallback (:class:`maintenance.incremental.WholeRule`): its derived rows.

:func:`capture` (module ``capturing``) writes the records; :func:`restore` (``restoring``)
rebuilds the maintainer from them without evaluating, the pages of version 3 read when first
needed (``stored``: trace nodes, entries and sensitivity groups; ``stored_counts``: support
counts); ``records`` holds the encodings both directions share. The workspace calls ``capture``
and ``restore`` through this package, so that a test can replace them here.
"""

from maintenance.persistence.capturing import capture
from maintenance.persistence.restoring import restore
from maintenance.persistence.stored_counts import _StoredCounts  # noqa: F401 (named by tests/test_workspace.py)

__all__ = ["capture", "restore"]
