"""The two test tiers: ``make test`` (CI's, at most 15 minutes on a 2-core machine) runs every
behaviour at a small size; ``make test-all`` sets ``DATALOG_TEST_LONG=1`` and runs the long
campaigns at full length (the 1,000-round Spark chain, the full refresh streams, more hypothesis
examples, more kills).

>>> scale(100, 1000) in (100, 1000)
True
"""

import os

LONG = os.environ.get("DATALOG_TEST_LONG") == "1"


def scale(short, long):
    """``long`` under ``make test-all``, ``short`` under ``make test``."""
    return long if LONG else short
