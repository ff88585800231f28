"""Records and ADTs at run time (issue 18): building their values, and taking them apart.

A record term builds a :class:`~datalog.language.composites.Record` of its fields' values,
``nil`` is :data:`~datalog.language.composites.NIL`, a branch term a
:class:`~datalog.language.composites.Branch`; ``as(x, T)`` is ``x`` (a cast changes the type
the checks see, not the value).

A pattern (``r([x, [y, _]])``, ``p = $Circle(r)``) is matched against a value by
:func:`compile_match`: the value must have the pattern's shape (a record of its arity, not
``nil``; the same branch), its first occurrence of each variable being bound binds the
variable's slot, and everything else in it (a bound variable, a constant, ``x + 1``) must equal
the value in its place -- checked once the pattern's variables are bound.
"""

from __future__ import annotations

from typing import Callable

from datalog.language import ast
from datalog.language.composites import NIL, Branch, Record


def compile_record(term, compile_: Callable):
    """binding -> value of a record term, ``nil``, a branch term or a cast; ``compile_``
    compiles a sub-term."""
    if isinstance(term, ast.Nil):
        return lambda b: NIL
    if isinstance(term, ast.Cast):
        return compile_(term.term)
    fields = [compile_(arg) for arg in term.args]
    if isinstance(term, ast.RecordTerm):
        return lambda b: Record([f(b) for f in fields])
    name = term.name
    return lambda b: Branch([name] + [f(b) for f in fields])


def compile_match(pattern, slots: dict[str, int], targets: set[str], compile_: Callable):
    """(value, binding) -> whether the value matches ``pattern``, binding the slots of
    ``targets`` (the pattern's variables not bound before it) on the way."""
    checks: list[Callable] = []                 # the parts computed from the binding: last
    seen: set[str] = set()

    def part(term) -> Callable:
        # [t1, ..., tn]: a record of n fields (nil is none), each matching its part
        if isinstance(term, ast.RecordTerm):
            inner = [part(arg) for arg in term.args]
            n = len(inner)
            return lambda v, b: (type(v) is Record and len(v) == n and n > 0
                                 and all(m(x, b) for m, x in zip(inner, v)))
        # $B(t1, ..., tn): a value of branch B, each argument matching its part
        if isinstance(term, ast.BranchTerm):
            inner = [part(arg) for arg in term.args]
            name, n = term.name, len(inner) + 1
            return lambda v, b: (type(v) is Branch and len(v) == n and v[0] == name
                                 and all(m(x, b) for m, x in zip(inner, v[1:])))
        if isinstance(term, ast.Wildcard):
            return lambda v, b: True
        if isinstance(term, ast.Variable) and term.name in targets and term.name not in seen:
            seen.add(term.name)
            slot = slots[term.name]

            def bind(v, b):
                b[slot] = v
                return True
            return bind
        fn = compile_(term)                     # later: it may read a variable bound here
        return lambda v, b: checks.append((fn, v)) or True

    matcher = part(pattern)

    def match(value, b) -> bool:
        checks.clear()
        if not matcher(value, b):
            return False
        return all(fn(b) == v for fn, v in list(checks))
    return match
