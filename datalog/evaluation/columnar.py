"""A stratum evaluated on the compiled kernel: relations as sorted int64 rows, semi-naive by joins.

The columnar twin of :func:`datalog.evaluation.fixpoint.fixpoint` for the strata that
:func:`datalog.evaluation.kernel_plan.kernel_rules` accepts. At the stratum's start each relation
it reads becomes a 2-D int64 array of sorted distinct rows (``full``); every join is one call of
the leapfrog triejoin kernel (:mod:`lftj.kernel`) over CSR tries (:mod:`lftj.csr`), its bindings
projected to the head's columns. At the end the new rows go back into the engine's relations as
tuples of Python ints, as the tuple path leaves them.

Semi-naive, as :mod:`datalog.evaluation.seminaive` runs it: ``recent`` holds each relation's rows
new in the last round (at first, all it holds); in a round every rule reads, at each atom of the
stratum in turn, that atom from ``recent`` and the others from ``full``; what it derives is
``to_add``; the rows of ``to_add`` not yet known become the next ``recent`` and join the
known rows (``stable``, here ``full``), until nothing is recent. The known rows are a few sorted
runs (:class:`lftj.runs.Runs`): a round looks ``to_add`` up in them by galloping and adds
``recent`` as a run, merged geometrically, so that it costs ``O(|to_add| log n)`` and amortised
``O(|recent| log n)``, not ``O(n)``: a relation is one array only where a rule reads it whole.

Ctrl-C and the memory budget (:mod:`datalog.engine.resources`) act between bytecodes, so never
inside a kernel call: a join reads its driving atom (the ``recent`` one, else the largest) in
chunks of :data:`CHUNK` rows, and the kernel gives a chunk's bindings in batches of at most
:data:`BATCH` rows, so that Python runs between them.

>>> import os
>>> from datalog.engine import Engine
>>> e = Engine.from_source('e(1, 2). e(2, 3). e(3, 1). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).')
>>> told, os.environ["DATALOG_COLUMNAR"] = [], "1"        # (so few rows stay on the tuple path unless told)
>>> e.run(told.append); len(e.rows("p")), [m for m in told if "kernel" in m]
(9, ['  on the compiled kernel'])
>>> del os.environ["DATALOG_COLUMNAR"]
"""

from __future__ import annotations

import numpy as np

from lftj.csr import CsrTrie, distinct_rows
from lftj.kernel_input import CheckedTrie, SortedRows, checked_trie
from lftj.kernels import kernel, rowsets, which
from lftj.runs import Runs
from datalog.evaluation import column_aggregates as aggregates
from datalog.evaluation.column_steps import finished, leading
from datalog.evaluation.kernel_steps import read_depths
from datalog.evaluation.symbols import SymbolTable
from datalog.evaluation.words import DecodedRows, decode, encode

CHUNK = 1 << 16                 # driving rows per kernel call: Python runs between two calls
BATCH = 1 << 17                 # bindings the kernel gives at a time: a chunk's derivations are
                                # never held whole (Andersen: a chunk of 972k rows was 41 MB of its
                                # peak; batches of 256k rows: 94 MB, of 128k: 88-92, of 64k: no less)
THIN_ROUNDS, THIN_ROWS = 64, 64  # rounds this many, of fewer new rows each on average: the tuple path
KEEP_WORDS = 10_000             # rows from which a relation of numbers keeps its sorted words
                                # (lftj.relation.Relation.keep_words: 16 bytes a binary row)


def evaluate_stratum(stratum, rules: list, db, schema, progress=None, symbols: SymbolTable | None = None) -> bool:
    """Every rule of the stratum to its fixpoint on the kernel, the new rows into ``db``; whether
    it got there: False when its rounds grew thin (:func:`seminaive`), and the rows so far are
    in ``db`` for the tuple path to go on from. ``symbols``: the table whose words the rules'
    symbol constants are (kernel_plan.kernel_rules)."""
    if progress:
        progress(f"  on the {which()} kernel")
    members = set(stratum.relations)
    columns = Columns(db, schema, SymbolTable() if symbols is None else symbols)
    base = [r for r in rules if not any(a.relation in members for a in r.atoms + r.guards)]
    # base rules (no atom of this stratum): one join each
    for name in members:
        columns.add(name, [part for rule in base if rule.head == name for part in join(rule, columns)])
    done = seminaive(rules, members, columns, progress) if stratum.recursive else True
    for name in members:
        columns.write_back(name)
    return done


def seminaive(rules: list, members: set, columns: "Columns", progress=None) -> bool:
    """The rounds: each rule with one atom of the stratum read from ``recent``, until none is;
    False if they stop first because they grew thin: fewer than :data:`THIN_ROWS` new rows a round
    over the last :data:`THIN_ROUNDS` (a round costs the kernel some 0.3 ms whatever its size, the
    tuple path a few µs a row: a counter ``c(y) :- c(x), y = x + 1, x < 2000.`` took 0.54 s here
    against 0.009 s there), while the stratum holds few rows (the tuple path starts from all of
    them: the last thin rounds of a transitive closure of a long chain stay here)."""
    grown = []                                    # the rows each round added
    recursive = [r for r in rules if any(a.relation in members for a in r.atoms + r.guards)]
    recent = {name: columns.full(name) for name in members}      # all known rows, at first
    number = 0
    while any(len(rows) for rows in recent.values()):
        number += 1
        to_add: dict[str, list] = {name: [] for name in members}
        for rule in recursive:
            if any(len(recent[g.relation]) for g in rule.guards if g.relation in members):
                # q(x) :- e(x), p(1, _).   p grew: the whole rule again
                to_add[rule.head].extend(join(rule, columns))
                continue
            for a, atom in enumerate(rule.atoms):
                if atom.relation in members and len(recent[atom.relation]):
                    # path(x, z) :- path(x, y), edge(y, z).   path read from its recent rows
                    to_add[rule.head].extend(join(rule, columns, a, recent[atom.relation]))
        recent = {name: columns.add(name, to_add[name]) for name in members}
        if progress:
            progress(f"  iteration {number}: {sum(columns.size(n) for n in members):,} tuples")
        grown.append(sum(len(rows) for rows in recent.values()))
        if len(grown) >= THIN_ROUNDS and sum(grown[-THIN_ROUNDS:]) < THIN_ROWS * THIN_ROUNDS and \
                any(len(rows) for rows in recent.values()) and \
                sum(columns.size(n) for n in members) <= THIN_ROWS * THIN_ROUNDS:
            if progress:
                progress("  its rounds grew thin: the tuple path goes on")
            return False
    return True


def join(rule, columns: "Columns", driving: int | None = None, rows: np.ndarray | None = None) -> list[np.ndarray]:
    """The head rows of the rule's bindings not known yet, as parts of sorted distinct rows, atom
    ``driving`` read from ``rows`` (the others from ``full``); the driving atom, by default the
    largest, read in chunks. Each batch of a chunk's bindings is made distinct and the known
    rows dropped at once: most derivations of a recursive rule are known (Andersen: 12.9M
    bindings, 0.6M rows), and a round's to-add would otherwise hold them all."""
    if driving is None:
        driving = max(range(len(rule.atoms)), key=lambda a: columns.size(rule.atoms[a].relation))
        rows = columns.full(rule.atoms[driving].relation)
    head = list(rule.head_depths)
    if not all(len(atom_rows(g, columns.full(g.relation))) for g in rule.guards):
        return []
    driven = atom_rows(rule.atoms[driving], rows)
    tries = [None if a == driving else columns.trie(atom) for a, atom in enumerate(rule.atoms)]
    variables = [list(atom.variables) for atom in rule.atoms]
    if not len(driven) or any(t is not None and not len(t) for t in tries):
        return []                                 # (an empty atom: as the tuple path, no step runs)
    if rule.steps:                                # the depths the head and the steps read
        emit = read_depths(rule)
        tables = {step: columns.table(step) for step in rule.steps if step.aggregate or step.relation}
        if not leading(rule, tables):             # d = 1 + 2, 1 > 2: once, before the join
            return []
    out, known = [], columns.runs(rule.head)
    compares = kernel_compares(rule)
    for start in range(0, len(driven), CHUNK):
        tries[driving] = CsrTrie.from_sorted(driven[start:start + CHUNK])
        if rule.steps:
            batches = kernel.triejoin_batches(rule.n_vars, variables, tries, emit, BATCH, compares)
            parts = (finished(rule, emit, batch, tables) for batch in batches)
        else:
            parts = kernel.triejoin_batches(rule.n_vars, variables, tries, head, BATCH, compares)
        out.extend(known.absent(distinct_rows(derived)) for derived in parts)
    return [part for part in out if len(part)]


def bindings(rule, columns: "Columns") -> np.ndarray:
    """Every binding of a join (an aggregate's body) projected to its ``head_depths``, in the
    kernel's order (sorted by the variable order): one kernel call over its atoms' tries."""
    width = len(rule.head_depths)
    if not all(len(atom_rows(g, columns.full(g.relation))) for g in rule.guards):
        return np.zeros((0, width), np.int64)
    tries = [columns.trie(atom) for atom in rule.atoms]
    if any(not len(t) for t in tries):
        return np.zeros((0, width), np.int64)
    batches = list(kernel.triejoin_batches(rule.n_vars, [list(a.variables) for a in rule.atoms], tries,
                                           list(rule.head_depths), BATCH, kernel_compares(rule)))
    return np.concatenate(batches) if batches else np.zeros((0, width), np.int64)


def kernel_compares(rule) -> list[tuple]:
    """``x != y``, ``x < 3`` as the kernel takes them: tested at the depth that binds them."""
    return [(c.op, c.left, c.right, c.unsigned) for c in rule.compares]


def united(parts: list, arity: int) -> np.ndarray:
    """The union of parts of sorted distinct rows, merged two at a time (linear merges, no sort)."""
    if not parts:
        return np.zeros((0, arity), np.int64)
    while len(parts) > 1:
        parts = [rowsets.union(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def atom_rows(atom, rows: np.ndarray) -> np.ndarray:
    """The rows an atom reads (its constants and repeated variables filtered), projected to its
    variables' columns, sorted and distinct: its trie's rows."""
    keep = None
    for column, value in atom.constants:
        keep = _and(keep, rows[:, column] == value)
    for column, first in atom.equal:
        keep = _and(keep, rows[:, column] == rows[:, first])
    if keep is not None:
        rows = rows[keep]
    if not atom.columns:                          # a guard: whether any row matched
        return rows[:1, :0]
    return projected_rows(rows, atom.columns)


def projected_rows(rows: np.ndarray, columns: tuple[int, ...]) -> np.ndarray:
    """The sorted distinct rows of ``rows`` (sorted distinct) projected to ``columns``."""
    if columns == tuple(range(rows.shape[1])):
        return rows                               # every column in order: sorted distinct already
    return distinct_rows(np.ascontiguousarray(rows[:, list(columns)]))


def _and(keep, test):
    return test if keep is None else keep & test


class Columns:
    """The relations of one stratum's evaluation as arrays. ``full(name)``: every row known, sorted
    distinct int64 words, one array; ``add(name, arrays)``: the new ones among them added (to the
    relation's sorted runs, :class:`lftj.runs.Runs`: no round rewrites or reads the whole
    relation), returned; tries made (and checked for the kernel) once per version of their
    relation, and only when a rule reads it whole (not as its driving atom); ``write_back(name)``:
    the rows added, into ``db``."""

    def __init__(self, db, schema, symbols: SymbolTable):
        self.db, self.schema, self.symbols = db, schema, symbols
        self.known: dict[str, Runs] = {}
        self.added: dict[str, list | None] = {}
        self.grew: set[str] = set()
        self.tries: dict[tuple, tuple[int, CsrTrie]] = {}
        self.tables: dict = {}                    # by step, what it looks bindings up in (table())

    def runs(self, name: str) -> Runs:
        if name not in self.known:
            words = self.db[name].current_words()       # a relation of numbers held as words
            if words is None:
                words = self.held_words(name)
            if words is None:
                words = distinct_rows(encode(self.db[name].tuples, self.schema[name].types, self.symbols))
            self.known[name] = Runs(words)
            # the new rows, for a relation that takes them as tuples (else it holds all as words)
            self.added[name] = None if self.db[name].can_hold() else []
        return self.known[name]

    def held_words(self, name: str) -> np.ndarray | None:
        """The words a relation holds unread (:class:`DecodedRows`, from a lower stratum on the
        kernel, in this evaluation's symbol table), sorted as words: not decoded into tuples to be
        encoded again (same generation x50: 0.5 s of 1.5). They are marked shared, so that
        sorting them for the output (:meth:`DecodedRows.ordered_words`) copies them first."""
        held = self.db[name].held()
        types = tuple(self.schema[name].types)
        if not isinstance(held, DecodedRows) or tuple(held.types) != types or \
                ("symbol" in types and held.symbols is not self.symbols):
            return None
        if held.in_order and any(t != "number" for t in types):      # sorted as values, not as words
            return distinct_rows(held.words.copy())
        held.shared = True
        return held.words

    def full(self, name: str) -> np.ndarray:
        return self.runs(name).rows()

    def size(self, name: str) -> int:
        return len(self.runs(name))

    def add(self, name: str, derived: list) -> np.ndarray:
        """Add the rows of ``derived`` (parts of sorted distinct rows none of which is known:
        what :func:`join` gives), returning those added."""
        known = self.runs(name)
        new = united([d for d in derived if len(d)], known.arity)
        if len(new):
            known.add(new)
            self.grew.add(name)
            if self.added[name] is not None:
                self.added[name].append(new)
        return new

    def trie(self, atom) -> CheckedTrie:
        """The atom's trie of its relation's current rows, checked for the kernel once a version."""
        version = self.runs(atom.relation).version
        cached = self.tries.get(atom.key)
        if cached is None or cached[0] != version:
            self.tries.pop(atom.key, None)        # the last version's trie goes before the next is made
            trie = CsrTrie.from_sorted(atom_rows(atom, self.full(atom.relation)))
            cached = self.tries[atom.key] = (version, checked_trie(f"{atom.relation}'s trie", trie, len(trie.keys)))
        return cached[1]

    def table(self, step):
        """What a step looks its bindings up in, made once a stratum (it reads lower strata only):
        an aggregate's groups and values (a :class:`column_aggregates.Table`), or a negated
        relation's rows at its bound columns (SortedRows)."""
        if step not in self.tables:
            if step.aggregate is not None:
                self.tables[step] = aggregates.table(step.aggregate, bindings(step.aggregate.body, self))
            else:
                self.tables[step] = SortedRows(projected_rows(self.full(step.relation), step.columns))
        return self.tables[step]

    def write_back(self, name: str) -> None:
        """The rows added to ``name`` into its relation: held as words, decoded when first read
        (:class:`DecodedRows`), where the relation is plain and has no index; else as tuples."""
        added = self.added.pop(name, None)
        known = self.known.pop(name, None)
        if name not in self.grew:
            return
        relation, types = self.db[name], self.schema[name].types
        numbers = all(t == "number" for t in types)
        if added is None:                         # (the relation can hold words)
            words = known.rows()                  # every row, sorted
            relation.hold(DecodedRows(words, types, self.symbols))
        else:
            words = known.rows() if numbers and len(known) >= KEEP_WORDS else None
            # new rows only (each not known before): one set update where no index needs them
            relation.add_all(decode(added, types, self.symbols))
        if words is not None and numbers and len(words) >= KEEP_WORDS:  # for the outputs and rows()
            relation.keep_words(words)
