"""PlannedProgram: a checked, planned program as evaluation and maintenance run it.

What lies below the engine and evaluates or maintains a program (a maintainer, DRed, the
from-scratch twin) is given this and the relations (``db``, a mapping of names to Relations),
never the engine: the clauses, the strata, the compiled plans by clause index, the schema, the
program's facts (typed, by relation; a fact listed twice is there twice), the relations that
``.input`` directives read, and how trie levels are intersected. It is not the AST
(:class:`datalog.language.ast.Program`): it is what the pipeline made of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PlannedProgram:
    """Invariant: ``plans`` holds the compiled plan of every clause with a body, keyed by its
    index in ``clauses``; every clause belongs to one stratum of ``strata``."""

    clauses: list
    strata: list
    plans: dict
    schema: dict
    facts: dict[str, list[tuple]] = field(default_factory=dict)
    inputs: frozenset[str] = frozenset()
    intersect: str = "hash"

    @property
    def idb(self) -> set[str]:
        """Relations derived by rules with a body; the others are EDB, changed by transactions."""
        return {c.head.relation for c in self.clauses if c.body}

    def facts_of(self, names) -> dict[str, list[tuple]]:
        """The program's facts of the relations ``names``."""
        return {name: rows for name, rows in self.facts.items() if name in names}
