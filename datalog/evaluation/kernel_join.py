"""A rule's join as the compiled kernel reads it: atoms, guards and comparisons as plain numbers.

The data of :mod:`datalog.evaluation.kernel_plan`'s rules (:class:`KernelRule`) and the part of a
plan the kernel joins (:func:`join_parts`): each positive atom as the rows it reads
(:class:`KernelAtom`: constants and repeated variables filtered before its trie is built,
wildcards projected away), each atom with no variable as a guard, and the comparisons of atom
variables with each other and with constants (:class:`KernelCompare`), tested by the kernel at
the depth that binds the later of their variables.
"""

from __future__ import annotations

from dataclasses import dataclass

from datalog.language import ast
from datalog.planning.plan import Compare, Lookup

WORDS = ("number", "unsigned", "symbol")  # column types the kernel joins as 64-bit words
EQUALITIES = ("=", "!=")                  # the comparisons of symbols' words
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class KernelAtom:
    """One positive atom as the kernel reads it: the rows of ``relation`` that have ``constants``
    ((column, value), the value as its int64 word) and equal values in the ``equal`` column pairs,
    projected to ``columns`` (one per variable, in the variable order); ``variables`` are their
    depths, strictly increasing."""

    relation: str
    columns: tuple[int, ...]
    variables: tuple[int, ...]
    constants: tuple[tuple[int, int], ...] = ()
    equal: tuple[tuple[int, int], ...] = ()

    @property
    def key(self) -> tuple:
        """What its rows depend on besides the relation's rows (a cache key of its trie)."""
        return self.relation, self.columns, self.constants, self.equal


@dataclass(frozen=True)
class KernelRule:
    """A rule as the kernel joins it: ``atoms`` over ``n_vars`` variables, the head relation
    ``head`` and the slot of each head column (``head_depths``: a depth of the join, or from
    ``n_vars`` on a value that a step binds, an aggregate's or an expression's)."""

    head: str
    n_vars: int
    atoms: tuple[KernelAtom, ...]
    head_depths: tuple[int, ...]
    guards: tuple[KernelAtom, ...] = ()   # atoms with no variable (``e(1, _)``): some row must match
    compares: tuple["KernelCompare", ...] = ()   # filters of the bindings, tested in the join
    steps: tuple = ()                     # what runs on the join's batches (kernel_steps.KernelStep)

    @property
    def aggregates(self) -> list:
        return [s.aggregate for s in self.steps if s.aggregate is not None]

    def relations(self) -> set[str]:
        """Every relation the rule reads: its atoms', its guards' and its aggregates' bodies'."""
        return {a.relation for a in self.atoms + self.guards} | \
            {name for agg in self.aggregates for name in agg.body.relations()} | \
            {s.relation for s in self.steps if s.relation is not None}


@dataclass(frozen=True)
class KernelCompare:
    """``x < y`` or ``x != 3`` over a binding: each side a depth (int) or a constant's word
    (``("word", w)``); ``unsigned``: the words compare as unsigned."""

    op: str
    left: object
    right: object
    unsigned: bool = False


def join_parts(plan, schema, symbols, filters) -> tuple | None:
    """A plan's atoms, guards and comparisons as the kernel reads them (``filters``: those the
    join tests, :func:`datalog.evaluation.kernel_steps.split`), or None."""
    if plan.generators or plan.plan.params or not plan.atoms:
        return None
    atoms = [kernel_atom(atom, schema, symbols) for atom in plan.atoms]
    if any(a is None for a in atoms):
        return None
    typed = column_types(atoms, schema)
    guards = [guard(f.filter, schema, symbols) for f in filters if not isinstance(f.filter, Compare)]
    compares = [comparison(f.filter, plan.slots, typed, symbols) for f in filters if isinstance(f.filter, Compare)]
    if any(g is None for g in guards + compares):
        return None
    return tuple(atoms), tuple(guards), tuple(compares)


def column_types(atoms, schema) -> dict[int, str]:
    """The column type of each depth the kernel atoms bind."""
    return {d: schema[a.relation].types[c] for a in atoms for c, d in zip(a.columns, a.variables)}


def comparison(compare, slots, typed: dict, symbols=None) -> KernelCompare | None:
    """``x < y``, ``x != 3`` (variables of atoms, constants) as a filter of the kernel's bindings, or None."""
    if compare.op not in COMPARISONS:
        return None
    depths = [slots.get(t.name) if isinstance(t, ast.Variable) else None for t in (compare.left, compare.right)]
    types = {typed.get(d) for d in depths if d is not None}
    if len(types) != 1 or None in types:
        return None
    (type_,) = types
    if type_ == "symbol" and compare.op not in EQUALITIES:
        return None                               # words are not ordered as the symbols are
    sides = []
    for term, depth in zip((compare.left, compare.right), depths):
        if depth is not None:
            sides.append(depth)
        elif isinstance(term, ast.Constant) and (word := encode_constant(term.value, type_, symbols)) is not None:
            sides.append(("word", word))
        else:
            return None
    return KernelCompare(compare.op, sides[0], sides[1], type_ == "unsigned")


def guard(lookup, schema, symbols=None) -> KernelAtom | None:
    """``e(1, _)`` (a positive Lookup of constants) as an atom of no variable, or None (any other filter)."""
    if not isinstance(lookup, Lookup) or lookup.negated or lookup.patterns or lookup.depth != -1:
        return None
    types = words_of(schema, lookup.relation)
    if types is None or not all(isinstance(t, ast.Constant) for t in lookup.path):
        return None
    constants = [(c, encode_constant(t.value, types[c], symbols)) for c, t in zip(lookup.order, lookup.path)]
    if any(word is None for _, word in constants):
        return None
    return KernelAtom(lookup.relation, (), (), tuple(constants))


def kernel_atom(atom, schema, symbols=None) -> KernelAtom | None:
    """A compiled AtomPlan as the kernel reads it, or None (a term other than a variable, constant or
    wildcard; a column that is no 64-bit word; a constant that fits none)."""
    types = words_of(schema, atom.relation)
    if types is None or not all(isinstance(t, (ast.Variable, ast.Constant, ast.Wildcard)) for t in atom.atom.args):
        return None
    prefix = atom.plan.prefix
    n, constants = len(prefix), []
    for column, term in zip(atom.order[:n], prefix):
        if not isinstance(term, ast.Constant) or (word := encode_constant(term.value, types[column], symbols)) is None:
            return None
        constants.append((column, word))
    columns, variables, equal = [], [], []
    for column, depth in zip(atom.order[n:], atom.depths):
        if variables and variables[-1] == depth:       # r(x, x): a repeated variable, filtered
            equal.append((column, columns[-1]))
        else:
            columns.append(column)
            variables.append(depth)
    return KernelAtom(atom.relation, tuple(columns), tuple(variables), tuple(constants), tuple(equal))


def encode_constant(value, type_: str, symbols=None) -> int | None:
    """The int64 word of a constant in a column of ``type_`` (unsigned: two's complement; a symbol:
    its word in ``symbols``), or None."""
    if type_ == "symbol":
        return symbols.word(value) if symbols is not None and isinstance(value, str) else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if type_ == "number" and -2**63 <= value < 2**63:
        return value
    if type_ == "unsigned" and 0 <= value < 2**64:
        return value - 2**64 if value >= 2**63 else value
    return None


def words_of(schema, relation: str) -> tuple[str, ...] | None:
    """The relation's column types, when every one is a 64-bit word and it has a column."""
    info = schema.get(relation)
    types = tuple(info.types) if info is not None else ()
    return types if types and all(t in WORDS for t in types) else None
