"""Hypothesis strategies: random small, safe, stratified programs with random small EDBs.

A program is built in *groups*. Group g's relations are defined by rules whose
positive atoms use the EDB, earlier groups and group g itself (so recursion and
mutual recursion happen), while negations and aggregate bodies use only the EDB
and earlier groups (so the program is stratified). Every variable of a head,
comparison or negation is bound by a positive atom, an ``=`` binding or an
aggregate; aggregate group-by variables are bound by a positive atom.

Recursive rules (those with an atom of their own group) keep values finite:
their heads hold only variables and constants, never ``x + 1``. A typical draw::

    .decl e0(c0: number, c1: number)
    .decl r0_0(c0: number, c1: number)
    r0_0(x, y) :- e0(x, y).
    r0_0(x, z) :- r0_0(x, y), e0(y, z), x != z.
    .decl r1_0(c0: number)
    r1_0(a0) :- e0(x, _), !r0_0(x, x), a0 = count : { r0_0(x, l0_1) }.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

DOMAIN = st.integers(0, 5)      # EDB values and constants
VARIABLES = ("x", "y", "z", "w")  # few names, so joins and r(x, x) are common
COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class GeneratedProgram:
    """The program text, the EDB facts to insert, and the arity of every relation."""

    text: str
    edb: dict[str, frozenset[tuple]]
    arity: dict[str, int]

    @property
    def relations(self) -> list[str]:
        return list(self.arity)


def program_of(text: str, edb: dict[str, set[tuple]]) -> GeneratedProgram:
    """A hand-written program (a shrunk counterexample, an edge case) as a GeneratedProgram:
    arities from the EDB rows and the ``.decl`` lines."""
    arity = {name: len(next(iter(rows))) for name, rows in edb.items()}
    for line in text.splitlines():  # .decl r(c0: number, c1: number)
        if line.startswith(".decl "):
            arity.setdefault(line.split()[1].split("(")[0], line.count(":"))
    return GeneratedProgram(text, {k: frozenset(v) for k, v in edb.items()}, arity)


@st.composite
def programs(draw, max_groups: int = 3) -> GeneratedProgram:
    arity: dict[str, int] = {}
    edb: dict[str, frozenset[tuple]] = {}
    for i in range(draw(st.integers(1, 3))):
        name, width = f"e{i}", draw(st.sampled_from((1, 2, 2, 2, 3)))
        arity[name] = width
        edb[name] = draw(st.frozensets(st.tuples(*[DOMAIN] * width), min_size=2, max_size=10))
    lines = [_decl(name, width) for name, width in arity.items()]
    lower = list(edb)  # usable under negation and in aggregates
    for g in range(draw(st.integers(1, max_groups))):
        group = [f"r{g}_{j}" for j in range(draw(st.sampled_from((1, 1, 2))))]
        for name in group:
            arity[name] = draw(st.sampled_from((1, 2, 2)))
            lines.append(_decl(name, arity[name]))
        for name in group:
            lines.append(draw(_rule(name, [], lower, arity)))  # a base case first
            for _ in range(draw(st.integers(0, 2))):
                lines.append(draw(st.one_of(_rule(name, group, lower, arity),
                                            _closure(name, group, lower, arity))))
            if draw(st.integers(0, 3)) == 0:
                lines.append(f"{name}({', '.join(str(draw(DOMAIN)) for _ in range(arity[name]))}).")
        lower += group
    return GeneratedProgram("\n".join(lines), edb, dict(arity))



@st.composite
def linear_programs(draw, max_groups: int = 2) -> GeneratedProgram:
    """Programs whose recursive rules are linear: at most one atom of their own group, with
    constants, repeated variables and wildcards in it; atoms of lower relations sharing its
    variables or not (a body part independent of it); comparisons, negations and aggregates
    of lower relations; and counters bounded by a comparison (``r(x + 1) :- r(x), x < 7.``).
    The worklist's case (:mod:`datalog.evaluation.worklist`)."""
    arity: dict[str, int] = {}
    edb: dict[str, frozenset[tuple]] = {}
    for i in range(draw(st.integers(1, 3))):
        name, width = f"e{i}", draw(st.sampled_from((1, 2, 2, 3)))
        arity[name] = width
        edb[name] = draw(st.frozensets(st.tuples(*[DOMAIN] * width), min_size=1, max_size=10))
    lines = [_decl(name, width) for name, width in arity.items()]
    lower = list(edb)
    for g in range(draw(st.integers(1, max_groups))):
        group = [f"r{g}_{j}" for j in range(draw(st.sampled_from((1, 2, 2))))]
        for name in group:
            arity[name] = draw(st.sampled_from((1, 2, 2)))
            lines.append(_decl(name, arity[name]))
        for name in group:
            lines.append(draw(_rule(name, [], lower, arity)))  # a base case first
            for _ in range(draw(st.integers(1, 3))):
                lines.append(draw(st.one_of(_linear_rule(name, group, lower, arity),
                                            _linear_rule(name, group, lower, arity),
                                            _counter(name, group, lower, arity))))
        lower += group
    return GeneratedProgram("\n".join(lines), edb, dict(arity))


@st.composite
def _linear_rule(draw, head: str, group: list[str], lower: list[str], arity: dict[str, int]) -> str:
    """``head(...) :- own(...), lower atoms, filters.`` with one atom ``own`` of the group."""
    own = draw(st.sampled_from(group))
    # u, v: in lower atoms only; with them alone, a body part independent of the own atom
    names = draw(st.sampled_from((VARIABLES + ("u", "v"), ("u", "v"))))
    atoms = [f"{own}({', '.join(draw(_atom_arg(VARIABLES)) for _ in range(arity[own]))})"]
    for _ in range(draw(st.integers(0, 2))):
        relation = draw(st.sampled_from(lower))
        atoms.append(f"{relation}({', '.join(draw(_atom_arg(names)) for _ in range(arity[relation]))})")
    body = list(draw(st.permutations(atoms)))
    bound = [n for n in names if any(f"{n}," in a or f"{n})" in a for a in atoms)]
    derived: list[str] = []
    for k in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["compare", "negate", "aggregate"]))
        if kind == "compare" or not bound and kind == "aggregate":
            body.append(draw(_comparison(bound + derived)))
        elif kind == "negate":
            relation = draw(st.sampled_from(lower))
            body.append(f"!{relation}({', '.join(draw(_atom_arg(bound)) for _ in range(arity[relation]))})")
        else:
            body.append(f"a{k} = {draw(_aggregate(k, bound, lower, arity))}")
            derived.append(f"a{k}")
    args = [draw(_plain_term(bound + derived)) for _ in range(arity[head])]
    return f"{head}({', '.join(args)}) :- {', '.join(body)}."


@st.composite
def _counter(draw, head: str, group: list[str], lower: list[str], arity: dict[str, int]) -> str:
    """``r(x + 2, y) :- s(x, y), x < 6.``: a value that grows each step, up to a bound."""
    same = [r for r in group if arity[r] == arity[head]]
    own = draw(st.sampled_from(same))
    rest = ["y", "z"][:arity[head] - 1]
    step, bound = draw(st.integers(1, 2)), draw(st.integers(0, 8))
    body = [f"{own}({', '.join(['x'] + rest)})", f"x < {bound}"]
    if draw(st.booleans()):
        relation = draw(st.sampled_from(lower))
        body.insert(draw(st.integers(0, 1)), f"{relation}({', '.join(draw(_atom_arg(['u', 'x'])) for _ in range(arity[relation]))})")
    return f"{head}({', '.join([f'x + {step}'] + rest)}) :- {', '.join(body)}."

@st.composite
def _closure(draw, head: str, group: list[str], lower: list[str], arity: dict[str, int]) -> str:
    """``p(x, z) :- p(x, y), e(y, z).`` (or ``e(x, y), p(y, z)``) when p has two columns."""
    binary = [r for r in lower + group if arity[r] == 2]
    if arity[head] != 2 or not binary:
        return draw(_rule(head, group, lower, arity))
    step = draw(st.sampled_from(binary))
    other = draw(st.sampled_from([r for r in group if arity[r] == 2]))
    atoms = [f"{other}(x, y)", f"{step}(y, z)"]
    if draw(st.booleans()):
        atoms = [f"{step}(x, y)", f"{other}(y, z)"]
    return f"{head}(x, z) :- {', '.join(atoms)}."


QUERY_VARIABLE = re.compile(r"\b(?:[xyzw]|[va]\d+)\b")     # what query bodies bind (l<k>_<i>: an aggregate's)


@st.composite
def query_bodies(draw, generated: GeneratedProgram) -> str:
    """A query body over the relations of ``generated``, as a rule body is drawn (atoms with
    constants, repeated variables and ``_``; comparisons, negations, ``=`` bindings, aggregates,
    disjunctions): ``r0_0(x, 3), !e0(x, _), a1 = count : { e1(x, l1_0) }``. Every variable named by
    :data:`QUERY_VARIABLE` is bound."""
    relations = list(generated.arity)
    rule = draw(_rule("?", [], relations, {**generated.arity, "?": 1}))
    return rule.split(":-", 1)[1].strip()[:-1]


def _decl(name: str, width: int) -> str:
    return f".decl {name}({', '.join(f'c{i}: number' for i in range(width))})"


@st.composite
def _rule(draw, head: str, group: list[str], lower: list[str], arity: dict[str, int]) -> str:
    """``head(...) :- atoms, extra literals.`` over the relations allowed for ``head``."""
    body: list[str] = []
    bound: list[str] = []   # bound by a positive atom (usable as a group-by variable)
    derived: list[str] = []  # bound by = or an aggregate
    for i in range(draw(st.integers(1, 3))):
        relation = draw(st.sampled_from(lower + group * 2 * (i > 0) or lower))
        args = [draw(_atom_arg(VARIABLES)) for _ in range(arity[relation])]
        bound += [a for a in args if a in VARIABLES and a not in bound]
        body.append(f"{relation}({', '.join(args)})")
    recursive = any(atom.startswith(f"{r}(") for r in group for atom in body)
    for k in range(draw(st.integers(0, 2))):
        kinds = ["compare", "compare"] + ["negate", "aggregate"] * bool(lower)
        kind = draw(st.sampled_from(kinds + ["bind"] * (not recursive and bool(bound))
                                    + ["or"] * bool(bound)))
        if kind == "compare":
            body.append(draw(_comparison(bound + derived)))
        elif kind == "or":  # a filter: every alternative uses bound variables only
            alternatives = [draw(st.one_of(_comparison(bound), _filter_atom(bound, lower + group, arity)))
                            for _ in range(draw(st.integers(2, 3)))]
            body.append(f"({' ; '.join(alternatives)})")
        elif kind == "negate":
            relation = draw(st.sampled_from(lower))
            args = [draw(_atom_arg(bound + derived)) for _ in range(arity[relation])]
            body.append(f"!{relation}({', '.join(args)})")
        elif kind == "bind":
            body.append(f"v{k} = {draw(_unary_expr(bound + derived))}")
            derived.append(f"v{k}")
        else:
            body.append(f"a{k} = {draw(_aggregate(k, bound, lower, arity))}")
            derived.append(f"a{k}")
    term = _plain_term if recursive else _head_term
    args = [draw(term(bound + derived)) for _ in range(arity[head])]
    return f"{head}({', '.join(args)}) :- {', '.join(body)}."


@st.composite
def _aggregate(draw, k: int, bound: list[str], lower: list[str], arity: dict[str, int]) -> str:
    """``count : { e(x, l0, _) }``, ``sum l0 : { e(x, l0), l0 > 2 }``, ``min l0 : { e(l0, l1), f(l1) }``.

    Group-by variables come from ``bound``; locals are named l<k>_<i>, never used outside.
    """
    relation = draw(st.sampled_from(lower))
    local = [f"l{k}_{i}" for i in range(arity[relation])]
    args = [draw(st.sampled_from(local[i:i + 1] * 3 + bound + ["_", str(draw(DOMAIN))]))
            for i in range(arity[relation])]
    first = draw(st.integers(0, arity[relation] - 1))
    args[first] = local[first]  # at least one local variable
    locals_ = [a for a in args if a in local]
    literals = [f"{relation}({', '.join(args)})"]
    extra = draw(st.sampled_from(("none", "none", "filter", "atom", "negate")))
    if extra == "filter":
        literals.append(f"{draw(st.sampled_from(locals_))} {draw(st.sampled_from(COMPARE_OPS))} "
                        f"{draw(DOMAIN)}")
    elif extra in ("atom", "negate"):  # two atoms: Soufflé materialises the body
        other = draw(st.sampled_from(lower))
        args = [draw(_atom_arg(locals_ + bound)) for _ in range(arity[other])]
        literals.append(f"{'!' * (extra == 'negate')}{other}({', '.join(args)})")
    kind = draw(st.sampled_from(("count", "sum", "min", "max")))
    target = "" if kind == "count" else f" {draw(st.sampled_from(locals_))}"
    return f"{kind}{target} : {{ {', '.join(literals)} }}"


def _comparison(variables: list[str]) -> st.SearchStrategy[str]:
    return st.builds(lambda a, op, b: f"{a} {op} {b}",
                     _expr(variables), st.sampled_from(COMPARE_OPS), _expr(variables))


@st.composite
def _filter_atom(draw, variables: list[str], relations: list[str], arity: dict[str, int]) -> str:
    """An atom binding nothing new: ``e0(x, _, 3)`` with x already bound."""
    relation = draw(st.sampled_from(relations))
    return f"{relation}({', '.join(draw(_atom_arg(variables)) for _ in range(arity[relation]))})"


def _atom_arg(variables) -> st.SearchStrategy[str]:
    choices = [st.sampled_from(list(variables))] * 8 if variables else []
    return st.one_of(*choices, DOMAIN.map(str), st.just("_"))


def _plain_term(variables: list[str]) -> st.SearchStrategy[str]:
    if not variables:
        return DOMAIN.map(str)
    return st.one_of(st.sampled_from(variables), st.sampled_from(variables), DOMAIN.map(str))


def _unary_expr(variables: list[str]) -> st.SearchStrategy[str]:
    """One variable and constants: ``x + 1``, ``(x - 3) / 2``, ``x % 3``, ``-(x)``, ``x ^ 2``.

    Each such term has at most as many values as its variable, so relations stay small.
    """
    var = st.sampled_from(variables)
    return st.one_of(
        st.builds(lambda v, op, c: f"{v} {op} {c}", var, st.sampled_from("+-*"), DOMAIN),
        st.builds(lambda v, c, op, d: f"({v} - {c}) {op} {d}", var, DOMAIN,
                  st.sampled_from("/%"), st.sampled_from((2, 3, -2))),
        var.map(lambda v: f"-{v}"),
        var.map(lambda v: f"{v} ^ 2"),
    )


def _head_term(variables: list[str]) -> st.SearchStrategy[str]:
    if not variables:
        return DOMAIN.map(str)
    return st.one_of(_plain_term(variables), _plain_term(variables), _unary_expr(variables))


def _expr(variables: list[str]) -> st.SearchStrategy[str]:
    """A comparison operand: also ``x + y`` and ``x * y``."""
    if not variables:
        return DOMAIN.map(str)
    var = st.sampled_from(variables)
    return st.one_of(var, var, DOMAIN.map(str), _unary_expr(variables),
                     st.builds(lambda a, op, b: f"{a} {op} {b}", var, st.sampled_from("+-*"), var))


# ---- unsigned (issue 18): the same programs over Soufflé's uint64

BIG = {3: 2 ** 64 - 3, 4: 2 ** 63, 5: 2 ** 64 - 1}      # EDB values above 2^63, where + and * wrap


@st.composite
def unsigned_programs(draw, max_groups: int = 3) -> GeneratedProgram:
    """A drawn program with every column ``unsigned``: its arithmetic wraps modulo 2^64 (``x + 1``
    of 2^64 - 1 is 0, ``(x - 3) / 2`` of 0 is huge), comparisons are unsigned; EDB values 3, 4
    and 5 become 2^64 - 3, 2^63 and 2^64 - 1. Soufflé has no unary minus and no negative
    unsigned, and count is a number: ``-x`` becomes ``0u - x``, a divisor -2 becomes 4, and
    ``count : {..}`` becomes ``sum 1u : {..}``."""
    generated = draw(programs(max_groups))
    text = generated.text.replace(": number", ": unsigned").replace("count : ", "sum 1u : ")
    text = re.sub(r"(?<![\w)])-(?=[a-z])", "0u - ", text)
    text = re.sub(r"([/%]) -2\b", r"\1 4", text)
    edb = {name: frozenset(tuple(BIG.get(v, v) for v in row) for row in rows) for name, rows in generated.edb.items()}
    return GeneratedProgram(text, edb, generated.arity)
