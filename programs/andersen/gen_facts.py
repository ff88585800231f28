#!/usr/bin/env python3
"""Seeded generator for the pointer statements of a synthetic program.

Variables are named after their method ("main_a", "put_v", ...), allocation
sites after the method and line ("main@12").  Re-running reproduces the files.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(7)

methods = ["main", "init", "put", "get", "copy", "swap", "build", "visit"]
local_names = ["a", "b", "c", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z"]
variables = sorted({f"{rng.choice(methods)}_{rng.choice(local_names)}" for _ in range(60)})[:40]
sites = sorted({f"{rng.choice(methods)}@{rng.randint(3, 120)}" for _ in range(16)})[:14]


def pick_pairs(n, left, right, distinct=True):
    rows = set()
    while len(rows) < n:
        a, b = rng.choice(left), rng.choice(right)
        if distinct and a == b:
            continue
        rows.add((a, b))
    rows = sorted(rows)
    rng.shuffle(rows)
    return rows


facts = {
    "new": pick_pairs(18, variables, sites, distinct=False),
    "assign": pick_pairs(34, variables, variables),
    "load": pick_pairs(14, variables, variables),
    "store": pick_pairs(14, variables, variables),
}
for name, rows in facts.items():
    with open(os.path.join(HERE, "facts", name + ".facts"), "w", newline="") as f:
        for a, b in rows:
            f.write(f"{a}\t{b}\n")
    print(name, len(rows))
print(len(variables), "variables,", len(sites), "allocation sites")
