"""Which leapfrog kernel runs: the compiled extension, or the uncompiled twin of the same source.

``lftj/kernel.py`` is compiled at install into the extension module ``lftj.kernel``; run by the
plain interpreter, the same file is its twin (needing the ``cython`` package only for its
annotations). The environment variable ``DATALOG_KERNEL`` picks one for the process: unset or
``compiled`` the extension, ``python`` the twin. :data:`kernel` is the one picked,
:func:`which` says which it is, and :func:`load` gives either (the tests compare the two).

>>> which() in ("compiled", "python")
True
>>> load("python").COMPILED
False
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

CHOICES = ("compiled", "python")
SOURCE = Path(__file__).with_name("kernel.py")
TWIN = "lftj.kernel_twin"


def load(name: str) -> ModuleType:
    """The compiled kernel (``"compiled"``) or its twin run from the source (``"python"``)."""
    if name not in CHOICES:
        raise ValueError(f"DATALOG_KERNEL={name!r} is not a kernel: choose one of {', '.join(CHOICES)}")
    if name == "compiled":
        module = importlib.import_module("lftj.kernel")
        if not module.COMPILED:
            raise ImportError(f"lftj.kernel is not compiled ({module.__file__}): build it with "
                              "`pip install -e .` (a C compiler is needed), or set DATALOG_KERNEL=python")
        return module
    if TWIN not in sys.modules:
        spec = importlib.util.spec_from_file_location(TWIN, SOURCE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[TWIN] = module
    return sys.modules[TWIN]


kernel = load(os.environ.get("DATALOG_KERNEL") or "compiled")


def which() -> str:
    """``"compiled"`` or ``"python"``: the kernel this process runs."""
    return "compiled" if kernel.COMPILED else "python"
