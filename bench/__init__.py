"""Benchmark harness: `python -m bench <suite>` (see bench/__main__.py)."""
