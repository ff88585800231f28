"""``.pragma "magic-transform" "r1, r2"`` (or ``"*"``): the magic-set rewrite of the named relations.

A relation read with some arguments known (``q(y) :- r(1, y).``) is computed only for those
values: r's rules get a guard, the *magic* relation of the values asked for, and rules fill the
magic relations from where r is used, left to right (the sideways information passing of
Soufflé's MagicSet.cpp). With ``b`` for a bound and ``f`` for a free column:

    r(x, y) :- e(x, y).                      r@bf(x, y) :- e(x, y), r@magic@bf(x).
    r(x, z) :- r(x, y), e(y, z).       ->    r@bf(x, z) :- r@bf(x, y), e(y, z), r@magic@bf(x).
    q(y) :- r(1, y).                         q(y) :- r@bf(1, y).
                                             r@magic@bf(1).
                                             r@magic@bf(x) :- r@magic@bf(x).   (from the recursive rule)

Bindings enter the rewrite at constants, as a query's would (``r(1, y)``): in the rules of
relations computed completely, a variable bound by an earlier atom does not make a use bound
(``p(x) :- c(a), c(b), mul(a, b, x).`` keeps mul complete: its magic relation would be the
whole cross product of c, slower in this engine than mul itself); inside an adorned rule,
every variable bound before a use passes on. Outputs never change. Which relations are rewritten follows MagicSet.cpp's exclusions: not an
input, output or printed relation (they must stay complete), not one without rules that read
atoms, not one used under negation or in an aggregate, not one with choice-domain, subsumption
or eqrel, and (here) not one whose rule heads hold expressions. Magic rules carry only the
positive atoms before the use (a superset of the values asked for: always sound). If the
rewritten program would not stratify (a magic relation inside a negation cycle, which Soufflé
avoids by labelling), the program is left as written with the warning ``magic_not_applied``.
"""

from __future__ import annotations

from dataclasses import replace

from datalog.language import ast
from datalog.language.errors import CyclicNegation, DatalogWarning
from datalog.language.rewrites import rewrite, split_disjunctions, split_heads
from datalog.language.semantics.pragmas import pragma_values, relation_list
from datalog.language.strata import stratify

MAGIC, NO_MAGIC = "magic", "no_magic"


def magic_transform(program: ast.Program) -> ast.Program:
    """``program`` with the magic-set rewrite of the relations its pragmas and qualifiers name."""
    named = relation_list(pragma_values(program, "magic-transform"))
    named |= {d.relation for d in program.declarations if MAGIC in d.qualifiers}
    if not named:
        return program
    rules = _split(program.rules)
    eligible = _eligible(program, rules, named)
    if not eligible:
        return program
    rewritten = _Rewrite(program, rules, eligible).program()
    try:
        _stratifies(rewritten)
    except CyclicNegation:
        note = DatalogWarning("magic_not_applied", "magic-transform is not applied: the rewritten "
                              "program would have negation in a recursion; relations are computed "
                              "completely (the outputs are the same)", program.pragmas[0].span
                              if program.pragmas else None)
        return ast.Program(program.statements, tuple(program.warnings) + (note,))
    return rewritten


def _split(rules) -> list[ast.Rule]:
    return split_heads(split_disjunctions(list(rules)))


def _stratifies(program: ast.Program) -> None:
    stratify(rewrite(program))


# ---------------------------------------------------------------- which relations

def _eligible(program: ast.Program, rules: list[ast.Rule], named: set[str]) -> set[str]:
    excluded = relation_list(pragma_values(program, "magic-transform-exclude"))
    excluded |= {d.relation for d in program.declarations if NO_MAGIC in d.qualifiers}
    excluded |= {d.relation for d in program.directives}                       # inputs, outputs, printsize
    excluded |= {d.relation for d in program.declarations
                 if d.choice_domain or "eqrel" in d.qualifiers}
    excluded |= {s.dominated.relation for s in program.subsumptions}
    excluded |= _read_negatively(program)
    with_atoms = {r.heads[0].relation for r in rules if any(_atoms(r.body))}
    bad_heads = {r.heads[0].relation for r in rules          # a head computes a value: p(x + 1)
                 if not all(isinstance(a, (ast.Variable, ast.Constant)) for a in r.heads[0].args)}
    every = {r.heads[0].relation for r in rules}
    chosen = every if "*" in named else named
    return (chosen & with_atoms) - excluded - bad_heads


def _read_negatively(program: ast.Program) -> set[str]:
    """Relations under ``!`` or in an aggregate body anywhere (they must be complete)."""
    out: set[str] = set()

    def visit(node, negative: bool) -> None:
        if isinstance(node, ast.Atom):
            if negative:
                out.add(node.relation)
            for arg in node.args:
                visit(arg, negative)
        elif isinstance(node, ast.Negation):
            visit(node.atom, True)
        elif isinstance(node, ast.Aggregate):
            visit(node.body, True)
        elif isinstance(node, tuple):
            for child in node:
                visit(child, negative)
        elif isinstance(node, ast.Disjunction):
            visit(node.alternatives, negative)
        elif isinstance(node, ast.Comparison):
            visit((node.left, node.right), negative)
        elif isinstance(node, ast.BinaryOp):
            visit((node.left, node.right), negative)
        elif isinstance(node, ast.Negate):
            visit(node.operand, negative)
        elif isinstance(node, ast.Functor):
            visit(node.args, negative)
    for rule in program.rules:
        visit(rule.body, False)
        visit(rule.heads, False)
    for sub in program.subsumptions:
        visit(sub.body, True)
    return out


def _atoms(body) -> list[ast.Atom]:
    return [lit for lit in body if isinstance(lit, ast.Atom)]


# ---------------------------------------------------------------- the rewrite

def _one_component(use: ast.Atom, before: tuple, bound: set[str]) -> tuple[tuple, set[str]]:
    """The atoms before ``use`` that share variables with each other, the group of the first
    bound argument of ``use``, and the variables they bind. Passing bindings from two groups
    with nothing in common would make the magic relation their cross product (``prod(x) :-
    c(a), c(b), mul(a, b, x).``): only one group's bindings pass, the others' columns stay free."""
    groups: list[tuple[list, set[str]]] = []
    for atom in before:
        names = {v.name for v in ast.variables(atom)}
        joined = [g for g in groups if g[1] & names]
        merged = ([atom] + [a for g in joined for a in g[0]], names.union(*(g[1] for g in joined)))
        groups = [g for g in groups if all(g is not j for j in joined)] + [merged]
    for arg in use.args:
        if isinstance(arg, ast.Variable) and arg.name in bound:
            for atoms, names in groups:
                if arg.name in names:
                    kept = tuple(a for a in before if any(a is b for b in atoms))
                    return kept, names & bound
    return (), set()

def _adornment(atom: ast.Atom, bound: set[str]) -> str:
    """``b`` for an argument known before the atom (a constant or a bound variable), else ``f``."""
    return "".join("b" if isinstance(a, ast.Constant) or (isinstance(a, ast.Variable) and a.name in bound)
                   else "f" for a in atom.args)


def adorned_name(relation: str, adornment: str) -> str:
    return f"{relation}@{adornment}"


def magic_name(relation: str, adornment: str) -> str:
    return f"{relation}@magic@{adornment}"


def _bound_args(atom: ast.Atom, adornment: str) -> tuple:
    return tuple(a for a, flag in zip(atom.args, adornment) if flag == "b")


class _Rewrite:
    """The worklist of the adornments asked for: complete relations (rules kept, with their body
    atoms adorned) and adorned versions of eligible ones (rules guarded by their magic relation)."""

    def __init__(self, program: ast.Program, rules: list[ast.Rule], eligible: set[str]):
        self.source, self.eligible = program, eligible
        self.rules_of: dict[str, list[ast.Rule]] = {}
        for rule in rules:
            self.rules_of.setdefault(rule.heads[0].relation, []).append(rule)
        self.out: list[ast.Rule] = []
        self.done: set[tuple[str, str | None]] = set()
        self.todo: list[tuple[str, str | None]] = []

    def program(self) -> ast.Program:
        for relation in self.rules_of:
            if relation not in self.eligible:
                self._ask(relation, None)
        while self.todo:
            relation, adornment = self.todo.pop()
            for rule in self.rules_of.get(relation, []):
                self._rewrite(rule, adornment)
        others = [s for s in self.source.statements if not isinstance(s, ast.Rule)]
        return ast.Program(tuple(others + self._declarations() + self.out), self.source.warnings)

    def _ask(self, relation: str, adornment: str | None) -> None:
        if (relation, adornment) not in self.done:
            self.done.add((relation, adornment))
            self.todo.append((relation, adornment))

    def _rewrite(self, rule: ast.Rule, adornment: str | None) -> None:
        """One rule of a complete relation (``adornment`` None) or of an adorned one."""
        head = rule.heads[0]
        guard: tuple = ()
        bound: set[str] = set()
        if adornment is not None:
            guard = (ast.Atom(magic_name(head.relation, adornment), _bound_args(head, adornment), head.span),)
            bound = {v.name for v in ast.variables(_bound_args(head, adornment))}
            head = ast.Atom(adorned_name(head.relation, adornment), head.args, head.span)
        body, before = [], []
        for literal in rule.body:
            if isinstance(literal, ast.Atom):
                literal = self._use(literal, bound, tuple(before) + guard)
                before.append(literal)
                if adornment is not None:       # bindings enter at constants (see the docstring)
                    bound |= {v.name for v in ast.variables(literal)}
            body.append(literal)
        # the guard last: the planner breaks ties by body order, and the rule's own atoms know best
        self.out.append(replace(rule, heads=(head,), body=tuple(body) + tuple(guard)))

    def _use(self, atom: ast.Atom, bound: set[str], before: tuple) -> ast.Atom:
        """A body atom: adorned (and its magic relation fed) when eligible and something is bound."""
        if atom.relation not in self.eligible:
            return atom
        before, bound = _one_component(atom, before, bound)
        adornment = _adornment(atom, bound)
        if "b" not in adornment:
            self._ask(atom.relation, None)
            return atom
        self._ask(atom.relation, adornment)
        # magic_q(bound args of the use) :- the atoms before the use that bind them
        seed = ast.Atom(magic_name(atom.relation, adornment), _bound_args(atom, adornment), atom.span)
        self.out.append(ast.Rule((seed,), before, atom.span))
        return ast.Atom(adorned_name(atom.relation, adornment), atom.args, atom.span)

    def _declarations(self) -> list[ast.Declaration]:
        """Adorned relations have their relation's columns, magic ones its bound columns."""
        declared = {d.relation: d for d in self.source.declarations}
        out = []
        for relation, adornment in sorted(self.done, key=str):
            decl = declared.get(relation)
            if adornment is None or decl is None:
                continue
            out.append(ast.Declaration(adorned_name(relation, adornment), decl.columns, decl.span))
            bound = tuple(c for c, flag in zip(decl.columns, adornment) if flag == "b")
            out.append(ast.Declaration(magic_name(relation, adornment), bound, decl.span))
        return out
