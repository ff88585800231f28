"""Program blocks: a workspace's program as a list of named blocks, the first one the program of
``init``, each later one added to it as ``Engine.extend`` adds statements; and what adding or
removing a block does to that list.

A block is ``{"name": str, "source": str, "text": str, "converted": {relation: [row, ...]}}``:
``converted`` lists, per relation that was EDB and that the block's rules derive, its rows at the
moment the block was added (they become facts of the program, as in the REPL)."""

from __future__ import annotations

from pathlib import Path

from datalog.engine.extension import combined, newly_derived
from datalog.language import ast
from datalog.language.errors import BadBlock, Unsupported
from datalog.language.parser import parse


def program_of(blocks: list[dict]) -> ast.Program:
    """The program of a block list: each block added as ``Engine.extend`` added it (relations it
    converted from EDB to derived keep their rows of that moment as facts)."""
    program = parse(blocks[0]["text"], blocks[0]["source"])
    for block in blocks[1:]:
        converted = {n: [tuple(r) for r in rows] for n, rows in block["converted"].items()}
        program = combined(program, parse(block["text"], block["source"]), converted)
    return program


def is_block(block) -> bool:
    """Whether ``block`` (read from a snapshot) has the shape of a block."""
    return (isinstance(block, dict) and all(isinstance(block.get(k), str) for k in ("name", "source", "text"))
            and isinstance(block.get("converted"), dict))


def check_new(blocks: list[dict], name: str, path: Path) -> None:
    """A block to add needs a name not in use."""
    if any(b["name"] == name for b in blocks):
        raise BadBlock(f"workspace {path} already has a block named {name}")


def conversions(added: ast.Program, engine) -> dict[str, list[list]]:
    """The ``converted`` of a block ``added`` to ``engine``'s program (evaluated): the rows now of
    each relation that is EDB there and that ``added``'s rules derive."""
    return {n: [list(r) for r in engine.rows(n)] for n in newly_derived(added, engine.idb, engine.db)}


def check_conversions(converted: dict, engine, added: ast.Program) -> None:
    """A block may not make derived a relation with record or ADT columns that held rows: those
    rows would become facts of the stored program, whose text has no place for their values'
    types (``unsupported``, before anything changes)."""
    for name, rows in converted.items():
        if rows and any(getattr(t, "is_composite", False) for t in engine.schema[name].types):
            rule = next((r for r in added.rules if any(h.relation == name for h in r.heads)), None)
            raise Unsupported(f"the block derives {name}, which holds rows with records or ADTs as an input "
                              f"relation of the workspace; a workspace cannot keep them as facts",
                              rule.span if rule else None)


def check_removable(blocks: list[dict], name: str, path: Path) -> None:
    """Only an added block can be removed: one that exists and is not the first."""
    if not any(b["name"] == name for b in blocks):
        raise BadBlock(f"workspace {path} has no block named {name} "
                       f"(blocks: {', '.join(b['name'] for b in blocks)})")
    if blocks[0]["name"] == name:
        raise BadBlock(f"block {name} is the workspace's program; only added blocks can be removed")


def keep_conversions(blocks: list[dict], name: str, tables: dict[str, set]) -> list[dict]:
    """The blocks without ``name``. The rows it converted into facts (relations that were EDB
    until it derived them) stay: as the next block's conversions -- which only replace those
    relations' program facts -- and, for a relation that is EDB again, as its table rows."""
    at = [b["name"] for b in blocks].index(name)
    converted = blocks[at]["converted"]
    kept = [dict(b) for b in blocks[:at] + blocks[at + 1:]]
    if at < len(kept):
        kept[at]["converted"] = {**converted, **kept[at]["converted"]}
    for relation, rows in converted.items():
        tables.setdefault(relation, {tuple(r) for r in rows})
    return kept
