#!/usr/bin/env python3
"""Golden outputs for programs/max_sales_per_region, computed without the engine.

Method 1: plain Python group-bys over the set of sales tuples.
Method 2: DuckDB SQL (GROUP BY / window-free joins) over the same tuples.
The two must agree; the result is written to expected/.
Note: aggregates range over tuples, so two salespeople booking the same amount
in a region both count towards sum and count.
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)


# ---------------------------------------------------------------- method 1
def compute_python(sales, region):
    regions = {r for (r,) in region}
    amounts = {r: [a for (r2, _, a) in sales if r2 == r] for r in regions}
    region_total = {(r, sum(xs)) for r, xs in amounts.items()}
    totals = dict(region_total)
    people = {p for (_, p, _) in sales}
    person_total = {(p, sum(a for (_, q, a) in sales if q == p)) for p in people}
    top = max(t for (_, t) in person_total)
    return {
        "best": {(r, p, a) for (r, p, a) in sales if a == max(amounts[r])},
        "best_amount": {(r, max(xs)) for r, xs in amounts.items() if xs},
        "smallest_sale": {(r, min(xs)) for r, xs in amounts.items() if xs},
        "region_total": region_total,
        "region_count": {(r, len(xs)) for r, xs in amounts.items()},
        "grand_total": {(sum(a for (_, _, a) in sales),)},
        "share": {(r, p, a * 100 // totals[r]) for (r, p, a) in sales},  # all positive
        "person_total": person_total,
        "top_seller": {(p, t) for (p, t) in person_total if t == top},
    }


# ---------------------------------------------------------------- method 2
def compute_duckdb(sales, region):
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE sales(region VARCHAR, person VARCHAR, amount INTEGER)")
    con.executemany("INSERT INTO sales VALUES (?, ?, ?)", sorted(sales))
    con.execute("CREATE TABLE region(r VARCHAR)")
    con.executemany("INSERT INTO region VALUES (?)", sorted(region))
    q = lambda sql: set(con.execute(sql).fetchall())
    con.execute("""CREATE TABLE region_total AS
                   SELECT r.r AS region, coalesce(sum(s.amount), 0)::INTEGER AS total
                   FROM region r LEFT JOIN sales s ON s.region = r.r GROUP BY r.r""")
    con.execute("""CREATE TABLE person_total AS
                   SELECT person, sum(amount)::INTEGER AS total FROM sales GROUP BY person""")
    return {
        "best": q("""SELECT s.region, s.person, s.amount FROM sales s
                     WHERE s.amount = (SELECT max(amount) FROM sales t WHERE t.region = s.region)"""),
        "best_amount": q("SELECT region, max(amount) FROM sales GROUP BY region"),
        "smallest_sale": q("SELECT region, min(amount) FROM sales GROUP BY region"),
        "region_total": q("SELECT region, total FROM region_total"),
        "region_count": q("""SELECT r.r, count(s.amount)::INTEGER FROM region r
                             LEFT JOIN sales s ON s.region = r.r GROUP BY r.r"""),
        "grand_total": q("SELECT coalesce(sum(amount), 0)::INTEGER FROM sales"),
        "share": q("""SELECT s.region, s.person, (s.amount * 100 // t.total)::INTEGER
                      FROM sales s JOIN region_total t ON t.region = s.region"""),
        "person_total": q("SELECT person, total FROM person_total"),
        "top_seller": q("""SELECT person, total FROM person_total
                           WHERE total = (SELECT max(total) FROM person_total)"""),
    }


def main():
    sales = read_facts("sales", "ssn")
    region = read_facts("region", "s")
    py = compute_python(sales, region)
    db = compute_duckdb(sales, region)
    for rel in py:
        assert py[rel] == db[rel], f"python and duckdb disagree on {rel}"
    write_outputs(py)
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
