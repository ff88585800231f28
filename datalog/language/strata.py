"""Dependency graph, strongly connected components, strata.

A relation depends on each relation in the bodies of its clauses: positively
through an atom, negatively through ``!atom`` or an aggregate body. Strata are
the SCCs in dependency order; negation or aggregation inside one SCC is a
``cyclic_negation`` error that names the cycle.

>>> from datalog.language.parser import parse
>>> from datalog.language.rewrites import rewrite
>>> [s.relations for s in stratify(rewrite(parse(
...     'p(x) :- e(x, _). q(x) :- p(x), !r(x). r(x) :- e(_, x). e(1, 2).')))]
[('e',), ('p',), ('r',), ('q',)]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from datalog.language import ast
from datalog.language.errors import CyclicNegation, UndefinedRelation
from datalog.language.rewrites import Clause


@dataclass
class Stratum:
    """``choice``: choice-domain relations -> (their domains as column positions, the row order
    that decides which row comes first); ``dominance``:
    subsumed relations -> the compiled plans of their dominated tuples (both attached by the
    pipeline; see :mod:`datalog.language.semantics.constraints`)."""

    relations: tuple[str, ...]
    clauses: list[Clause]
    recursive: bool
    limits: dict[str, int] = field(default_factory=dict)   # .limitsize r(n=10) of a member: see limited()
    choice: dict = field(default_factory=dict)
    dominance: dict = field(default_factory=dict)

    @property
    def constrained(self) -> bool:
        """Whether choice-domain or subsumption removes tuples here: no incremental maintenance."""
        return bool(self.choice or self.dominance)

    def __repr__(self) -> str:
        kind = "recursive" if self.recursive else "non-recursive"
        return f"Stratum({', '.join(self.relations)}; {kind}, {len(self.clauses)} clauses)"


def dependencies(clause: Clause):
    """Yield (relation, sign, literal) for each body dependency; sign is '+' or '-'."""
    for literal in clause.body:
        yield from _literal_dependencies(literal, "+")


def _literal_dependencies(node, sign):
    if isinstance(node, ast.Atom):
        yield node.relation, sign, node
        for arg in node.args:                     # q(count : { s(_) }): s before q's rule
            yield from _literal_dependencies(arg, sign)
    elif isinstance(node, ast.Negation):
        yield node.atom.relation, "-", node
        for arg in node.atom.args:                # !q(count : { s(_) })
            yield from _literal_dependencies(arg, "-")
    elif isinstance(node, ast.Aggregate):
        for literal in node.body:
            for rel, _, _ in _literal_dependencies(literal, "-"):
                yield rel, "-", node
    elif isinstance(node, (ast.Comparison, ast.BinaryOp)):
        yield from _literal_dependencies(node.left, sign)
        yield from _literal_dependencies(node.right, sign)
    elif isinstance(node, ast.Negate):
        yield from _literal_dependencies(node.operand, sign)
    elif isinstance(node, ast.Functor):
        for arg in node.args:
            yield from _literal_dependencies(arg, sign)
    elif isinstance(node, ast.Disjunction):
        for alt in node.alternatives:
            for lit in alt:
                yield from _literal_dependencies(lit, sign)


def stratify(clauses: list[Clause], relations=()) -> list[Stratum]:
    """Strata in evaluation order (every relation's dependencies come first)."""
    names = list(dict.fromkeys([*relations, *(c.head.relation for c in clauses)]))
    graph: dict[str, dict[str, tuple]] = {n: {} for n in names}
    for clause in clauses:
        for rel, sign, node in dependencies(clause):
            graph.setdefault(rel, {})
            edges = graph[clause.head.relation]
            if rel not in edges or sign == "-":
                edges[rel] = (sign, node)
    components = _tarjan(graph)
    component_of = {rel: i for i, comp in enumerate(components) for rel in comp}
    strata = []
    for comp in components:
        members = set(comp)
        for rel in comp:
            for dep, (sign, node) in graph[rel].items():
                if sign == "-" and dep in members:
                    raise CyclicNegation(_cycle_message(graph, rel, dep, node), node.span)
        recursive = len(comp) > 1 or comp[0] in graph[comp[0]]
        own = [c for c in clauses if component_of[c.head.relation] == component_of[comp[0]]]
        strata.append(Stratum(tuple(comp), own, recursive))
    return strata


def limited(strata: list[Stratum], program: ast.Program, schema) -> list[Stratum]:
    """The strata with the ``.limitsize r(n=N)`` of their members. As in Soufflé, a recursive
    stratum stops iterating once a limited member holds N tuples or more (checked before each
    round, so a round may overshoot); a non-recursive one is not limited."""
    limits = {}
    for stmt in program.statements:
        if isinstance(stmt, ast.LimitSize):
            if stmt.relation not in schema:
                raise UndefinedRelation(f"undefined relation {stmt.relation} in .limitsize", stmt.span)
            limits[stmt.relation] = stmt.limit
    if not limits:
        return strata
    return [replace(s, limits={r: limits[r] for r in s.relations if r in limits}) for s in strata]


def _cycle_message(graph, rel, dep, node) -> str:
    path = _path(graph, dep, rel) or [dep, rel]
    what = "aggregation over" if isinstance(node, ast.Aggregate) else "negation of"
    cycle = " -> ".join([rel, *path])
    return f"{what} {dep} in the recursion of {rel}: {cycle} (stratified negation needs no cycle through it)"


def _path(graph, start, goal):
    """Relations on a dependency path start -> ... -> goal (breadth first)."""
    previous, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for rel in frontier:
            for dep in graph.get(rel, {}):
                if dep not in previous:
                    previous[dep] = rel
                    nxt.append(dep)
        frontier = nxt
        if goal in previous:
            break
    if goal not in previous:
        return None
    path, rel = [], goal
    while rel is not None:
        path.append(rel)
        rel = previous[rel]
    return list(reversed(path))


def _tarjan(graph) -> list[list[str]]:
    """SCCs in reverse topological order of the condensation (dependencies first)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, {}))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                out.append(sorted(comp, key=list(graph).index))
    return out


def recursive_components(clauses: list[Clause]) -> dict[str, frozenset[str]]:
    """Each relation the clauses derive or read -> the relations of its SCC of the dependency
    graph (a relation alone in its SCC only if it does not read itself: then empty)."""
    graph: dict[str, dict[str, None]] = {}
    for clause in clauses:
        edges = graph.setdefault(clause.head.relation, {})
        for rel, _, _ in dependencies(clause):
            graph.setdefault(rel, {})
            edges[rel] = None
    out = {}
    for comp in _tarjan(graph):
        members = frozenset(comp)
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            members = frozenset()
        for rel in comp:
            out[rel] = members
    return out
