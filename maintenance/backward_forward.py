"""Maintenance of a recursive stratum by Backward/Forward: deletion without overdeletion.

B/F (Motik, Nenov, Piro and Horrocks, *Incremental Update of Datalog Materialisation: the
Backward/Forward Algorithm*, AAAI 2015) replaces DRed's overdelete and rederive phases. A
tuple that may have lost a derivation is not deleted and then derived again: before it is
deleted, a backward search looks for another proof of it, and forward chaining propagates
what the search proves. Its work follows the tuples whose derivations touch a deleted tuple
and the proofs searched for them, not everything derivable through the deleted tuple.

The paper's sets, per transaction (facts are ``(relation, row)``):
  * ``ND``: the queue of facts to delete, each of which may have lost a derivation;
  * ``C`` (checked): facts whose provability was (or is being) checked;
  * ``P`` (proved): checked facts proved from the new state: an explicit fact (a fact of
    the program) or the head of a rule instance whose same-stratum body facts are all in
    ``P``; so every fact in ``P`` holds after the transaction;
  * ``D`` (deleted): facts erased from the stratum's relations.

Lower strata are up to date before the stratum is maintained, so a rule instance is matched
against the new lower relations and the stratum's relations as they are now (old tuples minus
``D``); only the same-stratum atoms of a rule's body are searched backward.

  ND := heads of   H :- A1, ..., Ai⁻, ..., An, !N, C.     (Ai lower; in the OLD state, as DRed's
                   H :- A1, ..., An, !N, C, Nj⁺.           overdelete seeds: maintenance/dred.py)
  while F := ND.next:
      checkProvability(F)                 backward chaining, with saturate() forward from each proof
      for each G in C \\ P checked since:  (no proof exists: see below)
          D := D ∪ {G}; ND += heads of the rule instances with G in the body
  then DRed's insert phase (semi-naive from the lower relations' inserted tuples).

  checkProvability(F):
      if F ∈ C: return;  C := C ∪ {F}
      if F is a fact of the program: saturate(F); return
      for each rule instance  F :- B1, ..., Bk, (lower literals)  over the current relations:
          for each Bj (same stratum): checkProvability(Bj); if F ∈ P: return
          if B1, ..., Bk ∈ P: saturate(F); return

  saturate(F):  P := P ∪ {F}; then forward chaining: every rule instance whose same-stratum
      body facts are all in P puts its head in P, if that head is in C.

Why a fact left in ``C \\ P`` when the outermost ``checkProvability`` returns has no proof:
every rule instance deriving it had all its same-stratum body facts checked; had they all
been proved, ``saturate`` would have proved it. So every derivation of a fact of ``C \\ P``
uses another fact of ``C \\ P``, and none has a derivation of least height. Facts of ``C \\ P``
are deleted at once (the paper deletes each when it leaves ``ND``; they all reach ``ND``
through the deletions before them): the searches that follow then no longer match them.

The recursion of checkProvability runs on an explicit stack of generators (a long chain of
proofs would exceed Python's recursion limit). A rule instance is one binding of every
variable of the rule: the rule is planned again (``_instance_plan``) with wildcards,
constants and expressions of its same-stratum atoms made variables, no short-circuit (every
binding is enumerated), and a leading atom read from a small relation: ``@delta`` (the head,
for checkProvability) or one same-stratum atom (the proved facts, for saturate).

Where B/F is not used (``supports``): a same-stratum relation read other than by a positive
atom of the body whose arguments are variables, constants and wildcards (records, a
disjunction); that stratum keeps DRed.
"""

from __future__ import annotations

from collections import ChainMap, deque
from dataclasses import replace

from datalog.evaluation.compile import CompiledPlan, compile_plan
from datalog.evaluation.evaluate import run_plan
from datalog.language import ast
from datalog.language.rewrites import Clause
from datalog.language.strata import Stratum, dependencies
from datalog.planning.planner import plan_clause
from lftj.relation import Relation
from maintenance import dred
from maintenance.delta import Delta

Fact = tuple[str, tuple]


def supports(stratum: Stratum) -> bool:
    """Whether B/F can maintain ``stratum``: each same-stratum relation is read by positive atoms
    of the body only, whose arguments are variables, constants and wildcards."""
    for clause in stratum.clauses:
        for relation, _, node in dependencies(clause):
            if relation not in stratum.relations:
                continue
            if not (isinstance(node, ast.Atom) and any(node is lit for lit in clause.body)):
                return False
            if not all(isinstance(a, (ast.Variable, ast.Constant, ast.Wildcard)) for a in node.args):
                return False
    return True


def maintain_recursive(program, db, stratum: Stratum, delta: Delta, journal, tally: dred.Tally | None = None,
                       variants: dict | None = None) -> Delta:
    """Bring ``stratum``'s relations up to date after ``delta`` (as :func:`dred.maintain_recursive`,
    whose arguments and result these are); deletions by B/F, insertions by DRed's insert phase."""
    tally = tally if tally is not None else dred.Tally()
    ctx = dred._Context(program, db, variants if variants is not None else {})
    clauses = [c for c in stratum.clauses if c.body]
    lower = {name: change for name, change in delta.items()
             if change and name in dred._lower_reads(clauses, stratum)}
    if not lower:
        return {}
    seeds = _seeds(ctx, clauses, lower, journal, tally)
    search = Search(ctx, stratum, clauses, journal, tally)
    search.delete(seeds)
    inserted = dred._insert(ctx, clauses, lower, {}, journal, tally)
    return dred._changes(stratum, search.deleted(), inserted)


def _seeds(ctx, clauses, lower: Delta, journal, tally) -> dred.Rows:
    """ND's first facts: heads of the rule instances that read a retracted lower tuple or are
    blocked by a gained negated one (or aggregate a changed relation), in the OLD state."""
    dred._revert(ctx, lower, journal)
    retracted, gained = dred._delta_relations(lower, "retracted"), dred._delta_relations(lower, "inserted")
    found = dred._fire(ctx, clauses, tally, retracted, gained, set(lower))
    out = {name: rows & ctx.db[name].tuples for name, rows in found.items()}
    dred._restore(ctx, lower, journal)
    return out


class Search:
    """One transaction's B/F deletion over a stratum: the paper's ``C``, ``P``, ``D`` and ``ND``."""

    def __init__(self, ctx, stratum: Stratum, clauses, journal, tally):
        self.ctx, self.stratum, self.clauses, self.journal, self.tally = ctx, stratum, clauses, journal, tally
        self.same = set(stratum.relations)
        self.explicit = {(name, row) for name, rows in dred._facts(ctx.program, stratum).items() for row in rows}
        self.C: set[Fact] = set()
        self.P: set[Fact] = set()
        self.D: dict[str, set] = {name: set() for name in stratum.relations}
        self.ND: deque[Fact] = deque()
        self.since: list[Fact] = []              # facts checked since the outermost check began
        self.heads = {name: [c for c in clauses if c.head.relation == name] for name in stratum.relations}

    def deleted(self) -> dred.Rows:
        return {name: rows for name, rows in self.D.items() if rows}

    # ------------------------------------------------------------ the main loop
    def delete(self, seeds: dred.Rows) -> None:
        self._schedule(seeds)
        while self.ND:
            fact = self.ND.popleft()
            if fact in self.C:
                continue
            self.since = []
            self.check_provability(fact)
            self._erase([g for g in self.since if g not in self.P])

    def _schedule(self, found: dred.Rows) -> None:
        """ND += the found heads still in their relation and not checked yet."""
        for name, rows in found.items():
            tuples = self.ctx.db[name].tuples
            self.ND.extend((name, row) for row in rows if row in tuples and (name, row) not in self.C)

    def _erase(self, disproved: list[Fact]) -> None:
        """D := D ∪ disproved; ND += heads of the rule instances with a disproved fact in the body
        (matched while the disproved facts are still in their relations), then erase them."""
        if not disproved:
            return
        rows: dred.Rows = {}
        for name, row in disproved:
            rows.setdefault(name, set()).add(row)
        # ND += H :- A1, ..., Ai, ..., An, !N, C.   with Ai ∈ disproved
        found = dred._fire(self.ctx, self.clauses, self.tally, dred._as_relations(rows))
        for name, gone in rows.items():
            self.D[name] |= gone
            self.journal.erase(self.ctx.db[name], gone)
        self._schedule(found)

    # ------------------------------------------------------------ backward chaining
    def check_provability(self, fact: Fact) -> None:
        """checkProvability(F), the recursion on an explicit stack of generators."""
        if fact in self.C:
            return
        stack = [self._open(fact)]
        while stack:
            goal = next(stack[-1], None)
            if goal is None:
                stack.pop()
            elif goal not in self.C:
                stack.append(self._open(goal))

    def _open(self, fact: Fact):
        self.C.add(fact)
        self.since.append(fact)
        return self._prove(fact)

    def _prove(self, fact: Fact):
        """The body of checkProvability(F) after F joined C: yields each same-stratum body fact to
        check (the caller checks it before resuming), returns once F is proved or no instance is left."""
        if fact in self.explicit:
            self.saturate(fact)
            return
        instances = self.instances(fact)
        P = self.P
        for body in instances:                   # one already proved: no search needed
            if all(g in P for g in body):
                self.saturate(fact)
                return
        for body in instances:
            for goal in body:
                if goal not in self.C:
                    yield goal
                if fact in P:
                    return
            if all(g in P for g in body):
                self.saturate(fact)
                return

    def instances(self, fact: Fact) -> list[tuple[Fact, ...]]:
        """The same-stratum body facts of every rule instance with head F, over the current relations."""
        name, row = fact
        out = []
        delta = Relation(dred.DELTA, len(row), [row])
        for clause in self.heads[name]:
            plan, atoms = self._plan(clause, None)
            bindings = _bindings(self.ctx, plan, atoms, overlay=delta)
            self.tally.count(clause, bindings)
            out.extend(bindings)
        return out

    # ------------------------------------------------------------ forward chaining
    def saturate(self, fact: Fact) -> None:
        """P := P ∪ {F}, then every checked head of a rule instance whose same-stratum body facts
        are all proved joins P, round by round (one atom reads the last round's proved facts)."""
        P, C = self.P, self.C
        P.add(fact)
        recent = {fact[0]: {fact[1]}}
        while recent:
            proved: dred.Rows = {}
            for clause in self.clauses:
                head = clause.head.relation
                for position, atom in enumerate(_same_atoms(clause, self.same)):
                    rows = recent.get(atom.relation)
                    if not rows:
                        continue
                    # H :- A1, ..., δPi, ..., An, !N, C.   with Aj ∈ P, H ∈ C \\ P
                    plan, atoms = self._plan(clause, position)
                    sources = {_position(plan, atoms[position][2]): Relation(atom.relation, len(atom.args), rows)}
                    for h, body in _instances_with_heads(self.ctx, plan, atoms, sources):
                        found = (head, h)
                        if found in C and found not in P and all(g in P for g in body):
                            P.add(found)
                            proved.setdefault(head, set()).add(h)
            recent = proved

    # ------------------------------------------------------------ plans
    def _plan(self, clause: Clause, position: int | None):
        """The instance plan of ``clause`` led by its head (None) or its ``position``-th same-stratum
        atom, and the same-stratum atoms as (relation, slots) pairs, made once per maintainer."""
        key = (clause.index, "bf", position)
        made = self.ctx.variants.get(key)
        if made is None:
            made = self.ctx.variants[key] = _instance_plan(self.ctx, clause, self.same, position)
        return made


def _same_atoms(clause: Clause, same: set[str]) -> list[ast.Atom]:
    return [lit for lit in clause.body if isinstance(lit, ast.Atom) and lit.relation in same]


def _instance_plan(ctx, clause: Clause, same: set[str], position: int | None):
    """``h(x, y + 1) :- p(x, _), e(_, y), p(3, y).`` becomes, led by the head,
    ``h(x, _h1) :- p(x, _b0_1), e(_, y), p(_b2_0, y), _b2_0 = 3, _h1 = y + 1, @delta(x, _h1).``
    with x, _h1 first and every variable enumerated (no witness short-circuit); led by a
    same-stratum atom, no ``@delta`` and that atom's variables first. Returns the plan and,
    per same-stratum atom, (relation, the slots of its columns, the rewritten atom)."""
    body, extra, rewritten = [], [], []
    for k, literal in enumerate(clause.body):
        if isinstance(literal, ast.Atom) and literal.relation in same:
            args = []
            for j, term in enumerate(literal.args):
                if not isinstance(term, ast.Variable):
                    var = ast.Variable(f"_b{k}_{j}", literal.span)
                    if not isinstance(term, ast.Wildcard):
                        extra.append(ast.Comparison("=", var, term, literal.span))
                    term = var
                args.append(term)
            literal = ast.Atom(literal.relation, tuple(args), literal.span)
            rewritten.append(literal)
        body.append(literal)
    head = clause.head
    if position is None:
        args, lead = [], []
        for i, term in enumerate(clause.head.args):
            if not isinstance(term, (ast.Variable, ast.Constant)):
                var = ast.Variable(f"_h{i}", clause.head.span)
                extra.append(ast.Comparison("=", var, term, clause.head.span))
                term = var
            args.append(term)
        head = ast.Atom(clause.head.relation, tuple(args), clause.head.span)
        extra.append(ast.Atom(dred.DELTA, tuple(args), clause.head.span))
        order = [a.name for a in args if isinstance(a, ast.Variable)]
    else:
        order = [a.name for a in rewritten[position].args]
    order = list(dict.fromkeys(order))
    planned = plan_clause(Clause(head, tuple(body) + tuple(extra), clause.rule), ctx.schema, pragma=order)
    plan = compile_plan(replace(planned, needed=planned.depth))
    atoms = [(a.relation, tuple(plan.slots[v.name] for v in a.args), a) for a in rewritten]
    return plan, atoms


def _position(plan: CompiledPlan, atom: ast.Atom) -> int:
    """The position in the plan of the opened atom ``atom`` (a rewritten atom is unique: its
    fresh variables name its position in the body, and equal atoms read the same facts)."""
    return next(i for i, p in enumerate(plan.atoms) if p.atom == atom)


def _bindings(ctx, plan: CompiledPlan, atoms, overlay: Relation) -> list[tuple[Fact, ...]]:
    """The same-stratum body facts of every binding of ``plan`` (``overlay`` read as @delta)."""
    return [body for _, body in _instances_with_heads(ctx, plan, atoms, None, overlay)]


def _instances_with_heads(ctx, plan: CompiledPlan, atoms, sources=None, overlay: Relation | None = None):
    """(head tuple, same-stratum body facts) of every binding of ``plan`` over the relations."""
    db = ctx.db if overlay is None else ChainMap({dred.DELTA: overlay}, ctx.db)
    out, head = [], plan.head

    def emit(b):
        out.append((head(b), tuple((name, tuple(b[s] for s in slots)) for name, slots, _ in atoms)))
    run_plan(plan, db, emit, sources=sources, intersect=ctx.intersect)
    return out
