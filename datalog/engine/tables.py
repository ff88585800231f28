"""Relations as tables, and subscriptions to their changes: what a data engineer's Python sees.

``engine.relation("path")`` is a :class:`Relation`, a read-only live view of the relation (it
reads the engine's current rows each time): ``len()``, iteration and ``rows()`` in the order
``engine.rows`` gives, ``to_arrow()``, ``to_pandas()``, ``to_polars()``, and the Arrow PyCapsule
interface ``__arrow_c_stream__``, so ``pyarrow.table(view)``, ``polars.DataFrame(view)`` and
DuckDB take it as it is. Its columns are named by the ``.decl`` (``c0, c1, ...`` without one) and
typed as :mod:`datalog.engine.arrow` says.

``engine.subscribe("path", callback)`` calls ``callback(change)`` after every commit that changes
the relation (a transaction, ``commit``, ``extend``; for a workspace's engine, once the commit is
durable), in commit order, with a :class:`TableChange`: the commit's number, and the rows inserted
and retracted, as an Arrow table with a ``weight`` column (+1 inserted, -1 retracted). Without a
callback the changes queue in the :class:`Subscription`: ``poll()`` or iterate it. A commit that
does not change the relation delivers nothing; a rolled-back transaction delivers nothing. A
callback that raises does not undo the commit (it is made): the exception is kept in
``subscription.errors`` with the commit's number and reported as a :class:`SubscriptionWarning`;
later commits are still delivered. One raising ``KeyboardInterrupt`` or ``SystemExit`` is kept
in ``errors`` too, every other subscriber is told, then the commit raises it; a commit made
inside a callback is delivered after the commit being delivered (:mod:`datalog.engine.delivery`). By default the first delivery is the relation's current
rows (``snapshot=True``, all weight +1, with the current commit number), so the weights
delivered add up to the relation; ``snapshot=False`` delivers only later commits.

>>> from datalog import Engine
>>> engine = Engine.from_source('''
...     .decl edge(src: number, dst: number)
...     .decl path(src: number, dst: number)
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
...     edge(1, 2).
... ''')
>>> engine.run()
>>> path = engine.relation("path")
>>> len(path), path.rows(), path.columns
(1, [(1, 2)], ['src', 'dst'])
>>> subscription = engine.subscribe("path", snapshot=False)
>>> with engine.transaction() as tx:
...     tx.insert("edge", [(2, 3)])
>>> [(change.commit, change.rows()) for change in subscription.poll()]
[(1, [(1, 3, 1), (2, 3, 1)])]
>>> engine.commit(retracts={"edge": [(1, 2)]}) and None
>>> change, = subscription.poll()
>>> change.table.to_pydict()
{'src': [1, 1], 'dst': [2, 3], 'weight': [-1, -1]}
"""

from __future__ import annotations

import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator

from datalog.engine import admission, display
from datalog.engine.memory import paused_gc
from datalog.language.types import AUTO, PRIMITIVES, value_type


class SubscriptionWarning(UserWarning):
    """A subscription's callback raised; the commit it was told about stands."""


def column_kinds(engine, name: str) -> list[tuple[str, object]]:
    """The columns of relation ``name``: (name, kind), the kind ``number``, ``unsigned``,
    ``float``, ``symbol``, a record or ADT type, or ``auto`` (still untyped, no rows). ``unsigned``
    is told from the type the ``.decl`` names (through ``.type`` aliases), so that it is known
    whether or not the language keeps it apart from ``number``."""
    checked = engine.checked
    info = checked.schema[name]
    declared = next((d for d in checked.program.declarations if d.relation == name), None)
    kinds = []
    for i, type_ in enumerate(info.types):
        if type_ == AUTO:
            sample = next(iter(engine.db[name].tuples), None) if name in engine.db else None
            type_ = value_type(sample[i]) if sample is not None else AUTO
        elif type_ == "number" and declared is not None and len(declared.columns) == info.arity:
            if _base(declared.columns[i].type, checked.aliases) == "unsigned":
                type_ = "unsigned"
        kinds.append(type_)
    return list(zip(engine.column_names(name), kinds))


def _base(type_name: str, aliases: dict) -> str:
    """The primitive type a type name comes to through ``.type A <: B`` aliases."""
    seen = set()
    while type_name not in PRIMITIVES and type_name in aliases and type_name not in seen:
        seen.add(type_name)
        target = aliases[type_name]
        if not isinstance(target, str) or getattr(target, "is_composite", False):
            break
        type_name = target
    return type_name


def admitted(engine, name: str, data, requested=()) -> list[tuple]:
    """The rows of ``data`` (tuples, or a table) as relation ``name`` stores them, every one
    checked before any is returned (``arity_mismatch``, ``type_mismatch``, ``number_out_of_range``):
    :func:`datalog.engine.admission.rows`, against the columns' current types (``requested``:
    the rows already requested of it in the same transaction). A column still untyped may be
    typed by the ``.input`` files: they are read first (as ``run`` would), so that an insert
    before ``run`` and the files' rows have one type."""
    kinds = column_kinds(engine, name)
    if any(kind == AUTO for _, kind in kinds):
        engine.load_inputs()
        kinds = column_kinds(engine, name)
    return admission.rows(name, kinds, data, requested)


def _arrow():
    from datalog.engine import arrow                # pyarrow, imported when first needed
    return arrow


def _unchanged_key(engine, stored, kinds) -> tuple | None:
    """What must be the same for a kept Arrow table of ``stored`` to be its rows still (with the
    stored relation itself, compared by identity); None for a relation without a ``version``
    (a view computed from others)."""
    version = getattr(stored, "version", None)
    if version is None or not getattr(stored, "stored", False):
        return None
    return version, len(stored), tuple(kinds)


def current_tables(engine) -> set:
    """The kept Arrow tables (``(relation, ordered)`` keys of ``engine.arrow_tables``) that hold
    their relation's rows now, with the changes noted for them."""
    out = set()
    for entry, (stored, key, *_) in engine.arrow_tables.items():
        name = entry[0]
        if engine.db.get(name) is stored and key == _unchanged_key(engine, stored, column_kinds(engine, name)):
            out.add(entry)
    return out


def note_changes(engine, delta, current: set) -> None:
    """After a commit whose changes are ``delta``: each kept table that was ``current`` before it
    (:func:`current_tables`) and whose relation it changed keeps the change, to be patched in
    when it is next read (:func:`datalog.engine.arrow.patched`: a few rows changed in a large
    relation cost a few passes over its columns, not a new table from the tuples), or is
    dropped when more than :data:`PATCHED` rows wait. The commit pays only for noting its rows."""
    for entry in current:
        change = delta.get(entry[0])
        if not change or entry not in engine.arrow_tables:
            continue
        stored, key, table, inserted, retracted = engine.arrow_tables.pop(entry)
        kinds = column_kinds(engine, entry[0])
        if engine.db.get(entry[0]) is not stored or key[2] != tuple(kinds):
            continue
        inserted, retracted = set(inserted), set(retracted)   # net, against the table's rows
        for row in change.retracted:
            (inserted.discard if row in inserted else retracted.add)(row)
        for row in change.inserted:
            (retracted.discard if row in retracted else inserted.add)(row)
        if len(inserted) + len(retracted) <= PATCHED:
            engine.arrow_tables[entry] = (stored, _unchanged_key(engine, stored, kinds), table, inserted, retracted)


PATCHED = 64            # rows changed since a kept table was read, up to which it is patched (each
                        # costs a few passes over its columns) rather than built again


class Relation:
    """A read-only live view of one relation of an engine: see the module docstring."""

    def __init__(self, engine, name: str):
        self._engine, self.name = engine, name

    @property
    def _stored(self):
        return self._engine.answered_relation(self.name)

    @property
    def columns(self) -> list[str]:
        """The column names, from the ``.decl`` (``c0, c1, ...`` without one)."""
        return self._engine.column_names(self.name)

    @property
    def arity(self) -> int:
        return self._stored.arity

    def __len__(self) -> int:
        return len(self._stored)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows())

    def __contains__(self, row) -> bool:
        return tuple(row) in self._stored

    def rows(self) -> list[tuple]:
        """The rows as tuples, in ascending order (``engine.rows(name)``)."""
        with paused_gc():                         # a new list of every row: see datalog.engine.memory
            return self._stored.sorted_rows()

    def schema(self):
        """The pyarrow schema of :meth:`to_arrow`."""
        return _arrow().schema_of(column_kinds(self._engine, self.name))

    def to_arrow(self, ordered: bool = True):
        """The rows as a pyarrow Table, in the order of :meth:`rows` (in no particular order
        without ``ordered``: faster, the sort is a third of the time at 1M rows).

        The table is kept (Arrow tables are immutable; the engine holds one copy of each
        relation read so) and given again while the relation is unchanged: the same stored
        relation at the same ``version`` (:mod:`lftj.relation`, which every change of its rows
        counts), with the same column types. The rows that commits change are noted, and patched
        in at the next read when they are few (:func:`note_changes`). Building it from the Python
        tuples is the cost of a first read (0.5-0.7 s at 1M rows, against DuckDB's 0.01-0.04 s
        from its columns); a read of an unchanged relation costs a dictionary look-up. A view
        that is not stored (maintenance serves some relations from others) is built every time."""
        kinds, stored = column_kinds(self._engine, self.name), self._stored
        key = _unchanged_key(self._engine, stored, kinds)
        cache = self._engine.arrow_tables
        for wanted in (True,) if ordered else (False, True):          # an ordered table will do
            kept = cache.get((self.name, wanted))
            if key is None or kept is None or kept[0] is not stored or kept[1] != key:
                continue
            table, inserted, retracted = kept[2:]
            if inserted or retracted:                                 # changed by commits since
                table = _arrow().patched(table, kinds, inserted, retracted, wanted)
                if table is None or table.num_rows != len(stored):
                    del cache[(self.name, wanted)]
                    continue
                cache[(self.name, wanted)] = (stored, key, table, (), ())
            return table
        table = self._built(kinds, stored, ordered)
        if key is not None:
            cache[(self.name, ordered)] = (stored, key, table, (), ())
        return table

    def _built(self, kinds, stored, ordered: bool):
        """:meth:`to_arrow` built from the stored tuples, or from the sorted words a relation of
        numbers keeps (``Relation.current_words``: a column's copy, no tuple read)."""
        arrow = _arrow()
        words = stored.current_words()
        if words is not None and kinds and all(kind == "number" for _, kind in kinds):
            return arrow.table_of_words(kinds, words)
        if not ordered:
            return arrow.table_of(kinds, list(stored.tuples))
        if arrow.sortable(kinds) and not stored.stores_by_first():     # Arrow sorts faster than Python
            return arrow.sorted_table(arrow.table_of(kinds, list(stored.tuples)), kinds)
        return arrow.table_of(kinds, stored.sorted_rows())

    def to_pandas(self, ordered: bool = True):
        """The rows as a pandas DataFrame (pandas must be installed)."""
        return self.to_arrow(ordered).to_pandas()

    def to_polars(self, ordered: bool = True):
        """The rows as a Polars DataFrame (polars must be installed)."""
        import polars
        return polars.from_arrow(self.to_arrow(ordered))

    def __arrow_c_stream__(self, requested_schema=None):
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"<Relation {self.name}({', '.join(self.columns)}): {len(self)} rows>"

    def _repr_html_(self) -> str:
        """An HTML table of the first rows (Jupyter shows a relation so)."""
        return display.html(self.name, self.columns, self._head(), len(self))

    def __rich__(self):
        """A rich table of the first rows (``rich.print(view)``; the IPython extension shows a
        relation so in a terminal)."""
        return display.rich_table(self.name, self.columns, self._head(), len(self))

    def _head(self) -> list[tuple]:
        """The first rows shown, read off :meth:`to_arrow` (kept while the relation is unchanged,
        and faster to build than sorted tuples; records and ADTs come as their text)."""
        if not self.arity:
            return self.rows()
        table = self.to_arrow().slice(0, display.SHOWN)
        return list(zip(*(column.to_pylist() for column in table.columns)))


@dataclass(frozen=True)
class TableChange:
    """What one commit did to one relation: its number, the rows ``inserted`` and ``retracted``
    (sorted), and as a table (:attr:`table`) with a ``weight`` column."""

    relation: str
    commit: int
    inserted: list[tuple]
    retracted: list[tuple]
    kinds: list = field(repr=False, default_factory=list)

    def rows(self) -> list[tuple]:
        """Each changed row with its weight last: the retracted (-1), then the inserted (+1)."""
        return [(*r, -1) for r in self.retracted] + [(*r, 1) for r in self.inserted]

    @property
    def table(self):
        """The change as a pyarrow Table: the relation's columns and ``weight`` (int8)."""
        return _arrow().table_of(self.kinds, self.retracted + self.inserted,
                                 [-1] * len(self.retracted) + [1] * len(self.inserted))

    def to_arrow(self):
        return self.table

    def to_pandas(self):
        return self.table.to_pandas()

    def to_polars(self):
        import polars
        return polars.from_arrow(self.table)

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)

    def __len__(self) -> int:
        return len(self.inserted) + len(self.retracted)


class Subscription:
    """The changes of one relation, delivered to ``callback`` or queued (``poll()``, iteration).
    ``errors``: (commit, exception) of each delivery whose callback raised. ``close()`` (or
    leaving a ``with`` block) ends it."""

    def __init__(self, engine, relation: str, callback: Callable[[TableChange], object] | None = None):
        self.engine, self.relation, self.callback = engine, relation, callback
        self.errors: list[tuple[int, BaseException]] = []
        self.closed = False
        self._queue: deque[TableChange] = deque()

    def deliver(self, change: TableChange, calling: Callable | None = None) -> None:
        """Queue ``change`` or give it to the callback (called through ``calling``: by a commit,
        with Ctrl-C raising inside it, :meth:`datalog.engine.serial.Guard.interruptible`)."""
        if self.closed:
            return
        if self.callback is None:
            self._queue.append(change)
            return
        try:
            (calling or _call)(lambda: self.callback(change))
        except Exception as exc:                  # the commit stands; the failure is reported
            self.errors.append((change.commit, exc))
            warnings.warn(f"a subscriber to {self.relation} raised at commit {change.commit}: "
                          f"{type(exc).__name__}: {exc} (the commit stands)", SubscriptionWarning, stacklevel=2)

    def poll(self) -> list[TableChange]:
        """The queued changes, oldest first; the queue is emptied."""
        out = list(self._queue)
        self._queue.clear()
        return out

    def __iter__(self) -> Iterator[TableChange]:
        """The queued changes, oldest first, each taken off the queue; ends when it is empty."""
        while self._queue:
            yield self._queue.popleft()

    def close(self) -> None:
        self.closed = True
        self.engine.unsubscribe(self)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._queue)} queued"
        return f"<Subscription {self.relation}: {state}>"


def _call(function):
    return function()


def changes_of(engine, subscriptions: list[Subscription], delta, commit: int, before=None) -> list:
    """The commit's ``delta`` as (subscription, change) for the subscriptions of the relations it
    changed (a relation the commit removed is described by the engine ``before`` it), made now, to
    be delivered in commit order (:mod:`datalog.engine.delivery`)."""
    kinds: dict[str, list] = {}
    pairs = []
    for subscription in list(subscriptions):
        change = delta.get(subscription.relation)
        if not change or subscription.closed:
            continue
        name = subscription.relation
        if name not in kinds:
            kinds[name] = column_kinds(engine if name in engine.schema or before is None else before, name)
        pairs.append((subscription, TableChange(name, commit, sorted(change.inserted), sorted(change.retracted),
                                                kinds[name])))
    return pairs


def snapshot(engine, subscription: Subscription, commit: int) -> None:
    """The relation's current rows, as the first delivery of a new subscription."""
    name = subscription.relation
    rows = engine.rows(name)
    if rows:
        subscription.deliver(TableChange(name, commit, rows, [], column_kinds(engine, name)))
