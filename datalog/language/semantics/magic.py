"""``.pragma "magic-transform" "r1, r2"`` (or ``"*"``): the magic-set rewrite of the named relations.

The rewrite only changes how much is computed, never what an output holds. This engine does not
apply it yet: the named relations are computed completely, which gives the same outputs, and a
warning (``magic_not_applied``) says so.
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import DatalogWarning


def magic_transform(program: ast.Program) -> ast.Program:
    pragmas = [p for p in program.pragmas if p.key == "magic-transform"]
    if not pragmas:
        return program
    note = DatalogWarning("magic_not_applied", "magic-transform is accepted but not applied: the "
                          "relations are computed completely (the outputs are the same)", pragmas[0].span)
    return ast.Program(program.statements, tuple(program.warnings) + (note,))
