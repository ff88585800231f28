"""How a program file is read, as Soufflé's command line says: the C preprocessor on or off
(``--no-preprocessor``), its ``-I`` include directories and ``-M`` macros, and whether included
files may lie outside the program's directory and the ``-I`` directories (``--allow-paths``).

Included files follow the policy of ``.input``/``.output`` files (datalog/sources/paths.py, a
layer above, so its three lines are repeated here): a program must not read files outside the
directories the user named, so ``#include "/etc/passwd"`` is ``include_path`` unless the user
allows it on the command line.

>>> ParseOptions(macros=("N=3 M", "K=x")).definitions()
['N 3', 'M', 'K x']
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from datalog.language.errors import IncludePath, Span


@dataclass(frozen=True)
class ParseOptions:
    preprocess: bool = True                 # run the C preprocessor when the text has a # directive
    include_dirs: tuple[str, ...] = ()      # -I: searched after the including file's directory
    macros: tuple[str, ...] = ()            # -M "NAME=value OTHER": space-separated definitions
    allow_paths: bool = False               # --allow-paths: included files from anywhere

    def definitions(self) -> list[str]:
        """Each -M definition as a ``#define`` body: ``N=3`` is ``N 3`` (Soufflé's -DN=3)."""
        out = []
        for group in self.macros:
            for item in group.split():
                name, sep, value = item.partition("=")
                out.append(f"{name} {value}" if sep else name)
        return out

    def search_dirs(self, including: str | Path) -> list[Path]:
        """Where an included name is looked up: the including file's directory, then -I's."""
        return [Path(including).parent, *map(Path, self.include_dirs)]

    def check_allowed(self, path: str | Path, program: str | Path, span: Span | None) -> None:
        """``include_path`` unless ``path`` lies under the program's directory or an -I directory."""
        if self.allow_paths:
            return
        real = os.path.realpath(path)
        for directory in [Path(program).parent, *map(Path, self.include_dirs)]:
            base = os.path.realpath(directory)
            if os.path.commonpath([base, real]) == base:
                return
        raise IncludePath(f"the included file {path} is outside the program's directory and the -I "
                          f"directories (--allow-paths allows it)", span)


DEFAULT = ParseOptions()
