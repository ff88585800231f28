#!/usr/bin/env python3
"""Seeded generator for facts/parent.facts (a 5-generation family tree).

parent(child, par): every person outside the oldest generation has one or two
parents drawn from the previous generation.  Re-running reproduces the file.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20240611)

ONSETS = ["b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"]
VOWELS = ["a", "e", "i", "o", "u"]


def fresh_name(used):
    while True:
        name = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(2))
        name += rng.choice(["", "n", "r", "l", "s"])
        if name not in used:
            used.add(name)
            return name


used = set()
sizes = [4, 8, 14, 20, 24]
generations = [[fresh_name(used) for _ in range(n)] for n in sizes]
rows = []
for g in range(1, len(generations)):
    for child in generations[g]:
        k = 1 if rng.random() < 0.35 else 2
        for par in rng.sample(generations[g - 1], k):
            rows.append((child, par))

with open(os.path.join(HERE, "facts", "parent.facts"), "w", newline="") as f:
    for child, par in rows:
        f.write(f"{child}\t{par}\n")
print(len(rows), "parent facts")
