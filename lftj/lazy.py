"""Objects whose slots are filled when first used: a lazy subclass keeps what it needs to fill
them (a loader, a source) in one of its base class's slots, and each slot it fills is exposed
through :func:`loading`. The first read or write of any of them calls ``self._load()``, which
fills the slots and turns the object into its base class (``self.__class__ = Base``): later
reads are plain slot reads, at no cost. ``lftj.trie.LazyTrieNode``,
``maintenance.trace.LazyTraceNode`` and ``lftj.relation.LazyRelation`` are made so."""

from __future__ import annotations


def loading(slot) -> property:
    """The base class's slot descriptor ``slot`` behind ``self._load()``."""
    def get(self):
        self._load()
        return slot.__get__(self)

    def put(self, value):
        self._load()
        slot.__set__(self, value)
    return property(get, put)
