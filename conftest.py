"""Doctest collection of the packages (``pytest datalog lftj maintenance``): the IPython extension
is collected only where IPython is installed (the ``notebook`` extra, which ``make test`` installs)."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("IPython") else ["datalog/notebook.py"]
