"""Soufflé's warnings about likely mistakes, never blocking (its SemanticChecker): a variable that
occurs only once in a rule, and a declared relation that nothing fills. Each is a
:class:`DatalogWarning` appended to ``Checked.warnings`` by a check of :data:`checks.CHECKS`.

>>> from datalog.language.checks import check
>>> from datalog.language.parser import parse
>>> for w in check(parse('.decl e(a: number, b: number)\\n.decl p(a: number)\\np(x) :- e(x, y).')).warnings:
...     print(w.render().splitlines()[0])
<input>:3:14: warning[singleton_variable]: Variable y only occurs once
<input>:1:1: warning[no_rules]: No rules/facts defined for relation e
"""

from __future__ import annotations

from collections import Counter

from datalog.language import ast
from datalog.language.errors import DatalogWarning
from datalog.language.rewrites import dnf


def warn_singleton_variables(ctx) -> None:
    """``Variable y only occurs once``: a variable (not named ``_...``) in no head of the rule and
    at most once in each of its bodies (one per alternative of a disjunction), as Soufflé's
    checkComplexRule; the warning points at its first occurrence."""
    seen = set()
    for rule in ctx.program.rules:
        if rule.is_fact:
            continue
        for variable in _singletons(rule):
            key = (variable.name, variable.span.line if variable.span else 0,
                   variable.span.column if variable.span else 0)
            if key not in seen:
                seen.add(key)
                ctx.warnings.append(DatalogWarning("singleton_variable",
                                                   f"Variable {variable.name} only occurs once", variable.span))


def _singletons(rule: ast.Rule) -> list[ast.Variable]:
    in_heads = {v.name for v in ast.variables(rule.heads)}
    once, more = {}, set()
    for body in dnf(rule.body):
        occurrences = [v for v in ast.variables(body) if not v.name.startswith("_")]
        counts = Counter(v.name for v in occurrences)
        for variable in occurrences:
            name = variable.name
            if name in in_heads:
                continue
            if counts[name] > 1:
                more.add(name)
            once.setdefault(name, variable)
    return [v for name, v in once.items() if name not in more]


def warn_empty_relations(ctx) -> None:
    """``No rules/facts defined for relation r``: declared, not ``.input``, no rule or fact."""
    filled = {head.relation for rule in ctx.program.rules for head in rule.heads}
    filled |= {d.relation for d in ctx.program.directives if d.kind == "input"}
    for decl in ctx.program.declarations:
        if decl.relation not in filled:
            ctx.warnings.append(DatalogWarning("no_rules", f"No rules/facts defined for relation "
                                                           f"{decl.relation}", decl.span))
