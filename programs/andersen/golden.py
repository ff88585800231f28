#!/usr/bin/env python3
"""Golden outputs for programs/andersen, computed without the engine.

Method 1: naive fixpoint in plain Python (all four rules re-applied until
nothing changes).
Method 2: the same rules solved by clingo.
The two must agree; the result is written to expected/.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def read_facts(name, types):
    """types: one letter per column, n=number, s=symbol, f=float."""
    conv = {"n": int, "s": str, "f": float}
    rows = set()
    with open(os.path.join(HERE, "facts", name + ".facts"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            assert len(fields) == len(types), (name, line)
            rows.add(tuple(conv[t](v) for t, v in zip(types, fields)))
    return rows


def fmt(v):
    return repr(v) if isinstance(v, float) else str(v)


def write_outputs(outputs, printsizes=()):
    prog = open(os.path.join(HERE, "prog.dl"), encoding="utf-8").read()
    declared_out = re.findall(r"^\s*\.output\s+(\w+)", prog, re.M)
    declared_ps = re.findall(r"^\s*\.printsize\s+(\w+)", prog, re.M)
    assert sorted(declared_out) == sorted(outputs), (declared_out, sorted(outputs))
    assert [n for n, _ in printsizes] == declared_ps, (declared_ps, printsizes)
    out = os.path.join(HERE, "expected")
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))
    for name, rows in outputs.items():
        with open(os.path.join(out, name + ".csv"), "w", encoding="utf-8", newline="") as f:
            for row in sorted(rows):
                f.write("\t".join(fmt(v) for v in row) + "\n")
    if printsizes:
        with open(os.path.join(out, "stdout.txt"), "w", encoding="utf-8", newline="") as f:
            for name, n in printsizes:
                f.write(f"{name}\t{n}\n")


def clingo_model(program, facts):
    """Solve a stratified ASP program; return {predicate: set of tuples}."""
    import clingo

    def term(v):
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(v)

    text = [program]
    for name, rows in facts.items():
        for row in rows:
            text.append(f"{name}({','.join(term(v) for v in row)}).")
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], "\n".join(text))
    ctl.ground([("base", [])])
    models = []
    ctl.solve(on_model=lambda m: models.append(m.symbols(shown=True)))
    assert len(models) == 1, "stratified program must have exactly one model"
    result = {}
    for sym in models[0]:
        args = tuple(a.string if a.type == clingo.SymbolType.String else a.number
                     for a in sym.arguments)
        result.setdefault(sym.name, set()).add(args)
    return result


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
