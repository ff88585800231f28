"""The backend choice: which backend maintains a rule (issue 4, item 4), made when it is planned.

A clause goes to the theta-join backend (:mod:`maintenance.gjt`) when its body is an
acyclic GCQ with at least one inequality between variables of different atoms;
everything else stays on LFTJ maintenance, and so does a body whose GJT is deeper than
:data:`MAX_GJT_DEPTH` (a long chain: the T-reduct's enumeration recurses per level). ``// @backend thetajoin`` or
``// @backend lftj`` on the line before a rule forces the choice (a forced thetajoin on a
body that is not a GCQ, or is cyclic, is error ``bad_pragma``).

Translation of a clause body into a GCQ (:func:`to_gcq`):

* a positive atom's variables are the GCQ atom's variables; a wildcard is a fresh variable;
  a constant is a fresh variable plus the filter ``c = value``; a repeated variable stays
  (the GCQ atom binds it once, an equality filter);
* ``x = y`` between two variables unifies them (the later name is renamed to the earlier);
* every other comparison is ``var op var [+/- number]`` or ``var op constant`` (either side);
* negation, aggregates, functors, other arithmetic and heads that compute are refused,
  each with the reason shown by ``datalog explain``.

>>> from datalog.language.checks import check
>>> from datalog.language.parser import parse
>>> c = check(parse('.decl r(a: number, b: number)\\n.decl s(c: number, d: number)\\n.decl q(a: number, d: number)\\n'
...                 'q(a, d) :- r(a, _), s(c, d), a < c + 10.'))
>>> backend = choose_backend(c.clauses[0])
>>> backend.name, backend.reason
('thetajoin', 'acyclic GCQ with inequality a < c + 10 between atoms (not free-connex: §7 approximation)')
>>> str(backend.gcq)
'π[a,d] r(a, _w0), s(c, d) | a < c + 10'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from datalog.language import ast
from datalog.language.errors import BadPragma
from datalog.planning.gjt import GCQ, Atom, Cyclic, Predicate, build_gjt
from datalog.planning.gjt.tree import GJT

BACKENDS = ("thetajoin", "lftj")
# The T-reduct's enumeration (maintenance.gjt.bulk) recurses three frames per level of the GJT:
# a rule of some 250 atoms in a chain (a GJT of 300 levels) overran Python's recursion limit at
# its first commit, so deeper trees stay on LFTJ (issue 23).
MAX_GJT_DEPTH = 200


class NotGCQ(Exception):
    """The clause body is not a GCQ; the message is the reason."""


@dataclass(frozen=True)
class Backend:
    """Which backend maintains a rule, and why: ``thetajoin`` (a T-reduct over ``gjt``, the
    generalized join tree of the rule's body as the GCQ ``gcq``; ``head`` maps its output to
    the head's columns) or ``lftj`` (the maintenance rule of the triejoin, or DRed)."""

    name: str                          # thetajoin | lftj
    reason: str
    gcq: GCQ | None = None
    gjt: GJT | None = None
    head: list = field(default_factory=list)   # per head column: ("var", name) | ("const", value)

    def describe(self) -> str:
        text = f"backend {self.name}: {self.reason}"
        if self.gjt is not None:
            tree = self.gjt.describe().replace("\n", "\n        ")
            text += f"\n      GJT of {self.gcq}:\n        {tree}"
        return text


def pragma_backend(clause) -> str | None:
    """The value of ``// @backend ...`` on the clause's rule, checked; None without one."""
    for key, value in clause.rule.pragma if clause else ():
        if key == "backend":
            choice = value.strip().lower()
            if choice not in BACKENDS:
                raise BadPragma(f"@backend {value!r}: expected thetajoin or lftj", clause.rule.span)
            return choice
    return None


def choose_backend(clause, recursive: bool = False) -> Backend:
    """The backend of a clause, with the reason (see the module docstring): a clause of a
    recursive stratum is B/F's or DRed's (a forced thetajoin there is an error), the others by their body."""
    forced = pragma_backend(clause)
    if recursive:
        if forced == "thetajoin":
            raise BadPragma("@backend thetajoin: the rule is recursive (maintained by B/F or DRed)", clause.rule.span)
        return Backend("lftj", "recursive stratum: B/F or DRed")
    if forced == "lftj":
        return Backend("lftj", "forced by // @backend lftj")
    try:
        gcq, head = to_gcq(clause)
    except NotGCQ as refusal:
        return _refuse(clause, forced, f"not a GCQ: {refusal}")
    gjt = build_gjt(gcq)
    if isinstance(gjt, Cyclic):
        return _refuse(clause, forced, gjt.reason)
    shape = "free-connex" if gjt.connex_vars() == gcq.out else "not free-connex: §7 approximation"
    atoms_of = _atoms_of(gcq)
    theta = sorted((p for p in gcq.predicates if _between_atoms(p, atoms_of)), key=lambda p: p.op == "=")
    if not theta and forced != "thetajoin":
        return Backend("lftj", "no inequality between variables of different atoms")
    if gjt.depth() > MAX_GJT_DEPTH:
        return _refuse(clause, forced, f"its GJT is {gjt.depth()} levels deep, over the {MAX_GJT_DEPTH} the "
                                       f"theta-join backend takes (its enumeration recurses per level)")
    if forced == "thetajoin":
        return Backend("thetajoin", f"forced by // @backend thetajoin ({shape})", gcq, gjt, head)
    return Backend("thetajoin", f"acyclic GCQ with inequality {theta[0]} between atoms ({shape})", gcq, gjt, head)


def _refuse(clause, forced, reason: str) -> Backend:
    if forced == "thetajoin":
        raise BadPragma(f"@backend thetajoin: {reason}", clause.rule.span)
    return Backend("lftj", reason)


def _atoms_of(gcq: GCQ) -> dict[str, set[int]]:
    """Per variable, the positions of the atoms holding it (so a predicate is placed in time
    proportional to its variables' atoms, not to the body: issue 23)."""
    found: dict[str, set[int]] = {}
    for i, atom in enumerate(gcq.atoms):
        for v in atom.vars:
            found.setdefault(v, set()).add(i)
    return found


def _between_atoms(p: Predicate, atoms_of: dict[str, set[int]]) -> bool:
    """An inequality whose two variables never share an atom (``=`` with an offset counts)."""
    if p.right is None or (p.op == "=" and not p.offset):
        return False
    return atoms_of[p.left].isdisjoint(atoms_of[p.right])


# ---------------------------------------------------------------- translation

def to_gcq(clause) -> tuple[GCQ, list]:
    """(GCQ, head columns) of a clause body; raises NotGCQ with the reason."""
    atoms = [lit for lit in clause.body if isinstance(lit, ast.Atom)]
    for lit in clause.body:
        if isinstance(lit, ast.Negation):
            raise NotGCQ(f"negation {lit}")
        if not isinstance(lit, (ast.Atom, ast.Comparison)):
            raise NotGCQ(f"{lit}")
    bound = {a.name for atom in atoms for a in atom.args if isinstance(a, ast.Variable)}
    rename = _unify(clause.body, bound)
    fresh, filters, gcq_atoms = count(), [], []
    for atom in atoms:
        names = []
        for arg in atom.args:
            if isinstance(arg, ast.Variable):
                names.append(rename.get(arg.name, arg.name))
            elif isinstance(arg, ast.Wildcard):
                names.append(f"_w{next(fresh)}")
            elif isinstance(arg, ast.Constant):
                names.append(f"_c{next(fresh)}")
                filters.append(Predicate(names[-1], "=", None, arg.value))
            else:
                raise NotGCQ(f"expression {arg} in atom {atom}")
        gcq_atoms.append(Atom(atom.relation, tuple(names)))
    predicates = [_predicate(lit, rename, bound) for lit in clause.body if isinstance(lit, ast.Comparison)]
    head = _head(clause.head, rename, bound)
    out = frozenset(value for kind, value in head if kind == "var")
    return GCQ(tuple(gcq_atoms), tuple(p for p in filters + predicates if p is not None), out), head


def _unify(body, bound: set[str]) -> dict[str, str]:
    """``x = y`` between atom variables: the later name maps to the earlier (union-find)."""
    parent: dict[str, str] = {}

    def find(v: str) -> str:
        while parent.get(v, v) != v:
            v = parent[v]
        return v
    for lit in body:
        if (isinstance(lit, ast.Comparison) and lit.op == "=" and isinstance(lit.left, ast.Variable)
                and isinstance(lit.right, ast.Variable) and {lit.left.name, lit.right.name} <= bound):
            a, b = sorted((find(lit.left.name), find(lit.right.name)))
            if a != b:
                parent[b] = a
    return {v: find(v) for v in parent}


def _predicate(lit: ast.Comparison, rename, bound) -> Predicate | None:
    """``left op right`` as ``var op var + offset`` or ``var op constant``; None when unified away."""
    if lit.op in ("match", "contains", "not_match", "not_contains"):
        raise NotGCQ(f"constraint {lit} is no comparison of numbers")
    left, right = _operand(lit.left, rename, bound), _operand(lit.right, rename, bound)
    op = lit.op
    if left[0] is None and right[0] is None:
        raise NotGCQ(f"comparison {lit} has no variable")
    if left[0] is None:
        left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    (lvar, loff), (rvar, roff) = left, right
    if rvar is None:
        if loff:
            raise NotGCQ(f"comparison {lit} offsets both sides")
        return Predicate(lvar, op, None, roff)
    if op == "=" and lvar == rvar and loff == roff == 0:
        return None
    if lvar == rvar:      # x < x once x = y unified them: the T-reduct's indexes cannot range on it
        raise NotGCQ(f"comparison {lit} compares {lvar} with itself (equalities unified)")
    return Predicate(lvar, op, rvar, roff - loff)


def _operand(term, rename, bound) -> tuple[str | None, object]:
    """A comparison side: (variable or None, offset or constant value)."""
    if isinstance(term, ast.Variable):
        if term.name not in bound:
            raise NotGCQ(f"variable {term.name} is assigned, not bound by an atom")
        return rename.get(term.name, term.name), 0
    if isinstance(term, ast.Constant):
        return None, term.value
    # x + 3 is an offset (x + 3 < y as x < y - 3) in the integers, not for an unsigned x + 3u,
    # which wraps modulo 2^64: that comparison is no GCQ predicate
    if isinstance(term, ast.BinaryOp) and term.op in "+-" and not term.unsigned:
        var, number = term.left, term.right                    # x + 3, x - 3
        if term.op == "+" and isinstance(var, ast.Constant):
            var, number = number, var                           # 3 + x
        if (isinstance(var, ast.Variable) and isinstance(number, ast.Constant)
                and isinstance(number.value, (int, float))):
            name, _ = _operand(var, rename, bound)
            return name, number.value if term.op == "+" else -number.value
    raise NotGCQ(f"expression {term} in a comparison")


def _head(head: ast.Atom, rename, bound) -> list:
    columns = []
    for arg in head.args:
        if isinstance(arg, ast.Variable) and arg.name in bound:
            columns.append(("var", rename.get(arg.name, arg.name)))
        elif isinstance(arg, ast.Constant):
            columns.append(("const", arg.value))
        else:
            raise NotGCQ(f"the head computes {arg}")
    return columns
