"""The semantic rewrites, in order: each maps a program to an equivalent one in fewer constructs.

    pragmas (warnings) -> eqrel (closure rules) -> inline (substitution) -> magic sets

What stays for the engine: ``choice-domain`` and subsumption, evaluated by the fixpoint
(:mod:`datalog.evaluation.fixpoint`), since no rule of plain Datalog expresses them.
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.semantics.eqrel import eqrel_rules
from datalog.language.semantics.inline import inline
from datalog.language.semantics.magic import magic_transform
from datalog.language.semantics.pragmas import pragma_warnings


def lower(program: ast.Program) -> ast.Program:
    """``program`` with its eqrel, inline and magic-transform constructs rewritten into rules."""
    warnings = tuple(program.warnings) + tuple(pragma_warnings(program))
    program = ast.Program(program.statements + tuple(eqrel_rules(program)), warnings)
    program = inline(program)
    return magic_transform(program)
