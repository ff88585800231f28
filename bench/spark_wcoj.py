"""Spark joins: worst-case optimal (HyperCube + triejoin per cell) against Spark's binary joins.

    tri(x, y, z) :- e(x, y), e(y, z), e(x, z).

over two graphs: ``uniform`` (--edges random edges over --edges/10 nodes, a few wedges per
edge) and ``hubs`` (--hub-edges random edges plus --hubs nodes of in- and out-degree
--hub-degree: the pairwise join explodes through them). Each is evaluated Spark-resident with
``--spark-join binary``, ``wcoj`` and ``auto`` (datalog.spark.wcoj.chosen: what it picked), and
in-process; every result must equal the in-process one. The first Spark run of the session
(starting Python workers) is a warm-up and is not timed.
"""
from __future__ import annotations

import random
import time

from bench.table import markdown


def add_arguments(p) -> None:
    p.add_argument("--edges", type=int, default=200_000, help="uniform graph edges; default 200k")
    p.add_argument("--hub-edges", type=int, default=50_000, help="hub graph: random edges; default 50k")
    p.add_argument("--hubs", type=int, default=4, help="hub graph: hubs; default 4")
    p.add_argument("--hub-degree", type=int, default=4000, help="hub graph: in/out degree of a hub; default 4000")


def run(args) -> int:
    from datalog.engine.engine import Engine
    from datalog.spark.resident import Resident

    text = (".decl e(a: number, b: number)\n.decl tri(x: number, y: number, z: number)\n"
            "tri(x, y, z) :- e(x, y), e(y, z), e(x, z).\n")
    rng = random.Random(1)
    graphs = {"uniform": {(rng.randrange(args.edges // 10), rng.randrange(args.edges // 10))
                          for _ in range(args.edges)},
              "hubs": _hubs(rng, args)}
    rows = []
    for name, edges in graphs.items():
        started = time.perf_counter()
        local = Engine.from_source(text)
        local.insert("e", sorted(edges))
        local.run()
        in_process = time.perf_counter() - started
        engine = Engine.from_source(text)
        engine.insert("e", sorted(edges))
        spark = engine.spark_session()
        if not rows:
            Resident(engine, spark, join="wcoj").run()          # warm-up: the Python workers start
        row = [name, f"{len(edges):,}", f"{len(local.db['tri']):,}", f"{in_process:.1f}"]
        for join in ("binary", "wcoj", "auto"):
            started = time.perf_counter()
            evaluator = Resident(engine, spark, join=join)
            evaluator.run()
            seconds = time.perf_counter() - started
            assert set(evaluator.sorted_rows("tri")) == set(local.db["tri"].tuples), (name, join)
            if join == "auto":
                [(_, picked, estimate, inputs)] = evaluator.joins
                row.append(f"{seconds:.1f} ({'wcoj' if picked else 'binary'}: {estimate / inputs:.0f}x)")
            else:
                row.append(f"{seconds:.1f}")
        rows.append(row)
    print(markdown(["graph", "edges", "triangles", "in-process s", "binary s", "wcoj s", "auto s (chose: est/inputs)"],
                   rows, right={1, 2, 3, 4, 5}))
    return 0


def _hubs(rng: random.Random, args) -> set:
    nodes = max(args.hub_edges, 10)
    edges = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(args.hub_edges)}
    for hub in range(args.hubs):
        for _ in range(args.hub_degree):
            edges |= {(hub, rng.randrange(nodes)), (rng.randrange(nodes), hub)}
    return edges
