"""Shared pieces of the workspace tests: a program with recursion, negation and an aggregate, a
deterministic stream of commits, and the from-scratch oracle (a fresh engine, never a workspace)."""

from __future__ import annotations

import random

from datalog.engine.engine import Engine
from datalog.language.errors import DatalogError

PROGRAM = """\
.decl e(x: number, y: number)
.decl v(x: number)
.decl path(x: number, y: number)
.output path
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
iso(x) :- v(x), !path(x, _).
deg(x, c) :- v(x), c = count : e(x, _).
total(s) :- s = sum y : e(_, y).
v(1). v(2). v(3). v(4). v(5).
e(1, 2). e(2, 3). e(4, 4).
.decl iso(c0: number)
.decl deg(c0: number, c1: number)
.decl total(c0: number)
"""

EDB = {"e": {(1, 2), (2, 3), (4, 4)}, "v": {(1,), (2,), (3,), (4,), (5,)}}


# the same without aggregates: LFTJ rules only
PLAIN = "\n".join(line for line in PROGRAM.splitlines() if "deg" not in line and "total" not in line) + \
    "\n.decl h(x: number)\nh(x) :- e(x, 3), !v(x).\n"

# every kind of aggregate, and one (a disjunction inside) that falls back to whole-rule evaluation
AGGREGATES = PROGRAM + """\
.decl lo(x: number, m: number)
.decl hi(x: number, m: number)
.decl avg(x: number, m: float)
.decl both(s: number)
.decl big(x: number)
lo(x, m) :- v(x), m = min y : e(x, y).
hi(x, m) :- v(x), m = max y : e(x, y).
avg(x, m) :- v(x), m = mean y : e(x, y).
both(s) :- s = sum y : { e(_, y) ; e(y, _) }.
big(x) :- v(x), x > count : e(_, _).
"""

# theta-join rules: a T-reduct whose head another rule reads (materialized), a virtual full
# query, and two §7 views (projections that are not free-connex, not materialized)
THETA = """\
.decl e(x: number, y: number)
.decl v(x: number)
.decl lt(x: number, y: number)
.output lt
lt(x, y) :- v(x), e(y, _), x < y.
far(x, z) :- e(x, y), v(z), y < z.
pair(x, y, z, w) :- e(x, y), e(z, w), y < z.
proj(x, w) :- e(x, y), e(z, w), y < z + 1.
uses(x) :- lt(x, _), !v(x).
v(1). v(2). v(3). v(4). v(5).
e(1, 2). e(2, 3). e(4, 4).
.decl far(c0: number, c1: number)
.decl pair(c0: number, c1: number, c2: number, c3: number)
.decl proj(c0: number, c1: number)
.decl uses(c0: number)
"""


def commit_of(k: int) -> tuple[dict, dict]:
    """Commit number ``k`` (from 1) of the stream: a few inserts and retracts."""
    rng = random.Random(k)
    inserts, retracts = {}, {}
    for _ in range(rng.randint(1, 3)):
        relation = rng.choice(["e", "e", "v"])
        row = (rng.randint(0, 6), rng.randint(0, 6)) if relation == "e" else (rng.randint(0, 7),)
        (inserts if rng.random() < 0.6 else retracts).setdefault(relation, []).append(row)
    for relation, rows in retracts.items():             # a row both inserted and retracted: keep the insert
        retracts[relation] = [r for r in rows if r not in inserts.get(relation, [])]
    return inserts, retracts


def edb_after(n: int, base: dict = EDB) -> dict[str, set]:
    """The EDB after commits 1..n of the stream."""
    tables = {name: set(rows) for name, rows in base.items()}
    for k in range(1, n + 1):
        inserts, retracts = commit_of(k)
        for name, rows in retracts.items():
            tables[name] -= set(rows)
        for name, rows in inserts.items():
            tables[name] |= set(rows)
    return tables


def from_scratch(program: str, edb: dict[str, set]) -> dict[str, set]:
    """Every relation of ``program`` evaluated from scratch with exactly ``edb`` as its EDB."""
    engine = Engine.from_source(program)
    for name, rows in edb.items():
        relation = engine.db[name]
        relation.erase(list(relation.tuples))
        engine.insert(name, rows)
    engine.run()
    return {name: set(engine.db[name].tuples) for name in engine.relations()}


def contents(engine) -> dict[str, set]:
    return {name: set(engine.db[name].tuples) for name in engine.relations()}


def state(engine) -> dict[str, set]:
    """Every relation's rows, read through the API (``engine_broken`` if the engine refuses)."""
    return {name: set(engine.rows(name)) for name in engine.relations()}


def broken(engine) -> bool:
    """Whether the engine refuses work as broken (``engine_broken``, saying how to recover)."""
    try:
        engine.rows("path")
    except DatalogError as exc:
        assert exc.code == "engine_broken", exc.render()
        assert "open the workspace again" in exc.message.lower()
        return True
    return False


# ---------------------------------------------------------------- a stream with program changes
BLOCK = """\
.decl hop2(x: number, y: number)
hop2(x, z) :- e(x, y), e(y, z).
.decl reach1(y: number)
reach1(y) :- path(1, y).
"""


def step(ws, k: int) -> None:
    """Step ``k`` of the stream with program changes: ``addblock`` at k = 5 (mod 10),
    ``removeblock`` at k = 8 (mod 10), else commit ``k``."""
    if k % 10 == 5:
        ws.addblock("hops", BLOCK)
    elif k % 10 == 8:
        ws.removeblock("hops")
    else:
        ws.engine.commit(*commit_of(k))


def expected_after_steps(n: int) -> dict[str, set]:
    """Every relation after steps 1..n, from scratch."""
    tables = {name: set(rows) for name, rows in EDB.items()}
    for k in range(1, n + 1):
        if k % 10 in (5, 8):
            continue
        inserts, retracts = commit_of(k)
        for name, rows in retracts.items():
            tables[name] -= set(rows)
        for name, rows in inserts.items():
            tables[name] |= set(rows)
    return from_scratch(PROGRAM + (BLOCK if n % 10 in (5, 6, 7) else ""), tables)
