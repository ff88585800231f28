"""python -m bench <suite> [options]

Suites are modules exposing add_arguments(parser) and run(args) -> exit code.
To add one, write bench/<suite>.py and list it in SUITES.
"""
from __future__ import annotations

import argparse
import importlib
import sys

SUITES = {
    "static": "bench.static",
    "kernel": "bench.kernel",
    "maintenance": "bench.maintenance",
    "thetajoin": "bench.thetajoin",
    "workspace": "bench.workspace",
    "spark": "bench.spark",
    "spark-wcoj": "bench.spark_wcoj",
    "spark-small": "bench.spark_small",
    "soak": "bench.soak",
    "provenance": "bench.why",          # bench/provenance.py is the run's provenance line
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="suite", required=True, metavar="SUITE")
    for name, modname in SUITES.items():
        mod = importlib.import_module(modname)
        sp = sub.add_parser(name, help=(mod.__doc__ or "").strip().splitlines()[0],
                            description=mod.__doc__)
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    args = p.parse_args(argv)
    return args._run(args)


if __name__ == "__main__":
    sys.exit(main())
