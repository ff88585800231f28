"""Leapfrog join of unary iterators (Veldhuizen, LFTJ §3.1), and its hash twin.

``leapfrog(iterators)`` is the paper's loop over :class:`TrieIterator` levels:
keep the iterators sorted by key; repeatedly seek the one with the least key
to the greatest key; when all keys agree, that key is in the intersection.

``leapfrog_keys`` runs the same loop directly over the nodes' sorted key lists
(seek = bisection), and ``probe_keys`` is the hash twin: walk the smallest
node's sorted keys and probe the others' children. All three yield the
intersection in ascending order; tests compare them.

>>> from lftj.trie import build
>>> a, b = build([(1,), (3,), (5,), (7,)], (0,)), build([(3,), (4,), (7,)], (0,))
>>> list(leapfrog_keys([a, b])), list(probe_keys([a, b]))
([3, 7], [3, 7])
"""

from __future__ import annotations

from bisect import bisect_left


def leapfrog(iterators):
    """Yield each key on which every iterator (already opened at one level) agrees."""
    if any(it.at_end() for it in iterators):
        return
    # leapfrog-init: sort the iterators by their current key
    its = sorted(iterators, key=lambda it: it.key())
    k, p = len(its), 0
    high = its[-1].key()
    while True:
        it = its[p]
        low = it.key()
        if low == high:                # all iterators agree: a match
            yield low
            it.next()                  # leapfrog-next
            if it.at_end():
                return
        else:
            it.seek(high)              # leapfrog-search: least key catches up
            if it.at_end():
                return
        high = it.key()
        p = (p + 1) % k


def leapfrog_keys(nodes):
    """The leapfrog loop over sorted key lists (seek = bisect_left)."""
    if len(nodes) == 1:
        yield from nodes[0].keys
        return
    levels = [node.keys for node in nodes]
    if any(not keys for keys in levels):
        return
    levels.sort(key=lambda keys: keys[0])
    k, p = len(levels), 0
    positions = [0] * k
    high = levels[-1][0]
    while True:
        keys, pos = levels[p], positions[p]
        low = keys[pos]
        if low == high:
            yield low
            pos += 1
        else:
            pos = bisect_left(keys, high, pos + 1)
        if pos >= len(keys):
            return
        positions[p] = pos
        high = keys[pos]
        p = (p + 1) % k


def probe_keys(nodes):
    """Ascending keys of the smallest node that every other node also holds."""
    if len(nodes) == 1:
        return nodes[0].keys
    if len(nodes) == 2:
        a, b = nodes
        if len(a.children) > len(b.children):
            a, b = b, a
        other = b.children
        return [key for key in a.keys if key in other]
    smallest = min(nodes, key=len)
    others = [node.children for node in nodes if node is not smallest]
    if len(others) == 1:
        other = others[0]
        return [key for key in smallest.keys if key in other]
    return [key for key in smallest.keys if all(key in o for o in others)]


def probe_unordered(nodes):
    """The same keys as ``probe_keys`` in no particular order (set intersection in C).

    For consumers that do not depend on order, e.g. a head that collects into a set."""
    if len(nodes) == 1:
        return nodes[0].children.keys()
    if len(nodes) == 2:
        return nodes[0].children.keys() & nodes[1].children.keys()
    keys = nodes[0].children.keys() & nodes[1].children.keys()
    for node in nodes[2:]:
        keys &= node.children.keys()
    return keys
