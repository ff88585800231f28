"""clingo (Python API): ground only, then read the output predicate's atoms.

The program is purely positive, so after grounding every atom in the symbolic
atom table is a fact; we never call solve().  Facts are handed to clingo as one
program string; symbols become clingo strings.
"""
from __future__ import annotations


from .common import load, python_command, write_rows

NAME = "clingo"


def command(workdir, outdir):
    return python_command("clingo", workdir, outdir, "clingo")


def term(value) -> str:
    if isinstance(value, int):
        return str(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def atom(a) -> str:
    return f"{a[0]}({','.join(v.upper() for v in a[1:])})"


def program(meta) -> str:
    return "\n".join(f"{atom(h)} :- {', '.join(atom(b) for b in body)}."
                     for h, body in meta["rules"])


def main(workdir: str, outdir: str) -> None:
    import clingo

    meta, facts = load(workdir)
    parts = [program(meta)]
    for rel, rows in facts.items():
        parts.append("".join(f"{rel}({','.join(map(term, r))}).\n" for r in rows))
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], "\n".join(parts))
    ctl.ground([("base", [])])

    def value(sym):
        return sym.number if sym.type == clingo.SymbolType.Number else sym.string

    out = meta["output"]
    atoms = ctl.symbolic_atoms.by_signature(out, len(meta["decls"][out]))
    write_rows(outdir, out, (tuple(value(a) for a in sa.symbol.arguments) for sa in atoms))

