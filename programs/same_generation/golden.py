#!/usr/bin/env python3
"""Golden outputs for programs/same_generation, computed without the engine.

Method 1: semi-naive fixpoint in plain Python.
Method 2: the same rules as an ASP program solved by clingo (stratified, so the
unique answer set is the Datalog model).
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
clingo_model = golden_common.clingo_model


# ---------------------------------------------------------------- method 1
def compute_python(parent):
    children_of = {}
    for c, p in parent:
        children_of.setdefault(p, set()).add(c)
    person = {c for c, _ in parent} | {p for _, p in parent}
    sg = {(x, y) for (x, p) in parent for (y, p2) in parent if p == p2 and x != y}
    delta = set(sg)
    while delta:
        new = set()
        for a, b in delta:
            for x in children_of.get(a, ()):
                for y in children_of.get(b, ()):
                    if x != y and (x, y) not in sg:
                        new.add((x, y))
        sg |= new
        delta = new
    sg_count = {(x, sum(1 for (a, _) in sg if a == x)) for x in person}
    return {"sg": sg, "sg_count": sg_count}


# ---------------------------------------------------------------- method 2
ASP = """
person(X) :- parent(X, _).
person(X) :- parent(_, X).
sg(X, Y) :- parent(X, P), parent(Y, P), X != Y.
sg(X, Y) :- parent(X, A), sg(A, B), parent(Y, B), X != Y.
sg_count(X, N) :- person(X), N = #count { Y : sg(X, Y) }.
#show sg/2.
#show sg_count/2.
"""


def main():
    parent = read_facts("parent", "ss")
    py = compute_python(parent)
    asp = clingo_model(ASP, {"parent": parent})
    for rel in py:
        assert py[rel] == asp.get(rel, set()), f"python and clingo disagree on {rel}"
    write_outputs(py, printsizes=[("sg", len(py["sg"]))])
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
