"""``.pragma "key" "value"``: which pragmas mean something here, and a warning for the others.

Soufflé's pragmas set its command-line options (``.pragma "magic-transform" "*"`` is
``--magic-transform=*``). Those this engine honours:

* ``magic-transform`` / ``magic-transform-exclude``: the magic-set rewrite (:mod:`.magic`);
* ``no-warn``: no warnings for the program.

``provenance`` (``"explain"`` or ``"explore"``) asks for Soufflé's interactive explain interface:
``datalog run`` opens it after evaluating, as ``-t explain`` does (proofs are built on demand,
:mod:`datalog.provenance`). Every other pragma (a Soufflé option this engine has no use for: ``jobs``,
``legacy``, ``fact-dir``, ...) is accepted and warned about (``ignored_pragma``); the command
line, not a pragma, sets the fact and output directories here.
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.errors import DatalogWarning, Unsupported

HONOURED = ("magic-transform", "magic-transform-exclude", "no-warn", "provenance")


def pragma_values(program: ast.Program, key: str) -> list[str]:
    """The values given to ``key`` by the program's pragmas (``""`` for a pragma without one)."""
    return [p.value or "" for p in program.pragmas if p.key == key]


def relation_list(values: list[str]) -> set[str]:
    """``"a, b"`` and ``"c"`` -> ``{a, b, c}`` (Soufflé's comma-separated relation lists)."""
    return {name.strip() for value in values for name in value.split(",") if name.strip()}


REFUSED: dict[str, str] = {}       # pragmas whose effect a program relies on and this engine lacks


def pragma_warnings(program: ast.Program) -> list[DatalogWarning]:
    """A warning per pragma that has no effect here; an ``unsupported`` error for one whose
    effect the program relies on (REFUSED)."""
    for p in program.pragmas:
        if p.key in REFUSED:
            raise Unsupported(REFUSED[p.key], p.span)
    return [DatalogWarning("ignored_pragma", f'pragma "{p.key}" is accepted and has no effect in this '
                           f"engine", p.span) for p in program.pragmas if p.key not in HONOURED]
