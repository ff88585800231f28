#!/usr/bin/env python3
"""Golden outputs for programs/strings_functors, computed without the engine.

Method 1: plain Python, with explicit C-style integer division/remainder
(truncate toward zero; Python's own // and % floor instead).
Method 2: DuckDB SQL (1-based substr, integer // and % which truncate).
The two must agree; the result is written to expected/.
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


def cdiv(a, b):
    """Integer division truncating toward zero (C / Souffle semantics)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def cmod(a, b):
    """Remainder with the sign of the dividend (C / Souffle semantics)."""
    return a - b * cdiv(a, b)


assert (cdiv(-7, 2), cmod(-7, 2), cdiv(7, -2), cmod(7, -2)) == (-3, -1, -3, 1)


def substr(s, start, length):
    assert 0 <= start <= len(s) and length >= 0, "keep substr calls in range"
    return s[start:start + length]


def to_number(s):
    assert s.lstrip("-").isdigit(), s
    return int(s, 10)


# ---------------------------------------------------------------- method 1
def compute_python(employee, adjustment):
    out = {k: set() for k in ["email", "initials", "suffix", "name_length", "id_number",
                              "hired_on", "pay", "raised", "badge", "adjusted",
                              "adjustment_label", "senior_or_top", "h2_hires",
                              "same_initials", "modest_pay"]}
    adjusted_ids = {i for (i, _) in adjustment}
    tenure, salary = {}, {}
    for (i, f, l, dept, h, sal) in employee:
        out["email"].add((i, f + "." + l + "@example.com"))
        out["initials"].add((i, substr(f, 0, 1) + substr(l, 0, 1)))
        out["suffix"].add((i, substr(l, len(l) - 3, 3)))
        out["name_length"].add((i, len(f) + len(l)))
        n = to_number(substr(i, 1, len(i) - 1))
        out["id_number"].add((i, n, cmod(n, 3)))
        y, m, d = to_number(substr(h, 0, 4)), to_number(substr(h, 5, 2)), to_number(substr(h, 8, 2))
        out["hired_on"].add((i, y, m, d))
        t = 2024 - y
        s = to_number(sal)
        tenure[i], salary[i] = t, s
        out["pay"].add((i, s, cdiv(s, 12), cmod(s, 12)))
        out["raised"].add((i, s + cdiv(s * min(t, 10), 100)))
        out["badge"].add((i, dept + "-" + str(y)))
        if t >= 12 or s > 130000:
            out["senior_or_top"].add((i,))
        if 7 <= m <= 12 and dept in ("ENG", "OPS") and i not in adjusted_ids:
            out["h2_hires"].add((i,))
        if len(dept) <= 3 and s < 100000 and s != 98000:
            out["modest_pay"].add((i,))
    for (i, d) in adjustment:
        out["adjusted"].add((i, cdiv(d, 7), cmod(d, 7), -d, max(-100, min(100, d))))
        out["adjustment_label"].add((i, str(d) + " -> " + str(d * 3 - 10)))
    out["same_initials"] = {(a, b) for (a, x) in out["initials"] for (b, y) in out["initials"]
                            if x == y and a != b}
    return out


# ---------------------------------------------------------------- method 2
def compute_duckdb(employee, adjustment):
    import duckdb

    con = duckdb.connect()
    con.execute("""CREATE TABLE employee(id VARCHAR, first VARCHAR, last VARCHAR,
                   dept VARCHAR, hired VARCHAR, salary VARCHAR)""")
    con.executemany("INSERT INTO employee VALUES (?, ?, ?, ?, ?, ?)", sorted(employee))
    con.execute("CREATE TABLE adjustment(id VARCHAR, delta INTEGER)")
    con.executemany("INSERT INTO adjustment VALUES (?, ?)", sorted(adjustment))
    con.execute("""CREATE TABLE e AS SELECT *,
                   CAST(substr(hired, 1, 4) AS INTEGER) AS y,
                   CAST(substr(hired, 6, 2) AS INTEGER) AS m,
                   CAST(substr(hired, 9, 2) AS INTEGER) AS d,
                   2024 - CAST(substr(hired, 1, 4) AS INTEGER) AS t,
                   CAST(salary AS INTEGER) AS s,
                   substr(first, 1, 1) || substr(last, 1, 1) AS ini
                   FROM employee""")
    q = lambda sql: set(con.execute(sql).fetchall())
    return {
        "email": q("SELECT id, first || '.' || last || '@example.com' FROM e"),
        "initials": q("SELECT id, ini FROM e"),
        "suffix": q("SELECT id, substr(last, length(last) - 2, 3) FROM e"),
        "name_length": q("SELECT id, length(first) + length(last) FROM e"),
        "id_number": q("""SELECT id, n, n % 3 FROM
                          (SELECT id, CAST(substr(id, 2, length(id) - 1) AS INTEGER) AS n FROM e)"""),
        "hired_on": q("SELECT id, y, m, d FROM e"),
        "pay": q("SELECT id, s, s // 12, s % 12 FROM e"),
        "raised": q("SELECT id, s + s * least(t, 10) // 100 FROM e"),
        "badge": q("SELECT id, dept || '-' || CAST(y AS VARCHAR) FROM e"),
        "adjusted": q("""SELECT id, delta // 7, delta % 7, -delta,
                         greatest(-100, least(100, delta)) FROM adjustment"""),
        "adjustment_label": q("""SELECT id, CAST(delta AS VARCHAR) || ' -> '
                                 || CAST(delta * 3 - 10 AS VARCHAR) FROM adjustment"""),
        "senior_or_top": q("SELECT id FROM e WHERE t >= 12 OR s > 130000"),
        "h2_hires": q("""SELECT id FROM e WHERE m BETWEEN 7 AND 12 AND dept IN ('ENG', 'OPS')
                         AND id NOT IN (SELECT id FROM adjustment)"""),
        "same_initials": q("SELECT a.id, b.id FROM e a JOIN e b ON a.ini = b.ini AND a.id <> b.id"),
        "modest_pay": q("SELECT id FROM e WHERE length(dept) <= 3 AND s < 100000 AND s <> 98000"),
    }


def main():
    employee = read_facts("employee", "ssssss")
    adjustment = read_facts("adjustment", "sn")
    py = compute_python(employee, adjustment)
    db = compute_duckdb(employee, adjustment)
    for rel in py:
        assert py[rel] == db[rel], f"python and duckdb disagree on {rel}: {py[rel] ^ db[rel]}"
    write_outputs(py)
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
