"""The two test tiers: ``make test`` (CI's, at most 15 minutes on a 2-core machine) runs every
behaviour at a small size; ``make test-all`` sets ``DATALOG_TEST_LONG=1`` and runs the long
campaigns at full length (the 1,000-round Spark chain, the full refresh streams, more hypothesis
examples, more kills).

>>> scale(100, 1000) in (100, 1000)
True
"""

import os

import pytest

LONG = os.environ.get("DATALOG_TEST_LONG") == "1"

# A test (or a parameter of one) that only ``make test-all`` runs: another case that ``make
# test`` runs covers the same behaviour at a smaller size.
long_only = pytest.mark.skipif(not LONG, reason="make test-all (DATALOG_TEST_LONG=1) runs it")


def examples(n: int) -> int:
    """Hypothesis examples: ``n`` under ``make test-all``, a quarter (at least 10) under ``make test``.

    >>> examples(200) in (50, 200) and examples(12) in (10, 12)
    True
    """
    return n if LONG else min(n, max(10, n // 4))


def scale(short, long):
    """``long`` under ``make test-all``, ``short`` under ``make test``."""
    return long if LONG else short
