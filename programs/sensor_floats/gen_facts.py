#!/usr/bin/env python3
"""Seeded generator for the temperature readings of six sensors at three sites.

Every value is a multiple of 1/8 (exact in binary, even in 32-bit floats), every
sensor has 8 readings and every site 2 sensors, so means are exact too.  Values
are re-drawn until no float output of the program is a whole number: Souffle
prints whole floats without a fractional part ("22") whereas Python's repr
gives "22.0", and the golden files should not depend on that choice.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(77)
HOURS = [0, 3, 6, 9, 12, 15, 18, 21]
SITES = {"lab": ["t01", "t02"], "roof": ["t03", "t04"], "basement": ["t05", "t06"]}
OFFSETS = {"t01": 0.25, "t03": -0.5, "t04": 0.75, "t06": -0.25}


def whole(x):
    return x == int(x)


def draw_sensor(s):
    base = rng.uniform(17, 26)
    while True:
        cal = {}
        raw = {}
        for h in HOURS:
            while True:
                v = round((base + rng.uniform(-5, 5)) * 8) / 8
                c = v + OFFSETS.get(s, 0.0)
                if not whole(v) and not whole(c):
                    break
            raw[h], cal[h] = v, c
        vals = list(cal.values())
        if not whole(sum(vals) / len(vals)) and not whole((max(vals) + min(vals)) / 2):
            return raw, vals


while True:
    readings, calibrated = {}, {}
    for site, sensors in SITES.items():
        for s in sensors:
            readings[s], calibrated[s] = draw_sensor(s)
    site_means = [sum(calibrated[a] + calibrated[b]) / 16 for a, b in SITES.values()]
    if not any(whole(m) for m in site_means):
        break

with open(os.path.join(HERE, "facts", "reading.facts"), "w", newline="") as f:
    for s in sorted(readings):
        for h, v in readings[s].items():
            f.write(f"{s}\t{h}\t{v!r}\n")
with open(os.path.join(HERE, "facts", "offset.facts"), "w", newline="") as f:
    for s, o in OFFSETS.items():
        f.write(f"{s}\t{o!r}\n")
with open(os.path.join(HERE, "facts", "located.facts"), "w", newline="") as f:
    for site, sensors in SITES.items():
        for s in sensors:
            f.write(f"{s}\t{site}\n")
print(sum(len(r) for r in readings.values()), "readings")
