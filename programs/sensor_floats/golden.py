#!/usr/bin/env python3
"""Golden outputs for programs/sensor_floats, computed without the engine.

Method 1: plain Python over the set of tuples (statistics by hand).
Method 2: DuckDB SQL with DOUBLE columns (avg/min/max/count GROUP BY).
The two must agree; the result is written to expected/.

Floats are written with repr().  Every float output is additionally checked to
be a non-integral value that is exact in 32-bit floats and prints identically
under repr, C++'s default stream precision and max_digits10 (%.17g / %.9g), so
the files match Souffle's output as well (whole floats would print as "22" in
Souffle but "22.0" with repr; the facts avoid them).
"""
import struct
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


def check_float(x):
    assert x != int(x), f"whole float {x!r} would print differently in Souffle"
    assert struct.unpack("f", struct.pack("f", x))[0] == x, f"{x!r} not exact in float32"
    assert repr(x) == "%.17g" % x == "%.9g" % x, f"{x!r} has no unambiguous printed form"


# ---------------------------------------------------------------- method 1
def compute_python(reading, offset, located):
    off = dict(offset)
    sensors = {s for (s, _) in located}
    sites = {x for (_, x) in located}
    calibrated = {(s, h, c + off[s]) if s in off else (s, h, c) for (s, h, c) in reading}
    values = {s: [c for (t, _, c) in calibrated if t == s] for s in sensors}
    mean = {s: sum(v) / len(v) for s, v in values.items() if v}
    peak = {s: max(v) for s, v in values.items() if v}
    trough = {s: min(v) for s, v in values.items() if v}
    site_vals = {x: [c for (s, _, c) in calibrated if (s, x) in located] for x in sites}
    site_mean = {x: sum(v) / len(v) for x, v in site_vals.items() if v}
    top = max(site_mean.values())
    return {
        "mean_temp": set(mean.items()),
        "peak": set(peak.items()),
        "trough": set(trough.items()),
        "midrange": {(s, (peak[s] + trough[s]) / 2.0) for s in peak if s in trough},
        "anomaly": {(s, h, c) for (s, h, c) in calibrated if abs(c - mean[s]) > 3.5},
        "warm_hours": {(s, sum(1 for c in v if c >= 25.0)) for s, v in values.items()},
        "site_mean": set(site_mean.items()),
        "warmest_site": {(x, a) for x, a in site_mean.items() if a == top},
    }


# ---------------------------------------------------------------- method 2
def compute_duckdb(reading, offset, located):
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE reading(s VARCHAR, h INTEGER, c DOUBLE)")
    con.executemany("INSERT INTO reading VALUES (?, ?, ?)", sorted(reading))
    con.execute("CREATE TABLE offs(s VARCHAR, o DOUBLE)")
    con.executemany("INSERT INTO offs VALUES (?, ?)", sorted(offset))
    con.execute("CREATE TABLE located(s VARCHAR, site VARCHAR)")
    con.executemany("INSERT INTO located VALUES (?, ?)", sorted(located))
    con.execute("""CREATE TABLE cal AS SELECT DISTINCT r.s, r.h, r.c + coalesce(o.o, 0.0) AS c
                   FROM reading r LEFT JOIN offs o ON o.s = r.s""")
    con.execute("""CREATE TABLE stats AS SELECT s, avg(c) AS a, max(c) AS hi, min(c) AS lo
                   FROM cal GROUP BY s""")
    con.execute("""CREATE TABLE site_mean AS SELECT l.site, avg(c.c) AS a
                   FROM located l JOIN cal c ON c.s = l.s GROUP BY l.site""")
    q = lambda sql: set(con.execute(sql).fetchall())
    return {
        "mean_temp": q("SELECT s, a FROM stats"),
        "peak": q("SELECT s, hi FROM stats"),
        "trough": q("SELECT s, lo FROM stats"),
        "midrange": q("SELECT s, (hi + lo) / 2.0 FROM stats"),
        "anomaly": q("SELECT c.s, c.h, c.c FROM cal c JOIN stats t ON t.s = c.s "
                     "WHERE c.c - t.a > 3.5 OR t.a - c.c > 3.5"),
        "warm_hours": q("""SELECT l.s, count(c.c)::INTEGER FROM located l
                           LEFT JOIN cal c ON c.s = l.s AND c.c >= 25.0 GROUP BY l.s"""),
        "site_mean": q("SELECT site, a FROM site_mean"),
        "warmest_site": q("SELECT site, a FROM site_mean WHERE a = (SELECT max(a) FROM site_mean)"),
    }


def main():
    reading = read_facts("reading", "snf")
    offset = read_facts("offset", "sf")
    located = read_facts("located", "ss")
    py = compute_python(reading, offset, located)
    db = compute_duckdb(reading, offset, located)
    for rel in py:
        assert py[rel] == db[rel], f"python and duckdb disagree on {rel}: {py[rel] ^ db[rel]}"
        for row in py[rel]:
            for v in row:
                if isinstance(v, float):
                    check_float(v)
    write_outputs(py)
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
