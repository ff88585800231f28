"""``.decl r(...) inline``: r is not materialised; its rules are substituted into every rule
that uses r positively, as Soufflé's inliner does.

``q(x) :- r(x, x), x < 2.`` with ``r(a, b) :- n(a), n(b).`` becomes
``q(x) :- n(x), n(x), x < 2.``: r's rule, its variables renamed apart, each head argument
unified with the use's argument (a variable of r's head is replaced by the use's variable or
constant; anything else becomes an equality ``use_arg = head_arg``). A relation with several
rules gives a disjunction of their bodies.

Under negation, ``!r(t)`` becomes the conjunction over r's rules of their negated bodies (a
disjunction of negated literals each). As in Soufflé, that needs every variable of r's rules
in their heads and no ``_`` in the use: otherwise the use is ``invalid_inline``. Inside
aggregates r stays a materialised relation for that use (its rules kept), which gives the same
tuples. Soufflé's other restrictions are coded errors too: an inline relation in a recursion
through inline relations, or one that is an input, an output or printed (``invalid_inline``).
A relation also qualified ``no_inline``, or named by ``.pragma "inline-exclude" "r"``, is not
inlined (its rules are checked and evaluated as any rule's).
"""

from __future__ import annotations

from dataclasses import replace

from itertools import count

from datalog.language import ast
from datalog.language.errors import InvalidInline
from datalog.language.rewrites import split_heads
from datalog.language.variables import substituted

QUALIFIER = "inline"


def inline(program: ast.Program) -> ast.Program:
    """``program`` with the positive uses of its inline relations replaced by their rules."""
    excluded = {name.strip() for p in program.pragmas if p.key == "inline-exclude"
                for name in (p.value or "").split(",")}
    names = {d.relation: d for d in program.declarations if QUALIFIER in d.qualifiers
             and "no_inline" not in d.qualifiers and d.relation not in excluded}   # as Soufflé: not inlined
    if not names:
        return program
    _check_io(program, names)
    definitions = {name: [r for r in split_heads(program.rules) if r.heads[0].relation == name]
                   for name in names}
    _check_acyclic(definitions, names)
    _check_negated_uses(program, definitions)
    fresh = count()
    statements = []
    for stmt in program.statements:
        if isinstance(stmt, ast.Rule):
            stmt = _expand_rule(stmt, definitions, fresh)
        statements.append(stmt)
    still_used = _materialised_uses(statements)
    kept = [s for s in statements if not _fully_inlined(s, names, still_used)]
    return ast.Program(tuple(kept), program.warnings)


def _fully_inlined(stmt, names, still_used: set[str]) -> bool:
    """A rule or declaration of an inline relation that no remaining rule reads."""
    if isinstance(stmt, ast.Declaration):
        return stmt.relation in names and stmt.relation not in still_used
    if isinstance(stmt, ast.Rule):
        return all(h.relation in names and h.relation not in still_used for h in stmt.heads)
    return False


def _materialised_uses(statements) -> set[str]:
    """Relations read by a rule after expansion (under negation or in aggregates), and the
    relations those rules read in turn, read everywhere else (subsumption, choice)."""
    used = set()
    for stmt in statements:
        if isinstance(stmt, (ast.Rule, ast.Subsumption)):
            used |= {a.relation for a in ast.walk(stmt.body) if isinstance(a, ast.Atom)}
    return used


def _check_io(program: ast.Program, names) -> None:
    for directive in program.directives:
        if directive.relation in names:
            raise InvalidInline(f"inline relation {directive.relation} cannot be used in "
                                f".{directive.kind}", directive.span)


def _check_acyclic(definitions, names) -> None:
    """No inline relation may depend on itself through inline relations (it would not end)."""
    reads = {name: {a.relation for r in rules for a in ast.walk(r.body)
                    if isinstance(a, ast.Atom) and a.relation in names}
             for name, rules in definitions.items()}
    for start in names:
        todo, seen = list(reads[start]), set()
        while todo:
            name = todo.pop()
            if name == start:
                raise InvalidInline(f"inline relation {start} is recursive (through inline "
                                    f"relations); it cannot be inlined", names[start].span)
            if name not in seen:
                seen.add(name)
                todo.extend(reads[name])


def _check_negated_uses(program: ast.Program, definitions) -> None:
    """Soufflé's limits of inlining under negation: ``!r(...)`` where a rule of r has a variable
    its head does not hold (the negated body would need it quantified), or where the use holds
    ``_`` (inlining names it, and it would be ungrounded)."""
    own = {name for name, rules in definitions.items()
           if any({v.name for v in ast.variables(r.body)} - {v.name for v in ast.variables(r.heads)}
                  for r in rules)}
    for stmt in program.statements:
        if not isinstance(stmt, (ast.Rule, ast.Subsumption)):
            continue
        for negation in _negations(stmt.body):
            name = negation.atom.relation
            if name in own:
                raise InvalidInline(f"inline relation {name} cannot be inlined under negation: a rule of {name} "
                                    f"has a variable its head does not hold", negation.span)
            wildcard = next((a for a in negation.atom.args if isinstance(a, ast.Wildcard)), None)
            if name in definitions and wildcard is not None:
                raise InvalidInline(f"inline relation {name} cannot be inlined under negation with _ as an "
                                    f"argument (name the value, or bind it outside)",
                                    wildcard.span or negation.span)


def _negations(body):
    """The negations of ``body``, in its disjunctions too, not inside aggregates."""
    for literal in body:
        if isinstance(literal, ast.Negation):
            yield literal
        elif isinstance(literal, ast.Disjunction):
            for alternative in literal.alternatives:
                yield from _negations(alternative)


def _expand_rule(rule: ast.Rule, definitions, fresh) -> ast.Rule:
    body = rule.body
    for _ in range(len(definitions) + 1):       # each round removes one level of inline relations
        expanded = _expand_body(body, definitions, fresh)
        if expanded == body:
            break
        body = expanded
    return replace(rule, body=body)


def _expand_body(body: tuple, definitions, fresh) -> tuple:
    out = []
    for literal in body:
        if isinstance(literal, ast.Atom) and literal.relation in definitions:
            alternatives = tuple(_instance(rule, literal, next(fresh)) for rule in definitions[literal.relation])
            out.append(_disjunction(alternatives, literal.span))
        elif isinstance(literal, ast.Negation) and literal.atom.relation in definitions:
            out.extend(_negated(literal, definitions, fresh))
        elif isinstance(literal, ast.Disjunction):
            alts = tuple(_expand_body(alt, definitions, fresh) for alt in literal.alternatives)
            out.append(ast.Disjunction(alts, literal.span))
        else:
            out.append(literal)
    return tuple(out)


# r(t1, ..., tn) with no rule at all holds nowhere: an empty disjunction, written as 0 != 0
def _disjunction(alternatives: tuple, span) -> ast.Literal:
    if not alternatives:
        zero = ast.Constant(0, span)
        return ast.Comparison("!=", zero, zero, span)
    return ast.Disjunction(alternatives, span)


# !r(t) with r(x) :- a(x), x > 1.  and  r(x) :- b(x).   becomes   (!a(t) ; t <= 1), !b(t).
# Only when no rule of r has a variable of its own (one its head does not give a value to):
# then no rule introduces a new variable and each negated body is a disjunction of negated
# literals. Otherwise r stays a relation for this use.
_OPPOSITE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _negated(literal: ast.Negation, definitions, fresh) -> tuple:
    use = literal.atom
    given = {v.name for v in ast.variables(use)}
    negated = []
    for rule in definitions[use.relation]:
        body = _instance(rule, use, next(fresh))
        if any(a is None for a in map(_negate, body)) or \
                any(v.name not in given for v in ast.variables(body)):
            return (literal,)
        if not body:                            # r(t) holds outright for one of its facts' matches
            return (literal,)
        negated.append(ast.Disjunction(tuple((_negate(lit),) for lit in body), literal.span))
    return tuple(negated) if negated else ()


def _negate(literal):
    """The literal that holds exactly when ``literal`` does not (None when there is none here)."""
    if isinstance(literal, ast.Atom):
        return ast.Negation(literal, literal.span)
    if isinstance(literal, ast.Negation):
        return literal.atom
    if isinstance(literal, ast.Comparison) and not _has_aggregate(literal):
        return ast.Comparison(_OPPOSITE[literal.op], literal.left, literal.right, literal.span)
    return None


def _has_aggregate(literal: ast.Comparison) -> bool:
    return any(isinstance(node, ast.Aggregate) for side in (literal.left, literal.right)
               for node in ast.subterms(side))


def _instance(rule: ast.Rule, use: ast.Atom, number: int) -> tuple:
    """The body of ``rule`` (one head), renamed apart and unified with the atom ``use``."""
    renamed = _rename(rule, f"_i{number}_")
    head, body = renamed.heads[0], renamed.body
    subst: dict[str, ast.Term] = {}
    equalities = []
    for formal, actual in zip(head.args, use.args):
        if isinstance(actual, ast.Wildcard):
            continue
        if isinstance(formal, ast.Variable) and formal.name not in subst \
                and isinstance(actual, (ast.Variable, ast.Constant)):
            subst[formal.name] = actual
        else:
            equalities.append((actual, formal))
    body = _substitute(body, subst)
    body += tuple(ast.Comparison("=", actual, _substitute(formal, subst), use.span)
                  for actual, formal in equalities)
    return body


def _rename(rule: ast.Rule, prefix: str) -> ast.Rule:
    names = {v.name for v in ast.variables((rule.heads, rule.body))}
    return _substitute(rule, {n: ast.Variable(prefix + n) for n in names})


def _substitute(node, subst: dict):
    """``node`` with its variables replaced as ``subst`` says (aggregate bodies included)."""
    return substituted(node, lambda v: subst.get(v.name, v))
