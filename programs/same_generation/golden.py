#!/usr/bin/env python3
"""Golden outputs for programs/same_generation, computed without the engine.

Method 1: semi-naive fixpoint in plain Python.
Method 2: the same rules as an ASP program solved by clingo (stratified, so the
unique answer set is the Datalog model).
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
