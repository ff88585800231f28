#!/usr/bin/env python3
"""Golden outputs for programs/andersen, computed without the engine.

Method 1: naive fixpoint in plain Python (all four rules re-applied until
nothing changes).
Method 2: the same rules solved by clingo.
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
def compute_python(new, assign, load, store):
    pts = set(new)
    heap = set()
    while True:
        pts2 = set(pts)
        heap2 = set(heap)
        for to, frm in assign:
            pts2 |= {(to, o) for (v, o) in pts if v == frm}
        for to, base in load:
            for (v, b) in pts:
                if v == base:
                    pts2 |= {(to, o) for (b2, o) in heap if b2 == b}
        for base, frm in store:
            for (v, b) in pts:
                if v == base:
                    heap2 |= {(b, o) for (w, o) in pts if w == frm}
        if pts2 == pts and heap2 == heap:
            break
        pts, heap = pts2, heap2
    alias = {(x, y) for (x, o) in pts for (y, o2) in pts if o == o2 and x != y}
    return {"pointsTo": pts, "heapPointsTo": heap, "alias": alias}


# ---------------------------------------------------------------- method 2
ASP = """
pointsTo(V, O) :- new(V, O).
pointsTo(To, O) :- assign(To, From), pointsTo(From, O).
pointsTo(To, O) :- load(To, Base), pointsTo(Base, B), heapPointsTo(B, O).
heapPointsTo(B, O) :- store(Base, From), pointsTo(Base, B), pointsTo(From, O).
alias(X, Y) :- pointsTo(X, O), pointsTo(Y, O), X != Y.
#show pointsTo/2.
#show heapPointsTo/2.
#show alias/2.
"""


def main():
    facts = {name: read_facts(name, "ss") for name in ("new", "assign", "load", "store")}
    py = compute_python(facts["new"], facts["assign"], facts["load"], facts["store"])
    asp = clingo_model(ASP, facts)
    for rel in py:
        assert py[rel] == asp.get(rel, set()), f"python and clingo disagree on {rel}"
    write_outputs({"pointsTo": py["pointsTo"], "heapPointsTo": py["heapPointsTo"]},
                  printsizes=[("alias", len(py["alias"]))])
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
