"""Which leapfrog kernel runs: the compiled extension, or the uncompiled twin of the same source.

``lftj/kernel.py`` is compiled at install into the extension module ``lftj.kernel``; run by the
plain interpreter, the same file is its twin (needing the ``cython`` package only for its
annotations). The environment variable ``DATALOG_KERNEL`` picks one for the process: unset or
``compiled`` the extension, ``python`` the twin. :data:`kernel` is the one picked,
:func:`which` says which it is, and :func:`load` gives either (the tests compare the two), of the
kernel or of the other compiled modules, :mod:`lftj.rowsets`, :mod:`lftj.radix` and :mod:`lftj.text`.

>>> which() in ("compiled", "python")
True
>>> load("python").COMPILED, load("python", "radix").COMPILED
(False, False)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from lftj.choice import CHOICES, chosen

MODULES = ("kernel", "rowsets", "radix", "text")          # the compiled modules of lftj (setup.py)


def load(name: str, module: str = "kernel") -> ModuleType:
    """The compiled ``lftj.<module>`` (``"compiled"``) or its twin run from the source (``"python"``)."""
    if name not in CHOICES:
        raise ValueError(f"DATALOG_KERNEL={name!r} is not a kernel: choose one of {', '.join(CHOICES)}")
    if module not in MODULES:
        raise ValueError(f"lftj.{module} is not a compiled module: one of {', '.join(MODULES)}")
    if name == "compiled":
        compiled = importlib.import_module(f"lftj.{module}")
        if not compiled.COMPILED:
            raise ImportError(f"lftj.{module} is not compiled ({compiled.__file__}): build it with "
                              "`pip install -e .` (a C compiler is needed), or set DATALOG_KERNEL=python")
        return compiled
    twin = f"lftj.{module}_twin"
    if twin not in sys.modules:
        spec = importlib.util.spec_from_file_location(twin, Path(__file__).with_name(f"{module}.py"))
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        sys.modules[twin] = loaded
    return sys.modules[twin]


kernel = load(chosen())
rowsets = load(chosen(), "rowsets")  # union, difference, lookups
text = load(chosen(), "text")       # decimal text in and out


def which() -> str:
    """``"compiled"`` or ``"python"``: the kernel this process runs."""
    return "compiled" if kernel.COMPILED else "python"
