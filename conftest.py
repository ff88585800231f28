"""Doctest collection of the packages (``pytest datalog lftj maintenance``): the IPython extension
is collected only where IPython is installed (the ``notebook`` extra, which ``make test`` installs).
``lftj/kernel.py``, ``lftj/radix.py`` and ``lftj/text.py`` are the sources of compiled modules, which
Python imports in their place: their doctests run from their tests (``tests/test_kernel.py``,
``tests/test_radix.py``, ``tests/test_text.py``), on the compiled module and on the uncompiled twin."""

import importlib.util

collect_ignore = ["lftj/kernel.py", "lftj/rowsets.py", "lftj/radix.py", "lftj/text.py"]
if not importlib.util.find_spec("IPython"):
    collect_ignore.append("datalog/notebook.py")
