"""Bulk emitters: a head that collects into a set takes a whole trie level at once.

When the last depth (or a tail of independent depths, :func:`lftj.triejoin.product_tail`)
has no filter, the triejoin hands its keys to an emitter instead of binding them one by one:
``emit_last(binding, keys)`` or ``emit_product(binding, levels)``, which add every head tuple
they make in one call. Only for a head that is just variables (``head_slots``).
"""

from __future__ import annotations

from itertools import islice, product

CHUNK = 1 << 16         # a product's tuples added this many at a time: Python checks for Ctrl-C (and the
                        # memory budget's stop, datalog/engine/resources.py) between two additions, never
                        # inside one C call (16M tuples of one product took 27 s on a loaded machine)


def _chunked(add_many):
    """``add(combos, levels)``: ``add_many`` of the iterator ``combos`` (one tuple per combination of
    ``levels``), :data:`CHUNK` at a time."""
    def add(combos, levels) -> None:
        total = 1
        for level in levels:
            total *= len(level)
        for _ in range(0, total, CHUNK):
            add_many(islice(combos, CHUNK))
    return add


def bulk_emitter(plan, add_many):
    """``emit_last(binding, keys)``: every head tuple for the last depth's keys, in one call.

    For ``path(x, z) :- path(x, y), edge(y, z).`` with order y, x, z it adds
    ``(x, k)`` for each key ``k`` of ``edge[y]`` at once."""
    slots, last = plan.head_slots, plan.depth - 1
    if slots is None or last < 0 or last not in slots:
        return None
    where = [i for i, s in enumerate(slots) if s == last]
    if len(where) > 1:
        return None
    i = where[0]
    before, after = slots[:i], slots[i + 1:]
    if not after and len(before) == 1:
        (s0,) = before
        return lambda b, keys: add_many([(b[s0], k) for k in keys])
    if not before and len(after) == 1:
        (s1,) = after
        return lambda b, keys: add_many([(k, b[s1]) for k in keys])
    if not before and not after:
        return lambda b, keys: add_many([(k,) for k in keys])

    def emit_last(b, keys):
        pre, post = tuple(b[s] for s in before), tuple(b[s] for s in after)
        add_many([pre + (k,) + post for k in keys])
    return emit_last


def product_emitter(plan, add_many, first: int):
    """``emit_product(binding, levels)``: head tuples for every combination of a product tail.

    ``levels[j]`` holds the keys of depth ``first + j``. For
    ``path(x, z) :- path(x, y), edge(y, z).`` with order y, x, z the tail is x, z:
    ``add_many(product(path[y], edge[y]))``."""
    slots = plan.head_slots
    if slots is None:
        return None
    add_all = _chunked(add_many)
    source = [("tail", s - first) if first <= s < plan.depth else ("fixed", s) for s in slots]
    tail_positions = [j for kind, j in source if kind == "tail"]
    if tail_positions == list(range(len(tail_positions))) and len(tail_positions) == len(slots):
        return lambda b, levels: add_all(product(*levels), levels)
    fixed_slots = [j for kind, j in source if kind == "fixed"]
    if source == [("fixed", s) for s in fixed_slots] + [("tail", j) for j in range(len(tail_positions))]:
        def emit_prefixed(b, levels):
            pre = tuple(b[s] for s in fixed_slots)
            add_all((pre + combo for combo in product(*levels)), levels)
        return emit_prefixed

    def emit_general(b, levels):
        add_all((tuple(combo[j] if kind == "tail" else b[j] for kind, j in source) for combo in product(*levels)),
                levels)
    return emit_general
