#!/usr/bin/env python3
"""Golden outputs for programs/bill_of_materials, computed without the engine.

Method 1: mirror the Datalog rules in plain Python: a fixpoint over
(assembly, part, multiplicity, path) occurrences, then group-by sums.
Method 2: a different algorithm: memoised recursive roll-up over the part DAG
(cost(x) = labour(x) + sum qty * cost(child); qty(a, p) likewise) with no paths.
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


# ---------------------------------------------------------------- method 1
def compute_python(subpart, unit_cost, labor):
    unit = dict(unit_cost)
    lab = dict(labor)
    assembly = {a for (a, _, _) in subpart}
    includes = {(a, p, q, p) for (a, p, q) in subpart}
    delta = set(includes)
    while delta:
        new = set()
        for (a, s, q1, path1) in delta:
            for (s2, p, q2) in subpart:
                if s2 == s:
                    new.add((a, p, q1 * q2, path1 + "/" + p))
        new -= includes
        includes |= new
        delta = new
    line_cost = set()
    for (a, p, q, path) in includes:
        if p in unit:
            line_cost.add((a, path, q * unit[p]))
        if p in lab:
            line_cost.add((a, path, q * lab[p]))
    total_cost = {(a, lab[a] + sum(c for (b, _, c) in line_cost if b == a))
                  for a in assembly if a in lab}
    needs = {(a, p) for (a, p, _, _) in includes if p in unit}
    part_total = {(a, p, sum(q for (b, r, q, _) in includes if (b, r) == (a, p)))
                  for (a, p) in needs}
    part_kinds = {(a, sum(1 for (b, _) in needs if b == a)) for a in assembly}
    spend = {(a, p, n * unit[p]) for (a, p, n) in part_total}
    top_spend = {(a, p, c) for (a, p, c) in spend
                 if c == max(x for (b, _, x) in spend if b == a)}
    product = {(a,) for a in assembly if not any(p == a for (_, p, _) in subpart)}
    return {"product": product, "total_cost": total_cost, "part_total": part_total,
            "part_kinds": part_kinds, "top_spend": top_spend}, len(includes)


# ---------------------------------------------------------------- method 2
def compute_memo(subpart, unit_cost, labor):
    unit = dict(unit_cost)
    lab = dict(labor)
    children = {}
    for a, p, q in subpart:
        children.setdefault(a, []).append((p, q))

    @functools.lru_cache(maxsize=None)
    def cost(x):
        if x not in children:
            return unit[x]
        return lab[x] + sum(q * cost(p) for p, q in children[x])

    @functools.lru_cache(maxsize=None)
    def qty(x):
        """{basic part: units needed} for one unit of x."""
        if x not in children:
            return {x: 1}
        total = {}
        for p, q in children[x]:
            for b, n in qty(p).items():
                total[b] = total.get(b, 0) + q * n
        return total

    @functools.lru_cache(maxsize=None)
    def occurrences(x):
        """number of (part, path) occurrences strictly below x."""
        return sum(1 + occurrences(p) for p, _ in children.get(x, ()))

    total_cost = {(a, cost(a)) for a in children}
    part_total = {(a, b, n) for a in children for b, n in qty(a).items()}
    part_kinds = {(a, len(qty(a))) for a in children}
    top_spend = set()
    for a in children:
        best = max(n * unit[b] for b, n in qty(a).items())
        top_spend |= {(a, b, best) for b, n in qty(a).items() if n * unit[b] == best}
    used = {p for (_, p, _) in subpart}
    product = {(a,) for a in children if a not in used}
    return {"product": product, "total_cost": total_cost, "part_total": part_total,
            "part_kinds": part_kinds, "top_spend": top_spend}, sum(occurrences(a) for a in children)


def main():
    subpart = read_facts("subpart", "ssn")
    unit_cost = read_facts("unit_cost", "sn")
    labor = read_facts("labor", "sn")
    # sanity: basic parts and assemblies are disjoint and every assembly has labour
    assemblies = {a for (a, _, _) in subpart}
    assert assemblies == {a for (a, _) in labor}
    assert not assemblies & {p for (p, _) in unit_cost}
    assert {p for (_, p, _) in subpart} - assemblies <= {p for (p, _) in unit_cost}
    py, n_includes = compute_python(subpart, unit_cost, labor)
    memo, n_occ = compute_memo(subpart, unit_cost, labor)
    for rel in py:
        assert py[rel] == memo[rel], f"fixpoint and memoised roll-up disagree on {rel}"
    assert n_includes == n_occ
    write_outputs(py, printsizes=[("includes", n_includes)])
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")
    print("includes:", n_includes)


if __name__ == "__main__":
    main()
