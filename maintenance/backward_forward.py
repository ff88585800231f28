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
                                          (erased and matched wave by wave: when ND runs out)
  then DRed's insert phase (semi-naive from the lower relations' inserted tuples).
  (Insertions as in the paper's remark: semi-naive evaluation continued from the new tuples.)

  checkProvability(F):
      if F ∈ C: return;  C := C ∪ {F}
      if F is a fact of the program: saturate(F); return
      for each rule instance  F :- B1, ..., Bk, (lower literals)  over the current relations:
          for each Bj (same stratum): checkProvability(Bj); if F ∈ P: return
          if B1, ..., Bk ∈ P: saturate(F); return

  saturate(F):  P := P ∪ {F}; then forward chaining: every rule instance whose same-stratum
      body facts are all in P puts its head in P, if that head is in C. (The instances with a
      head in C are those matched when the head was checked; each waits on its unproved body
      facts, so forward chaining follows these lists instead of joining again.)

Why a fact left in ``C \\ P`` when the outermost ``checkProvability`` returns has no proof:
every rule instance deriving it had all its same-stratum body facts checked; had they all
been proved, ``saturate`` would have proved it. So every derivation of a fact of ``C \\ P``
uses another fact of ``C \\ P``, and none has a derivation of least height. Facts of ``C \\ P``
are deleted at once, not only the fact taken from ``ND`` (all of them would reach ``ND``
through the deletions before them): the searches that follow then no longer match them.

The recursion of checkProvability runs on an explicit stack of generators (a long chain of
proofs would exceed Python's recursion limit). A rule instance is one binding of every
variable of the rule: the rule is planned again (``_instance_plan``) with wildcards,
constants and expressions of its same-stratum atoms made variables, no short-circuit (every
binding is enumerated), led by ``@delta``, a relation holding the one head.

Where B/F is not used (``supports``): a same-stratum relation read other than by a positive
atom of the body whose arguments are variables, constants and wildcards (``p(x + 1, y)``);
that stratum keeps DRed. Per transaction, the seeds (``ND``'s first facts, the first round of
DRed's overdelete) are found once; when there are more of them than B/F's limit, DRed does it
all (B/F checks every seed at least once, so it could only stop at its limit). Else DRed's
overdelete runs as a probe from them (DRed does it all while its overdeletion is at most
:data:`PROBE` tuples), and B/F does at most :data:`BUDGET` work before DRed takes what is left
over (``_handover``): the cost of a transaction is DRed's at most plus the probe and the budget
(maintenance/README.md: measured).
"""

from __future__ import annotations

from collections import ChainMap, deque
from dataclasses import replace
from operator import itemgetter

from datalog.evaluation.compile import CompiledPlan, compile_plan
from datalog.evaluation.evaluate import run_plan
from datalog.evaluation.seminaive import Variable, rounds
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


PROBE = 256         # DRed whole when its overdeletion stays within this many tuples (measured: README)
BUDGET = (0, 128)   # B/F's work (facts checked + rule instances matched) before DRed takes over (measured: README)


def maintain_recursive(program, db, stratum: Stratum, delta: Delta, journal, tally: dred.Tally | None = None,
                       variants: dict | None = None, budget: tuple[int, int] | None | str = "default",
                       probe: int | None | str = "default") -> Delta:
    """Bring ``stratum``'s relations up to date after ``delta`` (as :func:`dred.maintain_recursive`,
    whose arguments and result these are); deletions by B/F, insertions by DRed's insert phase.
    With more seeds than B/F's limit, DRed (B/F would check each seed, past its limit). Else
    DRed's overdelete runs as a probe: if ∇ stays within ``probe`` tuples, DRed finishes
    (its rederive step is one join per tuple there, cheaper than B/F's proof search, which knows
    no tuple to be unaffected). Else B/F, with ``budget`` (per seed, plus): once its work (facts
    checked + rule instances matched) exceeds it, DRed maintains what is left (``_handover``).
    None: no probe / no limit;
    "default": :data:`PROBE` / :data:`BUDGET`."""
    budget = BUDGET if budget == "default" else budget
    probe = PROBE if probe == "default" else probe
    tally = tally if tally is not None else dred.Tally()
    ctx = dred._Context(program, db, variants if variants is not None else {})
    clauses = [c for c in stratum.clauses if c.body]
    lower = {name: change for name, change in delta.items()
             if change and name in dred._lower_reads(clauses, stratum)}
    if not lower:
        return {}
    found = dred.first_round(ctx, clauses, lower, journal, tally)
    seeds = {name: rows & ctx.db[name].tuples for name, rows in found.items()}     # ND's first facts
    count = sum(map(len, seeds.values()))
    limit = None if budget is None else budget[0] * count + budget[1]
    if limit is not None and count > limit:     # B/F checks each seed: it would stop at its limit
        return dred.finish(ctx, stratum, clauses, lower,
                           dred._overdelete(ctx, stratum, clauses, lower, journal, tally, first=found), journal, tally)
    if probe is not None:
        overdeleted = dred._overdelete(ctx, stratum, clauses, lower, journal, tally, limit=probe, first=found)
        if overdeleted is not None:
            return dred.finish(ctx, stratum, clauses, lower, overdeleted, journal, tally)
    search = Search(ctx, stratum, clauses, journal, tally, limit)
    if search.delete(seeds):
        inserted = dred._insert(ctx, clauses, lower, {}, journal, tally)
        return dred._changes(stratum, search.deleted(), inserted)
    return _handover(ctx, stratum, clauses, lower, search, journal, tally)


def _handover(ctx, stratum: Stratum, clauses, lower: Delta, search: "Search", journal, tally) -> Delta:
    """DRed for what B/F left when it ran out of budget. Known then: ``D`` has no proof, ``P``
    holds; unknown: the facts of ``ND`` (the one whose check was cut among them). Every other fact
    whose derivations touch ``D`` was put in ``ND`` when its ``D`` fact was erased, so DRed's
    overdelete from the unknown facts (never ``P`` or a program fact; over the old lower
    relations, as DRed's: instances made by inserted lower tuples are the insert phase's, and
    following them would overdelete what no deletion touched), rederive and insert phases bring
    the stratum up to date."""
    keep = dred._facts(ctx.program, stratum)
    for name, row in search.P:
        keep.setdefault(name, set()).add(row)
    dred._revert(ctx, lower, journal)           # ∇ follows the old derivations, as DRed's
    overdeleted = _overdelete(ctx, stratum, clauses, search.unknown(), keep, tally)
    dred._restore(ctx, lower, journal)
    for name, rows in overdeleted.items():
        journal.erase(ctx.db[name], rows)
    rederived = dred._rederive(ctx, clauses, overdeleted, tally)
    for name, rows in rederived.items():
        journal.insert(ctx.db[name], rows)
    inserted = dred._insert(ctx, clauses, lower, rederived, journal, tally)
    deleted = search.deleted()
    for name, rows in overdeleted.items():
        deleted[name] = deleted.get(name, set()) | rows
    return dred._changes(stratum, deleted, inserted)


def _overdelete(ctx, stratum: Stratum, clauses, unknown: dred.Rows, keep: dred.Rows, tally) -> dred.Rows:
    """∇: the unknown facts and, round by round, ∇H :- A1, ..., δ∇Ai, ..., An, !N, C.  (over the
    relations as they are; never a fact of ``keep``)"""
    total: dred.Rows = {name: set() for name in stratum.relations}
    variables = {name: Variable(name, ctx.db[name].arity,
                                lambda rows, name=name: dred._fresh(ctx, {name: rows}, total, keep)[name])
                 for name in stratum.relations}
    dred._seed(variables, unknown)
    for _ in rounds(list(variables.values())):
        dred._derived(variables, dred._fire(ctx, clauses, tally, dred._recent(variables)))
    return {name: rows for name, rows in total.items() if rows}


class Search:
    """One transaction's B/F deletion over a stratum: the paper's ``C``, ``P``, ``D`` and ``ND``."""

    def __init__(self, ctx, stratum: Stratum, clauses, journal, tally, limit: int | None = None):
        self.ctx, self.stratum, self.clauses, self.journal, self.tally = ctx, stratum, clauses, journal, tally
        self.limit = limit                         # at most this much work (None: no limit)
        self.work = 0                              # facts checked + rule instances matched
        self.same = set(stratum.relations)
        self.explicit = {(name, row) for name, rows in dred._facts(ctx.program, stratum).items() for row in rows}
        self.C: set[Fact] = set()
        self.P: set[Fact] = set()
        self.D: dict[str, set] = {name: set() for name in stratum.relations}
        self.ND: deque[Fact] = deque()
        self.since: list[Fact] = []              # facts checked since the outermost check began
        self.waiting: dict[Fact, list] = {}       # body fact -> (head, body) of the instances it is in
        self.heads = {name: sorted((c for c in clauses if c.head.relation == name),
                                   key=lambda c: sum(1 for lit in c.body if isinstance(lit, ast.Atom)
                                                     and lit.relation in self.same))
                      for name in stratum.relations}

    def deleted(self) -> dred.Rows:
        return {name: rows for name, rows in self.D.items() if rows}

    # ------------------------------------------------------------ the main loop
    def delete(self, seeds: dred.Rows) -> bool:
        """The main loop; False if it stopped at the limit of its work (see ``unknown``). The
        facts a check disproves are erased wave by wave, when ``ND`` runs out, so that the rule
        instances reading them are matched in one join per wave (until erased they are in ``C``
        and not in ``P``: a search reaching them neither checks them again nor proves with them)."""
        self._schedule(seeds)
        disproved: list[Fact] = []
        while self.ND:
            while self.ND:
                fact = self.ND.popleft()
                if fact in self.C:
                    continue
                self.since = []
                try:
                    self.check_provability(fact)
                except _OverBudget:
                    self.ND.appendleft(fact)      # unknown still, if its check had not begun
                    self._erase(disproved, cut=True)
                    return False
                disproved += [g for g in self.since if g not in self.P]
            self._erase(disproved)
            disproved = []
        return True
    def unknown(self) -> dred.Rows:
        """After a stop at the limit: ND's facts not proved, still in their relations (the fact
        whose check was cut is back in ND; the other facts that check reached are in ND too if
        they may have lost a derivation, else they have all their derivations still)."""
        out: dred.Rows = {}
        for name, row in self.ND:
            if (name, row) not in self.P and row in self.ctx.db[name].tuples:
                out.setdefault(name, set()).add(row)
        return out

    def _schedule(self, found: dred.Rows, cut: bool = False) -> None:
        """ND += the found heads still in their relation and not checked yet (``cut``: not proved
        yet -- the facts of a check cut short are in ``C`` without being known)."""
        known = self.P if cut else self.C
        for name, rows in found.items():
            tuples = self.ctx.db[name].tuples
            self.ND.extend((name, row) for row in rows if row in tuples and (name, row) not in known)

    def _erase(self, disproved: list[Fact], cut: bool = False) -> None:
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
        self._schedule(found, cut)

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
        self.work += 1
        if self.limit is not None and self.work > self.limit:
            raise _OverBudget
        self.C.add(fact)
        self.since.append(fact)
        return self._prove(fact)

    def _prove(self, fact: Fact):
        """The body of checkProvability(F) after F joined C: yields each same-stratum body fact to
        check (the caller checks it before resuming), returns once F is proved or no instance is
        left. The rules with F's relation in the head are taken one at a time, fewest same-stratum
        atoms first (a base rule proves at once), and a rule's instances are matched only when the
        rules before it left F unproved; matching stops at an instance already proved."""
        if fact in self.explicit:
            self.saturate(fact)
            return
        P, C = self.P, self.C
        for clause in self.heads[fact[0]]:
            instances = self.instances(clause, fact)
            if instances is None:                # an instance's body facts are all proved
                self.saturate(fact)
                return
            self.watch(fact, instances)
            for body in instances:
                for goal in body:
                    if goal not in C:
                        yield goal
                    if fact in P:
                        return
                if all(g in P for g in body):
                    self.saturate(fact)
                    return

    def instances(self, clause: Clause, fact: Fact) -> list[tuple[Fact, ...]] | None:
        """The same-stratum body facts of every instance of ``clause`` with head F over the current
        relations; None as soon as one has its body facts all proved."""
        plan, atoms = self._plan(clause)
        allowance = None if self.limit is None else self.limit - self.work
        bindings = _instances(self.ctx, plan, atoms, Relation(dred.DELTA, len(fact[1]), [fact[1]]), self.P,
                              allowance)
        self.tally.count(clause, bindings or ())
        self.work += len(bindings or ())
        return bindings

    # ------------------------------------------------------------ forward chaining
    def saturate(self, fact: Fact) -> None:
        """P := P ∪ {F}, then forward chaining: each checked head of a rule instance whose
        same-stratum body facts are all proved joins P. The instances of a checked fact were all
        matched when it was checked (``watch``) and the relations only shrink while B/F runs, so
        the instances with a checked head are exactly those ``waiting`` lists: no join is needed."""
        P, waiting = self.P, self.waiting
        P.add(fact)
        proved = [fact]
        while proved:
            for head, body in waiting.pop(proved.pop(), ()):
                # H :- B1, ..., Bk, (lower literals).   B1, ..., Bk ∈ P, H ∈ C \ P
                if head not in P and all(g in P for g in body):
                    P.add(head)
                    proved.append(head)

    def watch(self, fact: Fact, instances) -> None:
        """Each instance of ``fact`` waits on its body facts not proved yet."""
        P, waiting = self.P, self.waiting
        for body in instances:
            for goal in body:
                if goal not in P:
                    waiting.setdefault(goal, []).append((fact, body))

    # ------------------------------------------------------------ plans
    def _plan(self, clause: Clause):
        """The instance plan of ``clause`` and its same-stratum atoms (``_instance_plan``), made
        once per maintainer."""
        key = (clause.index, "bf")
        made = self.ctx.variants.get(key)
        if made is None:
            made = self.ctx.variants[key] = _instance_plan(self.ctx, clause, self.same)
        return made


class _OverBudget(Exception):
    """The search did as much work as its limit allows."""


def _instance_plan(ctx, clause: Clause, same: set[str]):
    """``h(x, y + 1) :- p(x, _), e(_, y), p(3, y).`` becomes
    ``h(x, _h1) :- p(x, _b0_1), e(_, y), p(_b2_0, y), _b2_0 = 3, _h1 = y + 1, @delta(x, _h1).``
    with x, _h1 first in the variable order and every variable enumerated (no short-circuit at a
    witness). Returns the plan and, per same-stratum atom, (relation, the slots of its columns)."""
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
    headed, order = dred.delta_headed(clause, tuple(body) + tuple(extra))
    planned = plan_clause(headed, ctx.schema, pragma=order)
    plan = compile_plan(replace(planned, needed=planned.depth))
    return plan, [(a.relation, tuple(plan.slots[v.name] for v in a.args)) for a in rewritten]


def _instances(ctx, plan: CompiledPlan, atoms, delta: Relation, proved: set,
               allowance: int | None = None) -> list[tuple[Fact, ...]] | None:
    """The same-stratum body facts of every binding of ``plan`` over the relations, ``delta``
    read as @delta; None as soon as a binding's body facts are all in ``proved``; _OverBudget
    past ``allowance`` bindings."""
    out = []
    append = out.append
    getters = [(name, _columns(slots)) for name, slots in atoms]

    def emit(b):
        body = tuple((name, get(b)) for name, get in getters)
        if all(g in proved for g in body):
            raise _Proved
        append(body)
        if allowance is not None and len(out) > allowance:
            raise _OverBudget
    try:
        run_plan(plan, ChainMap({dred.DELTA: delta}, ctx.db), emit, intersect=ctx.intersect)
    except _Proved:
        return None
    return out


class _Proved(Exception):
    """A rule instance whose body facts are all proved: matching can stop."""


def _columns(slots: tuple[int, ...]):
    """binding -> the tuple of these slots' values."""
    if len(slots) > 1:
        return itemgetter(*slots)
    if slots:
        (slot,) = slots
        return lambda b: (b[slot],)
    return lambda b: ()
