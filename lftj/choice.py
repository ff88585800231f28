"""The one reading of ``DATALOG_KERNEL``: which build of the compiled modules this process runs.

Unset or ``compiled``: the extension modules the install built; ``python``: their uncompiled
twins, the same sources run by the interpreter. :mod:`lftj.kernels` loads the modules by it, and
:mod:`lftj.csr` (which :mod:`lftj.kernels` imports through the kernel, so it cannot ask that
module) picks the radix sort or numpy's by it.

>>> import os
>>> chosen() == (os.environ.get("DATALOG_KERNEL") or "compiled")
True
"""

from __future__ import annotations

import os

CHOICES = ("compiled", "python")


def chosen() -> str:
    """``DATALOG_KERNEL``'s value, ``"compiled"`` when it is unset or empty (an unknown one is
    refused by :func:`lftj.kernels.load`)."""
    return os.environ.get("DATALOG_KERNEL") or "compiled"
