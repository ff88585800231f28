"""Subprocess entry point for the Python peers:

    python -m bench.peers._worker <peer module> WORKDIR OUTDIR

(a separate module so that `bench.peers` importing every peer does not clash
with running one of them as __main__).
"""
import importlib
import sys

if __name__ == "__main__":
    mod, workdir, outdir = sys.argv[1:4]
    importlib.import_module(f"bench.peers.{mod}").main(workdir, outdir)
