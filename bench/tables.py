"""Issue 20's table benchmark: 1M rows into and out of the engine as Arrow, pandas and tuples,
against the engine's own fact-file loading and DuckDB (if installed) on the same rows.

    python -m bench.tables [ROWS]

Each time is the best of three runs, in seconds, on a relation ``r(a: number, b: symbol)``.
A read is timed three ways (:meth:`datalog.engine.tables.Relation.to_arrow`): the "first read"
builds the Arrow table from the engine's tuples (no table kept: as after a large change); "after
2 one-row commits" reads a table the engine kept, patching in the rows changed since (the
commits, untimed, insert a new row and retract another); "unchanged" reads again a table already read.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import pyarrow as pa

from datalog import Engine

PROGRAM = ".decl r(a: number, b: symbol)\n"


def best(fn, runs: int = 3, before=None) -> float:
    """The least time of ``runs`` calls of ``fn``, each after an untimed ``before()``."""
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def _whole(result) -> pa.Table:
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def main(n: int = 1_000_000) -> None:
    a = list(range(n))
    b = [f"s{i % 1000}" for i in range(n)]
    table = pa.table({"a": a, "b": b})
    rows = list(zip(a, b))
    results = []

    def insert(data):
        engine = Engine.from_source(PROGRAM)
        engine.insert("r", data)
        return engine

    results.append(("insert from a pyarrow Table", best(lambda: insert(table))))
    try:
        import pandas  # noqa: F401
        frame = table.to_pandas()
        results.append(("insert from a pandas DataFrame", best(lambda: insert(frame))))
    except ImportError:
        pass
    results.append(("insert from a list of tuples", best(lambda: insert(rows))))
    with tempfile.TemporaryDirectory() as facts:
        with open(os.path.join(facts, "r.facts"), "w") as out:
            out.write("".join(f"{x}\t{y}\n" for x, y in rows))

        def load_file():
            engine = Engine.from_source(PROGRAM + ".input r\n", facts)
            engine.run()                             # loads the file (nothing to evaluate)
        results.append(("fact-file loading (.input r, TSV)", best(load_file)))
    engine = insert(table)
    engine.run()
    view = engine.relation("r")

    def forget():                                    # no table kept: the first read after a large change
        engine.arrow_tables.clear()

    commits = iter(range(n))

    def change():                                    # one row in, one out: the kept table is patched at the read
        view.to_arrow()
        k = next(commits)
        engine.commit(inserts={"r": [(n + k, "new")]})
        engine.commit(retracts={"r": [(k, b[k])]})
    results.append(("first read: relation(r).to_arrow()", best(view.to_arrow, before=forget)))
    results.append(("first read: to_arrow(ordered=False)", best(lambda: view.to_arrow(ordered=False), before=forget)))
    try:
        import pandas  # noqa: F401
        results.append(("first read: relation(r).to_pandas()", best(view.to_pandas, before=forget)))
    except ImportError:
        pass
    results.append(("read: relation(r).rows()", best(view.rows)))
    results.append(("read after 2 one-row commits: to_arrow()", best(view.to_arrow, before=change)))
    results.append(("read after 2 one-row commits: to_arrow(ordered=False)",
                    best(lambda: view.to_arrow(ordered=False), before=change)))
    view.to_arrow()
    results.append(("read unchanged: relation(r).to_arrow()", best(view.to_arrow)))
    try:
        import pandas  # noqa: F401
        results.append(("read unchanged: relation(r).to_pandas()", best(view.to_pandas)))
    except ImportError:
        pass
    try:
        import duckdb
        con = duckdb.connect()
        con.register("source", table)
        con.execute("CREATE TABLE r AS SELECT * FROM source")
        results.append(("duckdb: CREATE TABLE AS from the Arrow table", best(
            lambda: con.execute("CREATE OR REPLACE TABLE r2 AS SELECT * FROM source"))))
        results.append(("duckdb: SELECT * FROM r .arrow() read whole",   # .arrow() is a RecordBatchReader
                        best(lambda: _whole(con.sql("SELECT * FROM r").arrow()))))
        results.append(("duckdb: SELECT * FROM r ORDER BY a, b .arrow() read whole",
                        best(lambda: _whole(con.sql("SELECT * FROM r ORDER BY a, b").arrow()))))
        results.append(("duckdb: SELECT * FROM r .df()", best(lambda: con.sql("SELECT * FROM r").df())))
    except ImportError:
        pass
    width = max(len(name) for name, _ in results)
    print(f"{n:,} rows, r(a: number, b: symbol); best of 3, seconds")
    for name, seconds in results:
        print(f"{name:<{width}}  {seconds:7.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
