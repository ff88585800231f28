"""The two relation semantics no plain rule expresses, as data for the fixpoints that enforce them
(the engine's :mod:`datalog.evaluation.constrained` and the naive evaluator):

* ``choice-domain``: ``.decl r(x: number, y: number) choice-domain x`` -- a functional
  dependency: of the tuples that agree on x, only the first inserted stays. "First" is
  deterministic here: facts before derived tuples, earlier rounds before later ones, and within
  one round the smallest tuple (in sorted order) first. Soufflé leaves the order to its
  evaluation; every program whose outcome does not depend on it gets Soufflé's outputs.
* subsumption: ``r(x, y1) <= r(x, y2) :- y1 < y2.`` -- after each round, every tuple of r that
  matches the left atom while a tuple matching the right atom is in r (and the body holds) is
  removed, as :func:`dominance_clause` says: ``r(x, y1) :- r(x, y1), r(x, y2), y1 < y2.`` gives
  the dominated tuples.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from datalog.language import ast
from datalog.language.errors import ArityMismatch, InvalidQualifier, InvalidSubsumption, UndefinedRelation
from datalog.language.rewrites import Clause, dnf, name_wildcards
from datalog.language.display import plural


def choice_domains(program: ast.Program) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Each choice-domain relation -> its domains as tuples of column positions."""
    out = {}
    for decl in program.declarations:
        if decl.choice_domain:
            columns = [c.name for c in decl.columns]
            for key in decl.choice_domain:
                for name in key:
                    if name not in columns:
                        raise InvalidQualifier(f"choice-domain of {decl.relation} names {name}, which "
                                               f"is not one of its columns ({', '.join(columns)})", decl.span)
            out[decl.relation] = tuple(tuple(columns.index(n) for n in key) for key in decl.choice_domain)
    return out


def dominance_clauses(program: ast.Program, schema: dict) -> dict[str, list[Clause]]:
    """Each subsumed relation -> the clauses whose heads are its dominated tuples."""
    out: dict[str, list[Clause]] = {}
    for sub in program.subsumptions:
        if sub.dominated.relation != sub.dominating.relation:
            raise InvalidSubsumption(f"a subsumption compares tuples of one relation, not "
                                     f"{sub.dominated.relation} and {sub.dominating.relation}", sub.span)
        info = schema.get(sub.dominated.relation)
        if info is None:
            raise UndefinedRelation(f"undefined relation {sub.dominated.relation} in a subsumption: it has "
                                    f"no .decl, facts, rules or .input", sub.dominated.span)
        for atom in (sub.dominated, sub.dominating):
            if len(atom.args) != info.arity:
                raise ArityMismatch(f"{atom.relation} has arity {info.arity} but the subsumption uses it "
                                    f"with {plural(len(atom.args), 'argument')}", atom.span)
        out.setdefault(sub.dominated.relation, []).extend(dominance_clause(sub, body) for body in dnf(sub.body))
    return out


def subsumption_dependencies(program: ast.Program) -> list[Clause]:
    """For stratification only: ``r :- body`` for each subsumption of r, without r's own atoms,
    so that the relations a subsumption body reads are computed before r (never evaluated)."""
    out = []
    for sub in program.subsumptions:
        name = sub.dominated.relation
        for body in dnf(sub.body):
            others = tuple(lit for lit in body if not (isinstance(lit, ast.Atom) and lit.relation == name))
            if others:
                out.append(Clause(sub.dominated, others, ast.Rule((sub.dominated,), others, sub.span)))
    return out


def dominance_name(relation: str) -> str:
    """The head of a dominance clause: a pair of r's tuples (not a relation of the program)."""
    return f"{relation}@dominance"


def dominance_clause(sub: ast.Subsumption, body: tuple) -> Clause:
    """``r(a) <= r(b) :- body.`` as the clause of its (dominated, dominating) pairs:
    ``r@dominance(a, b) :- r(a), r(b), body.`` (a tuple never dominates itself: see :func:`dominated_rows`)."""
    dominated, dominating = dominance_atoms(sub)
    head = ast.Atom(dominance_name(sub.dominated.relation), dominated.args + dominating.args, sub.span)
    literals = (dominated, dominating, *body)
    return Clause(head, literals, ast.Rule((head,), literals, sub.span, plan=sub.plan))


def dominance_atoms(sub: ast.Subsumption) -> tuple[ast.Atom, ast.Atom]:
    """The two atoms of ``sub`` with each wildcard a variable of its own (:func:`name_wildcards`):
    ``r(x, c1) <= r(_, c2)`` is dominated by any tuple of r with a smaller c, whatever its first
    column, and the pair of tuples names that column's value."""
    dominated, dominating = name_wildcards((sub.dominated, sub.dominating))
    return dominated, dominating


def dominated_rows(pairs, arity: int) -> set:
    """The dominated tuples of (dominated, dominating) pairs, each pair of two different tuples
    (in Soufflé's ``r(x, c1) <= r(x, c2) :- c2 <= c1.`` a tuple does not remove itself)."""
    return {pair[:arity] for pair in pairs if pair[:arity] != pair[arity:]}


def symbol_ranks(program: ast.Program) -> dict[str, int]:
    """Each string constant of the program -> its place in the text. Soufflé orders symbols by
    when its symbol table first met them, the program's constants first: choice-domain takes
    the rows in that order (:func:`row_order`), so that ties are broken as Soufflé breaks them."""
    ranks: dict[str, int] = {}
    for value in _strings(program.statements):
        ranks.setdefault(value, len(ranks))
    return ranks


def _strings(node):
    """The string constants under ``node``, in source order."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            yield node.value
    elif isinstance(node, tuple):
        for child in node:
            yield from _strings(child)
    elif is_dataclass(node):
        for f in fields(node):
            if f.compare:
                yield from _strings(getattr(node, f.name))


def row_order(ranks: dict[str, int]):
    """The sort key of rows: numbers by value, the program's symbols in its order, then the
    other symbols alphabetically."""
    def value_key(value):
        if isinstance(value, str):
            return (0, ranks[value], "") if value in ranks else (1, 0, value)
        return value
    return lambda row: tuple(map(value_key, row))


def choose(rows, domains: tuple[tuple[int, ...], ...], taken: list[set], order=None) -> list[tuple]:
    """The rows that stay, first in ``order`` first: a row stays when no row before it (``taken``,
    the key sets of each domain, updated here) agrees with it on a domain."""
    kept = []
    for row in sorted(rows, key=order):
        keys = [tuple(row[i] for i in domain) for domain in domains]
        if all(key not in seen for key, seen in zip(keys, taken)):
            for key, seen in zip(keys, taken):
                seen.add(key)
            kept.append(row)
    return kept
