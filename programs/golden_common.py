"""What every programs/*/golden.py shares: reading its facts, writing expected/, and
(for those checked against clingo) solving the program's ASP twin.

Each function takes the program's directory first; a golden script binds it with
``functools.partial``. Golden scripts compute expected outputs without the engine.
"""
import os
import re


def read_facts(here, name, types):
    """types: one letter per column, n=number, s=symbol, f=float."""
    conv = {"n": int, "s": str, "f": float}
    rows = set()
    with open(os.path.join(here, "facts", name + ".facts"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            assert len(fields) == len(types), (name, line)
            rows.add(tuple(conv[t](v) for t, v in zip(types, fields)))
    return rows


def fmt(v):
    return repr(v) if isinstance(v, float) else str(v)


def write_outputs(here, outputs, printsizes=()):
    prog = open(os.path.join(here, "prog.dl"), encoding="utf-8").read()
    declared_out = re.findall(r"^\s*\.output\s+(\w+)", prog, re.M)
    declared_ps = re.findall(r"^\s*\.printsize\s+(\w+)", prog, re.M)
    assert sorted(declared_out) == sorted(outputs), (declared_out, sorted(outputs))
    assert [n for n, _ in printsizes] == declared_ps, (declared_ps, printsizes)
    out = os.path.join(here, "expected")
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
