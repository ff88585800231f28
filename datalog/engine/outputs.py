"""Outputs: ``.output`` relations written to files, stdout or Spark sinks; ``.printsize`` lines."""

from __future__ import annotations

from typing import Iterable

from datalog.language import ast
from datalog.language.types import AUTO, value_type
from datalog.sources import files


def write_outputs(engine, out_dir: str | None = None) -> list[str]:
    """Write the engine's ``.output`` relations (the files all or none, paths as
    ``engine.allow_paths`` allows: :func:`datalog.sources.files.write_outputs`), then its Spark
    sinks; return the ``.printsize`` lines (``name<TAB>count``), in evaluation order."""
    checked = engine.checked
    directives = checked.directives("output")
    sinks = [d for d in directives if d.io == "spark"]
    if sinks:                                               # a sink's path refused before any file is written
        check_spark_sinks(engine, out_dir)
    write_files(engine, [d for d in directives if d.io in FILE_IO], out_dir)
    for directive in sinks:
        write_spark_output(engine, directive, out_dir=out_dir)
    stratum_of = {r: i for i, s in enumerate(checked.strata) for r in s.relations}
    # `.output r(IO=stdoutprintsize)` is Soufflé's spelling of `.printsize r`
    counted = checked.directives("printsize") + [d for d in directives if d.io == "stdoutprintsize"]
    sizes = sorted(counted, key=lambda d: stratum_of.get(d.relation, -1))
    return [f"{files.io_name(d)}\t{len(engine.db[d.relation])}" for d in sizes]


LINES_CHUNK = 1 << 16           # rows whose lines the kernel writes at a time (1.4 MB a binary chunk)
FILE_IO = ("file", "stdout", "sqlite", "json", "jsonfile")


def write_files(engine, directives: list[ast.Directive], out_dir: str | None) -> None:
    """The ``.output`` directives that write files or print (:data:`FILE_IO`), all or none, with
    the relations' column names (for header lines and SQLite views) and types."""
    schema = engine.schema
    files.write_outputs(directives, engine.rows, out_dir, engine.allow_paths,
                        columns_of=lambda name: list(schema[name].column_names),
                        types_of=lambda name: list(schema[name].types),
                        text_of=lambda name, fmt: _words_text(engine, name, fmt))


def _words_text(engine, name: str, fmt) -> Iterable[bytes] | None:
    """A relation's lines written from the sorted int64 words the columnar evaluator left on it
    (``lftj.relation.Relation.keep_words``), in C (:func:`lftj.text.delimited`),
    :data:`LINES_CHUNK` rows at a time as the file is written, so the text is never held whole
    (for the 2.5M rows of transitive closure, a 106 MB buffer of which half was written):
    the lines :func:`datalog.sources.files.format_rows` makes of its sorted tuples (decimal
    integers, one delimiter between them), 3 s of 4.7 s of transitive closure at 2.5M rows
    otherwise; or, for symbols the kernel derived and holds unread, by their source
    (:meth:`datalog.evaluation.words.DecodedRows.lines`). None (the tuples' way) for any other
    relation or layout."""
    relation = engine.db.get(name)
    if not engine.evaluated or fmt.rfc4180 or relation is None or not relation.arity:
        return None
    held = relation.held()
    if getattr(held, "lines", None) is not None and relation.current_words() is None:
        return held.lines(fmt.delimiter, LINES_CHUNK)   # symbols the kernel derived, held unread
    words = relation.current_words()
    if words is None or len(fmt.delimiter.encode("utf-8")) != 1:
        return None                                # (the kernel writes a one-byte delimiter)
    from lftj.kernels import text                # loaded already: the kernel made the words
    delimiter = fmt.delimiter.encode("ascii")
    return (text.delimited(words[start:start + LINES_CHUNK], delimiter)
            for start in range(0, len(words), LINES_CHUNK))


def check_spark_sinks(engine, out_dir: str | None = None) -> None:
    """The Spark sinks' local ``path=`` held to ``out_dir`` unless ``engine.allow_paths``
    (``output_path``), checked before anything is written."""
    from datalog.spark import tables as spark_io            # pyspark is loaded only for Spark programs
    sinks = [d for d in engine.checked.directives("output") if d.io == "spark"]
    spark_io.check_sink_paths(engine.spark_session(), sinks, out_dir or ".", engine.allow_paths)


def write_spark_output(engine, directive: ast.Directive, delta=None, out_dir: str | None = None) -> None:
    """Write a relation to its Spark sink: all of it, or with ``mode=merge`` and a ``delta``
    holding only insertions, just those (a deletion rewrites the sink). A local ``path=`` is
    held to ``out_dir`` (``-D``, default ``.``) unless ``engine.allow_paths``."""
    from datalog.spark import tables as spark_io            # pyspark is loaded only for Spark programs
    name = directive.relation
    info = engine.schema[name]
    names, types = column_names(info), info.types
    types = [t if t != AUTO else value_type(next(iter(engine.db[name].tuples), ("",) * len(types))[i])
             for i, t in enumerate(types)]
    merge = (directive.param("mode") or "overwrite").lower() == "merge"
    if merge and delta is not None and not delta.retracted:
        if delta.inserted:
            spark_io.append_sink(engine.spark_session(), directive, delta.inserted, names, types,
                                 out_dir or ".", engine.allow_paths)
        return
    spark_io.write_sink(engine.spark_session(), directive, engine.rows(name), names, types,
                        out_dir or ".", engine.allow_paths)


def column_names(info) -> list[str]:
    """A relation's column names: the ``.decl``'s, else ``c0, c1, ...``."""
    names = list(info.column_names) if len(info.column_names) == info.arity else []
    return names if len(set(names)) == len(names) and names else [f"c{i}" for i in range(info.arity)]
