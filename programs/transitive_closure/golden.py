#!/usr/bin/env python3
"""Golden outputs for programs/transitive_closure, computed without the engine.

Method 1: naive fixpoint in plain Python.
Method 2: DuckDB recursive CTE (UNION = set semantics).
The two must agree; the result is written to expected/.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def read_facts(name, types):
    """types: one letter per column, n=number, s=symbol, f=float."""
    conv = {"n": int, "s": str, "f": float}
    rows = set()
    with open(os.path.join(HERE, "facts", name + ".facts"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            assert len(fields) == len(types), (name, line)
            rows.add(tuple(conv[t](v) for t, v in zip(types, fields)))
    return rows


def fmt(v):
    return repr(v) if isinstance(v, float) else str(v)


def write_outputs(outputs, printsizes=()):
    prog = open(os.path.join(HERE, "prog.dl"), encoding="utf-8").read()
    declared_out = re.findall(r"^\s*\.output\s+(\w+)", prog, re.M)
    declared_ps = re.findall(r"^\s*\.printsize\s+(\w+)", prog, re.M)
    assert sorted(declared_out) == sorted(outputs), (declared_out, sorted(outputs))
    assert [n for n, _ in printsizes] == declared_ps, (declared_ps, printsizes)
    out = os.path.join(HERE, "expected")
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))
    for name, rows in outputs.items():
        with open(os.path.join(out, name + ".csv"), "w", encoding="utf-8", newline="") as f:
            for row in sorted(rows):
                f.write("\t".join(fmt(v) for v in row) + "\n")
    if printsizes:
        with open(os.path.join(out, "stdout.txt"), "w", encoding="utf-8", newline="") as f:
            for name, n in printsizes:
                f.write(f"{name}\t{n}\n")


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
