"""The abstract syntax of a program: frozen dataclasses whose ``str()`` is valid Datalog.

Every node carries a ``span`` (not part of equality), so checks can point at it.

>>> from datalog.language.parser import parse
>>> prog = parse('path(x, z) :- path(x, y), edge(y, z), !blocked(y), z != 3.')
>>> print(prog)
path(x, z) :- path(x, y), edge(y, z), !blocked(y), z != 3.
>>> parse(str(prog)) == prog
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from datalog.language.errors import Span

_span = field(default=None, compare=False, repr=False)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# ---------------------------------------------------------------- terms

@dataclass(frozen=True)
class Variable:
    name: str
    span: Span | None = _span

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Wildcard:
    span: Span | None = _span

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Constant:
    """A number (int), float or symbol (str) literal; ``unsigned``: an unsigned literal (``7u``,
    an int in 0 .. 2^64-1), printed with its ``u``."""

    value: int | float | str
    span: Span | None = _span
    unsigned: bool = False

    def __str__(self) -> str:
        if isinstance(self.value, str):
            return _quote(self.value)
        return f"{self.value}u" if self.unsigned else repr(self.value)

    def __repr__(self) -> str:
        return f"Constant(value={self.value!r}{', unsigned=True' if self.unsigned else ''})"


@dataclass(frozen=True)
class BinaryOp:
    op: str  # one of + - * / % ^, band bor bxor bshl bshr bshru land lor lxor
    left: "Term"
    right: "Term"
    span: Span | None = _span
    unsigned: bool = field(default=False, repr=False)   # set by the type check: on unsigned values (mod 2^64)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Negate:
    """Unary minus."""

    operand: "Term"
    span: Span | None = _span

    def __str__(self) -> str:
        return f"-({self.operand})"


@dataclass(frozen=True)
class Functor:
    """A built-in function: cat, strlen, substr, to_number, to_string, to_float, min, max, ord,
    range, itof ftoi itou utoi ftou utof to_unsigned, and the unary operators bnot and lnot
    (``bnot x`` is printed ``bnot(x)``, which parses back to it)."""

    name: str
    args: tuple["Term", ...]
    span: Span | None = _span
    unsigned: bool = field(default=False, repr=False)   # set by the type check: bnot of an unsigned

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Aggregate:
    """``count : { body }``, ``sum x : { body }``, min, max, mean."""

    kind: str
    target: "Term | None"
    body: tuple["Literal", ...]
    span: Span | None = _span
    unsigned: bool = field(default=False, repr=False)   # set by the type check: of unsigned values (sum wraps)

    def __str__(self) -> str:
        target = f" {self.target}" if self.target is not None else ""
        return f"{self.kind}{target} : {{ {', '.join(map(str, self.body))} }}"


# ---- records (issue 18): record terms, nil, ADT branch terms, casts

@dataclass(frozen=True)
class RecordTerm:
    """``[x, y]``: builds a record, or (in a body, with unbound variables) takes one apart."""

    args: tuple["Term", ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f"[{', '.join(map(str, self.args))}]"


@dataclass(frozen=True)
class Nil:
    """``nil``: the record that is none (of any record type)."""

    span: Span | None = _span

    def __str__(self) -> str:
        return "nil"


@dataclass(frozen=True)
class BranchTerm:
    """``$Circle(r)``, ``$Empty``: a value of an ADT's branch (or, in a body, a pattern of one)."""

    name: str
    args: tuple["Term", ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f"${self.name}({', '.join(map(str, self.args))})" if self.args else f"${self.name}"


@dataclass(frozen=True)
class Cast:
    """``as(x, T)``: ``x`` taken as a value of type ``T`` (no conversion at run time)."""

    term: "Term"
    type: str
    span: Span | None = _span

    def __str__(self) -> str:
        return f"as({self.term}, {self.type})"


STRUCTURED = (RecordTerm, BranchTerm)      # terms whose arguments can be patterns


Term = Variable | Wildcard | Constant | BinaryOp | Negate | Functor | Aggregate | RecordTerm | Nil | BranchTerm | Cast


# ---------------------------------------------------------------- literals

@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple[Term, ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Negation:
    atom: Atom
    span: Span | None = _span

    def __str__(self) -> str:
        return f"!{self.atom}"


@dataclass(frozen=True)
class Comparison:
    """``left op right``; also Soufflé's constraints ``match(pattern, s)`` and
    ``contains(sub, s)`` (op match / contains) and ``true`` / ``false`` (``1 = 1`` / ``1 != 1``)."""

    op: str  # = != < <= > >= match contains not_match not_contains (!match(p, s))
    left: Term
    right: Term
    span: Span | None = _span

    def __str__(self) -> str:
        if self.op in ("match", "contains", "not_match", "not_contains"):
            return f"{'!' * self.op.startswith('not_')}{self.op.removeprefix('not_')}({self.left}, {self.right})"
        if self.left == self.right == Constant(1) and self.op in ("=", "!="):
            return "true" if self.op == "=" else "false"
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Disjunction:
    """``(a ; b)``: each alternative is a conjunction of literals."""

    alternatives: tuple[tuple["Literal", ...], ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return "(" + " ; ".join(", ".join(map(str, alt)) for alt in self.alternatives) + ")"


Literal = Atom | Negation | Comparison | Disjunction


# ---------------------------------------------------------------- statements

@dataclass(frozen=True)
class Rule:
    """``h1, h2 :- body.``; a fact is a rule with one head and an empty body."""

    heads: tuple[Atom, ...]
    body: tuple[Literal, ...]
    span: Span | None = _span
    pragma: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    plan: tuple[tuple[int, tuple[int, ...]], ...] = ()     # .plan: (version, atom order); see Plan
    plan_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)    # each plan item's

    @property
    def is_fact(self) -> bool:
        return not self.body

    def __str__(self) -> str:
        heads = ", ".join(map(str, self.heads))
        if not self.body:
            return f"{heads}."
        return f"{heads} :- {', '.join(map(str, self.body))}.{plan_text(self.plan)}"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    span: Span | None = _span


@dataclass(frozen=True)
class Declaration:
    """``.decl r(x: T, ...) qualifiers``; ``qualifiers`` are the words after the columns (``btree``,
    ``inline``, ``eqrel``, ...), ``choice_domain`` the column tuples of ``choice-domain x, (x, y)``."""

    relation: str
    columns: tuple[Column, ...]
    span: Span | None = _span
    qualifiers: tuple[str, ...] = ()
    choice_domain: tuple[tuple[str, ...], ...] = ()

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def overridable(self) -> bool:
        """A component's relation whose rules a derived component may replace (``.override``)."""
        return "overridable" in self.qualifiers

    def __str__(self) -> str:
        cols = ", ".join(f"{c.name}: {c.type}" for c in self.columns)
        text = f".decl {self.relation}({cols})" + "".join(f" {q}" for q in self.qualifiers)
        if self.choice_domain:
            keys = (k[0] if len(k) == 1 else f"({', '.join(k)})" for k in self.choice_domain)
            text += f" choice-domain {', '.join(keys)}"
        return text


@dataclass(frozen=True)
class TypeDeclaration:
    """``.type Name <: symbol``: a subtype (``.type Name = number`` is a one-member union)."""

    name: str
    base: str
    span: Span | None = _span

    def __str__(self) -> str:
        return f".type {self.name} <: {self.base}"


@dataclass(frozen=True)
class Directive:
    """``.input r(k=v, ...)``, ``.output r``, ``.printsize r``."""

    kind: str  # input | output | printsize
    relation: str
    params: tuple[tuple[str, str], ...] = ()
    span: Span | None = _span

    def param(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.params:
            if k.lower() == key.lower():
                return v
        return default

    @property
    def io(self) -> str:
        """Where the rows come from or go: ``file`` (the default), ``stdout``, ``stdin``, ``spark``."""
        return (self.param("IO") or "file").lower()

    def __str__(self) -> str:
        if not self.params:
            return f".{self.kind} {self.relation}"
        params = ", ".join(f"{k}={_quote(v)}" for k, v in self.params)
        return f".{self.kind} {self.relation}({params})"


# ---------------------------------------------------------------- components (issue 18)
# Soufflé's components and the directives that go with them. Components exist only between the
# parser and datalog/language/components.py, which expands every .init into plain statements.

def plan_text(plan) -> str:
    """`` .plan 0: (1, 2), 1: (2, 1)`` for a rule's plan, or nothing."""
    if not plan:
        return ""
    return " .plan " + ", ".join(f"{v}: ({', '.join(map(str, order))})" for v, order in plan)


@dataclass(frozen=True)
class ComponentType:
    """``Graph<number, T>``: a component's name and its type parameters (or arguments)."""

    name: str
    params: tuple[str, ...] = ()
    span: Span | None = _span

    def __str__(self) -> str:
        return f"{self.name}<{', '.join(self.params)}>" if self.params else self.name


@dataclass(frozen=True)
class Component:
    """``.comp Name<T> : Base<T>, Other { statements }``."""

    type: ComponentType
    bases: tuple[ComponentType, ...]
    body: tuple["Statement", ...]
    span: Span | None = _span

    def __str__(self) -> str:
        bases = f" : {', '.join(map(str, self.bases))}" if self.bases else ""
        inner = "".join("\n  " + str(s).replace("\n", "\n  ") for s in self.body)
        return f".comp {self.type}{bases} {{{inner}\n}}"


@dataclass(frozen=True)
class Instantiation:
    """``.init name = Component<args>``."""

    name: str
    type: ComponentType
    span: Span | None = _span

    def __str__(self) -> str:
        return f".init {self.name} = {self.type}"


@dataclass(frozen=True)
class Override:
    """``.override r`` in a component: its rules for r replace the base component's."""

    relation: str
    span: Span | None = _span

    def __str__(self) -> str:
        return f".override {self.relation}"


@dataclass(frozen=True)
class Include:
    """``.include "file"``: the file's statements in its place (resolved by the parser)."""

    path: str
    span: Span | None = _span

    def __str__(self) -> str:
        return f".include {_quote(self.path)}"


@dataclass(frozen=True)
class Once:
    """``.once``: the file holding it is included at most once."""

    span: Span | None = _span

    def __str__(self) -> str:
        return ".once"


@dataclass(frozen=True)
class FunctorDeclaration:
    """``.functor f(x: number, symbol): number [stateful]``: a C++ function, accepted; a use is
    ``unsupported``."""

    name: str
    params: tuple[tuple[str | None, str], ...]
    result: str
    stateful: bool = False
    span: Span | None = _span

    def __str__(self) -> str:
        params = ", ".join(f"{n}: {t}" if n else t for n, t in self.params)
        return f".functor {self.name}({params}): {self.result}" + (" stateful" if self.stateful else "")


@dataclass(frozen=True)
class LimitSize:
    """``.limitsize r(n=10)``: r stops growing at n tuples."""

    relation: str
    limit: int
    span: Span | None = _span

    def __str__(self) -> str:
        return f".limitsize {self.relation}(n={self.limit})"


# ---- records (issue 18): unions, record types, algebraic data types

@dataclass(frozen=True)
class UnionTypeDeclaration:
    """``.type U = A | B``: the values of subtypes of one primitive type; with one member
    (``.type Id = number``) an alias, a type equivalent to it."""

    name: str
    members: tuple[str, ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f".type {self.name} = {' | '.join(self.members)}"


def _fields(fields) -> str:
    return ", ".join(f"{f.name}: {f.type}" for f in fields)


@dataclass(frozen=True)
class RecordTypeDeclaration:
    """``.type Pair = [a: number, b: symbol]`` (the fields are Columns)."""

    name: str
    fields: tuple[Column, ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f".type {self.name} = [{_fields(self.fields)}]"


@dataclass(frozen=True)
class AdtBranch:
    name: str
    fields: tuple[Column, ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f"{self.name} {{{_fields(self.fields)}}}"


@dataclass(frozen=True)
class AdtTypeDeclaration:
    """``.type Shape = Circle {r: number} | Empty {}``."""

    name: str
    branches: tuple[AdtBranch, ...]
    span: Span | None = _span

    def __str__(self) -> str:
        return f".type {self.name} = {' | '.join(map(str, self.branches))}"


TYPE_DECLARATIONS = (TypeDeclaration, UnionTypeDeclaration, RecordTypeDeclaration, AdtTypeDeclaration)


# ---------------------------------------------------------------- semantics (issue 18)

@dataclass(frozen=True)
class Pragma:
    """``.pragma "key" "value"`` (``value`` None for ``.pragma "key"``): an option of the program."""

    key: str
    value: str | None = None
    span: Span | None = _span

    def __str__(self) -> str:
        value = "" if self.value is None else f" {_quote(self.value)}"
        return f".pragma {_quote(self.key)}{value}"


@dataclass(frozen=True)
class Subsumption:
    """``r(x, y1) <= r(x, y2) :- y1 < y2.``: a tuple of r matching ``dominated`` is removed when
    the tuple matching ``dominating`` is in r too and the body holds."""

    dominated: Atom
    dominating: Atom
    body: tuple[Literal, ...]
    span: Span | None = _span
    plan: tuple[tuple[int, tuple[int, ...]], ...] = ()     # .plan of its dominance clause (r(a), r(b), body)
    plan_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)

    @property
    def heads(self) -> tuple[Atom, ...]:
        """The relation it removes tuples of, as a rule's head (components place it by this)."""
        return (self.dominated,)

    def __str__(self) -> str:
        head = f"{self.dominated} <= {self.dominating}"
        if not self.body:
            return f"{head}.{plan_text(self.plan)}"
        return f"{head} :- {', '.join(map(str, self.body))}.{plan_text(self.plan)}"


Statement = Rule | Declaration | TypeDeclaration | Directive | UnionTypeDeclaration | RecordTypeDeclaration | \
    AdtTypeDeclaration | Pragma | Subsumption


@dataclass(frozen=True)
class Program:
    statements: tuple[Statement, ...]
    warnings: tuple = field(default=(), compare=False, repr=False)   # DatalogWarnings of the parse


    def __str__(self) -> str:
        return "\n".join(map(str, self.statements))

    @property
    def rules(self) -> list[Rule]:
        return [s for s in self.statements if isinstance(s, Rule)]

    @property
    def declarations(self) -> list[Declaration]:
        return [s for s in self.statements if isinstance(s, Declaration)]

    @property
    def type_declarations(self) -> list[TypeDeclaration]:
        """Every ``.type``: aliases, and (issue 18) unions, record types and ADTs."""
        return [s for s in self.statements if isinstance(s, TYPE_DECLARATIONS)]

    @property
    def directives(self) -> list[Directive]:
        return [s for s in self.statements if isinstance(s, Directive)]

    @property
    def pragmas(self) -> list[Pragma]:
        return [s for s in self.statements if isinstance(s, Pragma)]

    @property
    def subsumptions(self) -> list[Subsumption]:
        return [s for s in self.statements if isinstance(s, Subsumption)]


def subterms(term):
    """The term and its sub-terms, not descending into aggregate bodies."""
    yield term
    if isinstance(term, BinaryOp):
        yield from subterms(term.left)
        yield from subterms(term.right)
    elif isinstance(term, Negate):
        yield from subterms(term.operand)
    elif isinstance(term, (Functor, RecordTerm, BranchTerm)):
        for arg in term.args:
            yield from subterms(arg)
    elif isinstance(term, Cast):
        yield from subterms(term.term)


def variables(node) -> list[Variable]:
    """Every Variable under ``node`` (a term, literal or tuple), in source order."""
    return [n for n in walk(node) if isinstance(n, Variable)]


def first_positions(atom: Atom) -> dict[str, int]:
    """Each variable of ``atom`` and the first argument position holding it (a repeated
    variable's later positions are equalities with the first)."""
    first: dict[str, int] = {}
    for i, arg in enumerate(atom.args):
        if isinstance(arg, Variable):
            first.setdefault(arg.name, i)
    return first


def walk(node):
    """``node`` and everything under it, in source order: a tuple's or list's items, an atom's
    arguments, a negation's atom, both sides of a comparison or operation, the arguments of a
    functor, record or ADT branch, a cast's term, an aggregate's target and body, and the
    literals of each alternative of a disjunction. (:func:`subterms` stops at aggregates.)"""
    if node is None:
        return
    if isinstance(node, (tuple, list)):
        for item in node:
            yield from walk(item)
        return
    yield node
    if isinstance(node, (Atom, Functor, RecordTerm, BranchTerm)):
        yield from walk(node.args)
    elif isinstance(node, Negation):
        yield from walk(node.atom)
    elif isinstance(node, (Comparison, BinaryOp)):
        yield from walk(node.left)
        yield from walk(node.right)
    elif isinstance(node, Negate):
        yield from walk(node.operand)
    elif isinstance(node, Cast):
        yield from walk(node.term)
    elif isinstance(node, Aggregate):
        yield from walk(node.target)
        yield from walk(node.body)
    elif isinstance(node, Disjunction):
        yield from walk(node.alternatives)
