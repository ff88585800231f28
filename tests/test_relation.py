"""Relation.sorted_rows (grouped sort, or read off the identity index) against sorted() of the
tuples; the ``presorted`` hint and ``stored_rows`` against plain index builds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lftj.relation import Relation
from lftj.trie import TrieNode
from maintenance.delta import Change
from maintenance.journal import Journal
from maintenance.surgery import apply_change
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

VALUES = st.one_of(st.integers(-5, 5), st.integers())


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.tuples(st.just(k), st.sets(st.tuples(*[VALUES] * k), max_size=300))))
def test_sorted_rows_equals_sorted(case):
    arity, rows = case
    assert Relation("r", arity, rows).sorted_rows() == sorted(rows)


@settings(max_examples=examples(100), deadline=None)
@given(st.sets(st.tuples(st.text(max_size=3), st.floats(allow_nan=False), st.text(max_size=2)), max_size=200))
def test_sorted_rows_of_symbols_and_floats(rows):
    assert Relation("r", 3, rows).sorted_rows() == sorted(rows)


def _same_trie(a: TrieNode, b: TrieNode) -> bool:
    """Same keys, in order, at every node."""
    if a is None or b is None:
        return a is b
    return a.keys == b.keys and all(_same_trie(a.children[k], b.children[k]) for k in a.keys)


ROWS = st.integers(1, 3).flatmap(lambda k: st.tuples(st.just(k), st.sets(st.tuples(*[VALUES] * k), max_size=200)))


@settings(max_examples=examples(200), deadline=None)
@given(ROWS, st.randoms(use_true_random=False), st.lists(st.tuples(st.booleans(), st.integers(-5, 5)), max_size=20))
def test_sorted_rows_from_the_index_after_changes(case, rng, edits):
    """The identity index read in order, after inserts and erases that kept its keys sorted."""
    arity, rows = case
    relation = Relation("r", arity, rows)
    relation.index(tuple(range(arity))).keys
    for insert, value in edits:
        row = (value,) * arity
        (relation.insert if insert else relation.erase)([row])
        rows = rows | {row} if insert else rows - {row}
    assert relation.sorted_rows() == sorted(rows)


@settings(max_examples=examples(200), deadline=None)
@given(ROWS, st.lists(st.integers(-5, 5), max_size=30))
def test_add_one_row_is_insert_of_one(case, values):
    """``add`` (the worklist's one row at a time) against ``insert`` of that row: the same
    answer, rows and indexes in every order."""
    arity, rows = case
    one, many = Relation("r", arity, rows), Relation("r", arity, rows)
    orders = [tuple(range(arity)), tuple(reversed(range(arity)))]
    for r in (one, many):
        for order in orders:
            r.index(order)
    for value in values:
        row = tuple(value + c for c in range(arity))
        version = one.version
        assert one.add(row) == bool(many.insert([row])) == (one.version != version)
    assert one.tuples == many.tuples
    for order in orders:
        assert _same_trie(one.index(order), many.index(order))
        assert _same_trie(one.index(order), Relation("r", arity, many.tuples).index(order))


@settings(max_examples=examples(200), deadline=None)
@given(ROWS, st.randoms(use_true_random=False))
def test_presorted_hint_builds_the_same_index(case, rng):
    """A snapshot's rows as ``stored_rows`` wrote them, or in any order at all, as the hint: the
    identity index is the one built from the set."""
    arity, rows = case
    order = tuple(range(arity))
    plain = Relation("r", arity, rows)
    plain.index(order)
    stored = plain.stored_rows()
    assert sorted(stored) == sorted(rows)
    assert [row[0] for row in stored] == sorted(row[0] for row in rows)
    shuffled = list(rows)
    rng.shuffle(shuffled)
    for hint in (stored, shuffled):
        hinted = Relation("r", arity, rows)
        hinted.presorted = list(hint)
        assert _same_trie(hinted.index(order), plain.index(order))
        assert hinted.presorted is None                       # used once, then dropped


@settings(max_examples=examples(200), deadline=None)
@given(ROWS, st.integers(-5, 5), st.booleans(), st.sampled_from(["relation", "surgery"]))
def test_a_change_drops_the_hint(case, value, insert, via):
    """A hint left from before a change would build an index without the change: made through
    the Relation, or by tree surgery (maintenance), which edits ``tuples`` itself."""
    arity, rows = case
    relation = Relation("r", arity, rows)
    relation.presorted = sorted(rows)
    row = (value,) * arity
    if via == "relation":
        (relation.insert if insert else relation.erase)([row])
    else:
        apply_change(relation, Change({row}, set()) if insert else Change(set(), {row}), Journal())
    rows = rows | {row} if insert else rows - {row}
    assert relation.presorted is None
    assert sorted(relation.index(tuple(range(arity))).rows(arity)) == sorted(rows)


ORDERS = {1: [(0,)], 2: [(0, 1), (1, 0)], 3: [(0, 1, 2), (2, 0, 1), (1, 2, 0), (0, 2, 1)]}


@settings(max_examples=examples(300), deadline=None)
@given(ROWS, st.data())
def test_lazy_index_equals_the_built_one(case, data):
    """Relation.lazy_index (nodes built from their runs of rows when first read) against
    Relation.index (built whole), in every kind of column order, with a right, a wrong or no
    hint; read partly, changed by tree surgery (which builds the paths it edits) and read whole.
    The lazy index is over the rows when it was made, whatever the relation does after."""
    arity, rows = case
    order = data.draw(st.sampled_from(ORDERS[arity]))
    lazy, built = Relation("r", arity, rows), Relation("r", arity, rows)
    hint = data.draw(st.sampled_from(["none", "stored", "shuffled"]))
    if hint == "stored":
        lazy.presorted = sorted(rows, key=lambda r: r[0])
    elif hint == "shuffled":
        lazy.presorted = data.draw(st.permutations(sorted(rows)))
    root = lazy.lazy_index(order)
    for key in data.draw(st.lists(st.sampled_from(sorted({r[order[0]] for r in rows})), max_size=3)) if rows else []:
        root.children[key]                                   # some paths built before the change
    built.index(order)
    inserted = set(data.draw(st.lists(st.tuples(*[VALUES] * arity), max_size=5)))
    erased = set(data.draw(st.lists(st.sampled_from(sorted(rows)), max_size=5))) if rows else set()
    for relation in (lazy, built):
        apply_change(relation, Change(inserted - erased, erased), Journal())
    assert _same_trie(lazy.indexes[order], built.indexes[order])


@settings(max_examples=examples(100), deadline=None)
@given(st.sets(st.tuples(st.sampled_from([0.5, 1.5, float("nan"), float("inf")]), st.integers(0, 3)), max_size=30))
def test_lazy_index_keeps_every_row_among_unordered_floats(rows):
    """A NaN does not sort: its column is grouped by hashing, as build does, and no row is lost
    or put under another key."""
    lazy, built = Relation("r", 2, rows).lazy_index((0, 1)), Relation("r", 2, rows).index((0, 1))
    def paths(root):
        return sorted((repr(a), repr(b)) for a in root.children for b in root.children[a].children)
    assert paths(lazy) == paths(built)
