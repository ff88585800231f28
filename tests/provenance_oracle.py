"""The slow twins of provenance: an independent proof checker and the least heights by brute force.

Both read the engine's relations as plain sets and use only the reference evaluator
(:mod:`datalog.language.naive`): no index, no iterative deepening, nothing of
:mod:`datalog.provenance`.
"""

from __future__ import annotations

from datalog.language import ast
from datalog.language.ast import Atom, Negation
from datalog.language.naive.rules import RuleEvaluator


def plain_db(engine) -> dict[str, set]:
    return {name: set(relation) for name, relation in engine.db.items()}


def _clauses_by_number(engine) -> dict[tuple[str, int], object]:
    """(relation, Soufflé's rule number) -> clause: the relation's clauses counted in order."""
    out, counts = {}, {}
    for clause in engine.checked.clauses:
        name = clause.head.relation
        counts[name] = counts.get(name, 0) + 1
        out[(name, counts[name])] = clause
    return out


def _program_facts(engine) -> set[tuple[str, tuple]]:
    facts = set()
    for clause in engine.checked.clauses:
        if not clause.body:
            evaluator = RuleEvaluator({}, ast.Rule((clause.head,), ()))
            row = evaluator.head_row(clause.head, {})
            facts.add((clause.head.relation, row))
    return facts


def check_proof(engine, proof) -> list[str]:
    """What is wrong with ``proof`` in the engine's current database (empty: nothing). Each rule
    node must be a true instance of the clause it names (the binding satisfies the body over the
    relations, the head gives the fact, each positive body atom matches its premise's fact, the
    negated atoms match nothing); EDB leaves must be stored facts of EDB relations (or the
    program's facts); heights must add up; no fact may repeat on a path."""
    db, idb = plain_db(engine), engine.idb
    clauses, facts = _clauses_by_number(engine), _program_facts(engine)
    problems: list[str] = []

    def visit(node, path: tuple) -> None:
        if node.kind in ("absent", "constraint"):
            return
        if node.kind == "aggregate":
            for p in node.premises:
                visit(p, path)
            return
        fact = (node.relation, node.row)
        if fact in path:
            problems.append(f"cycle through {node.text}")
            return
        if node.row not in db[node.relation]:
            problems.append(f"{node.text} is not in the database")
        if node.kind == "edb":
            if node.relation in idb and fact not in facts:
                problems.append(f"{node.text} is a leaf but its relation is derived")
            if node.height != 0:
                problems.append(f"{node.text}: a leaf of height {node.height}")
            return
        if node.kind == "cut":
            return
        clause = clauses.get((node.relation, node.rule_number))
        if clause is None or str(clause) != node.rule:
            problems.append(f"{node.text}: no clause R{node.rule_number} = {node.rule}")
            return
        problems.extend(_instance_problems(db, clause, node))
        heights = [p.height for p in node.premises if p.kind in ("rule", "edb", "cut")]
        if node.height != 1 + max(heights, default=0):
            problems.append(f"{node.text}: height {node.height}, premises {heights}")
        for p in node.premises:
            visit(p, path + (fact,))

    visit(proof, ())
    return problems


def _instance_problems(db, clause, node) -> list[str]:
    evaluator = RuleEvaluator(db, ast.Rule((clause.head,), clause.body))
    binding = dict(node.binding)
    atoms = [lit for lit in clause.body if isinstance(lit, Atom)]
    negations = [lit for lit in clause.body if isinstance(lit, Negation)]
    premises = [p for p in node.premises if p.kind in ("rule", "edb", "cut")]
    absent = [p for p in node.premises if p.kind == "absent"]
    if len(premises) != len(atoms) or len(absent) != len(negations):
        return [f"{node.text}: {len(premises)} premises for {len(atoms)} atoms"]
    for atom, premise in zip(atoms, premises):
        if premise.relation != atom.relation or evaluator._match(atom, premise.row, binding) is None:
            return [f"{node.text}: premise {premise.text} does not match {atom} under {binding}"]
        binding = evaluator._match(atom, premise.row, binding)
    solutions = [s for s in evaluator.solve(clause.body, binding)
                 if evaluator.head_row(clause.head, s) == node.row]
    if not solutions:
        return [f"{node.text}: the binding {node.binding} does not satisfy {clause}"]
    return []


def least_heights(engine) -> dict[tuple[str, tuple], int]:
    """Every stored fact's least proof height, by relaxing over all rule instances until nothing
    changes (Bellman-Ford on the rule instances of the whole database)."""
    db, idb = plain_db(engine), engine.idb
    facts = _program_facts(engine)
    height = {(n, row): 0 for n, rows in db.items() for row in rows if n not in idb or (n, row) in facts}
    rules = [c for c in engine.checked.clauses if c.body]
    changed = True
    while changed:
        changed = False
        for clause in rules:
            evaluator = RuleEvaluator(db, ast.Rule((clause.head,), clause.body))
            for s in evaluator.solve(clause.body, {}):
                row = evaluator.head_row(clause.head, s)
                if row is None or row not in db[clause.head.relation]:
                    continue
                best = 0
                for atom in (lit for lit in clause.body if isinstance(lit, Atom)):
                    options = [height.get((atom.relation, r)) for r in db[atom.relation]
                               if evaluator._match(atom, r, s) is not None]
                    options = [h for h in options if h is not None]
                    if not options:
                        best = None
                        break
                    best = max(best, min(options))
                if best is None:
                    continue
                fact = (clause.head.relation, row)
                if height.get(fact, best + 2) > best + 1:
                    height[fact] = best + 1
                    changed = True
    return height


def failing_literal_fails(engine, failure, clause_text: str) -> bool:
    """Whether the literal ``failure`` names has no extension under each closest match."""
    clause = next(c for c in engine.checked.clauses if str(c) == clause_text)
    evaluator = RuleEvaluator(plain_db(engine), ast.Rule((clause.head,), clause.body))
    literal = next((lit for lit in clause.body if str(lit) == failure.literal), None)
    if literal is None:
        return False
    for match in failure.matches:
        try:
            if any(True for _ in evaluator._satisfy(literal, match)):
                return False
        except Exception:                      # noqa: BLE001  (a literal that errors does not hold)
            continue
    return True
