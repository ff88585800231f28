"""Tree surgery (§4.2.1): a relation's change as branch inserts and erases on each trie index.

``apply_change`` erases, then inserts, the changed tuples of a Relation and of
every trie index it has, and returns for each index order the surgeries:
``(level, alpha, key)`` meaning the branch ``alpha + (key,)`` (in that order's
columns) was created or removed. Sorted key lists that are already built are
kept sorted: a node with a few changed keys by bisection, one with more by splicing
(``_settle``) -- inserting 20k keys one by one into a 2M-key list moved 16 MB each time and
took 1.3 s in all. Undo goes to the journal.

The paper's example, A(x, y, z) from version 1 to version 2:

>>> from lftj.relation import Relation
>>> from maintenance.delta import Change
>>> from maintenance.journal import Journal
>>> a = Relation("A", 3, [(0,30,80), (0,30,81), (1,35,60), (1,35,61), (3,40,90), (3,50,91), (3,50,92)])
>>> _ = a.index((0, 1, 2))
>>> ops = apply_change(a, Change({(4, 60, 71)}, {(0, 30, 81), (3, 40, 90), (3, 50, 92)}), Journal())
>>> for level, alpha, key in ops[(0, 1, 2)]: print("-".join(map(str, alpha + (key,))))
0-30-81
3-40-90
3-40
3-50-92
4
4-60
4-60-71
"""

from __future__ import annotations

from bisect import bisect_left, insort
from itertools import islice

from sortedcontainers import SortedList

Surgery = tuple   # (level, alpha, key)

FEW = 8              # edits of one sorted key list made one by one (more: one splice)
CHUNKED = 1 << 16    # a level of this many keys is edited as ChunkedKeys from its first splice on


def apply_change(relation, change, journal) -> dict[tuple, list[Surgery]]:
    surgeries = {order: [] for order in relation.indexes}
    gone = [row for row in sorted(change.retracted) if row in relation.tuples]
    new = [row for row in sorted(change.inserted) if row not in relation.tuples]
    relation.presorted = None
    relation.version += bool(gone or new)           # the rows change in place: see lftj.relation
    for row in gone:
        relation.tuples.discard(row)
    relation.tuples.update(new)
    for order, root in relation.indexes.items():
        out, edits = surgeries[order], {}
        for row in gone:
            _erase(root, tuple(row[i] for i in order), out, edits)
        for row in new:
            _insert(root, tuple(row[i] for i in order), out, edits)
        _settle(edits)
    if relation.arity == 0 and (gone or new):
        surgeries[()] = [(0, (), ())]
    journal.record(lambda: (relation.erase(new), relation.insert(gone)))
    return surgeries


def _insert(root, row: tuple, out: list, edits: dict) -> None:
    node = root
    for level, key in enumerate(row):
        children = node.children
        if key not in children:
            children[key] = None if level == len(row) - 1 else _new_node(node)
            if node._keys is not None:
                _edits(edits, node)[1].append(key)
            out.append((level, row[:level], key))
        node = children[key]


def _erase(root, row: tuple, out: list, edits: dict) -> None:
    path, node = [], root
    for key in row:
        path.append(node)
        node = node.children[key]
    for level in range(len(row) - 1, -1, -1):             # prune upwards while a node empties
        node, key = path[level], row[level]
        del node.children[key]
        if node._keys is not None:
            _edits(edits, node)[0].append(key)
        out.append((level, row[:level], key))
        if node.children:
            break


def _edits(edits: dict, node) -> tuple:
    """The (erased keys, inserted keys) of one node's sorted key list, in the order they happened
    (every erase of a change comes before its inserts)."""
    entry = edits.get(id(node))
    if entry is None:
        entry = edits[id(node)] = (node, [], [])
    return entry[1:]


def _settle(edits: dict) -> None:
    """Apply each node's key edits to its sorted keys: a few one by one (each ``del`` or
    ``insort`` moves the list's tail), more by cutting the list at the edited positions and
    joining the pieces (``_spliced``). Measured on a 6.3M-key level with 10k edits: one by one
    ~1 ms an edit; a filter plus timsort 1.1 s; splicing one copy of the list plus a bisection
    per edit, 0.15-0.67 s. A level of at least :data:`CHUNKED` keys becomes
    :class:`ChunkedKeys` instead of being spliced (the same one pass, once), and is edited in
    place from then on: 10k edits of that level in 0.06 s."""
    for node, erased, inserted in edits.values():
        keys = node._keys
        if type(keys) is ChunkedKeys:
            keys.edit(erased, inserted)
        elif len(erased) + len(inserted) <= FEW:
            for key in erased:
                del keys[bisect_left(keys, key)]
            for key in inserted:
                insort(keys, key)
        elif len(keys) >= CHUNKED:
            node._keys = ChunkedKeys(keys)
            node._keys.edit(erased, inserted)
        else:
            node._keys = _spliced(keys, erased, inserted)


def prepare(relation) -> None:
    """Build now what tree surgery on ``relation`` reads first -- its rows and the root level of
    each index, a root of at least :data:`CHUNKED` keys as ChunkedKeys -- so that a large change
    applied next (``datalog refresh``) costs what it changes: a workspace opened for writing
    reads them when first used, which for a 10M-row relation is seconds."""
    relation.tuples
    for root in relation.indexes.values():
        if len(root.children) >= CHUNKED and type(root._keys) is not ChunkedKeys:
            root._keys = ChunkedKeys(root.keys)


class ChunkedKeys(SortedList):
    """The sorted keys of a large trie level, kept in chunks (``sortedcontainers.SortedList``):
    an edit touches one chunk, where splicing a list copies every key. Readers that need the
    list have ``TrieNode.keys`` flatten it (once, until the next edit); maintenance reads a
    region's keys through :meth:`window`.

    >>> keys = ChunkedKeys([1, 3, 5, 7]); keys.edit([3], [4, 9])
    >>> keys.window(4, 5), keys.window(5, 9), keys.window(None, 2), list(keys)
    ([4, 5, 7], [5, 7, 9], [1, 4], [1, 4, 5, 7, 9])
    """

    def edit(self, erased: list, inserted: list) -> None:
        """Erase ``erased`` (all present), then insert ``inserted`` (all absent by then)."""
        for key in erased:
            self.remove(key)
        for key in inserted:
            self.add(key)

    def window(self, lo, hi) -> list:
        """The keys in ``[lo, hi]`` (None: unbounded) and the first key past ``hi``, ascending."""
        out = list(self.irange(lo, hi))
        if hi is not None:
            out.extend(islice(self.irange(hi, None, (False, True)), 1))
        return out


def _spliced(keys: list, erased: list, inserted: list) -> list:
    """``keys`` without ``erased`` (all present) and with ``inserted`` (all absent once the
    erased are gone), sorted: the slices between the edit positions, copied once. At one
    position the inserted keys come first, then the erased key there is skipped (a key erased
    and inserted again is both). One pass for both kinds of edit: two took twice as long (0.32
    against 0.15 s for 10k edits of a 6.3M-key level).

    >>> _spliced([1, 3, 5, 7, 9], [3, 9], [4, 10, 0, 3])
    [0, 1, 3, 4, 5, 7, 10]
    """
    edits = sorted([(bisect_left(keys, key), 0, key) for key in inserted] +
                   [(bisect_left(keys, key), 1, key) for key in erased])
    out, start = [], 0
    for cut, erase, key in edits:
        out += keys[start:cut]
        if erase:
            start = cut + 1
        else:
            out.append(key)
            start = cut
    out += keys[start:]
    return out


def _new_node(parent):
    return type(parent)()
