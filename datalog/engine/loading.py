"""The load stage: the program's facts, and ``.input`` files and Spark tables read whole first.

Every source is read before any row is loaded (so a bad one changes nothing); a Spark source's
schema is checked before any of its rows is read (``type_mismatch``). Then the settle-types
stage gives each ``auto`` column the type of its loaded values
(:func:`datalog.language.typecheck.settle_types`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from datalog.engine.admission import admit
from datalog.engine.outputs import column_names
from datalog.evaluation.expressions import compile_term
from datalog.language.typecheck import settle_types
from datalog.language.types import AUTO, value_type
from datalog.sources import files

Loaded = list[tuple[str, list]]              # (relation, its rows), in directive order
Progress = Callable[[str], None]


def program_facts(checked, clauses=None, only=None) -> Loaded:
    """The facts of ``clauses`` (the program's by default) whose relation is in ``only`` (all by
    default), each admitted into its relation."""
    out = []
    for clause in checked.clauses if clauses is None else clauses:
        if not clause.body and (only is None or clause.head.relation in only):
            out.append((clause.head.relation, [fact(checked, clause)]))
    return out


def fact(checked, clause) -> tuple:
    """A fact of the program, as its relation stores it."""
    name = clause.head.relation
    row = tuple(compile_term(t, {}, name, clause.head.span)([]) for t in clause.head.args)
    return admit(checked.schema[name], row, clause.head.span)


def read_inputs(checked, directives, facts_dir: Path, spark=None, stage=None,
                progress: Progress | None = None, allow_paths: bool = False) -> Loaded:
    """Every file and Spark ``.input`` of ``directives``; ``spark()`` gives the session, ``stage``
    (a workspace's hook) may keep what a Spark source gave. A file (or a local Spark ``path=``)
    whose real path leaves ``facts_dir`` is ``input_path`` unless ``allow_paths``."""
    loaded = _read_spark_inputs(checked, directives, spark, stage, progress, facts_dir, allow_paths)
    for directive in directives:
        if directive.kind != "input" or directive.io not in ("file", "sqlite", "jsonfile", "stdin"):
            continue
        info = checked.schema[directive.relation]
        if progress is not None:
            progress(f"loading {directive.relation}")
        if directive.io == "stdin":
            loaded.append((directive.relation, files.read_stdin(directive, info.types)))
            continue
        path = files.input_path(directive, facts_dir, allow_paths)
        rows = files.read_input(directive, path, info.types, info.column_names)
        loaded.append((directive.relation, rows))
    return loaded


def _read_spark_inputs(checked, directives, spark, stage, progress, facts_dir, allow_paths: bool) -> Loaded:
    directives = [d for d in directives if d.kind == "input" and d.io in ("spark", "delta")]
    if not directives:
        return []
    from datalog.spark import tables as spark_io            # pyspark is loaded only for Spark programs
    session = spark()
    frames = [(d, spark_io.source_frame(session, d, checked.schema[d.relation].types,
                                        column_names(checked.schema[d.relation]), facts_dir, allow_paths))
              for d in directives]
    loaded = []
    for directive, frame in frames:
        if stage is not None:
            frame = stage(directive, frame)
        loaded.append((directive.relation, spark_io.rows_of(frame, progress, f"loading {directive.relation}",
                                                                  f"source {directive.relation}")))
    return loaded


def settled(checked, samples: Loaded):
    """The checked program with each ``auto`` column of a loaded relation typed as its first
    sample row's value, inferred and checked again; ``checked`` itself when nothing is settled."""
    types = {}
    for name, rows in samples:
        columns = checked.schema[name].types
        if AUTO in columns and rows:
            types[name] = [value_type(rows[0][i]) if t == AUTO else t for i, t in enumerate(columns)]
    return settle_types(checked, types) if types else checked
