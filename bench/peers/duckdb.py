"""DuckDB, hand-written SQL per workload kind.

triangles: a three-way self-join with DISTINCT.
tc:        WITH RECURSIVE ... UNION (set semantics, so it terminates on cycles).
andersen:  pointsTo and heapPointsTo are mutually recursive, which a single
           recursive CTE cannot express, so we drive a semi-naive fixpoint from
           Python over temp tables (delta / full relations, EXCEPT for novelty).
"""
from __future__ import annotations

from pathlib import Path

from .common import python_command

NAME = "duckdb"
SQL_TYPE = {"number": "BIGINT", "symbol": "VARCHAR"}


def command(workdir, outdir):
    return python_command("duckdb", workdir, outdir, "duckdb")


def load_inputs(con, workdir: Path, meta) -> None:
    for rel in meta["inputs"]:
        cols = ", ".join(f"'c{i}': '{SQL_TYPE[t]}'" for i, t in enumerate(meta["decls"][rel]))
        con.execute(f"CREATE TABLE {rel} AS SELECT * FROM read_csv("
                    f"'{workdir / (rel + '.facts')}', delim='\\t', header=false, "
                    f"quote='', escape='', columns={{{cols}}})")


def triangles(con) -> str:
    return """SELECT DISTINCT a.c0, b.c0, c.c0
              FROM edge a JOIN edge b ON a.c1 = b.c0
                          JOIN edge c ON b.c1 = c.c0 AND c.c1 = a.c0"""


def tc(con) -> str:
    return """WITH RECURSIVE path(x, y) AS (
                  SELECT c0, c1 FROM edge
                  UNION
                  SELECT p.x, e.c1 FROM path p JOIN edge e ON p.y = e.c0)
              SELECT x, y FROM path"""


def andersen(con) -> str:
    q = con.execute
    q("CREATE TEMP TABLE pt AS SELECT DISTINCT c0 AS v, c1 AS h FROM new")
    q("CREATE TEMP TABLE hpt (g VARCHAR, h VARCHAR)")
    q("CREATE TEMP TABLE dpt AS SELECT * FROM pt")
    q("CREATE TEMP TABLE dhpt AS SELECT * FROM hpt")
    while True:
        # pointsTo(v,h) :- assign(v,w), pointsTo(w,h).
        # pointsTo(v,h) :- load(v,w), pointsTo(w,g), heapPointsTo(g,h).
        q("""CREATE OR REPLACE TEMP TABLE npt AS
             SELECT a.c0 AS v, d.h FROM assign a JOIN dpt d ON a.c1 = d.v
             UNION SELECT l.c0, x.h FROM load l JOIN dpt d ON l.c1 = d.v
                                                JOIN hpt x ON d.h = x.g
             UNION SELECT l.c0, x.h FROM load l JOIN pt p ON l.c1 = p.v
                                                JOIN dhpt x ON p.h = x.g
             EXCEPT SELECT v, h FROM pt""")
        # heapPointsTo(g,h) :- store(v,w), pointsTo(v,g), pointsTo(w,h).
        q("""CREATE OR REPLACE TEMP TABLE nhpt AS
             SELECT d.h AS g, p.h FROM store s JOIN dpt d ON s.c0 = d.v
                                              JOIN pt p ON s.c1 = p.v
             UNION SELECT p.h, d.h FROM store s JOIN pt p ON s.c0 = p.v
                                                JOIN dpt d ON s.c1 = d.v
             EXCEPT SELECT g, h FROM hpt""")
        n_pt = q("SELECT count(*) FROM npt").fetchone()[0]
        n_hpt = q("SELECT count(*) FROM nhpt").fetchone()[0]
        if n_pt == 0 and n_hpt == 0:
            return "SELECT v, h FROM pt"
        q("INSERT INTO pt SELECT * FROM npt")
        q("INSERT INTO hpt SELECT * FROM nhpt")
        q("CREATE OR REPLACE TEMP TABLE dpt AS SELECT * FROM npt")
        q("CREATE OR REPLACE TEMP TABLE dhpt AS SELECT * FROM nhpt")


def main(workdir: str, outdir: str) -> None:
    import duckdb

    from ..workloads import load_meta

    workdir = Path(workdir)
    meta = load_meta(workdir)
    con = duckdb.connect()
    load_inputs(con, workdir, meta)
    query = {"triangles": triangles, "tc": tc, "andersen": andersen}[meta["kind"]](con)
    out = Path(outdir) / f"{meta['output']}.csv"
    con.execute(f"COPY ({query}) TO '{out}' (FORMAT csv, DELIMITER '\\t', HEADER false)")

