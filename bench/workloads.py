"""Seeded workload generators.

A workload is a small Datalog program (kept in a structured form so every
peer can render it in its own syntax) plus its input relations.  `write()`
lays it out on disk the Soufflé way:

    <dir>/prog.dl          the program (Soufflé syntax, for our engine)
    <dir>/<rel>.facts      tab-separated input relations
    <dir>/workload.json    kind, declarations, rules, output relation (for peers)
"""
from __future__ import annotations

import json
import random
import zlib
from dataclasses import dataclass, field
from pathlib import Path

Atom = tuple  # (pred, var, var, ...): variables are lowercase names
Rule = tuple  # (head_atom, [body_atoms])


@dataclass
class Workload:
    name: str
    kind: str                               # "triangles" | "tc" | "andersen" | "same_generation" | "shortest_path"
    decls: dict[str, list[str]]             # relation -> column types (number/symbol)
    rules: list[Rule]
    output: str
    size: str                               # e.g. "n=10k m=100k", for the table
    inputs: dict[str, list[tuple]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    text: str | None = None                 # the program as Soufflé source, where no structured form has it
    engines: tuple[str, ...] | None = None  # the engines that can run it (None: every one)

    def souffle(self) -> str:
        if self.text is not None:
            return self.text
        lines = []
        for rel, types in self.decls.items():
            cols = ", ".join(f"c{i}:{t}" for i, t in enumerate(types))
            lines.append(f".decl {rel}({cols})")
            if rel in self.inputs:
                lines.append(f".input {rel}")
        for head, body in self.rules:
            lines.append(f"{fmt_atom(head)} :- {', '.join(fmt_atom(a) for a in body)}.")
        lines.append(f".output {self.output}")
        return "\n".join(lines) + "\n"

    def write(self, d: Path) -> Path:
        d.mkdir(parents=True, exist_ok=True)
        for rel, rows in self.inputs.items():
            with open(d / f"{rel}.facts", "w") as f:
                f.writelines("\t".join(map(str, r)) + "\n" for r in rows)
        (d / "prog.dl").write_text(self.souffle())
        meta = {"name": self.name, "kind": self.kind, "decls": self.decls,
                "inputs": sorted(self.inputs), "rules": self.rules,
                "output": self.output, "params": self.params}
        (d / "workload.json").write_text(json.dumps(meta, indent=1))
        return d

    def describe(self) -> str:
        sizes = ", ".join(f"{r}={len(v)}" for r, v in self.inputs.items())
        return f"{self.name}: {sizes}"


def fmt_atom(a: Atom) -> str:
    return f"{a[0]}({', '.join(a[1:])})"


def load_meta(d: Path) -> dict:
    return json.loads((Path(d) / "workload.json").read_text())


def read_facts(d: Path, rel: str, types: list[str]) -> list[tuple]:
    """Read <d>/<rel>.facts, converting `number` columns to int."""
    conv = [int if t == "number" else str for t in types]
    out = []
    with open(Path(d) / f"{rel}.facts") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            out.append(tuple(c(p) for c, p in zip(conv, parts)))
    return out


def rng_for(name: str, seed: int) -> random.Random:
    return random.Random(seed * 1_000_003 + zlib.crc32(name.encode()))


# --------------------------------------------------------------- generators

def random_digraph(rng: random.Random, n: int, m: int) -> list[tuple[int, int]]:
    """m distinct directed edges on nodes 0..n-1, no self-loops."""
    assert m <= n * (n - 1)
    edges: set[tuple[int, int]] = set()
    while len(edges) < m:
        x, y = rng.randrange(n), rng.randrange(n)
        if x != y:
            edges.add((x, y))
    return sorted(edges)


def triangles(n: int, m: int, seed: int) -> Workload:
    name = f"triangles-n{_k(n)}-m{_k(m)}"
    return Workload(
        name=name, kind="triangles",
        decls={"edge": ["number"] * 2, "tri": ["number"] * 3},
        rules=[(("tri", "x", "y", "z"),
                [("edge", "x", "y"), ("edge", "y", "z"), ("edge", "z", "x")])],
        output="tri", size=f"n={_k(n)} m={_k(m)}",
        inputs={"edge": random_digraph(rng_for(name, seed), n, m)},
        params={"n": n, "m": m})


def tc(n: int, m: int, seed: int) -> Workload:
    name = f"tc-n{_k(n)}-m{_k(m)}"
    return Workload(
        name=name, kind="tc",
        decls={"edge": ["number"] * 2, "path": ["number"] * 2},
        rules=[(("path", "x", "y"), [("edge", "x", "y")]),
               (("path", "x", "z"), [("path", "x", "y"), ("edge", "y", "z")])],
        output="path", size=f"n={_k(n)} m={_k(m)}",
        inputs={"edge": random_digraph(rng_for(name, seed), n, m)},
        params={"n": n, "m": m})


# Field-insensitive Andersen analysis.  Statement mix (roughly what Doop-style
# fact extraction gives for Java): new 20%, assign 45%, load 18%, store 17%.
ANDERSEN_MIX = {"new": 0.20, "assign": 0.45, "load": 0.18, "store": 0.17}


def andersen(statements: int, seed: int, method_size: int = 12,
             module_statements: int = 500, nonlocal_frac: float = 0.1) -> Workload:
    """Variables are grouped into "methods" of `method_size` locals and methods
    into "modules" of about `module_statements` statements.  An operand is a
    local of the statement's method except with probability `nonlocal_frac`
    (parameters / returns / fields of shared objects), when it is any variable
    of the same module.  Modules keep the output bounded (at most
    vars x allocation sites per module) instead of one program-wide blob whose
    size jumps at a percolation threshold.  Every `new` is its own allocation
    site.
    """
    name = f"andersen-s{_k(statements)}"
    rng = rng_for(name, seed)
    n_modules = max(1, statements // module_statements)
    vars_per_module = max(method_size, module_statements // 2)
    methods_per_module = vars_per_module // method_size

    def local(module: int, method: int) -> str:
        return f"v{module * vars_per_module + method * method_size + rng.randrange(method_size)}"

    def var(module: int, method: int) -> str:
        if rng.random() < nonlocal_frac:
            return f"v{module * vars_per_module + rng.randrange(vars_per_module)}"
        return local(module, method)

    rels: dict[str, set] = {k: set() for k in ANDERSEN_MIX}
    kinds, weights = zip(*ANDERSEN_MIX.items())
    n_new = 0
    for _ in range(statements):
        k = rng.choices(kinds, weights)[0]
        mod, meth = rng.randrange(n_modules), rng.randrange(methods_per_module)
        if k == "new":
            rels[k].add((local(mod, meth), f"h{n_new}"))
            n_new += 1
        else:
            rels[k].add((var(mod, meth), var(mod, meth)))
    P, H = "pointsTo", "heapPointsTo"
    return Workload(
        name=name, kind="andersen",
        decls={"new": ["symbol"] * 2, "assign": ["symbol"] * 2,
               "load": ["symbol"] * 2, "store": ["symbol"] * 2,
               P: ["symbol"] * 2, H: ["symbol"] * 2},
        rules=[
            ((P, "v", "h"), [("new", "v", "h")]),
            # v = w
            ((P, "v", "h"), [("assign", "v", "w"), (P, "w", "h")]),
            # v = *w
            ((P, "v", "h"), [("load", "v", "w"), (P, "w", "g"), (H, "g", "h")]),
            # *v = w
            ((H, "g", "h"), [("store", "v", "w"), (P, "v", "g"), (P, "w", "h")]),
        ],
        output=P, size=f"{_k(statements)} stmts",
        inputs={k: sorted(v) for k, v in rels.items()},
        params={"statements": statements, "method_size": method_size,
                "module_statements": module_statements, "nonlocal_frac": nonlocal_frac})


def _k(x: int) -> str:
    return f"{x // 1000}k" if x >= 1000 and x % 1000 == 0 else str(x)


# --------------------------------------- the example programs, their inputs scaled

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
SOUFFLE_ONLY = ("ours", "souffle", "souffle-compiled")      # engines that read the program's own text


def same_generation(scale: int, seed: int) -> Workload:
    """programs/same_generation/prog.dl (sg with `x != y`, a count per person) over its family tree
    of five generations, each ``scale`` times as large (4, 8, 14, 20, 24 people at x1), every person
    outside the oldest one with one parent (35%) or two of the generation before."""
    name = f"same_generation-x{scale}"
    rng = rng_for(name, seed)
    generations = [[f"g{g}p{i}" for i in range(size * scale)] for g, size in enumerate((4, 8, 14, 20, 24))]
    parents = [(child, parent) for older, younger in zip(generations, generations[1:]) for child in younger
               for parent in rng.sample(older, 1 if rng.random() < 0.35 else 2)]
    return Workload(name=name, kind="same_generation",
                    decls={"parent": ["symbol"] * 2, "sg": ["symbol"] * 2}, rules=[], output="sg",
                    size=f"x{scale}", inputs={"parent": parents}, params={"scale": scale},
                    text=(PROGRAMS / "same_generation" / "prog.dl").read_text(), engines=SOUFFLE_ONLY)


def shortest_path(towns: int, seed: int) -> Workload:
    """programs/shortest_path_min/prog.dl (walks up to 24 km and 5 hops, their min per pair, pairs
    out of range, each town's max) over ``towns`` towns with 30/14 one-way roads a town of 1-9 km, as
    its own 14 towns have; the last town has roads in only, the first roads out only."""
    name = f"shortest_path-{towns}"
    rng = rng_for(name, seed)
    names = [f"t{i}" for i in range(towns)]
    roads: dict[tuple[str, str], int] = {}
    while len(roads) < round(towns * 30 / 14):
        x, y = rng.sample(names, 2)
        if x != names[-1] and y != names[0]:
            roads.setdefault((x, y), rng.randint(1, 9))
    return Workload(name=name, kind="shortest_path",
                    decls={"road": ["symbol", "symbol", "number"], "shortest": ["symbol", "symbol", "number"]},
                    rules=[], output="shortest", size=f"{towns} towns",
                    inputs={"road": [(x, y, w) for (x, y), w in roads.items()]}, params={"towns": towns},
                    text=(PROGRAMS / "shortest_path_min" / "prog.dl").read_text(), engines=SOUFFLE_ONLY)

