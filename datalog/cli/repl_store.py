"""Where a REPL session's program and relations are kept: in memory, or in an open workspace.

In memory, the engine grows by :meth:`Engine.extend <datalog.engine.engine.Engine.extend>` and the
statements added are kept as blocks (as ``Workspace.addblock`` keeps them) for ``.save``. With a
workspace open (``.open``, ``.save``, ``datalog repl ws/``) the engine is the workspace's: changes are
durable commits and new statements are blocks (``Workspace.addblock``) named ``repl-1``, ``repl-2``, ...
"""

from __future__ import annotations

from pathlib import Path

from datalog.engine.extension import newly_derived
from datalog.language.parser import parse
from datalog.workspace.workspace import Workspace


class Store:
    """The session's engine (a workspace's, if one is open) and the program as blocks (for ``.save``)."""

    def __init__(self, engine, workspace: Workspace | None = None, program: tuple[str, str] = ("main", ""),
                 facts_dir=None):
        self.engine, self.workspace, self.facts_dir = engine, workspace, facts_dir
        self._blocks = [{"name": "main", "source": program[0], "text": program[1], "converted": {}}]

    @property
    def blocks(self) -> list[dict]:
        """The program as blocks: the workspace's, else those kept in memory."""
        return self.workspace.blocks if self.workspace is not None else self._blocks

    def extend(self, text: str, source: str):
        """The program grows by ``text`` (from ``source``) as a new block; returns the change of every
        relation and the block's name."""
        block = self._block_name()
        if self.workspace is not None:
            delta = self.workspace.addblock(block, text, source, self.facts_dir)
        else:
            delta = self._extend_in_memory(text, source, block)
        return delta, block

    def _extend_in_memory(self, text: str, source: str, block: str):
        """``Engine.extend``, and the statements kept as a block (as addblock keeps them) for ``.save``."""
        engine, added = self.engine, parse(text, source)
        if not engine.evaluated:
            engine.run()
        converted = {n: [list(r) for r in engine.rows(n)] for n in newly_derived(added, engine.idb, engine.db)}
        delta = engine.extend(added)
        self._blocks.append({"name": block, "source": source, "text": text, "converted": converted})
        return delta

    def _block_name(self) -> str:
        names = {b["name"] for b in self.blocks}
        number = 1
        while f"repl-{number}" in names:
            number += 1
        return f"repl-{number}"

    def is_open(self, path: str) -> bool:
        """Whether the workspace at ``path`` is the one open."""
        return self.workspace is not None and Path(path).resolve() == self.workspace.path.resolve()

    def open(self, path: str) -> Workspace:
        """Continue on the workspace at ``path`` (as its writer)."""
        ws = Workspace.open(path, **self._options())
        self._switch(ws)
        return ws

    def save(self, path: str) -> tuple[Workspace, int]:
        """Write the program and relations to a new workspace at ``path`` and continue on it; returns it
        and the number of relations written."""
        tables = {n: set(r.tuples) for n, r in self.engine.db.items()}
        ws = Workspace.create_from(path, self.blocks, tables, **self._options())
        self._switch(ws)
        return ws, len(tables)

    def close(self) -> None:
        """Close the open workspace, if any (its writer lock is released)."""
        if self.workspace is not None:
            self.workspace.close()

    def _options(self) -> dict:
        return {"intersect": self.engine.intersect, "maintenance": self.engine.maintenance,
                "memory_budget": self.engine.memory_budget}

    def _switch(self, ws: Workspace) -> None:
        """Continue on ``ws``; the workspace open before (if any) is closed."""
        old, self.workspace, self.engine = self.workspace, ws, ws.engine
        if old is not None:
            old.close()
