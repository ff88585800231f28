#!/usr/bin/env python3
"""Seeded generator for the sales facts.

sales(region, salesperson, amount): each salesperson's booked sales (in dollars)
in a region; some people sell in several regions.  Two situations are forced so
the aggregates are exercised: a tie for the best amount in "east", and the same
(non-best) amount booked by two people in "west" (sum/count must count both).
region(r) also lists "arctic", which has no sales at all.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(1999)

regions = ["north", "south", "east", "west", "central", "coastal"]
people = ["ana", "ben", "chen", "dara", "eli", "fay", "gus", "hana", "ines", "jon",
          "kai", "lena", "milo", "nora", "omar", "pia", "quinn", "rosa", "sam", "tess",
          "umar", "vera", "wes", "xena", "yuri", "zoe"]

sales = {}
for r in regions:
    for p in rng.sample(people, rng.randint(6, 10)):
        sales[(r, p)] = rng.randrange(500, 9001, 50)

# force a tie for first place in the east
east = sorted((a, p) for (r, p), a in sales.items() if r == "east")
sales[("east", east[0][1])] = east[-1][0]
# force a repeated, non-maximal amount in the west
west = sorted((a, p) for (r, p), a in sales.items() if r == "west")
sales[("west", west[1][1])] = west[0][0]

rows = sorted(sales.items(), key=lambda _: rng.random())
with open(os.path.join(HERE, "facts", "sales.facts"), "w", newline="") as f:
    for (r, p), a in rows:
        f.write(f"{r}\t{p}\t{a}\n")
with open(os.path.join(HERE, "facts", "region.facts"), "w", newline="") as f:
    for r in regions + ["arctic"]:
        f.write(f"{r}\n")
print(len(rows), "sales facts")
