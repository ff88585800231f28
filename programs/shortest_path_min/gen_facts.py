#!/usr/bin/env python3
"""Seeded generator for facts/road.facts: a sparse one-way road network
between 14 towns with lengths 1..9 km.  "harbor" only has incoming roads and
"quarry" only outgoing ones, so some pairs are unreachable.  Re-running
reproduces the file."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(4242)
towns = ["ashford", "bramley", "crowthorne", "dunmore", "elmstead", "fairholm",
         "glenrock", "harbor", "ivybridge", "juniper", "kestrel", "larkhill",
         "millbrook", "quarry"]
roads = {}
while len(roads) < 30:
    x, y = rng.sample(towns, 2)
    if x == "harbor" or y == "quarry":
        continue
    if (x, y) not in roads:
        roads[(x, y)] = rng.randint(1, 9)
with open(os.path.join(HERE, "facts", "road.facts"), "w", newline="") as f:
    for (x, y), w in sorted(roads.items(), key=lambda _: rng.random()):
        f.write(f"{x}\t{y}\t{w}\n")
print(len(roads), "roads")
