"""Set operations on sorted distinct rows: semi-naive evaluation's stable, recent and to-add relations.

Compiled like :mod:`lftj.kernel` (one source in Cython's pure-Python mode; run by the plain
interpreter it is the uncompiled twin, ``DATALOG_KERNEL=python``, :mod:`lftj.kernels`).

* :func:`union`, :func:`difference`, :func:`intersection` -- of two 2-D int64 arrays of sorted
  distinct rows, by one merge.
* :func:`merged`, :func:`merged_into` -- the union of two :class:`lftj.kernel_input.SortedRows`,
  into a new array or in place into a buffer that holds the first.
* :func:`absent` -- the rows of ``a`` in none of some sorted runs (:mod:`lftj.runs`), each looked up
  by galloping from the last row's place: ``O(|a| log(|run| / |a|))`` a run, not ``O(|run|)``.
* :func:`find` -- for rows in any order, the place of each in one sorted run (or -1), by bisection:
  a group's aggregate value read for each binding of a join.

Every operand is checked (shape, order, or that it is SortedRows) before a loop indexes with it.

>>> import numpy as np
>>> union(np.array([[1, 2], [3, 4]]), np.array([[2, 0], [3, 4]])).tolist()
[[1, 2], [2, 0], [3, 4]]
>>> difference(np.array([[1, 2], [3, 4]]), np.array([[3, 4]])).tolist()
[[1, 2]]
>>> find(np.array([[3, 4], [2, 2], [1, 2]]), SortedRows(np.array([[1, 2], [3, 4]]))).tolist()
[1, -1, 0]
"""

import cython
import numpy as np

from lftj.kernel_input import SortedRows, check_rows

COMPILED = cython.compiled


def union(a, b):
    """The sorted distinct rows in ``a`` or ``b``."""
    return _merged(a, b, True, True, True)


def difference(a, b):
    """The sorted distinct rows in ``a`` and not in ``b``."""
    return _merged(a, b, True, False, False)


def intersection(a, b):
    """The sorted distinct rows in both ``a`` and ``b``."""
    return _merged(a, b, False, True, False)


def _merged(a, b, only_a: cython.bint, both: cython.bint, only_b: cython.bint):
    a = check_rows("the first operand", a, ordered=False)
    b = check_rows("the second operand", b, a.shape[1], ordered=False)
    for name, rows in (("first", a), ("second", b)):      # one compiled pass each: no temporaries
        if not _sorted_distinct(rows):
            raise ValueError(f"the {name} operand's rows are not sorted and distinct")
    out = np.zeros(((len(a) if only_a or both else 0) + (len(b) if only_b else 0), a.shape[1]), np.int64)
    return out[:_merge(a, b, out, only_a, both, only_b)]


def merged(a, b):
    """The union of two :class:`lftj.kernel_input.SortedRows`, as one (no check of order again:
    the merge of two sorted runs is sorted)."""
    if not isinstance(a, SortedRows) or not isinstance(b, SortedRows) or a.rows.shape[1] != b.rows.shape[1]:
        raise ValueError("merged() takes two SortedRows of as many columns")
    out = np.zeros((len(a.rows) + len(b.rows), a.rows.shape[1]), np.int64)
    return SortedRows(out[:_merge(a.rows, b.rows, out, True, True, True)])


def merged_into(buffer, a, b):
    """The union of two disjoint :class:`lftj.kernel_input.SortedRows` written in place into
    ``buffer``, whose first rows are ``a``'s (``a.rows`` is ``buffer[:len(a)]``): merged from the
    back, so that no row of ``a`` is overwritten before it is read and no second array of the
    union is made; as SortedRows of ``buffer[:len(a) + len(b)]``. Every check comes before the
    first row moves: a refused call changes nothing."""
    if not isinstance(a, SortedRows) or not isinstance(b, SortedRows):
        raise ValueError("merged_into() merges two SortedRows")
    if not isinstance(buffer, np.ndarray) or buffer.ndim != 2 or buffer.dtype != np.int64 or \
            not buffer.flags.c_contiguous or not buffer.flags.writeable:
        raise ValueError("the buffer must be a writeable C-contiguous 2-D int64 array")
    n, arity = len(a.rows), buffer.shape[1]
    if a.rows.shape[1] != arity or b.rows.shape[1] != arity:
        raise ValueError(f"merged_into() takes rows of the buffer's {arity} column(s)")
    if n + len(b.rows) > len(buffer):
        raise ValueError(f"the buffer holds {len(buffer)} rows, not {n} + {len(b.rows)}")
    if not a.rows.flags.c_contiguous or (n and a.rows.ctypes.data != buffer.ctypes.data):
        raise ValueError("the first operand's rows must be the buffer's first rows")
    if np.may_share_memory(b.rows, buffer):
        raise ValueError("the second operand's rows must not be in the buffer")
    keep = np.ones(len(b.rows), np.uint8)
    if n:
        _mark_present(b.rows, a.rows, keep)
    if not keep.all():
        raise ValueError("merged_into() merges disjoint rows: the operands share a row")
    _merge_back(buffer, n, b.rows)
    return SortedRows(buffer[:n + len(b.rows)])


def absent(a, runs):
    """The rows of ``a`` (sorted distinct) in none of ``runs`` (:class:`lftj.kernel_input.SortedRows`,
    checked when made: here only their shape, so a call costs nothing in the runs' size)."""
    a = check_rows("the rows", a, ordered=False)
    if not _sorted_distinct(a):
        raise ValueError("the rows are not sorted and distinct")
    keep = np.ones(len(a), np.uint8)
    for run in runs:
        if not isinstance(run, SortedRows) or run.rows.shape[1] != a.shape[1]:
            raise ValueError(f"a run must be SortedRows of {a.shape[1]} column(s), not {run!r:.60}")
        _mark_present(a, run.rows, keep)
    return a[keep.view(bool)]


def find(a, run):
    """The place in ``run`` (:class:`lftj.kernel_input.SortedRows`) of each row of ``a`` (a 2-D int64
    array of as many columns, in any order, repeats allowed), -1 for a row not in it."""
    a = check_rows("the rows", a, ordered=False)
    if not isinstance(run, SortedRows) or run.rows.shape[1] != a.shape[1]:
        raise ValueError(f"find() looks rows up in SortedRows of {a.shape[1]} column(s), not {run!r:.60}")
    places = np.full(len(a), -1, np.int64)
    if len(run.rows):
        _find(a, np.ascontiguousarray(run.rows), places)
    return places


@cython.cfunc
def _find(a: cython.longlong[:, ::1], b: cython.longlong[:, ::1], places: cython.longlong[::1]) -> cython.int:
    """``places[i]``: the row of ``b`` (sorted, distinct, not empty) equal to ``a[i]``, by bisection."""
    i: cython.Py_ssize_t
    lo: cython.Py_ssize_t
    hi: cython.Py_ssize_t
    mid: cython.Py_ssize_t
    for i in range(a.shape[0]):
        lo, hi = 0, b.shape[0]
        while lo < hi:                                 # the least row of b >= a[i]
            mid = lo + (hi - lo) // 2
            if _compare(b, mid, a, i) < 0:
                lo = mid + 1
            else:
                hi = mid
        if lo < b.shape[0] and _compare(b, lo, a, i) == 0:
            places[i] = lo
    return 0


@cython.cfunc
def _mark_present(a: cython.longlong[:, ::1], b: cython.longlong[:, ::1], keep: cython.uchar[::1]) -> cython.int:
    """``keep[i] = 0`` for each row ``a[i]`` found in ``b``: both ascend, so the search for row ``i``
    starts where row ``i - 1``'s ended and gallops (1, 2, 4, ... rows), then bisects the last step."""
    i: cython.Py_ssize_t
    j: cython.Py_ssize_t = 0
    lo: cython.Py_ssize_t
    hi: cython.Py_ssize_t
    mid: cython.Py_ssize_t
    step: cython.Py_ssize_t
    n: cython.Py_ssize_t = b.shape[0]
    for i in range(a.shape[0]):
        if j < n and _compare(b, j, a, i) < 0:        # b[j] < a[i]: find the least b[lo] >= a[i]
            lo, step = j, 1
            while lo + step < n and _compare(b, lo + step, a, i) < 0:    # b[lo] < a[i] throughout
                lo += step
                step *= 2
            hi = min(lo + step, n)
            lo += 1
            while lo < hi:
                mid = lo + (hi - lo) // 2
                if _compare(b, mid, a, i) < 0:
                    lo = mid + 1
                else:
                    hi = mid
            j = lo
        if j == n:
            return 0
        if _compare(b, j, a, i) == 0:
            keep[i] = 0
    return 0


@cython.cfunc
def _merge(a: cython.longlong[:, ::1], b: cython.longlong[:, ::1], out: cython.longlong[:, ::1],
           only_a: cython.bint, both: cython.bint, only_b: cython.bint) -> cython.Py_ssize_t:
    """One merge of two sorted row arrays into ``out``, keeping the rows only in ``a``, in both,
    or only in ``b`` as told; the number of rows written."""
    i: cython.Py_ssize_t = 0
    j: cython.Py_ssize_t = 0
    n: cython.Py_ssize_t = 0
    c: cython.int
    while i < a.shape[0] or j < b.shape[0]:
        c = -1 if j == b.shape[0] else 1 if i == a.shape[0] else _compare(a, i, b, j)
        if c < 0 and only_a:
            n = _copy_row(a, i, out, n)
        elif c == 0 and both:
            n = _copy_row(a, i, out, n)
        elif c > 0 and only_b:
            n = _copy_row(b, j, out, n)
        i += c <= 0
        j += c >= 0
    return n


@cython.cfunc
def _merge_back(out: cython.longlong[:, ::1], n: cython.Py_ssize_t, b: cython.longlong[:, ::1]) -> cython.int:
    """``out[:n]`` and ``b`` (sorted, disjoint) merged into ``out[:n + len(b)]`` from the last row
    down: the row written, ``k``, stays above the next row of ``out`` to read, ``i`` (``k - i`` is
    the number of rows of ``b`` left, at least one)."""
    i: cython.Py_ssize_t = n - 1
    j: cython.Py_ssize_t = b.shape[0] - 1
    k: cython.Py_ssize_t = n + b.shape[0] - 1
    while j >= 0:
        if i >= 0 and _compare(out, i, b, j) > 0:
            _copy_row(out, i, out, k)
            i -= 1
        else:
            _copy_row(b, j, out, k)
            j -= 1
        k -= 1
    return 0


@cython.cfunc
def _sorted_distinct(a: cython.longlong[:, ::1]) -> cython.bint:
    """Whether the rows strictly ascend (lexicographically)."""
    i: cython.Py_ssize_t
    for i in range(1, a.shape[0]):
        if _compare(a, i - 1, a, i) >= 0:
            return False
    return True


@cython.cfunc
def _compare(a: cython.longlong[:, ::1], i: cython.Py_ssize_t,
             b: cython.longlong[:, ::1], j: cython.Py_ssize_t) -> cython.int:
    col: cython.Py_ssize_t
    for col in range(a.shape[1]):
        if a[i, col] != b[j, col]:
            return -1 if a[i, col] < b[j, col] else 1
    return 0


@cython.cfunc
def _copy_row(src: cython.longlong[:, ::1], i: cython.Py_ssize_t,
              out: cython.longlong[:, ::1], n: cython.Py_ssize_t) -> cython.Py_ssize_t:
    col: cython.Py_ssize_t
    for col in range(src.shape[1]):
        out[n, col] = src[i, col]
    return n + 1
