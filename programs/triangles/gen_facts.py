#!/usr/bin/env python3
"""Seeded generator for facts/edge.facts: a random directed graph on nodes
1..25 with 90 distinct edges and no self-loops.  Re-running reproduces it."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(31337)
edges = set()
while len(edges) < 90:
    x, y = rng.randint(1, 25), rng.randint(1, 25)
    if x != y:
        edges.add((x, y))
with open(os.path.join(HERE, "facts", "edge.facts"), "w", newline="") as f:
    order = sorted(edges)
    rng.shuffle(order)
    for x, y in order:
        f.write(f"{x}\t{y}\n")
print(len(edges), "edges")
