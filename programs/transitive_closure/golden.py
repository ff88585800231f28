#!/usr/bin/env python3
"""Golden outputs for programs/transitive_closure, computed without the engine.

Method 1: naive fixpoint in plain Python.
Method 2: DuckDB recursive CTE (UNION = set semantics).
The two must agree; the result is written to expected/.
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


# ---------------------------------------------------------------- method 1
def closure_python(edge):
    path = set(edge)
    while True:
        new = {(x, z) for (x, y) in path for (y2, z) in edge if y == y2} - path
        if not new:
            return path
        path |= new


# ---------------------------------------------------------------- method 2
def closure_duckdb(edge):
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE edge(x INTEGER, y INTEGER)")
    con.executemany("INSERT INTO edge VALUES (?, ?)", sorted(edge))
    rows = con.execute(
        """
        WITH RECURSIVE path(x, y) AS (
            SELECT x, y FROM edge
            UNION
            SELECT p.x, e.y FROM path p JOIN edge e ON p.y = e.x
        )
        SELECT x, y FROM path
        """
    ).fetchall()
    return set(rows)


def main():
    edge = read_facts("edge", "nn")
    path = closure_python(edge)
    assert path == closure_duckdb(edge), "python and duckdb disagree"
    write_outputs({"path": path})
    print(f"path: {len(path)} rows")


if __name__ == "__main__":
    main()
