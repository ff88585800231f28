"""A whole program: its strata (the strongly connected components of the dependency graph)
in dependency order, each re-evaluated rule by rule until no rule derives a new tuple.

>>> from datalog.language.parser import parse
>>> [sorted(stratum) for stratum in stratify(parse("p(x) :- q(x), !r(x). r(x) :- s(x).").rules, [])]
[['q'], ['s'], ['r'], ['p']]
"""

from __future__ import annotations

from collections.abc import Iterator

from datalog.language import ast
from datalog.language.ast import Aggregate, Atom, Negation, Rule
from datalog.language.errors import CyclicNegation
from datalog.language.naive.constrained import Constraints
from datalog.language.naive.nodes import children, split_disjunctions, walk
from datalog.language.naive.rules import RuleEvaluator
from datalog.language.rewrites import witnesses
from datalog.language.naive.values import Database, Row, as_unsigned
from datalog.language.semantics.constraints import subsumption_dependencies


def evaluate(program: ast.Program, edb: dict[str, set[Row]] | None = None) -> Database:
    """Every relation of ``program`` (and of ``edb``) -> its set of tuples."""
    db: Database = {name: set() for name in _relations(program)}
    unsigned = _unsigned_columns(program)
    for name, rows in (edb or {}).items():
        db.setdefault(name, set()).update(_typed(unsigned.get(name), tuple(row)) for row in rows)
    # witnesses of min/max (rewrites.witnesses) are the one desugaring taken from the engine: a
    # head variable bound by the tuples that reach the extremum is the aggregate body again
    rules = witnesses([split for rule in program.rules for split in split_disjunctions(rule)])
    constraints = Constraints(program)
    ordering = [c.rule for c in subsumption_dependencies(program)]   # subsumption bodies read first
    limits = {s.relation: s.limit for s in program.statements if isinstance(s, ast.LimitSize)}
    for stratum in stratify(program.rules + ordering, list(db)):
        own = [r for r in rules if any(h.relation in stratum for h in r.heads)]
        mine = {name: n for name, n in limits.items() if name in stratum}
        if mine and any(_reads(rule, stratum) for rule in own):
            _limited_fixpoint(own, stratum, db, mine, constraints, unsigned)
        else:
            _fixpoint(own, stratum, db, constraints, unsigned)
    return db


def _unsigned_columns(program: ast.Program) -> dict[str, tuple[int, ...]]:
    """Relation -> the positions of its columns declared ``unsigned`` (or of a type made from it:
    ``.type U <: unsigned``, ``.type V = U``), whose values are :class:`Unsigned` here."""
    bases: dict[str, tuple[str, ...]] = {}
    for decl in program.type_declarations:
        if isinstance(decl, ast.TypeDeclaration):
            bases[decl.name] = (decl.base,)
        elif isinstance(decl, ast.UnionTypeDeclaration):
            bases[decl.name] = tuple(decl.members)

    def unsigned(name: str, seen=frozenset()) -> bool:
        if name == "unsigned":
            return True
        return name not in seen and any(unsigned(b, seen | {name}) for b in bases.get(name, ()))
    out = {}
    for decl in program.declarations:
        columns = tuple(i for i, c in enumerate(decl.columns) if unsigned(c.type))
        if columns:
            out[decl.relation] = columns
    return out


def _typed(columns, row: Row) -> Row:
    """``row`` with the ints of its unsigned ``columns`` as :class:`Unsigned` (a fact ``u(5)``
    of an unsigned column, a value given from outside)."""
    if not columns:
        return row
    return tuple(as_unsigned(v) if i in columns else v for i, v in enumerate(row))


def _reads(rule: Rule, stratum: set[str]) -> bool:
    """Whether a positive atom of the rule's body is a relation of the stratum (recursion)."""
    return any(isinstance(literal, Atom) and literal.relation in stratum for literal in rule.body)


def _limited_fixpoint(rules: list[Rule], stratum: set[str], db: Database, limits: dict[str, int],
                      constraints: Constraints, unsigned: dict) -> None:
    """``.limitsize r(n=N)`` in a recursion, as Soufflé iterates: the rules that read no relation
    of the stratum once, then rounds of all of them; before each round, stop if a limited
    relation holds N tuples or more (so what is kept depends on the rounds, as in Soufflé)."""
    _start(stratum, db, constraints)
    _round([r for r in rules if not _reads(r, stratum)], stratum, db, constraints, unsigned)
    while not any(len(db[name]) >= n for name, n in limits.items()):
        if not _round(rules, stratum, db, constraints, unsigned):
            return


def _fixpoint(rules: list[Rule], stratum: set[str], db: Database, constraints: Constraints, unsigned: dict) -> None:
    """Re-evaluate every rule of the stratum on the whole database until nothing changes
    (eqrel, choice-domain and subsumption enforced after each round: naive/constrained.py)."""
    _start(stratum, db, constraints)
    while _round(rules, stratum, db, constraints, unsigned):
        pass


def _start(stratum: set[str], db: Database, constraints: Constraints) -> None:
    """The stratum's facts under its constraints, before any round."""
    for name in stratum:
        db[name] |= constraints.admit(name, set(), db)
    constraints.settle(stratum, db)


def _round(rules: list[Rule], stratum: set[str], db: Database, constraints: Constraints, unsigned: dict) -> bool:
    """Every rule once on the whole database, then what it derived admitted under the stratum's
    constraints; whether the stratum changed."""
    evaluators = [(rule, RuleEvaluator(db, rule, unsigned)) for rule in rules]
    before = {name: frozenset(db[name]) for name in stratum}
    new: dict[str, set[Row]] = {name: set() for name in stratum}
    for rule, ev in evaluators:
        for subst in ev.solve(rule.body, {}):
            for head in rule.heads:  # h1, h2 :- body.  gives the tuple to every head
                if head.relation in stratum:
                    row = ev.head_row(head, subst)
                    if row is not None:
                        row = _typed(unsigned.get(head.relation), row)
                    if row is not None and row not in db[head.relation]:
                        new[head.relation].add(row)
    for name, rows in new.items():
        db[name] |= constraints.admit(name, rows, db)
    constraints.settle(stratum, db)
    return any(db[name] != before[name] for name in stratum)


def _relations(program: ast.Program) -> list[str]:
    names = {d.relation: None for d in program.declarations}
    for node in walk(program.rules):
        if isinstance(node, Atom):
            names[node.relation] = None
    return list(names)


# ---------------------------------------------------------------- stratification

def stratify(rules: list[Rule], relations: list[str]) -> list[set[str]]:
    """The strongly connected components of the dependency graph, dependencies first.

    ``p :- q`` is an edge p -> q; it is negative when q is under ``!`` or inside an
    aggregate. A negative edge inside one component is cyclic negation.
    """
    edges: dict[str, set[str]] = {name: set() for name in relations}
    negative: set[tuple[str, str]] = set()
    for rule in rules:
        for head in rule.heads:
            for relation, is_negative in _dependencies(rule):
                edges.setdefault(head.relation, set()).add(relation)
                edges.setdefault(relation, set())
                if is_negative:
                    negative.add((head.relation, relation))
    reach = {name: _reachable(name, edges) for name in edges}
    component = {p: {p} | {q for q in reach[p] if p in reach[q]} for p in edges}
    for p, q in sorted(negative):
        if q in component[p]:
            raise CyclicNegation(f"{p} depends on {q} through negation or aggregation, "
                                 f"and {q} depends on {p}")
    order: list[set[str]] = []
    done: set[str] = set()
    while len(done) < len(edges):  # the first component whose dependencies are all done
        p = next(p for p in edges if p not in done and reach[p] <= done | component[p])
        order.append(component[p])
        done |= component[p]
    return order


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def _dependencies(rule: Rule) -> Iterator[tuple[str, bool]]:
    """(relation, negative) for each body atom; atoms under ``!`` or in an aggregate are negative."""
    def visit(node, negative: bool):
        if isinstance(node, Atom):
            yield node.relation, negative
        if isinstance(node, (Negation, Aggregate)):
            negative = True
        for child in children(node):
            yield from visit(child, negative)
    yield from visit(rule.body, False)
    yield from visit(tuple(head.args for head in rule.heads), False)  # aggregates in a head
