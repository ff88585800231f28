"""Which commit inserted an EDB fact: the source ``why`` names for a fact no file or program
line states. Kept for the most recent ``LIMIT`` insertions only, so that a process that streams
millions of facts through commits pays a bounded amount of memory for provenance it may never
ask for (about 20 MB at the limit); an older fact's leaf then names its relation's input, or
nothing.

>>> log = InsertLog(limit=2)
>>> log.record(1, "e", inserted=[(1,), (2,)], retracted=[])
>>> log.record(2, "e", inserted=[(3,)], retracted=[(2,)])
>>> [log.commit_of("e", (n,)) for n in (1, 2, 3)]
[1, None, 2]
>>> log.record(3, "e", inserted=[(4,)], retracted=[])      # over the limit: the oldest goes
>>> [log.commit_of("e", (n,)) for n in (1, 3, 4)]
[None, 2, 3]
"""

from __future__ import annotations

from collections import OrderedDict

LIMIT = 100_000


class InsertLog:
    def __init__(self, limit: int = LIMIT):
        self.limit = limit
        self.commits: OrderedDict[tuple[str, tuple], int] = OrderedDict()

    def record(self, number: int, relation: str, inserted, retracted) -> None:
        """Commit ``number`` inserted and retracted these rows of ``relation``."""
        commits = self.commits
        for row in retracted:
            commits.pop((relation, row), None)
        for row in inserted:
            key = (relation, row)
            commits[key] = number
            commits.move_to_end(key)
        while len(commits) > self.limit:
            commits.popitem(last=False)

    def commit_of(self, relation: str, row: tuple) -> int | None:
        return self.commits.get((relation, row))
