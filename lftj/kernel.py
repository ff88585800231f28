"""The compiled leapfrog triejoin (Veldhuizen, LFTJ §3) over CSR tries.

One source, two builds. This file is Cython's pure-Python mode: the install compiles it
(``setup.py``, ``cythonize``) into the extension module ``lftj.kernel``, which Python imports
before this ``.py``; the same file run by the plain interpreter is the kernel's uncompiled twin
(``DATALOG_KERNEL=python``, see :mod:`lftj.kernels`), which the property tests compare with the
compiled one and with a naive join. ``COMPILED`` says which of the two this is.

* :func:`triejoin` -- every binding of a join of atoms over a variable order, one row per
  result, columns in variable order; or, given ``emit`` (depths), each binding projected to
  those depths: then once the deepest of them is bound, one binding of the deeper variables
  is enough (the others project to the same row), and the join leaps back to that depth.
  ``atom_vars[a]`` lists the variable that each trie level of atom ``a`` binds, in trie order
  (increasing in the variable order); ``tries[a]`` is that atom's :class:`lftj.csr.CsrTrie`.
  Constants and variables repeated within an atom are out of scope: the planner turns them
  into pre-filtered tries before the join. ``compares``
  (``x != y``, ``x < 3``: :mod:`lftj.kernel_input`) are tested at the depth that binds the
  later of their variables, as soon as its leapfrog finds a key: a key that fails one is
  passed over, so no binding below it is made (``x < y, y < z`` over ``n`` rows: the bindings
  that pass, not ``n**3`` to filter afterwards).
* :func:`triejoin_batches` -- the same rows in batches of at most a given number: the join stops
  when a batch is full and goes on from its stack when asked for the next.

The set operations on sorted rows (union, difference, lookups in sorted runs) are
:mod:`lftj.rowsets`, a compiled module of their own.

The loop is the paper's: at each depth a leapfrog join (leapfrog-init, leapfrog-search,
leapfrog-next; seeks gallop then bisect within the node) over the trie levels that bind the
depth's variable, and triejoin-open / triejoin-up between depths, with an explicit stack (per
level its position and the end of its open node; per depth the leapfrog's current iterator).

Inputs are checked once per call before anything indexes with them (:mod:`lftj.kernel_input`:
a ``ValueError`` naming what is wrong); the inner loop then runs without Python objects and,
normally, without bounds checks. ``DATALOG_KERNEL_CHECKS=1`` at build time (``DATALOG_KERNEL_CHECKS=1
pip install -e .``) compiles it with ``boundscheck``, ``wraparound`` and ``initializedcheck`` on,
for running the property tests against a bounds-checked build.

>>> import numpy as np
>>> from lftj.csr import CsrTrie
>>> edges = np.array([(1, 2), (2, 3), (3, 1), (2, 4)])
>>> # tri(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).   order x, y, z (variables 0, 1, 2)
>>> by_xy, by_yx = CsrTrie.build(edges, (0, 1)), CsrTrie.build(edges, (1, 0))
>>> triejoin(3, [[0, 1], [1, 2], [0, 2]], [by_xy, by_xy, by_yx]).tolist()
[[1, 2, 3], [2, 3, 1], [3, 1, 2]]
>>> # from(x) :- edge(x, y).   x alone: one y is enough
>>> triejoin(2, [[0, 1]], [by_xy], emit=[0]).tolist()
[[1], [2], [3]]
>>> # up(x, y) :- edge(x, y), x < y.
>>> triejoin(2, [[0, 1]], [by_xy], compares=[("<", 0, 1, False)]).tolist()
[[1, 2], [2, 3], [2, 4]]
"""

import cython
import numpy as np

from lftj.kernel_input import JoinInput, join_input, packed_compares

COMPILED = cython.compiled
STEPS = 1 << 24                 # a batch's steps at most (16M: some 0.05-0.2 s of the compiled join)


@cython.final
@cython.cclass
class Triejoin:
    """The state of one join: the packed input, checked (a :class:`lftj.kernel_input.JoinInput`,
    which only :func:`lftj.kernel_input.join_input` makes), and the stack."""

    keys: cython.longlong[::1]
    key_start: cython.longlong[::1]
    offsets: cython.longlong[::1]
    child: cython.longlong[::1]
    root: cython.uchar[::1]
    iters: cython.longlong[::1]           # per depth, its levels (in depth_start's ranges), leapfrog order
    depth_start: cython.longlong[::1]
    pos: cython.longlong[::1]             # per level: the iterator's position in keys
    end: cython.longlong[::1]             # per level: the end of its open node
    p: cython.longlong[::1]               # per depth: the leapfrog's current iterator
    at_end: cython.uchar[::1]             # per depth: the leapfrog is at its end
    binding: cython.longlong[::1]         # per depth: the leapfrog's key
    out: cython.longlong[:, ::1]
    out_array: object
    n_out: cython.Py_ssize_t
    n_vars: cython.Py_ssize_t
    emit_depths: cython.longlong[::1]     # per result column, the depth it holds
    n_emit: cython.Py_ssize_t
    last: cython.Py_ssize_t               # the deepest depth emitted (-1: none)
    limit: cython.Py_ssize_t              # rows a batch (0: one batch of all, grown as needed)
    depth: cython.Py_ssize_t              # where a batch that filled up stopped
    state: cython.int                     # 0 not started, 1 stopped (a full batch, or its steps), 2 done
    steps: cython.longlong                # a batch's steps at most, with a limit (0: no bound)
    cmp_start: cython.longlong[::1]       # per depth, its comparisons (kernel_input.Compares)
    cmp_op: cython.longlong[::1]
    cmp_left: cython.longlong[::1]
    cmp_right: cython.longlong[::1]
    cmp_left_word: cython.longlong[::1]
    cmp_right_word: cython.longlong[::1]
    cmp_flip: cython.longlong[::1]

    def __init__(self, j, limit=0, steps=STEPS):
        if not isinstance(j, JoinInput):
            raise TypeError(f"a Triejoin runs a checked JoinInput (from join_input), not {type(j).__name__}")
        self.emit_depths, self.n_emit = j.emit, len(j.emit)
        self.last = int(j.emit.max()) if len(j.emit) else -1
        self.keys, self.key_start, self.offsets = j.keys, j.key_start, j.offsets
        self.child, self.root, self.depth_start = j.child, j.root, j.depth_start
        self.iters = j.participants.copy()
        levels, self.n_vars = len(j.child), j.n_vars
        self.pos, self.end = np.zeros(levels, np.int64), np.zeros(levels, np.int64)
        self.p, self.binding = np.zeros(self.n_vars, np.int64), np.zeros(self.n_vars, np.int64)
        self.at_end = np.zeros(self.n_vars, np.uint8)
        c = j.compares if j.compares is not None else packed_compares(self.n_vars, ())
        self.cmp_start, self.cmp_op, self.cmp_flip = c.start, c.op, c.flip
        self.cmp_left, self.cmp_right, self.cmp_left_word, self.cmp_right_word = c.left, c.right, c.left_word, c.right_word
        if not isinstance(limit, int) or limit < 0:
            raise ValueError(f"a batch's rows must be a count (0: no limit), not {limit!r}")
        if not isinstance(steps, int) or steps < 0:
            raise ValueError(f"a batch's steps must be a count (0: no bound), not {steps!r}")
        self.limit, self.depth, self.state, self.steps = limit, 0, 0, steps if limit else 0
        self.out, self.n_out = np.zeros((0, self.n_emit), np.int64), 0

    def run(self):
        """The bindings, one row per result (the array is the caller's)."""
        batch = self.batch()
        return batch if batch is not None else np.zeros((0, self.n_emit), np.int64)

    def batch(self):
        """The next bindings: at most ``limit`` rows (all that are left when it is 0), in the
        join's order, in an array of the caller's; None once the join has given them all. With a
        limit, a batch also ends after ``steps`` steps of the join (keys its leapfrogs found or
        passed over), so that a join whose comparisons fail for most bindings still returns to
        Python often (for Ctrl-C, the memory budget): such a batch may be short, or empty."""
        if self.state == 2:
            return None
        self.out_array = np.zeros((self.limit or 16, self.n_emit), np.int64)
        self.out, self.n_out = self.out_array, 0
        self.state = 1 if self.join() else 2
        if not self.n_out and self.state == 2:
            return None
        if self.limit:
            return self.out_array[:self.n_out] if self.n_out == self.limit else self.out_array[:self.n_out].copy()
        return self.out_array[:self.n_out].copy()

    @cython.cfunc
    def join(self) -> cython.bint:
        """Bindings into ``out`` from where the last batch stopped: whether the batch filled up
        (``limit`` rows) or ran its ``steps`` before the join's end."""
        depth: cython.Py_ssize_t = self.depth
        spent: cython.longlong = 0
        if self.state == 0:
            self.triejoin_open(0)
        while True:
            if spent == self.steps and self.steps:  # the batch's steps: the next goes on from here
                self.depth = depth
                return True
            spent += 1
            if self.at_end[depth]:
                if depth == 0:
                    return False
                depth = self.triejoin_up(depth)
                self.leapfrog_next(depth)
            elif not self.passes(depth):           # x != y, tested where y is bound: the next key
                self.leapfrog_next(depth)
            elif depth == self.n_vars - 1:
                self.emit()
                if self.last < depth:              # the deeper variables are not emitted:
                    if self.last < 0:              # one binding of them was enough
                        return False
                    depth = self.last
                self.leapfrog_next(depth)
                if self.n_out == self.limit:       # full: the next batch goes on from here
                    self.depth = depth
                    return True
            else:
                depth += 1
                self.triejoin_open(depth)

    @cython.cfunc
    def triejoin_open(self, depth: cython.Py_ssize_t) -> cython.int:
        """Open, below its parent's key, every level that binds the depth's variable."""
        i: cython.Py_ssize_t
        g: cython.Py_ssize_t
        at: cython.Py_ssize_t
        for i in range(self.depth_start[depth], self.depth_start[depth + 1]):
            g = self.iters[i]
            if self.root[g]:                       # an atom's first level: one node, the whole level
                self.pos[g], self.end[g] = self.key_start[g], self.key_start[g + 1]
            else:                                  # the children of the parent level's key
                at = self.child[g - 1] + self.pos[g - 1] - self.key_start[g - 1]
                self.pos[g], self.end[g] = self.offsets[at], self.offsets[at + 1]
        return self.leapfrog_init(depth)

    @cython.cfunc
    def triejoin_up(self, depth: cython.Py_ssize_t) -> cython.Py_ssize_t:
        """Back to the depth before: its levels' positions are where the open left them."""
        return depth - 1

    @cython.cfunc
    def leapfrog_init(self, depth: cython.Py_ssize_t) -> cython.int:
        i: cython.Py_ssize_t
        j: cython.Py_ssize_t
        g: cython.longlong
        first: cython.Py_ssize_t = self.depth_start[depth]
        for i in range(first, self.depth_start[depth + 1]):
            if self.pos[self.iters[i]] == self.end[self.iters[i]]:
                self.at_end[depth] = 1             # an empty iterator: nothing at this depth
                return 0
        for i in range(first + 1, self.depth_start[depth + 1]):   # sort the iterators by key
            g, j = self.iters[i], i
            while j > first and self.keys[self.pos[self.iters[j - 1]]] > self.keys[self.pos[g]]:
                self.iters[j] = self.iters[j - 1]
                j -= 1
            self.iters[j] = g
        self.at_end[depth], self.p[depth] = 0, 0
        return self.leapfrog_search(depth)

    @cython.cfunc
    def leapfrog_search(self, depth: cython.Py_ssize_t) -> cython.int:
        first: cython.Py_ssize_t = self.depth_start[depth]
        k: cython.Py_ssize_t = self.depth_start[depth + 1] - first
        p: cython.Py_ssize_t = self.p[depth]
        g: cython.Py_ssize_t = self.iters[first + (p + k - 1) % k]
        x_max: cython.longlong = self.keys[self.pos[g]]   # the greatest key: the one before p
        x: cython.longlong
        while True:
            g = self.iters[first + p]
            x = self.keys[self.pos[g]]
            if x == x_max:                         # every iterator agrees: the key at this depth
                self.p[depth], self.binding[depth] = p, x
                return 0
            self.seek(g, x_max)                    # the least key leaps to the greatest
            if self.pos[g] == self.end[g]:
                self.at_end[depth] = 1
                return 0
            x_max = self.keys[self.pos[g]]
            p = p + 1 if p + 1 < k else 0

    @cython.cfunc
    def leapfrog_next(self, depth: cython.Py_ssize_t) -> cython.int:
        first: cython.Py_ssize_t = self.depth_start[depth]
        k: cython.Py_ssize_t = self.depth_start[depth + 1] - first
        p: cython.Py_ssize_t = self.p[depth]
        g: cython.Py_ssize_t = self.iters[first + p]
        self.pos[g] += 1
        if self.pos[g] == self.end[g]:
            self.at_end[depth] = 1
            return 0
        self.p[depth] = p + 1 if p + 1 < k else 0
        return self.leapfrog_search(depth)

    @cython.cfunc
    def seek(self, g: cython.Py_ssize_t, target: cython.longlong) -> cython.int:
        """Move level ``g`` to its least key >= target in the open node (or to its end):
        gallop forward from the position, then bisect the last step."""
        lo: cython.Py_ssize_t = self.pos[g]
        hi: cython.Py_ssize_t = self.end[g]
        step: cython.Py_ssize_t = 1
        mid: cython.Py_ssize_t
        if self.keys[lo] >= target:
            return 0
        while lo + step < hi and self.keys[lo + step] < target:   # keys[lo] < target throughout
            lo += step
            step *= 2
        hi = min(lo + step, hi)
        lo += 1
        while lo < hi:                             # the least position in [lo, hi) >= target
            mid = lo + (hi - lo) // 2
            if self.keys[mid] < target:
                lo = mid + 1
            else:
                hi = mid
        self.pos[g] = lo
        return 0

    @cython.cfunc
    def passes(self, depth: cython.Py_ssize_t) -> cython.bint:
        """Whether the binding up to ``depth`` passes the comparisons tested at ``depth``."""
        i: cython.Py_ssize_t
        left: cython.longlong
        right: cython.longlong
        op: cython.longlong
        for i in range(self.cmp_start[depth], self.cmp_start[depth + 1]):
            left = self.binding[self.cmp_left[i]] if self.cmp_left[i] >= 0 else self.cmp_left_word[i]
            right = self.binding[self.cmp_right[i]] if self.cmp_right[i] >= 0 else self.cmp_right_word[i]
            left, right, op = left ^ self.cmp_flip[i], right ^ self.cmp_flip[i], self.cmp_op[i]
            if not (left == right if op == 0 else left != right if op == 1 else left < right if op == 2
                    else left <= right if op == 3 else left > right if op == 4 else left >= right):
                return False
        return True

    @cython.cfunc
    def emit(self) -> cython.int:
        v: cython.Py_ssize_t
        if self.n_out == self.out.shape[0]:
            self.grow()
        for v in range(self.n_emit):
            self.out[self.n_out, v] = self.binding[self.emit_depths[v]]
        self.n_out += 1
        return 0

    @cython.cfunc
    def grow(self) -> cython.int:
        bigger = np.zeros((2 * self.n_out, self.n_emit), np.int64)
        bigger[:self.n_out] = self.out_array
        self.out_array = bigger
        self.out = bigger
        return 0


def triejoin(n_vars, atom_vars, tries, emit=None, compares=()):
    """Every binding of the join that passes ``compares``, as an int64 array of ``n_vars`` columns,
    or projected to the depths ``emit`` (see the module's docstring)."""
    return Triejoin(join_input(n_vars, atom_vars, tries, emit, compares)).run()


def triejoin_batches(n_vars, atom_vars, tries, emit=None, rows=1 << 18, compares=(), steps=STEPS):
    """The rows of :func:`triejoin`, in the same order, as arrays of at most ``rows`` rows each,
    each made in at most ``steps`` steps of the join (:meth:`Triejoin.batch`; some may be empty):
    a join of many bindings is never held whole, and Python runs between two batches."""
    if not isinstance(rows, int) or rows < 1:
        raise ValueError(f"a batch holds at least one row, not {rows!r}")
    join = Triejoin(join_input(n_vars, atom_vars, tries, emit, compares), rows, steps)
    batch = join.batch()
    while batch is not None:
        yield batch
        batch = join.batch()
