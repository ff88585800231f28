"""Compiles the leapfrog kernel (lftj/kernel.py), the set operations on sorted rows (lftj/rowsets.py),
the radix sort (lftj/radix.py) and the decimal text reader and writer (lftj/text.py), all in Cython's
pure-Python mode, into extension modules.

Everything else about the package is in pyproject.toml. DATALOG_KERNEL_CHECKS=1 at build time
compiles them with bounds checks (boundscheck, wraparound, initializedcheck), for running
the property tests against them; its generated C goes to a directory of its own, so switching
between the two builds always regenerates the C.
"""
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

CHECKS = os.environ.get("DATALOG_KERNEL_CHECKS") == "1"

setup(ext_modules=cythonize(
    [Extension("lftj.kernel", ["lftj/kernel.py"]), Extension("lftj.rowsets", ["lftj/rowsets.py"]),
     Extension("lftj.radix", ["lftj/radix.py"]),
     Extension("lftj.text", ["lftj/text.py"])],
    build_dir="build/cython-checked" if CHECKS else "build/cython",
    compiler_directives={"language_level": 3, "boundscheck": CHECKS, "wraparound": CHECKS,
                         "initializedcheck": CHECKS},
))
