"""Worst-case optimal joins on Spark: a HyperCube shuffle, then leapfrog triejoin per cell.

Spark joins a rule's atoms two at a time. For a cyclic body (``triangle(x, y, z) :- e(x, y),
e(y, z), e(x, z).``) the first pairwise join materialises every open path x-y-z, which can be far
larger than the output; leapfrog triejoin binds one variable at a time and never does (the
worst-case optimal bound, Veldhuizen's LFTJ §4). Here the body is joined the second way, spread
over Spark:

* **HyperCube shuffle** (the *shares* of Afrati and Ullman; Beame, Koutris and Suciu). Each
  variable ``v`` gets a share ``s_v`` (their product: the number of cells); a cell is one hash
  bucket per variable. A row of an atom goes to every cell that agrees with the buckets of the
  variables it has (replicated along the variables it lacks), so every output binding finds all
  the rows it joins in one cell, its own buckets', and in no other.
* **Triejoin per cell**: the rows are repartitioned by cell and each partition runs the engine's
  triejoin (:mod:`lftj`) over its cells inside ``mapInArrow``: Arrow batches in (measured 6x
  faster than ``mapPartitions`` over Python tuples, SPARK_NOTES.md), bindings out as Arrow.

:func:`hypercube_join` takes the atoms as DataFrames with one column per variable (constants and
repeated variables already applied) and gives the bindings, one column per variable; the rest of
the rule (filters, negations, aggregates, the head) is applied to them as to Spark's own join.
:func:`candidate` and :func:`chosen` say when a body goes this way (``auto``: a cyclic body of
at least three atoms whose largest pairwise join is estimated at more than ``RATIO`` times its
inputs).

On a cluster the executors' Python must be able to import this package (``lftj`` and
``datalog``), as for any Python UDF.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from datalog.planning.gjt.gyo import classify
from datalog.planning.gjt.query import GCQ, Atom
from lftj.trie import build
from lftj.triejoin import JoinPlan, triejoin

CELL, ATOM = "__datalog_cell", "__datalog_atom"
BATCH_ROWS = 65_536                 # bindings per Arrow batch a cell emits
JOINS = ("auto", "binary", "wcoj")  # --spark-join: choose, Spark's binary joins, or this module's
RATIO = 100                         # auto: the HyperCube when a pairwise join exceeds this many times the inputs
MIN_ROWS = 1_000                    # auto: fewer input rows than this: Spark's joins, without estimating


def cyclic(atom_variables: list[list[str]]) -> bool:
    """Whether the hypergraph of the atoms' variables is cyclic (GYO leaves something)."""
    atoms = tuple(Atom(f"a{i}", tuple(names)) for i, names in enumerate(atom_variables))
    return not classify(GCQ(atoms)).acyclic


def candidate(join: str, atom_variables: list[list[str]], has_delta: bool) -> bool:
    """Whether a body of two atoms or more may be joined here (``join``: ``auto``, ``binary`` or
    ``wcoj``). ``auto``: at least three atoms whose variables form a cycle, none of them read
    from a round's delta (a delta is small: Spark's joins starting from it touch little);
    :func:`chosen` then decides."""
    if join == "binary" or has_delta or len(atom_variables) < 2 or not all(atom_variables):
        return False
    return join == "wcoj" or (len(atom_variables) >= 3 and cyclic(atom_variables))


def chosen(join: str, inputs: int, estimate: Callable[[], int]) -> tuple[bool, int | None]:
    """Whether a candidate body is joined here, and the estimate it was chosen by. ``auto`` by
    measurement: Spark's joins cost about 2.5 us per intermediate row here, the HyperCube and the
    triejoin per cell about 250 us per input row (each row shipped to ~5 cells), so the HyperCube
    wins when the largest pairwise join (``estimate()``: one Spark job per pair of atoms) exceeds
    ``RATIO`` times the inputs. Measured on triangles (python -m bench spark-wcoj): a uniform graph of
    200k edges, 10 wedges per edge: Spark's joins 20.5 s, the HyperCube 41 s; 80k edges with four
    hubs, 734 wedges per edge: Spark's joins 137-165 s, the HyperCube 20-43 s."""
    if join == "wcoj":
        return True, None
    if inputs < MIN_ROWS:
        return False, None
    value = estimate()
    return value > RATIO * inputs, value


def pairwise_estimate(parts: list[tuple[object, list[str]]]) -> int:
    """The size of the largest join of two atoms that share variables: the sum over the shared
    values of the product of their counts in each atom."""
    from pyspark.sql import functions as F
    best = 0
    for i, (left, left_names) in enumerate(parts):
        for right, right_names in parts[i + 1:]:
            shared = sorted(set(left_names) & set(right_names))
            if not shared:
                continue
            a = left.groupBy(*shared).agg(F.count(F.lit(1)).alias("__a"))
            b = right.groupBy(*shared).agg(F.count(F.lit(1)).alias("__b"))
            total = a.join(b, on=shared).select(F.sum(F.col("__a") * F.col("__b"))).first()[0]
            best = max(best, int(total or 0))
    return best


def variable_order(atom_variables: list[list[str]]) -> list[str]:
    """The triejoin's variable order: variables in more atoms first, then as they appear."""
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for names in atom_variables:
        for name in names:
            first.setdefault(name, len(first))
            count[name] = count.get(name, 0) + 1
    return sorted(first, key=lambda n: (-count[n], first[n]))


def shares(order: list[str], cells: int) -> dict[str, int]:
    """Each variable's share: factors of 2 dealt round-robin to the first (at most three) variables
    of the order while the product stays within ``cells``; 1 for the others."""
    out = {name: 1 for name in order}
    dealt, total = order[:3], 1
    while dealt and total * 2 <= cells:
        for name in dealt:
            if total * 2 > cells:
                break
            out[name] *= 2
            total *= 2
    return out


def hypercube_join(parts: list[tuple[object, list[str]]], types: dict[str, object], cells: int):
    """The bindings of the join of ``parts`` (DataFrame, its variable columns) as one DataFrame
    with a column per variable (``types``: column -> Spark type)."""
    from pyspark.sql import types as T
    atom_variables = [names for _, names in parts]
    order = variable_order(atom_variables)
    share = shares(order, cells)
    stride, step = {}, 1
    for name in order:
        stride[name], step = step, step * share[name]
    shipped = [_to_cells(frame, names, a, order, share, stride, types) for a, (frame, names) in enumerate(parts)]
    union = shipped[0]
    for other in shipped[1:]:
        union = union.unionByName(other)
    columns = [[order.index(n) for n in sorted(set(names), key=order.index)] for names in atom_variables]
    schema = T.StructType([T.StructField(name, types[name], False) for name in order])
    return union.repartition(max(step, 1), CELL).mapInArrow(_cell_join(order, columns, schema), schema)


def _to_cells(frame, names: list[str], atom: int, order: list[str], share: dict, stride: dict, types: dict):
    """The atom's rows, each once per cell it goes to: ``CELL``, ``ATOM`` and every variable
    column (null where the atom lacks the variable)."""
    from pyspark.sql import functions as F
    base = F.lit(0)
    for name in names:
        if share[name] > 1:
            base = base + F.pmod(F.hash(F.col(name)), F.lit(share[name])) * F.lit(stride[name])
    missing = [n for n in order if n not in names and share[n] > 1]
    offsets = [sum(b * stride[n] for b, n in zip(buckets, missing))
               for buckets in product(*[range(share[n]) for n in missing])]
    base = base.cast("int")
    cell = base if offsets == [0] else F.explode(F.array(*[base + F.lit(o) for o in offsets]))
    return frame.select(cell.alias(CELL), F.lit(atom).alias(ATOM),
                        *[(F.col(n) if n in names else F.lit(None).cast(types[n])).alias(n) for n in order])


def _cell_join(order: list[str], columns: list[list[int]], schema):
    """The partition function: group the rows by cell and atom, and run the triejoin of each
    cell (atom ``a`` a trie over its variables ``columns[a]``, positions in ``order``)."""
    names = [field.name for field in schema.fields]
    arrow_schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType), False) for f in schema.fields])
    participants = [[a for a, cols in enumerate(columns) if d in cols] for d in range(len(order))]

    def join(batches):
        cells: dict[int, list[set]] = {}
        for batch in batches:
            for a, cols in enumerate(columns):
                rows = batch.filter(pc.equal(batch.column(ATOM), a))
                if not rows.num_rows:
                    continue
                values = [rows.column(names[c]).to_pylist() for c in cols]
                for cell, row in zip(rows.column(CELL).to_pylist(), zip(*values)):
                    cells.setdefault(cell, [set() for _ in columns])[a].add(row)
        out: list[tuple] = []
        plan = JoinPlan(depth=len(order), participants=participants)
        for atoms in cells.values():
            if all(atoms):
                roots = [build(list(rows), tuple(range(len(cols)))) for rows, cols in zip(atoms, columns)]
                triejoin(plan, roots, lambda b: out.append(tuple(b)))
            while len(out) >= BATCH_ROWS:
                yield _batch(out[:BATCH_ROWS], arrow_schema)
                del out[:BATCH_ROWS]
        if out:
            yield _batch(out, arrow_schema)
    return join


def _batch(rows: list[tuple], schema):
    return pa.RecordBatch.from_arrays([pa.array(list(col), type=f.type) for col, f in zip(zip(*rows), schema)],
                                      schema=schema)


def _arrow_type(spark_type):
    from pyspark.sql import types as T
    if isinstance(spark_type, T.LongType):
        return pa.int64()
    if isinstance(spark_type, T.DoubleType):
        return pa.float64()
    return pa.string()
