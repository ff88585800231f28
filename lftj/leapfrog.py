"""The leapfrog join of unary iterators (Veldhuizen, LFTJ §3.1), and its hash twin.

The leapfrog contract: given the participants of one depth of a triejoin, yield every key
all of them hold, ascending. Implementations, interchangeable in
:func:`lftj.triejoin.triejoin` and compared by the tests:

  * :func:`leapfrog` -- the paper's loop over unary trie iterators (:mod:`lftj.iterator`);
    :func:`leapfrog_intersect` runs it over trie nodes, and the maintainer runs it over
    recording iterators (:mod:`lftj.recording`) opened on a change-oracle region;
  * :func:`hash_intersect` -- the fast twin for evaluation from scratch: walk the smallest
    node's sorted keys and look each up in the others' children (a dictionary probe);
    :func:`hash_intersect_unordered` the same keys in no order, for a consumer that collects
    into a set.

Keys must be totally ordered: a NaN (unequal to itself) would make a seek land where it started
and the loop never end. The engine never lets one in (``datalog.language.numbers``: NaN is refused
by every reader and is an error as a result); lftj itself does not pay a check per key.

>>> from lftj.trie import build
>>> a, b = build([(1,), (3,), (5,), (7,)], (0,)), build([(3,), (4,), (7,)], (0,))
>>> list(leapfrog_intersect([a, b])), hash_intersect([a, b])
([3, 7], [3, 7])
"""

from __future__ import annotations

from lftj.iterator import LevelIterator


def leapfrog(iterators: list):
    """Yield each key on which every iterator (each positioned at its first key) agrees.

    The loop of the maintenance paper's §4.1 example: while no iterator is at its end, seek
    the one with the least key to the greatest key; when all agree, that key is in the
    intersection, and the first iterator moves on. Every operation moves one iterator strictly
    forward, so the work is bounded by the keys."""
    for it in iterators:
        if it.at_end():
            return
    current = [it.key() for it in iterators]
    first = iterators[0]
    while True:
        high = max(current)
        low = min(current)
        if low == high:                   # every iterator agrees: a match
            yield high
            at, it = 0, first
            it.next()                     # leapfrog-next
        else:
            at = current.index(low)
            it = iterators[at]
            it.seek(high)                 # leapfrog-search: the least catches up
        if it.at_end():
            return
        current[at] = it.key()


def leapfrog_intersect(nodes: list):
    """The leapfrog over the keys of trie nodes (``--join leapfrog``)."""
    return leapfrog([LevelIterator(node.keys) for node in nodes])


def hash_intersect(nodes: list):
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
    return [key for key in smallest.keys if all(key in o for o in others)]


def hash_intersect_unordered(nodes: list):
    """The same keys as :func:`hash_intersect` in no particular order (set intersection in C),
    for consumers that do not depend on order, e.g. a head that collects into a set."""
    if len(nodes) == 1:
        return nodes[0].children.keys()
    keys = nodes[0].children.keys() & nodes[1].children.keys()
    for node in nodes[2:]:
        keys &= node.children.keys()
    return keys
