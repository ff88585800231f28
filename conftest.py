"""Doctest collection of the packages (``pytest datalog lftj maintenance``): the IPython extension
is collected only where IPython is installed (the ``notebook`` extra, which ``make test`` installs).
``lftj/kernel.py`` and ``lftj/radix.py`` are the sources of compiled modules, which Python imports in
their place: their doctests run from ``tests/test_kernel.py`` and ``tests/test_radix.py``, on the
compiled module and on the uncompiled twin."""

import importlib.util

collect_ignore = ["lftj/kernel.py", "lftj/radix.py"]
if not importlib.util.find_spec("IPython"):
    collect_ignore.append("datalog/notebook.py")
