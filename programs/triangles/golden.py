#!/usr/bin/env python3
"""Golden outputs for programs/triangles, computed without the engine.

Method 1: plain Python enumeration over ordered node triples.
Method 2: DuckDB three-way self join.
The two must agree; the result is written to expected/.
"""
import itertools
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


# ---------------------------------------------------------------- method 1
def compute_python(edge):
    nodes = sorted({v for e in edge for v in e})
    triangle = set()
    for x, y, z in itertools.permutations(nodes, 3):
        if (x, y) in edge and (y, z) in edge and (z, x) in edge and x == min(x, y, z):
            triangle.add((x, y, z))
    in_triangle = {v for t in triangle for v in t}
    lonely = {(x,) for (x, _) in edge if x not in in_triangle}
    return triangle, in_triangle, lonely


# ---------------------------------------------------------------- method 2
def compute_duckdb(edge):
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE edge(x INTEGER, y INTEGER)")
    con.executemany("INSERT INTO edge VALUES (?, ?)", sorted(edge))
    triangle = set(con.execute(
        """SELECT DISTINCT a.x, b.x, c.x FROM edge a
           JOIN edge b ON a.y = b.x
           JOIN edge c ON b.y = c.x AND c.y = a.x
           WHERE a.x < b.x AND a.x < c.x"""
    ).fetchall())
    count = con.execute(
        """SELECT count(*) FROM edge a JOIN edge b ON a.y = b.x
           JOIN edge c ON b.y = c.x AND c.y = a.x"""
    ).fetchone()[0]
    # every directed triangle appears once per rotation in the unconstrained join
    assert count == 3 * len(triangle)
    return triangle


def main():
    edge = read_facts("edge", "nn")
    triangle, in_triangle, lonely = compute_python(edge)
    assert triangle == compute_duckdb(edge), "python and duckdb disagree"
    write_outputs(
        {"triangle": triangle, "triangle_count": {(len(triangle),)}, "lonely": lonely},
        printsizes=[("edge", len(edge)), ("triangle", len(triangle)),
                    ("in_triangle", len(in_triangle))],
    )
    print(f"edge {len(edge)}, triangle {len(triangle)}, in_triangle {len(in_triangle)}, "
          f"lonely {len(lonely)}")


if __name__ == "__main__":
    main()
