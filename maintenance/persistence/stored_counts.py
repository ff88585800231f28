"""A relation's support counts in a version 3 maintainer file, read a page at a time: a
:class:`~collections.Counter` whose rows come from disk when first looked up or set.
"""

from __future__ import annotations

from collections import Counter

from maintenance.persistence.records import MALFORMED, bucket, malformed, read_counts
from maintenance.persistence.stored import _Stored


class _StoredCounts(Counter):
    """One relation's support counts whose pages are read when first needed: a row's page (see
    :func:`~maintenance.persistence.records.bucket`) the first time the row is looked up or set,
    every page before anything reads them all (iteration, length, comparison, a copy).

    Invariant: the dict holds the stored rows of every page in ``_read``, as changed since; a row
    is looked up, set or removed only once its page is in ``_read`` (so that a stored count never
    overwrites a newer one), and a page is read whole or (malformed) not at all."""

    def __init__(self, stored: _Stored, first: int, pages: int, name: str = ""):
        dict.__init__(self)                 # (Counter's would update: read every page)
        if not (type(first) is int and type(pages) is int and pages >= 1
                and 0 < first and first + pages <= len(stored.frames)):
            raise ValueError("support count pages are not in the file")
        self._stored, self._first, self._pages, self._read = stored, first, pages, set()
        self._name = name

    def _page(self, row) -> None:
        page = bucket(0, row, self._pages) if type(row) is tuple else None
        if page is not None and page not in self._read:
            self._read_page(page)

    def _read_page(self, page: int) -> None:
        """Page ``page`` read whole or (malformed) not at all: a use after a failed read reads it
        again, rather than finding counts missing."""
        try:
            counts = read_counts(self._stored.frame(self._first + page)["counts"], self._name, self._stored.rows,
                                 self._stored.where, f"the support counts of {self._name}, page {page}")
        except MALFORMED as exc:
            raise malformed(self._stored.where, exc) from None
        dict.update(self, counts)
        self._read.add(page)

    def _read_all(self) -> None:
        for page in range(self._pages):
            if page not in self._read:
                self._read_page(page)

    def get(self, row, default=None):
        self._page(row)
        return dict.get(self, row, default)

    def __getitem__(self, row):
        self._page(row)
        return Counter.__getitem__(self, row)

    def __contains__(self, row) -> bool:
        self._page(row)
        return dict.__contains__(self, row)

    def __setitem__(self, row, count) -> None:
        self._page(row)
        dict.__setitem__(self, row, count)

    def __delitem__(self, row) -> None:
        self._page(row)
        dict.__delitem__(self, row)

    def pop(self, row, *default):
        self._page(row)
        return dict.pop(self, row, *default)

    def clear(self) -> None:
        self._read.update(range(self._pages))
        dict.clear(self)


def _reading_all(name: str):
    """Counter's method ``name`` after every page is read."""
    method = getattr(Counter, name)

    def read_first(self, *args, **kwargs):
        self._read_all()
        return method(self, *args, **kwargs)
    read_first.__name__ = read_first.__qualname__ = name
    return read_first


for _name in ("__iter__", "__len__", "__eq__", "__ne__", "__repr__", "__reduce__", "keys", "values", "items",
              "copy", "update", "subtract", "most_common", "elements", "total"):
    setattr(_StoredCounts, _name, _reading_all(_name))
del _name
