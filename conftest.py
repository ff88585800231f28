"""Doctest collection of the packages (``pytest datalog lftj maintenance``): the IPython extension
is collected only where IPython is installed (the ``notebook`` extra, which ``make test`` installs).
``lftj/kernel.py`` is the source of a compiled module, which Python imports in its place: its
doctests run from ``tests/test_kernel.py``, on the compiled module and on the uncompiled twin."""

import importlib.util

collect_ignore = ["lftj/kernel.py"]
if not importlib.util.find_spec("IPython"):
    collect_ignore.append("datalog/notebook.py")
