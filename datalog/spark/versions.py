"""One version of a relation of a Spark-resident workspace (:mod:`datalog.spark.resident_workspace`)
as the maintainer reads and extends it: its rows with their support counts, made of a **base**
(``relations/<r>/vN/rows``) and **layers** (the ``delta`` directories of later commits, laid over
it in order), and, for some sources, its **bounds**: per column the least and the greatest value
a tuple of it ever had, so that rows outside them are known absent without a scan."""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.spark.resident import BROADCAST_ROWS, _spark_type
from datalog.spark.session import guard

try:                                            # the optional extra
    from pyspark.sql import functions as F
except ImportError:                             # pragma: no cover - depends on the installation
    pass

COUNT, SIGN = "__n", "__d"
EXTRA_TYPES = {COUNT: "bigint", SIGN: "int"}    # the count and sign columns as stored


@dataclass
class Stored:
    """One relation's version: its rows with counts as read back from Parquet, and how many;
    for a stored relation, the version directory of its **base** (``rows``) and its **layers**,
    the ``delta`` directories of the commits since, each with its row count (see
    :func:`layered`)."""

    rows: object              # DataFrame c0.., __n
    size: int
    base: str = ""
    layers: tuple = ()        # ((version, rows), ...), oldest first
    bounds: list | None = None    # per column [least, greatest] a tuple ever had (kept for some sources)
    typed: bool = False       # its base and layers were written with the types of :func:`schema`
    _tuples: object = field(default=None, init=False, repr=False, compare=False)

    def tuples(self):
        """``rows`` without the counts; made once (a refresh asks hundreds of times, and each
        ``drop`` is several calls into the JVM)."""
        if self._tuples is None:
            self._tuples = self.rows.drop(COUNT)
        return self._tuples


def schema(types: list[str], *extra: str) -> str:
    """The Spark schema (DDL) a relation's rows are written with: ``c0, c1, ...`` as resident
    evaluation types the declared ``types``, ``__n`` bigint, and ``__d`` int if in ``extra``
    (a layer). Read with it, a version's directories need no schema inference (a Spark job
    each, 0.04-0.09 s)."""
    return ", ".join([f"c{i} {_spark_type(t).simpleString()}" for i, t in enumerate(types)] +
                     [f"{e} {EXTRA_TYPES[e]}" for e in extra])


def typed(frame, types: list[str], *extra: str):
    """``frame``'s columns ``c0, ..., extra`` cast to :func:`schema`'s types."""
    return frame.select(*[F.col(f"c{i}").cast(_spark_type(t)).alias(f"c{i}") for i, t in enumerate(types)],
                        *[F.col(e).cast(EXTRA_TYPES[e]).alias(e) for e in extra])


# A relation's new version is its old one with a commit's count changes laid over it, unless
# its layers would pass one of these; then it is written whole as a new base
MAX_LAYERS = 8
LAYER_ROWS = 200_000          # all layers' rows together, at most (they are broadcast) ...
LAYER_SHARE = 0.1             # ... and at most this share of the relation's tuples


def layered(rows, layer, columns: list[str]):
    """``rows`` (c0.., __n) with ``layer`` laid over it: a tuple in the layer (a ``delta``
    directory: c0.., __n its new count, __d) has the layer's count, 0 meaning gone; the others
    keep theirs. The layer is small (:data:`LAYER_ROWS`): a broadcast filters one scan of
    ``rows``, nothing of the relation is shuffled."""
    kept = rows.join(F.broadcast(layer.select(*columns)), columns, "left_anti")
    return kept.unionByName(layer.where(F.col(COUNT) > 0).select(*columns, COUNT))


def compacts(layers: tuple, rows: int, size: int) -> bool:
    """Whether a new layer of ``rows`` rows over ``layers`` makes the version be written whole
    (``size``: the relation's tuples after it)."""
    total = sum(n for _, n in layers) + rows
    return len(layers) + 1 > MAX_LAYERS or total > min(LAYER_ROWS, LAYER_SHARE * max(size, 1))


def bounds_of(frame, columns: list[str]) -> list:
    """Per column the least and the greatest value of ``frame``'s rows (one Spark job); ``[]``
    when it has none (``columns`` not empty)."""
    row = guard(lambda: frame.agg(*bounding(columns, F.lit(True))).first(), "bounding")
    return bounds_in(row, columns) or []


def bounding(columns: list[str], where) -> list:
    return [f(F.when(where, F.col(c))).alias(f"__{f.__name__}{c}") for c in columns for f in (F.min, F.max)]


def bounds_in(row, columns: list[str]) -> list | None:
    if not columns or row[f"__min{columns[0]}"] is None:
        return None
    return [[row[f"__min{c}"], row[f"__max{c}"]] for c in columns]


def widened(bounds: list, more: list | None) -> list:
    """Bounds holding both (``[]``, ``more`` None: no rows)."""
    if not more:
        return bounds
    return [[min(a[0], b[0]), max(a[1], b[1])] for a, b in zip(bounds, more)] if bounds else more


def apart(bounds: list | None, others: list | None) -> bool:
    """Whether no tuple within ``bounds`` can be one within ``others``: on some column their
    ranges do not meet, or one holds no rows (``[]``); None, unknown: they may."""
    if bounds is None or others is None:
        return False
    if not bounds or not others:
        return True
    return any(a[1] < b[0] or b[1] < a[0] for a, b in zip(bounds, others))


def present(relation, keys, columns: list[str], size: int):
    """The rows of ``relation`` whose ``columns`` are among ``keys`` (``size`` rows): when they
    are few, a broadcast of them filters one scan of the relation (no shuffle of it)."""
    if size <= BROADCAST_ROWS:
        return relation.join(F.broadcast(keys), columns, "left_semi")
    return relation.join(keys, columns, "left_semi")


__all__ = ["COUNT", "SIGN", "Stored", "schema", "typed", "MAX_LAYERS", "LAYER_ROWS", "LAYER_SHARE", "layered", "compacts",
           "bounds_of", "bounding", "bounds_in", "widened", "apart", "present"]
