"""The compiled kernel's inputs, checked once per call and packed into flat arrays.

The kernel (:mod:`lftj.kernel`) runs without bounds checks, so everything it indexes with is
checked here first, in plain Python and numpy, and a malformed input is a ``ValueError`` that
names what is wrong: a trie whose levels or offsets break the :class:`lftj.csr.CsrTrie`
invariants, a plan whose variable indices are out of range, or row arrays of the wrong shape.

A join's atoms are packed into one list of *levels*: level ``g`` is one trie level of one atom,
an atom's levels consecutive and in trie order. The packed arrays (:class:`JoinInput`):

  * ``keys``: every level's keys, concatenated; level ``g`` holds ``keys[key_start[g]:key_start[g + 1]]``;
  * ``offsets``: every non-last level's offsets, concatenated, made absolute (positions in
    ``keys``): the key at position ``p`` of level ``g`` has the children
    ``keys[offsets[child[g] + i]:offsets[child[g] + i + 1]]`` with ``i = p - key_start[g]``;
    ``child[g]`` is ``-1`` at an atom's last level;
  * ``root[g]``: whether level ``g`` is its atom's first (its only node is the whole level);
  * ``participants``: the levels grouped by the variable they bind, ``participants[depth_start[v]:
    depth_start[v + 1]]`` the levels that bind variable ``v`` (the leapfrog's iterators at depth ``v``).

A join's comparisons (``x != y``, ``x < 3``) are given as ``(op, left, right, unsigned)``, a side
a depth (an int) or a constant's word (``("word", w)``), and packed by the depth where the later
of their variables is bound (:class:`Compares`): the kernel tests them there, so a binding that
fails one is not extended further.

>>> from lftj.csr import CsrTrie
>>> edge = CsrTrie.build([(1, 2), (2, 3)], (0, 1))
>>> j = join_input(3, [[0, 1], [1, 2]], [edge, edge])
>>> j.keys.tolist(), j.offsets.tolist(), j.participants.tolist(), j.depth_start.tolist()
([1, 2, 2, 3, 1, 2, 2, 3], [2, 3, 4, 6, 7, 8], [0, 1, 2, 3], [0, 1, 3, 4])
>>> join_input(2, [[0, 2]], [edge])
Traceback (most recent call last):
...
ValueError: atom 0's level 1 binds variable 2, outside the 2 variable(s) of the order
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lftj.csr import is_sorted_distinct

I64 = np.int64


@dataclass(frozen=True)
class JoinInput:
    """A checked join: the flat arrays of the module's docstring, every index in range."""

    n_vars: int
    emit: np.ndarray                      # the depths each result row holds, in its column order
    keys: np.ndarray
    key_start: np.ndarray
    offsets: np.ndarray
    child: np.ndarray
    root: np.ndarray
    participants: np.ndarray
    depth_start: np.ndarray
    compares: "Compares | None" = None


OPS = ("=", "!=", "<", "<=", ">", ">=")     # a comparison's code is its place here
SIGN = -2**63                               # xor-ed into both sides, it orders unsigned words as signed


@dataclass(frozen=True)
class Compares:
    """A join's comparisons, checked, ``start[d]:start[d + 1]`` those tested at depth ``d``: each
    ``op`` (its code in :data:`OPS`) between ``left``/``right`` (a depth, or -1 for the constant
    ``left_word``/``right_word``), both sides xor-ed with ``flip`` (:data:`SIGN` to compare words
    as unsigned, else 0)."""

    start: np.ndarray
    op: np.ndarray
    left: np.ndarray
    right: np.ndarray
    left_word: np.ndarray
    right_word: np.ndarray
    flip: np.ndarray


def join_input(n_vars: int, atom_vars, tries, emit=None, compares=()) -> JoinInput:
    """Check a join plan and its tries, and pack them (see the module's docstring); ``emit``:
    the depths a result row holds (every depth in order by default; a depth may repeat);
    ``compares``: the comparisons every binding passes (see the module's docstring)."""
    atom_vars = [list(vs) for vs in atom_vars]
    check_plan(n_vars, atom_vars, len(tries))
    emit = list(range(n_vars)) if emit is None else list(emit)
    for d in emit:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 0 <= d < n_vars:
            raise ValueError(f"a result column holds depth {d!r}, outside the {n_vars} variable(s) of the order")
    levels, offsets, level_var, root = [], [], [], []
    for a, (vs, trie) in enumerate(zip(atom_vars, tries)):
        if isinstance(trie, CheckedTrie) and len(trie.keys) == len(vs):
            keys, offs = list(trie.keys), list(trie.offsets)        # checked when made
        else:
            keys, offs = check_trie(f"atom {a}'s trie", trie, len(vs))
        levels += keys
        offsets += offs + [None]
        level_var += vs
        root += [True] + [False] * (len(vs) - 1)
    key_start = np.zeros(len(levels) + 1, dtype=I64)
    key_start[1:] = np.cumsum([len(k) for k in levels])
    flat_offsets, child = _absolute_offsets(offsets, key_start)
    order = np.argsort(np.asarray(level_var, dtype=I64), kind="stable")
    depth_start = np.searchsorted(np.asarray(level_var, dtype=I64)[order], np.arange(n_vars + 1)).astype(I64)
    return JoinInput(int(n_vars), np.asarray(emit, dtype=I64), _concat(levels), key_start, flat_offsets, child,
                     np.asarray(root, dtype=np.uint8), order.astype(I64), depth_start,
                     packed_compares(n_vars, compares))


def packed_compares(n_vars: int, compares) -> Compares:
    """The comparisons checked and packed by the depth that tests them (:class:`Compares`)."""
    rows = []
    for c in compares:
        if not isinstance(c, tuple) or len(c) != 4 or c[0] not in OPS:
            raise ValueError(f"a comparison is (op, left, right, unsigned) with op one of {' '.join(OPS)}, "
                             f"not {c!r:.80}")
        sides = [_side(n_vars, side) for side in c[1:3]]
        depth = max(d for d, _ in sides)
        if depth < 0:
            raise ValueError(f"the comparison {c!r:.80} has no variable: the caller decides it")
        (left, left_word), (right, right_word) = sides
        rows.append((depth, OPS.index(c[0]), left, right, left_word, right_word, SIGN if c[3] else 0))
    rows.sort(key=lambda r: r[0])
    table = np.array(rows, dtype=I64).reshape(len(rows), 7)
    start = np.searchsorted(table[:, 0], np.arange(n_vars + 1)).astype(I64)
    return Compares(start, *(np.ascontiguousarray(table[:, i]) for i in range(1, 7)))


def _side(n_vars: int, side) -> tuple[int, int]:
    """A comparison's side as (depth, word): (d, 0) for a variable, (-1, w) for a constant."""
    if isinstance(side, (int, np.integer)) and not isinstance(side, bool):
        if not 0 <= side < n_vars:
            raise ValueError(f"a comparison reads depth {side}, outside the {n_vars} variable(s) of the order")
        return int(side), 0
    if isinstance(side, tuple) and len(side) == 2 and side[0] == "word" and isinstance(side[1], (int, np.integer)) \
            and -2**63 <= side[1] < 2**63:
        return -1, int(side[1])
    raise ValueError(f"a comparison's side is a depth or (\"word\", an int64), not {side!r:.60}")


def check_plan(n_vars, atom_vars: list[list[int]], n_tries: int) -> None:
    """Variable indices in range, increasing within each atom, every variable bound."""
    if not isinstance(n_vars, (int, np.integer)) or isinstance(n_vars, bool) or n_vars < 1:
        raise ValueError(f"the variable order needs at least one variable, got {n_vars!r}")
    if len(atom_vars) != n_tries:
        raise ValueError(f"the plan has {len(atom_vars)} atom(s) but {n_tries} trie(s) were given")
    bound = set()
    for a, vs in enumerate(atom_vars):
        if not vs:
            raise ValueError(f"atom {a} has no levels (a trie needs at least one column)")
        for level, v in enumerate(vs):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 0 <= v < n_vars:
                raise ValueError(f"atom {a}'s level {level} binds variable {v!r}, "
                                 f"outside the {n_vars} variable(s) of the order")
        if any(x >= y for x, y in zip(vs, vs[1:])):
            raise ValueError(f"atom {a}'s levels bind variables {vs}: they must increase in the "
                             "variable order (no repeated variable: the planner filters those)")
        bound.update(vs)
    if missing := sorted(set(range(n_vars)) - bound):
        raise ValueError(f"variable {missing[0]} is bound by no atom")


def check_trie(name: str, trie, arity: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The levels and offsets of a CSR trie of ``arity`` levels, as int64 arrays, checked."""
    keys, offsets = list(trie.keys), list(trie.offsets)
    if len(keys) != arity or len(offsets) != arity - 1:
        raise ValueError(f"{name} has {len(keys)} level(s) and {len(offsets)} offsets array(s); "
                         f"the plan needs {arity} and {arity - 1}")
    keys = [_vector(f"{name}'s keys[{d}]", k) for d, k in enumerate(keys)]
    offsets = [_vector(f"{name}'s offsets[{d}]", o) for d, o in enumerate(offsets)]
    if len(keys[0]) and np.any(keys[0][1:] <= keys[0][:-1]):
        raise ValueError(f"{name}'s keys[0] do not strictly ascend")
    for d, offs in enumerate(offsets):
        _check_offsets(f"{name}'s offsets[{d}]", offs, len(keys[d]), keys[d + 1], f"{name}'s keys[{d + 1}]")
    return keys, offsets


@dataclass(frozen=True, eq=False)
class CheckedTrie:
    """A CSR trie's levels and offsets, checked once, when made (by :func:`checked_trie`), so that
    the joins that read it again (a relation's trie, every chunk and round that reads it whole)
    do not check it again: as :class:`SortedRows` is to rows. Its arrays are the trie's own."""

    keys: tuple
    offsets: tuple

    def __len__(self) -> int:
        return len(self.keys[-1])


def checked_trie(name: str, trie, arity: int) -> CheckedTrie:
    """``trie`` (a :class:`lftj.csr.CsrTrie` of ``arity`` levels) checked (:func:`check_trie`)."""
    keys, offsets = check_trie(name, trie, arity)
    return CheckedTrie(tuple(keys), tuple(offsets))


def check_rows(name: str, rows, arity: int | None = None, ordered: bool = True) -> np.ndarray:
    """A 2-D int64 array of sorted distinct rows (of ``arity`` columns if given); ``ordered=False``
    leaves the order to the caller (the kernel's set operations check it in one compiled pass)."""
    a = np.asarray(rows)
    if a.ndim != 2 or a.dtype != I64:
        raise ValueError(f"{name} must be a 2-D int64 array, got {a.ndim}-D {a.dtype}")
    if arity is not None and a.shape[1] != arity:
        raise ValueError(f"{name} has {a.shape[1]} column(s), the other operand {arity}")
    if ordered and not is_sorted_distinct(a):
        raise ValueError(f"{name}'s rows are not sorted and distinct")
    return np.ascontiguousarray(a)


@dataclass(frozen=True, eq=False)
class SortedRows:
    """A 2-D int64 array of rows checked sorted and distinct once, when made (by :func:`sorted_rows`,
    or by :func:`lftj.rowsets.merged` from two of them), so that lookups in it need not check again."""

    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)


def sorted_rows(name: str, rows, arity: int | None = None) -> SortedRows:
    """``rows`` checked (:func:`check_rows`) as :class:`SortedRows`."""
    return SortedRows(check_rows(name, rows, arity))


def _vector(name: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype != I64:
        raise ValueError(f"{name} must be a 1-D int64 array, got {a.ndim}-D {a.dtype}")
    return np.ascontiguousarray(a)


def _check_offsets(name: str, offs: np.ndarray, parents: int, children: np.ndarray, children_name: str) -> None:
    if len(offs) != parents + 1:
        raise ValueError(f"{name} has {len(offs)} entries for {parents} key(s): it needs {parents + 1}")
    if offs[0] != 0 or offs[-1] != len(children):
        raise ValueError(f"{name} runs from {offs[0]} to {offs[-1]}: it must run from 0 to "
                         f"{len(children)}, the number of keys of the next level")
    if np.any(offs[1:] < offs[:-1]):
        raise ValueError(f"{name} is not monotone (non-decreasing)")
    ascending = children[1:] > children[:-1]
    node_start = np.zeros(len(children), dtype=bool)
    node_start[offs[:-1][offs[:-1] < len(children)]] = True
    if not np.all(ascending | node_start[1:]):
        raise ValueError(f"{children_name} do not strictly ascend within a node")


def _absolute_offsets(offsets: list, key_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    parts, child, at = [], np.full(len(offsets), -1, dtype=I64), 0
    for g, offs in enumerate(offsets):
        if offs is not None:
            parts.append(offs + key_start[g + 1])
            child[g] = at
            at += len(offs)
    return _concat(parts), child


def _concat(arrays: list) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate(arrays) if arrays else np.zeros(0, dtype=I64), dtype=I64)
