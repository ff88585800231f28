"""Why is a fact here, and why not: proofs of minimal height built on demand from the relations
as they are now.

Heights (Soufflé's): an EDB fact has height 0; a rule instance has height one more than the
highest of its positive body facts (negated atoms and aggregates are about lower strata and add
nothing). A fact's height is the least over its rule instances, so the proof of least height is
well-founded: a cycle could only make it higher.

The height is found by **iterative deepening** over the rule instances that the fact needs,
nothing else: ``derivable(f, h)`` asks whether some instance of a rule for ``f`` has all its
positive body facts derivable within ``h - 1``; ``height(f)`` is the least ``h`` for which the
answer is yes. Two bounds per fact make the search cheap: ``lower[f]`` (no proof lower than it:
learnt from a failed ``derivable``) and ``upper[f]`` (a proof of that height was found).
What one question learns is kept for the next until anything changes, so every answer is read off
the current relations; evaluation and maintenance do nothing for it. With kept heights
(``kept``: :mod:`datalog.provenance.heights`, ``--provenance``) no search is made: a fact's height
is looked up, and its witness is the first rule instance whose derived premises are kept lower.

Why not: for each clause of the fact's relation, its body is matched under the head's binding
literal by literal in source order (a literal waits until it can be evaluated); the literal at
which the deepest partial matches stop is the one that fails. Partial matches are bounded
(``budget`` extensions tried), and a failing positive atom whose tuple is known is explained in
turn, to ``depth``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datalog.language.ast import Aggregate, Atom, BranchTerm, Comparison, Negation, RecordTerm, Variable, Wildcard, \
    variables
from datalog.language.errors import DatalogError, InternalError
from datalog.language.naive.aggregates import NoValue
from datalog.language.naive.nodes import dnf
from datalog.language.rewrites import Clause
from datalog.provenance.instances import Instances
from datalog.provenance.proof import Proof, fact_text, value_text

AGGREGATE_SHOWN = 5          # contributing facts shown under an aggregate
_HIDDEN = " "                # names given to wildcards start with a space: no program can write them


@dataclass
class Instance:
    clause: Clause
    number: int              # Soufflé's rule number: position among the relation's clauses, from 1
    binding: dict
    premises: list           # (relation, row) of each positive body atom, in body order
    derived: list            # those of them that are not EDB facts (their height is above 0)


class Explainer:
    """Proofs over ``db`` (relation -> :class:`lftj.relation.Relation`, read as it is now).

    ``clauses``: the program's one-head clauses (facts among them); ``idb``: the relations that
    rules derive; ``base``: relation -> the program's facts of it (typed as stored); ``source``:
    (relation, row) -> where an EDB fact came from, or None."""

    def __init__(self, clauses, db: dict, idb: set[str], base: dict[str, set], source=None, kept=None):
        self.db, self.idb, self.base, self.source = db, idb, base, source or (lambda rel, row: None)
        self.kept = kept          # the kept heights (--provenance, :mod:`heights`), else None: a search
        self.rules: dict[str, list[tuple[Instances, int]]] = {}
        counts: dict[str, int] = {}
        for clause in clauses:
            name = clause.head.relation
            counts[name] = counts.get(name, 0) + 1
            if clause.body:
                evaluator = Instances(db, _named_wildcards(clause))
                evaluator.source_clause = clause          # as the program states it, ``_`` and all
                evaluator.as_written = Instances(db, clause)   # why_not reads this one: its literals as written
                self.rules.setdefault(name, []).append((evaluator, counts[name]))
        self.lower: dict = {}
        self.upper: dict = {}
        self._instances: dict = {}
        self._limit = sum(len(db[n]) for n in idb if n in db) + 2

    # ---------------------------------------------------------------- facts
    def holds(self, relation: str, row: tuple) -> bool:
        return row in self.db[relation]

    def is_base(self, relation: str, row: tuple) -> bool:
        """An EDB fact, or a fact the program states, of a relation that holds it."""
        return self.holds(relation, row) and (relation not in self.idb or row in self.base.get(relation, ()))

    def instances(self, fact):
        """Every rule instance whose head is ``fact``, over the current relations, read lazily:
        found one at a time as a caller asks for the next (a search that succeeds at the first
        instance reads no more), kept while this explainer answers questions. Nested walks of
        the same fact's instances (the search meets a fact again lower down) share what is read."""
        found = self._instances.get(fact)
        if found is None:
            found = self._instances[fact] = ([], self._enumerate(fact))
        seen, more = found
        i = 0
        while True:
            if i < len(seen):
                yield seen[i]
                i += 1
                continue
            if more is None:
                return
            inst = next(more, None)
            if inst is None:
                self._instances[fact] = (seen, None)
                more = None
                continue
            seen.append(inst)

    def _enumerate(self, fact):
        relation, row = fact
        idb, base = self.idb, self.base
        for evaluator, number in self.rules.get(relation, ()):
            rows = evaluator.premise_rows
            for binding in evaluator.of(row):
                premises = rows(binding)
                # a premise matched a stored row: it is derived unless its relation is EDB or the
                # program states it
                derived = [p for p in premises if p[0] in idb and p[1] not in base.get(p[0], ())]
                yield Instance(evaluator.clause, number, binding, premises, derived)

    # ---------------------------------------------------------------- heights
    def derivable(self, fact, h: int) -> bool:
        """Whether ``fact`` has a proof of height at most ``h``."""
        if self.is_base(*fact):
            return True
        if h <= 0 or self.lower.get(fact, 1) > h:
            return False
        if self.upper.get(fact, h + 1) <= h:
            return True
        lower = self.lower
        for inst in self.instances(fact):
            # refuted at once by a premise already known to need more than h - 1; otherwise the
            # premises are tried hardest first, so that a failing one is found early
            if any(lower.get(p, 1) > h - 1 for p in inst.derived):
                continue
            ordered = sorted(inst.derived, key=lambda p: -lower.get(p, 1))
            if all(self.derivable(p, h - 1) for p in ordered):
                self.upper[fact] = min(self.upper.get(fact, h), h)
                return True
        lower[fact] = h + 1
        return False

    def height(self, fact) -> int:
        """The least height of a proof of ``fact`` (which the relation holds)."""
        if self.is_base(*fact):
            return 0
        if self.kept is not None:
            return self._kept_height(fact)
        h = self.lower.get(fact, 1)
        while not self.derivable(fact, h):
            h += 1
            if h > self._limit:
                raise InternalError(f"{fact_text(*fact)} is stored but has no proof: the relations are "
                                    f"not those of the program")
        self.lower[fact] = self.upper[fact] = h
        return h

    def _kept_height(self, fact) -> int:
        h = self.kept.of(*fact)
        if h is None:
            raise InternalError(f"{fact_text(*fact)} is stored but has no kept height: the relations are "
                                f"not those of the program")
        return h

    def witness(self, fact, h: int) -> Instance:
        """A rule instance of ``fact`` whose premises all have proofs below ``h``: with kept
        heights the first instance met whose derived premises are all kept lower (read lazily,
        one binding at a time), else one the search finds."""
        if self.kept is not None:
            return self._kept_witness(fact, h)
        for inst in self.instances(fact):
            if all(self.derivable(p, h - 1) for p in inst.derived):
                return inst
        raise InternalError(f"no instance of height {h} for {fact_text(*fact)}")

    def _kept_witness(self, fact, h: int) -> Instance:
        relation, row = fact
        for evaluator, number in self.rules.get(relation, ()):
            for binding in evaluator.of(row):
                premises = evaluator.premise_rows(binding)
                derived = [p for p in premises if not self.is_base(*p)]
                if all(self._kept_height(p) < h for p in derived):
                    return Instance(evaluator.clause, number, binding, premises, derived)
        raise InternalError(f"no instance of height {h} for {fact_text(*fact)}: the kept heights are wrong")

    # ---------------------------------------------------------------- why
    def why(self, relation: str, row: tuple, depth: int | None = None) -> Proof:
        """The proof of least height of a fact the relation holds; below ``depth`` rule levels a
        sub-proof is a ``cut`` node."""
        fact = (relation, row)
        text = fact_text(relation, row)
        if self.is_base(relation, row):
            return Proof("edb", text, relation, row, 0, source=self.source(relation, row))
        h = self.height(fact)
        if depth is not None and depth <= 0:
            return Proof("cut", text, relation, row, h)
        inst = self.witness(fact, h)
        evaluator = next(e for e, n in self.rules[relation] if e.clause is inst.clause)
        below = None if depth is None else depth - 1
        premises, constraints = [], []
        for literal in inst.clause.body:
            if isinstance(literal, Atom):
                premises.append(self.why(literal.relation, evaluator.atom_row(literal, inst.binding), below))
            elif isinstance(literal, Negation):
                premises.append(Proof("absent", "!" + _atom_text(evaluator, literal.atom, inst.binding)))
            elif isinstance(literal, Comparison) and (literal.op != "=" or _has_aggregate(literal) or
                                                      not _assigns(literal, inst.clause.body)):
                constraints.append(self._comparison(evaluator, literal, inst.binding, below))
                # (``v = expr`` binding v is the binding's, not shown: Soufflé shows no assignment;
                # ``x + 1 = y`` over variables of atoms is a test, shown as ``1 = 1``)
        binding = {k: v for k, v in inst.binding.items() if not k.startswith(_HIDDEN)}
        return Proof("rule", text, relation, row, h, str(evaluator.source_clause), inst.number,
                     _where(inst.clause.rule.span), binding, premises + constraints)

    def _comparison(self, evaluator: Instances, literal: Comparison, binding: dict, depth) -> Proof:
        for side, other in ((literal.left, literal.right), (literal.right, literal.left)):
            if isinstance(side, Aggregate):
                return self._aggregate(evaluator, side, other, binding, depth)
        left, right = (_term_text(evaluator, t, binding) for t in (literal.left, literal.right))
        op = {"match": "match", "contains": "contains"}.get(literal.op)
        return Proof("constraint", f"{op}({left}, {right})" if op else f"{left} {literal.op} {right}")

    def _aggregate(self, evaluator: Instances, agg: Aggregate, other, binding: dict, depth) -> Proof:
        """``v = kind target : { body } = value`` over the facts of its body's matches."""
        outside = {k: v for k, v in binding.items() if k in evaluator.injected.get(id(agg), ())}
        contributing: dict = {}
        for conjunction in dnf(agg.body):
            conjunction = _atoms_named(conjunction)
            for s in evaluator.solve(conjunction, outside):
                for literal in conjunction:
                    if isinstance(literal, Atom):
                        row = evaluator.atom_row(literal, s)
                        if row is not None:
                            contributing.setdefault((literal.relation, row), None)
        facts = _in_order(contributing)
        shown = [self.why(rel, row, depth) for rel, row in facts[:AGGREGATE_SHOWN]]
        value = evaluator.eval(other, binding) if not isinstance(other, Aggregate) else None
        text = f"{other} = {agg} = {value_text(value)}"
        return Proof("aggregate", text, rule=agg.kind, value=value, premises=shown,
                     more=max(0, len(facts) - AGGREGATE_SHOWN))

    # ---------------------------------------------------------------- why not
    def why_not(self, relation: str, row: tuple, depth: int = 1, limit: int = 3, budget: int = 10_000) -> "WhyNot":
        """Why the relation does not hold ``row``: per rule, the literal where the closest partial
        matches (at most ``limit``) stop; a failing positive atom with a known tuple is explained
        to ``depth`` more levels."""
        out = WhyNot(relation, row, present=self.holds(relation, row))
        if out.present:
            return out
        for evaluator, number in self.rules.get(relation, ()):
            out.rules.append(self._rule_failure(evaluator, number, row, depth, limit, budget))
        return out

    def _rule_failure(self, evaluator: Instances, number: int, row, depth, limit, budget) -> "RuleFailure":
        evaluator = evaluator.as_written
        clause = evaluator.clause
        failure = RuleFailure(str(clause), number, _where(clause.rule.span))
        start = evaluator.head_binding(row)
        if start is None:
            failure.reason = f"its head {clause.head} cannot be {fact_text(clause.head.relation, row)}"
            return failure
        search = _Deepest(evaluator, clause, row, limit, budget)
        search.run(start)
        if search.complete:
            failure.reason = ("every literal holds: the rule derives it, but it was removed (subsumption, "
                              "choice-domain or .limitsize)")
            return failure
        literal = search.literal
        failure.literal = str(literal) if literal is not None else None
        failure.matches = [{k: v for k, v in m.items() if not k.startswith(_HIDDEN)} for m in search.matches]
        if literal is None:
            failure.reason = "the head's expressions give other values for every match of the body"
            return failure
        failure.reason = _failure_reason(evaluator, literal, search.matches[0] if search.matches else start)
        if isinstance(literal, Atom) and depth > 0:
            for m in search.matches:
                sub = evaluator.atom_row(literal, m)
                if sub is not None and not self.holds(literal.relation, sub):
                    failure.missing.append(self.why_not(literal.relation, sub, depth - 1, limit, budget))
        return failure


class _Deepest:
    """The deepest partial matches of a body, literal by literal in source order (a literal that
    cannot be evaluated yet waits), at most ``budget`` extensions tried."""

    def __init__(self, evaluator: Instances, clause: Clause, row, limit: int, budget: int):
        self.evaluator, self.clause, self.row, self.limit, self.budget = evaluator, clause, row, limit, budget
        self.best, self.literal, self.matches, self.complete = -1, None, [], False

    def run(self, start: dict) -> None:
        self._extend(list(self.clause.body), start, 0)

    def _extend(self, rest: list, subst: dict, done: int) -> None:
        if self.complete or self.budget <= 0:
            return
        if not rest:
            if self.evaluator.head_row(self.clause.head, subst) == self.row:
                self.complete = True
            else:
                self._record(done, None, subst)
            return
        i = next((k for k, lit in enumerate(rest) if self.evaluator._rank(lit, set(subst)) is not None), 0)
        literal = rest[i]
        try:
            extensions = list(self.evaluator._satisfy(literal, subst))
        except (NoValue, DatalogError, ArithmeticError, TypeError, ValueError):
            extensions = []
        self.budget -= max(1, len(extensions))
        if not extensions:
            self._record(done, literal, subst)
            return
        for extended in extensions:
            self._extend(rest[:i] + rest[i + 1:], extended, done + 1)

    def _record(self, done: int, literal, subst: dict) -> None:
        if done > self.best:
            self.best, self.literal, self.matches = done, literal, [subst]
        elif done == self.best and literal is self.literal and len(self.matches) < self.limit \
                and subst not in self.matches:
            self.matches.append(subst)


def _failure_reason(evaluator: Instances, literal, subst: dict) -> str:
    if isinstance(literal, Atom):
        return f"no {_atom_text(evaluator, literal, subst)} in {literal.relation}"
    if isinstance(literal, Negation):
        return f"{_atom_text(evaluator, literal.atom, subst)} holds"
    left, right = (_term_text(evaluator, t, subst) for t in (literal.left, literal.right))
    return f"{left} {literal.op} {right} is false"


@dataclass
class RuleFailure:
    rule: str
    number: int
    position: str | None
    literal: str | None = None
    reason: str = ""
    matches: list = field(default_factory=list)
    missing: list = field(default_factory=list)     # WhyNot of failing positive atoms

    def to_dict(self) -> dict:
        out = {"rule": self.rule, "rule_number": self.number, "position": self.position,
               "failing_literal": self.literal, "reason": self.reason,
               "closest_matches": [{k: _plain(v) for k, v in m.items()} for m in self.matches]}
        if self.missing:
            out["missing"] = [m.to_dict() for m in self.missing]
        return out


@dataclass
class WhyNot:
    relation: str
    row: tuple
    present: bool = False
    rules: list[RuleFailure] = field(default_factory=list)

    @property
    def text(self) -> str:
        return fact_text(self.relation, self.row)

    def to_dict(self) -> dict:
        return {"fact": self.text, "relation": self.relation, "tuple": [_plain(v) for v in self.row],
                "present": self.present, "rules": [r.to_dict() for r in self.rules]}

    def to_text(self, indent: str = "") -> str:
        if self.present:
            return f"{indent}{self.text} holds (ask why, not why not)"
        if not self.rules:
            return f"{indent}{self.text} is not in {self.relation}, which no rule derives (an EDB relation)"
        lines = [f"{indent}{self.text} is not in {self.relation}: "
                 f"{len(self.rules)} rule{'s' * (len(self.rules) != 1)} could derive it"]
        for r in self.rules:
            where = f"  ({r.position})" if r.position else ""
            lines.append(f"{indent}  (R{r.number}) {r.rule}{where}")
            lines.append(f"{indent}      fails at {r.literal}: {r.reason}" if r.literal else f"{indent}      {r.reason}")
            for m in r.matches:
                if m:
                    lines.append(f"{indent}      closest match: " + ", ".join(f"{k} = {value_text(v)}"
                                                                            for k, v in m.items()))
            for sub in r.missing:
                lines.append(sub.to_text(indent + "        "))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _assigns(literal: Comparison, body: tuple) -> bool:
    """Whether an equality binds a variable no positive atom of the body binds (``y = x + 1``,
    ``q = [a, b]``), rather than testing values the atoms bound."""
    from_atoms = {v.name for lit in body if isinstance(lit, Atom) for v in variables(lit)}
    return any(v.name not in from_atoms for v in variables((literal.left, literal.right)))


def _has_aggregate(literal: Comparison) -> bool:
    return isinstance(literal.left, Aggregate) or isinstance(literal.right, Aggregate)


def _plain(value):
    return value if isinstance(value, (int, float, str)) else str(value)


def _where(span) -> str | None:
    return str(span) if span is not None else None


def _term_text(evaluator: Instances, term, binding: dict) -> str:
    try:
        return value_text(evaluator.eval(term, binding))
    except (NoValue, DatalogError, ArithmeticError, TypeError, ValueError):
        return str(term)


def _atom_text(evaluator: Instances, atom: Atom, binding: dict) -> str:
    """An atom with its bound arguments as values (``_`` and unbound ones as written)."""
    args = []
    for arg in atom.args:
        if isinstance(arg, Wildcard) or (isinstance(arg, Variable) and arg.name not in binding):
            args.append(str(arg))
        else:
            args.append(_term_text(evaluator, arg, binding))
    return f"{atom.relation}({', '.join(args)})"


def _named_wildcards(clause: Clause) -> Clause:
    """The clause with each ``_`` of a positive body atom a variable of its own (named so no
    program can clash), so that a binding gives the atom's whole tuple."""
    return Clause(clause.head, _atoms_named(clause.body), clause.rule, clause.index)


def _atoms_named(body: tuple) -> tuple:
    """``body`` with each ``_`` of its positive atoms a variable of its own."""
    counter = iter(range(1_000_000))

    def name(term):
        if isinstance(term, Wildcard):
            return Variable(f"{_HIDDEN}w{next(counter)}")
        if isinstance(term, RecordTerm):
            return RecordTerm(tuple(map(name, term.args)), term.span)
        if isinstance(term, BranchTerm):
            return BranchTerm(term.name, tuple(map(name, term.args)), term.span)
        return term

    return tuple(Atom(lit.relation, tuple(map(name, lit.args)), lit.span) if isinstance(lit, Atom) else lit
                 for lit in body)


__all__ = ["Explainer", "Instance", "WhyNot", "RuleFailure"]


def _in_order(facts) -> list:
    """Facts (relation, row) sorted, so that what is shown of them does not follow the hash order
    of a set (a symbol's hash changes from one process to the next)."""
    try:
        return sorted(facts)
    except TypeError:                       # values of kinds that do not compare (records)
        return sorted(facts, key=repr)
