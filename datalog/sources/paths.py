"""Where an ``.input`` or ``.output`` file is: its ``filename`` under the fact directory (``-F``)
or the output directory (``-D``), and whether it stays there.

Soufflé joins a relative ``filename`` to the directory and takes an absolute one as it is; so do
we. Our policy is stricter on purpose: a program (or the program stored in a workspace received
from elsewhere) must not read or write outside the directories the user named, so a name whose
real path (``..`` and every symlink resolved) leaves the directory's real path is refused
(``input_path``, ``output_path``) unless the user allows it on the command line
(``--allow-paths``, ``Engine(allow_paths=True)``), which restores Soufflé's behaviour.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> inside(d, "sub/r.csv"), inside(d, "../r.csv"), inside(d, "/etc/passwd")
(True, False, False)
"""

from __future__ import annotations

import os
from pathlib import Path


def joined(directory: str | Path, name: str) -> Path:
    """``name`` relative to ``directory`` as Soufflé reads it (an absolute name is itself)."""
    return Path(directory) / name


def real(directory: str | Path, name: str) -> Path:
    """The real path of ``name`` under ``directory``: ``..`` and every existing symlink resolved."""
    return Path(os.path.realpath(joined(directory, name)))


def inside(directory: str | Path, name: str) -> bool:
    """Whether ``name``'s real path lies under ``directory``'s real path."""
    base = os.path.realpath(directory)
    return os.path.commonpath([base, real(directory, name)]) == base
