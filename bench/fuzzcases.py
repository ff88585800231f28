"""Hostile inputs, shared by the fuzz tests (tests/test_fuzz_inputs.py) and the soak campaign
(bench/soak.py): fact files, updates files and forged workspace records, each drawn from a
``random.Random`` (the tests pass Hypothesis's, which shrinks; the soak a seeded one), and how a
step's outcome is classified.

The contract every input is held to: the engine answers or raises a ``DatalogError`` with a code;
never another exception, never a hang, never a write outside the directories it was given.
This module is data and small helpers only: running the engine is the caller's business (the
tests use the Python API, the soak the command line in a worker process).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from datalog.language.errors import DatalogError
from datalog.workspace import format as wsfile

# ---------------------------------------------------------------- values a fact file may hold

NUMBERS = ["0", "-3", "42", "7", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
           "9223372036854775808", "-9223372036854775809", "1" * 40, "1" * 4301, "0x1f", "-0x10", "1_000",
           " 7", "7 ", "+5", "00012", "-0", "\u0663", "\u0661\u0662", "\uff11\uff12", "1e3", "1.0", "", "nan",
           "inf", "abc", "0b101", "0o7", "1\u00a0", "\u20072"]
FLOATS = ["1.5", "-0.0", "0", "3", "1e308", "1e309", "-1e309", "inf", "-inf", "Infinity", "nan", "NaN", "-nan",
          "1_0.5", "\u0663.\u0665", "1e-400", "0x1p3", ".5", "5.", "1e", "", "abc", "1" * 400 + ".0",
          "1" * 5000, "2.5e-3", " 2.5", "\uff11.5"]
UNSIGNED = ["0", "5", "-1", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616", "1" * 4400,
            "nan", "0x10", "\u0665"]
SYMBOLS = ["a", "", "hello world", 'x"y', '"quoted"', "\u00e9", "\u200b", "a\\tb", "\U0001f642", "\U0001d7d9",
           "nan", "1", "NaN", "-0", "\ufeffbom", "a,b", "x" * 3000, "\\", "'", "\u202e"]
POOLS = {"number": NUMBERS, "float": FLOATS, "unsigned": UNSIGNED, "symbol": SYMBOLS}
# values that parse (or arguably should) but sit at an edge: NaN, infinities, beyond 64 bits, hex
EDGY = {"number": ["9223372036854775808", "1" * 40, "-9223372036854775809", "0x1f", "2147483648", "-0", "00012",
                   "+5", "1" * 4301, "4294967296"],
        "float": ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "1e309", "-1e309", "-0.0", "1e-400",
                  "5e-324"],
        "unsigned": ["4294967296", "18446744073709551616", "0", "4294967295"],
        "symbol": SYMBOLS}

# values whose meaning is not in question: a file made only of these must load as exactly them
CLEAN = {"number": ["0", "-3", "42", "7", "2147483647", "-2147483648", "100", "-1"],
         "float": ["1.5", "-2.25", "0.5", "3", "1e10", "-0.125", "2.5e-3"],
         "symbol": ["a", "b", "hello world", "\u00e9t\u00e9", "x-y", "42abc", "a.b"]}


def shorter(text: str) -> str:
    """``text`` with each run of 20 or more equal characters written ``<c x N>`` (a 5000-digit
    number in a failure message)."""
    return re.sub(r"(.)\1{19,}", lambda m: f"<{m.group(1)} x {len(m.group(0))}>", text, flags=re.S)


def clean_value(text: str, type_: str):
    """The value a clean field means."""
    return int(text) if type_ == "number" else float(text) if type_ == "float" else text


def _base(type_: str) -> str:
    return "number" if type_ == "unsigned" else type_


def _literal_of(value) -> str:
    return '"' + value + '"' if isinstance(value, str) else repr(value)


def literal(text: str, type_: str) -> str:
    """A clean field as a constant of the language (in an updates file)."""
    return '"' + text + '"' if type_ == "symbol" else text


@dataclass
class FactCase:
    """A program reading relation ``r`` from ``files`` (names in the fact directory); ``expected``
    is r's rows when every row is clean (else None: any coded outcome will do); ``insert`` a clean
    row of r as literals, for an updates file; ``hostile_output`` a filename an ``.output`` was
    given that leaves ``-D`` (a write there is a write outside)."""

    program: str
    files: dict[str, bytes]
    types: list[str]
    expected: set | None
    insert: tuple
    hostile_output: str | None = None
    delimiter: str = "\t"
    declared: bool = True

    def must_reject(self) -> bool:
        """Whether the file holds what Soufflé rejects in a declared number column: invalid UTF-8,
        an underscore or a non-ASCII character in a number field (a BOM at the start is stripped)."""
        try:
            text = self.files["r.facts"].decode("utf-8")
        except UnicodeDecodeError:
            return True
        text = text.removeprefix("\ufeff")
        numeric = [i for i, t in enumerate(self.types) if t != "symbol"]
        for line in text.split("\n"):
            fields = line.rstrip("\r").split(self.delimiter)
            if self.declared and len(fields) == len(self.types) and any(
                    "_" in fields[i] or not fields[i].isascii() for i in numeric):
                return True
        return False

    def describe(self) -> str:
        return shorter(f"program:\n{self.program}\nfiles: {self.files!r}")

    def updates(self) -> str:
        """An updates file inserting ``insert`` into r."""
        return f"+r({', '.join(_literal_of(v) for v in self.insert)}).\ncommit.\n"


def fact_case(rng, sandbox: str = "/nonexistent") -> FactCase:
    """A fact file for ``r``: random bytes, or near-valid rows (tab or other delimiter) of values
    from the pools, sometimes with a BOM, CRLF, invalid UTF-8, a row of the wrong arity; and a
    program that copies r, computes on its number columns (arithmetic, sum, count, min, max) and
    prints it. ``sandbox`` is where hostile absolute output paths point (a temporary directory)."""
    undeclared = rng.random() < 0.1
    types = [rng.choice(["number", "number", "float", "float", "symbol", "unsigned"]) for _ in range(rng.randint(1, 3))]
    if undeclared:
        types = ["number" if t == "unsigned" else t for t in types]
    delimiter = rng.choice(["\t"] * 6 + [",", ";", "|", " "])
    mode = rng.choice(["clean", "edgy", "edgy", "hostile", "hostile"])
    clean = mode == "clean"
    lines, expected = [], set()
    for _ in range(rng.randint(0, 6)):
        if clean:
            fields = [rng.choice(CLEAN[_base(t)]) for t in types]
            expected.add(tuple(clean_value(f, _base(t)) for f, t in zip(fields, types)))
        elif mode == "edgy":
            fields = [rng.choice(EDGY[t] if rng.random() < 0.5 else CLEAN[_base(t)]) for t in types]
        else:
            fields = [rng.choice(POOLS[t] if rng.random() < 0.7 else POOLS[rng.choice(list(POOLS))]) for t in types]
            if rng.random() < 0.1:
                fields = fields[:-1] if rng.random() < 0.5 else fields + [rng.choice(NUMBERS)]
            if rng.random() < 0.1:
                fields = ['"' + f + '"' for f in fields]
        lines.append(delimiter.join(fields))
    if clean and any(t == "unsigned" for t in types):
        clean = False                                    # unsigned's text is not settled here
    if clean and delimiter == " " and "symbol" in types:
        clean = False                                    # "hello world" splits
    data = "".join(line + "\n" for line in lines).encode("utf-8", errors="surrogatepass")
    if mode == "hostile":
        data = _damage(rng, data)
    elif clean and rng.random() < 0.2:
        data = b"\xef\xbb\xbf" + data                  # a BOM: stripped, the rows are the same
    elif mode == "edgy" and rng.random() < 0.3:
        data = _damage(rng, data, ["bom", "crlf", "blank"])
    if undeclared and clean:
        clean = False                                    # an undeclared column's type comes from the data
    insert = tuple(clean_value(rng.choice(CLEAN[_base(t)]), _base(t)) for t in types)
    program, hostile = fact_program(rng, types, delimiter, undeclared, sandbox)
    return FactCase(program, {"r.facts": data}, types, expected if clean else None, insert, hostile, delimiter,
                    not undeclared)


DAMAGE = ["bom", "crlf", "utf8", "nul", "bytes", "cut", "blank", "none"]


def _damage(rng, data: bytes, kinds: list[str] = DAMAGE) -> bytes:
    """One or two of: a BOM, CRLF line ends, invalid UTF-8, a NUL, random bytes, a cut."""
    for _ in range(rng.randint(1, 2)):
        kind = rng.choice(kinds)
        if kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif kind == "utf8":
            i = rng.randint(0, len(data))
            data = data[:i] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[i:]
        elif kind == "nul":
            i = rng.randint(0, len(data))
            data = data[:i] + b"\x00" + data[i:]
        elif kind == "bytes":
            data = rng.randbytes(rng.randint(0, 60))
        elif kind == "cut":
            data = data[:rng.randint(0, len(data))]
        elif kind == "blank":
            data = data + b"\n\n"
    return data


def _derived_declarations(variables: list[str], types: list[str], numeric: list[tuple[str, str]]) -> list[str]:
    """The ``.decl`` of each relation :func:`fact_program` derives: the copy ``s``, per numeric
    column the arithmetic, aggregates and comparison of its type, to_string and to_float."""
    lines = [f".decl s({', '.join(f'{v}: {t}' for v, t in zip(variables, types))})", ".decl n(c: number)"]
    for v, t in numeric:
        lines += [f".decl {kind}_{v}(y: {t})" for kind in ("a", "sum", "lo", "hi", "cmp")]
        lines += [f".decl str_{v}(y: symbol)"] if t == "float" else []
        lines += [f".decl flt_{v}(y: float)"] if t == "number" else []
    return lines


def fact_program(rng, types: list[str], delimiter: str, undeclared: bool, sandbox: str) -> tuple[str, str | None]:
    """``.decl r``, ``.input r``, a copy ``s`` of r (output), and rules computing on r's columns."""
    variables = [f"x{i}" for i in range(len(types))]
    params = f'(delimiter="{delimiter}")' if delimiter != "\t" else ""
    lines = [] if undeclared else [f".decl r({', '.join(f'{v}: {t}' for v, t in zip(variables, types))})"]
    # plain Datalog (undeclared) reads files but names no relation in .output or .printsize (Soufflé's rule)
    out = (lambda line: []) if undeclared else (lambda line: [line])
    lines += [f".input r{params}", f"s({', '.join(variables)}) :- r({', '.join(variables)}).", *out(".output s")]
    numeric = [(v, t) for v, t in zip(variables, types) if t != "symbol"]
    body = f"r({', '.join(variables)})"
    for v, t in numeric[:2]:
        op = rng.choice(["+ 1", "* 2", "- 1", "/ 2", "+ " + v])
        lines.append(f"a_{v}(y) :- {body}, y = {v} {op}.")
        lines.append(f"sum_{v}(y) :- y = sum {v} : {{ {body} }}.")
        lines.append(f"lo_{v}(y) :- y = min {v} : {{ {body} }}.")
        lines.append(f"hi_{v}(y) :- y = max {v} : {{ {body} }}.")
        lines.append(f"cmp_{v}({v}) :- {body}, {v} < {v} + 1.")
        if t == "float":
            lines.append(f"str_{v}(y) :- {body}, y = to_string({v}).")
        if t == "number":
            lines.append(f"flt_{v}(y) :- {body}, y = to_float({v}).")
        lines += out(f".output sum_{v}")
    lines.append(f"n(c) :- c = count : {{ {body} }}.")
    lines += out(".printsize n")
    if not undeclared:                                  # a program with a .decl declares every relation
        lines += _derived_declarations(variables, types, numeric[:2])
    hostile = None
    if rng.random() < 0.08 and not undeclared:          # an output path that leaves -D
        hostile = rng.choice(["../outside.csv", "sub/../../x.csv", f"{sandbox}/outside-abs.csv", "../F/r.facts"])
        lines.append(f'.output n(filename="{hostile}")')
    return "\n".join(lines) + "\n", hostile


# ---------------------------------------------------------------- programs at the edges of numbers

NUMBER_TERMS = ["0", "1", "-1", "7", "2147483647", "-2147483648", "9223372036854775807", "9223372036854775808",
                "-9223372036854775809", "1" * 40, "0x7fffffffffffffff", "2 ^ 62", "2 ^ 63", "2 ^ 64",
                "2 ^ 400", "-(2 ^ 63)", "3 ^ -2", "10 ^ 400", "to_number(\"12\")", "strlen(\"abc\")"]
FLOAT_TERMS = ["1.5", "0.0", "-0.0", "1e308", "-1e308", "1e-320", "1e308 * 10.0", "-1e308 * 10.0",
               "1e308 * 10.0 - 1e308 * 10.0", "0.0 * (1e308 * 10.0)", "to_float(2 ^ 1023)", "to_float(1)"]
SYMBOL_TERMS = ['"a"', '"nan"', '"NaN"', '"1_0"', '"\u0663"', '" 7"', '"9223372036854775808"', '"1e5"',
                '"0x10"', "to_string(2 ^ 200)", "to_string(1e308 * 10.0)", "to_string(1e308 * 10.0 - 1e308 * 10.0)"]
# terms beyond what a value can be: each a coded error (number_out_of_range, ...) at its position
EXPLOSIVE = {"n": ["1" * 4400, "10 ^ 5000 * 10 ^ 5000"], "f": ["to_float(10 ^ 400)", "2.0 ^ 2000.0", "1e999"],
             "s": ["to_string(10 ^ 5000)", '"' + "9" * 4400 + '"']}
PROGRAM_RULES = [
    "a(z) :- n(x), n(y), z = x {op} y.", "fa(z) :- f(x), f(y), z = x {fop} y.", "p2(z) :- n(x), z = x ^ 2.",
    "sn(t) :- t = sum x : n(x).", "sf(t) :- t = sum x : f(x).", "mf(t) :- t = mean x : f(x).",
    "lo(t) :- t = min x : f(x).", "hi(t) :- t = max x : n(x).", "c(t) :- t = count : f(_).",
    "num(y) :- s(x), y = to_number(x).", "len(y) :- s(x), y = strlen(x).", "str(y) :- n(x), y = to_string(x).",
    "fstr(y) :- f(x), y = to_string(x).", "tf(y) :- n(x), y = to_float(x).", "lt(x) :- f(x), x < 1.0.",
    "eq(x, y) :- f(x), f(y), x = y.", "neg(z) :- n(x), z = -x.", "mx(z) :- n(x), n(y), z = max(x, y).",
    "ff(x) :- f(x), !f(x + 1.0).", "gap(x, y) :- n(x), n(y), x < y, y - x > 1.",
]
RULE_DECLARATIONS = {        # a program with a .decl declares every relation: each head of PROGRAM_RULES
    "a": "z: number", "fa": "z: float", "p2": "z: number", "sn": "t: number", "sf": "t: float", "mf": "t: float",
    "lo": "t: float", "hi": "t: number", "c": "t: number", "num": "y: number", "len": "y: number",
    "str": "y: symbol", "fstr": "y: symbol", "tf": "y: float", "lt": "x: float", "eq": "x: float, y: float",
    "neg": "z: number", "mx": "z: number", "ff": "x: float", "gap": "x: number, y: number",
}


@dataclass
class ProgramCase:
    """A program whose facts are numbers at the edges (beyond 64 bits, overflowing floats, NaN,
    huge literals) and whose rules compute on them; ``updates`` an updates file for it."""

    program: str
    updates: str = "+n(5).\n+f(2.5).\n-f(1.5).\ncommit.\n"
    files: dict = field(default_factory=dict)

    def describe(self) -> str:
        return shorter(f"program:\n{self.program}")


def program_case(rng, sandbox: str = "/nonexistent", extreme: bool = False) -> ProgramCase:
    """Facts n (numbers), f (floats), s (symbols) from the edge terms; a few rules over them;
    every relation an output. ``extreme`` adds ``2 ^ 40000000000`` (gigabytes: only where memory
    is capped, as in the soak's worker)."""
    lines = [".decl n(x: number)", ".decl f(x: float)", ".decl s(x: symbol)"]
    for name, terms in (("n", NUMBER_TERMS), ("f", FLOAT_TERMS), ("s", SYMBOL_TERMS)):
        lines += [f"{name}({rng.choice(EXPLOSIVE[name] if rng.random() < 0.05 else terms)})."
                  for _ in range(rng.randint(1, 4))]
    if extreme and rng.random() < 0.1:
        lines.append("n(2 ^ 40000000000).")
    for rule in rng.sample(PROGRAM_RULES, rng.randint(1, 6)):
        lines.append(rule.format(op=rng.choice("+-*/%"), fop=rng.choice(["+", "-", "*", "/", "%", "^"])))
        head = rule.split("(")[0]
        lines.append(f".decl {head}({RULE_DECLARATIONS[head]})")
    heads = sorted({line.split("(")[0] for line in lines if not line.startswith(".")})
    lines += [f".output {head}" for head in heads]
    if rng.random() < 0.1:
        lines.append(f'.output n(filename="{rng.choice(["../out-n.csv", sandbox + "/abs-n.csv"])}")')
    return ProgramCase("\n".join(lines) + "\n")


# ---------------------------------------------------------------- updates files

UPDATES_PROGRAM = """\
.decl e(x: number, y: number)
.decl w(s: symbol, f: float)
.input w
.output path
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
heavy(s, t) :- w(s, _), t = sum f : w(s, f).
big(s) :- w(s, f), f > 1.5.
deg(x, c) :- e(x, _), c = count : e(x, _).
lonely(x) :- e(x, _), !e(_, x).
e(1, 2). e(2, 3).
.decl path(x: number, y: number)
.decl heavy(s: symbol, t: float)
.decl big(s: symbol)
.decl deg(x: number, c: number)
.decl lonely(x: number)
"""
UPDATES_FACTS = {"w.facts": b"a\t1.5\nb\t2.5\n"}
EDB_TYPES = {"e": ["number", "number"], "w": ["symbol", "float"]}


@dataclass
class UpdatesCase:
    """An updates file for :data:`UPDATES_PROGRAM`; ``batches`` the clean batches it holds (each a
    list of (sign, relation, row)) when every statement is clean, else None."""

    text: bytes
    batches: list | None
    program: str = UPDATES_PROGRAM
    files: dict = field(default_factory=lambda: dict(UPDATES_FACTS))

    def describe(self) -> str:
        return shorter(f"updates file: {self.text!r}")


HOSTILE_ARGS = ["1" * 5000, "1" * 30, "9223372036854775808", "-9223372036854775809", "1e309", "-1e309", "nan",
                "inf", "0x", "0x1g", "1_0", '"\\q"', '"unterminated', '"\\u00e9"', '"\ud800"', "x", "_", "1 + 2",
                "2 ^ 400", "to_float(10 ^ 400)", '""', "-", "()", "\u0663", '"a" "b"', "1.5", "3", '"3"']


def updates_case(rng) -> UpdatesCase:
    """Batches of ``+r(...).`` / ``-r(...).`` / ``commit.``: clean ones, whose outcome is known,
    or with hostile arguments, wrong arities, unknown or derived relations, garbage, a missing
    final ``commit.``, random bytes, invalid UTF-8."""
    if rng.random() < 0.05:
        return UpdatesCase(rng.randbytes(rng.randint(0, 80)), None)
    clean = rng.random() < 0.4
    statements, batches, batch = [], [], []
    for _ in range(rng.randint(0, 12)):
        if rng.random() < 0.25:
            statements.append("commit.")
            batches.append(batch)
            batch = []
            continue
        sign = rng.choice("+-")
        name = rng.choice(["e", "e", "w"])
        values = [rng.choice(CLEAN[t][:4]) for t in EDB_TYPES[name]]
        row = tuple(clean_value(v, t) for v, t in zip(values, EDB_TYPES[name]))
        args = [literal(v, t) for v, t in zip(values, EDB_TYPES[name])]
        if not clean:
            kind = rng.choice(["arg", "arg", "arg", "arity", "relation", "garbage", "ok"])
            if kind == "arg":
                args[rng.randrange(len(args))] = rng.choice(HOSTILE_ARGS)
            elif kind == "arity":
                args = args[:-1] if rng.random() < 0.5 else args + ["1"]
            elif kind == "relation":
                name = rng.choice(["path", "deg", "nope", "E", "e e", ""])
            elif kind == "garbage":
                statements.append(rng.choice(["+", "commit", "-e(1, 2)", "/* open", "// x", "+e(1, 2)).",
                                              "+e(1, 2) commit.", "?- e(x, y).", ".decl z(x: number)", ")("]))
                continue
        statements.append(f"{sign}{name}({', '.join(args)}).")
        batch.append((sign, name, row))
    if clean:
        statements.append("commit.")
        batches.append(batch)
    text = ("\n" if rng.random() < 0.7 else " ").join(statements) + "\n"
    data = text.encode("utf-8", errors="surrogatepass")
    if not clean and rng.random() < 0.15:
        data = _damage(rng, data)
    return UpdatesCase(data, batches if clean else None)


def edb_after(batches: list, edb: dict[str, set]) -> dict[str, set]:
    """The EDB after the batches: within a batch the last change of a tuple wins."""
    tables = {name: set(rows) for name, rows in edb.items()}
    for batch in batches:
        last = {}
        for sign, name, row in batch:
            last[name, row] = sign
        for (name, row), sign in last.items():
            (tables[name].add if sign == "+" else tables[name].discard)(row)
    return tables


UPDATES_EDB = {"e": {(1, 2), (2, 3)}, "w": {("a", 1.5), ("b", 2.5)}}


def from_scratch(program: str, edb: dict[str, set]) -> dict[str, set]:
    """Every relation of ``program`` evaluated from scratch with exactly ``edb`` as its EDB (its
    ``.input`` directives dropped, its facts replaced): the oracle of a maintained state."""
    from datalog.engine.engine import Engine
    text = "\n".join(line for line in program.splitlines() if not line.startswith(".input"))
    engine = Engine.from_source(text)
    for name, rows in edb.items():
        relation = engine.db[name]
        relation.erase(list(relation.tuples))
        engine.insert(name, rows)
    engine.run()
    return contents(engine)


def contents(engine) -> dict[str, set]:
    return {name: set(engine.db[name].tuples) for name in engine.relations()}


# ---------------------------------------------------------------- forged workspace records

WORKSPACE_PROGRAM = """\
.decl e(x: number, y: number)
.decl v(x: number)
.decl m(s: symbol, f: float)
.output path
path(x, y) :- e(x, y).
path(x, z) :- path(x, y), e(y, z).
iso(x) :- v(x), !path(x, _).
deg(x, c) :- v(x), c = count : e(x, _).
total(s) :- s = sum y : e(_, y).
weight(s, t) :- m(s, _), t = sum f : m(s, f).
lt(x, y) :- v(x), e(y, _), x < y.
v(1). v(2). v(3). v(4). v(5).
e(1, 2). e(2, 3). e(4, 4).
m("a", 1.5). m("b", 2.25). m("a", 0.5).
.decl path(x: number, y: number)
.decl iso(x: number)
.decl deg(x: number, c: number)
.decl total(s: number)
.decl weight(s: symbol, t: float)
.decl lt(x: number, y: number)
"""
KINDS = {"snapshot": "snapshot", "log": "log"}       # and maintainer.N: "maintainer"


def make_workspace(path: Path, commits: int = 2) -> None:
    """The small real workspace forged copies start from: created, then a few commits in its log."""
    from datalog.workspace.workspace import Workspace
    with Workspace.create(path, WORKSPACE_PROGRAM) as ws:
        for k in range(commits):
            ws.engine.commit(inserts={"e": [(k + 5, k + 6)], "m": [("c", k + 0.75)]}, retracts={"v": [(k + 1,)]})


def workspace_files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def kind_of(name: str) -> str | None:
    return KINDS.get(name) or ("maintainer" if name.startswith("maintainer.") else None)


FORGED = [None, "x", "", [], {}, [1], {"a": 1}, True, False, 0, -1, 1, 2, 2 ** 64, -(2 ** 63) - 1, 10 ** 400,
          1.5, -0.0, math.nan, math.inf, -math.inf, "\u0000", "a" * 5000, [[[[[[1]]]]]], [None, None], ["x", 1],
          {"arity": 2, "count": 1, "values": [1]}, {"arity": 1, "count": -1, "values": []}]


@dataclass
class Forgery:
    """A workspace's files with one record rewritten (checksums recomputed by the format's own
    encoder), or with an entry replaced by a symlink to a file outside (``planted``)."""

    files: dict[str, bytes]
    what: str
    planted: str | None = None

    def describe(self) -> str:
        return shorter(self.what)


def forge(rng, files: dict[str, bytes]) -> Forgery:
    """One forgery of ``files`` (a workspace's, from :func:`workspace_files`): a value of a record
    replaced (wrong type, null, list, huge or negative number), a key deleted or added, a list
    shortened or lengthened, a number moved by one, or a planted symlink."""
    if rng.random() < 0.08:
        entry = rng.choice(["lock", "snapshot.tmp", "log.tmp", "maintainer.0.tmp", "snapshot", "log"])
        return Forgery(dict(files), f"symlink planted at {entry}", planted=entry)
    name = rng.choice([n for n in files if kind_of(n)])
    contents = wsfile.parse(files[name], name, kind_of(name), torn_tail=False)
    records = [contents.header] + list(contents.records)
    if rng.random() < 0.05:                      # the stored program names an output path outside
        name, contents = "snapshot", wsfile.parse(files["snapshot"], "snapshot", "snapshot", torn_tail=False)
        records = [contents.header] + list(contents.records)
        target = rng.choice(["../outside.csv", "sub/../../outside.csv"])     # from -D: beside it
        records[1]["blocks"][0]["text"] += f'.output path(filename="{target}")\n'
        return Forgery({**files, name: encode_file(records)}, f"stored program writes path to {target}")
    header_too = rng.random() < 0.2 or len(records) == 1       # the header, sometimes
    index = rng.randrange(0 if header_too else 1, len(records))
    record = json.loads(json.dumps(records[index]))
    what = _mutate(rng, record)
    records[index] = record
    forged = dict(files)
    forged[name] = encode_file(records)
    return Forgery(forged, f"{name} record {index}: {what}")


def encode_file(records: list[dict]) -> bytes:
    """Header and records framed as ``format.write_file`` frames them (compressed after a header
    that says ``zlib``)."""
    header = records[0]
    compressed = isinstance(header, dict) and header.get("compression") == wsfile.COMPRESSION
    return wsfile.encode(header) + b"".join(wsfile.encode(r, compressed) for r in records[1:])


def _paths(node, prefix=()):
    """Every position in a JSON tree (as a key path), the root last."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, prefix + (i,))
    yield prefix


def _mutate(rng, record: dict) -> str:
    paths = [p for p in _paths(record) if p]
    if not paths:
        record["extra"] = rng.choice(FORGED)
        return "a key added to an empty record"
    path = rng.choice(paths)
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    key, value = path[-1], parent[path[-1]]
    kind = rng.choice(["replace", "replace", "replace", "nudge", "delete", "grow"])
    if kind == "nudge" and isinstance(value, (int, float)) and not isinstance(value, bool):
        new = rng.choice([value + 1, value - 1, -value, value * 1000, value + 0.5])
        parent[key] = new
        return f"{list(path)}: {value!r} -> {new!r}"
    if kind == "delete":
        del parent[key]
        return f"{list(path)} deleted"
    if kind == "grow" and isinstance(value, list):
        value.append(value[0] if value and rng.random() < 0.5 else rng.choice(FORGED))
        return f"{list(path)}: one more element"
    new = rng.choice(FORGED)
    parent[key] = json.loads(json.dumps(new))
    return f"{list(path)}: {value!r:.60} -> {new!r:.60}"


def write_forgery(forgery: Forgery, path: Path, victim: Path) -> None:
    """The forged workspace at ``path`` (a fresh directory); a planted entry points at ``victim``."""
    path.mkdir(parents=True)
    for name, data in forgery.files.items():
        if name != forgery.planted:
            (path / name).write_bytes(data)
    if forgery.planted:
        os.symlink(victim, path / forgery.planted)


# ---------------------------------------------------------------- outcomes

class Hang(Exception):
    """A step ran past its time limit."""


@contextmanager
def time_limit(seconds: float):
    """Raise :class:`Hang` in this (main) thread after ``seconds``: a loop that never ends fails
    instead of hanging the test run."""
    def expired(_signum, _frame):
        raise Hang(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome_of(step, seconds: float = 20.0) -> str:
    """``ok``, ``error[code]`` (a coded DatalogError), ``hang``, or ``crash Type: message`` (anything
    else, the defect the fuzzers look for)."""
    try:
        with time_limit(seconds):
            step()
        return "ok"
    except DatalogError as err:
        return f"error[{err.code}]" if err.code and err.code != "error" else f"crash uncoded {type(err).__name__}"
    except Hang:
        return "hang"
    except Exception as exc:                                   # noqa: BLE001 -- the point of a fuzzer
        return f"crash {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"


def acceptable(outcome: str) -> bool:
    return outcome == "ok" or outcome.startswith("error[")


# ---------------------------------------------------------------- writes outside

def listing(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (symlinks not followed) with its kind, size and modification time."""
    out = {}
    for directory, dirs, names in os.walk(root):
        for name in dirs + names:
            p = Path(directory) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_mode >> 12, st.st_size, st.st_mtime_ns)
    return out


def written_outside(before: dict, after: dict, allowed: tuple[str, ...]) -> list[str]:
    """Entries created or changed between two listings that lie outside the ``allowed`` top-level
    directories (relative names)."""
    changed = [name for name, info in after.items() if before.get(name) != info]
    return sorted(n for n in changed if not any(n == a or n.startswith(a + os.sep) for a in allowed))


def leftovers(root: Path) -> list[str]:
    """Temporary files (``*.tmp``, regular files: a planted symlink is not one) left under ``root``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp") if p.is_file() and not p.is_symlink())


__all__ = ["FactCase", "Forgery", "Hang", "ProgramCase", "UpdatesCase", "acceptable", "edb_after", "fact_case", "forge",
           "leftovers",
           "make_workspace", "outcome_of", "program_case", "time_limit", "updates_case", "workspace_files",
           "write_forgery",
           "written_outside"]
