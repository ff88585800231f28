"""Evaluation: plans compiled to closures, run by leapfrog triejoin; the semi-naive loop."""
