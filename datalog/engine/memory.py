"""The cyclic garbage collector around bulk work: paused while it runs, what it built then frozen."""

from __future__ import annotations

import contextlib
import gc

BULK = 200_000                              # new container objects that make a load "bulk"


@contextlib.contextmanager
def paused_gc():
    """The cyclic garbage collector paused while millions of acyclic tuples, sets and trie nodes
    are built, and what bulk work built then frozen (``gc.freeze``): moved out of the generations
    that collections scan. Running, the collector rescanned the growing heap: loading 2M edges and
    evaluating took 10.7 s instead of 5.7 s. Left in the young generation, the new objects would
    be scanned by a young, a middle and a full collection in turn inside whatever runs next; one
    full collection instead cost 2.7 s of a 13 s workspace open at 1M tuples (it scans the whole
    process, so a Python program holding its own data paid more: 4.5 s for a 0.35 s read).

    The price of freezing: frozen objects that later become *cyclic* garbage (trace nodes a commit
    drops) are not reclaimed until :func:`thaw`; the memory they keep is bounded by what the bulk
    work built. :meth:`Engine.extend`, which replaces the program's state, thaws.

    Commits run paused too: a workspace opened for writing reads its state when a commit first
    needs it (relation rows, trie levels, trace nodes), which is bulk work of the same kind --
    running, the collector tripled the first commits after an open at 1M tuples (12 commits:
    5.9 s, paused 2.1 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            if gc.get_count()[0] > BULK:          # only after bulk work; freezing is cheap
                gc.freeze()


def thaw() -> None:
    """Frozen objects back under the collector (state about to be replaced can be reclaimed)."""
    if gc.get_freeze_count():
        gc.unfreeze()
