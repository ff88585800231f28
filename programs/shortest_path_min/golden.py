#!/usr/bin/env python3
"""Golden outputs for programs/shortest_path_min, computed without the engine.

Method 1: mirror the Datalog rules in plain Python: bounded semi-naive fixpoint
for dist/hops, then min/max group-bys.
Method 2: textbook graph algorithms: Dijkstra (distance <= 24) and BFS
(<= 5 hops) from every town, over walks of at least one road.
The two must agree; the result is written to expected/.
"""
import heapq
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


BOUND_KM = 24
BOUND_HOPS = 5


# ---------------------------------------------------------------- method 1
def compute_python(road):
    town = {x for (x, _, _) in road} | {y for (_, y, _) in road}
    dist = {(x, y, d) for (x, y, d) in road}
    delta = set(dist)
    while delta:
        new = {(x, z, d1 + w) for (x, y, d1) in delta for (y2, z, w) in road
               if y == y2 and d1 + w <= BOUND_KM} - dist
        dist |= new
        delta = new
    hops = {(x, y, 1) for (x, y, _) in road}
    delta = set(hops)
    while delta:
        new = {(x, z, h + 1) for (x, y, h) in delta for (y2, z, _) in road
               if y == y2 and h + 1 <= BOUND_HOPS} - hops
        hops |= new
        delta = new
    reach = {(x, y) for (x, y, _) in dist}
    shortest = {(x, y, min(d for (a, b, d) in dist if (a, b) == (x, y))) for (x, y) in reach}
    fewest = {(x, y, min(h for (a, b, h) in hops if (a, b) == (x, y)))
              for (x, y, _) in hops}
    out_of_range = {(x, y) for x in town for y in town if x != y and (x, y) not in reach}
    ecc = {(x, max(d for (a, _, d) in shortest if a == x))
           for x in town if any(a == x for (a, _, _) in shortest)}
    return {"shortest": shortest, "fewest_hops": fewest, "out_of_range": out_of_range,
            "eccentricity": ecc}, len(dist)


# ---------------------------------------------------------------- method 2
def compute_graph(road):
    town = {x for (x, _, _) in road} | {y for (_, y, _) in road}
    succ = {}
    for x, y, w in road:
        succ.setdefault(x, []).append((y, w))
    shortest, fewest = set(), set()
    for src in town:
        # Dijkstra over walks with >= 1 road: seed with the roads leaving src
        best = {}
        heap = [(w, y) for (y, w) in succ.get(src, [])]
        heapq.heapify(heap)
        while heap:
            d, v = heapq.heappop(heap)
            if v in best:
                continue
            best[v] = d
            for y, w in succ.get(v, []):
                if y not in best:
                    heapq.heappush(heap, (d + w, y))
        shortest |= {(src, v, d) for v, d in best.items() if d <= BOUND_KM}
        # BFS levels, again over walks with >= 1 road
        level = {}
        frontier = {y for (y, _) in succ.get(src, [])}
        h = 1
        while frontier and h <= BOUND_HOPS:
            for v in frontier:
                level.setdefault(v, h)
            frontier = {y for v in frontier for (y, _) in succ.get(v, []) if y not in level}
            h += 1
        fewest |= {(src, v, h) for v, h in level.items()}
    reach = {(x, y) for (x, y, _) in shortest}
    out_of_range = {(x, y) for x in town for y in town if x != y and (x, y) not in reach}
    ecc = {}
    for x, _, d in shortest:
        ecc[x] = max(ecc.get(x, d), d)
    return {"shortest": shortest, "fewest_hops": fewest, "out_of_range": out_of_range,
            "eccentricity": set(ecc.items())}


def main():
    road = read_facts("road", "ssn")
    assert all(w >= 1 for (_, _, w) in road), "Dijkstra/BFS equivalence needs positive lengths"
    py, n_dist = compute_python(road)
    graph = compute_graph(road)
    for rel in py:
        assert py[rel] == graph[rel], f"fixpoint and Dijkstra/BFS disagree on {rel}"
    write_outputs(py, printsizes=[("dist", n_dist)])
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")
    print("dist:", n_dist)


if __name__ == "__main__":
    main()
