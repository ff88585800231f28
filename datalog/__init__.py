"""Soufflé-compatible Datalog on leapfrog triejoin, kept up to date under inserts and retractions.

The package's top level is its public API:

>>> from datalog import Engine
>>> engine = Engine.from_source("e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).")
>>> engine.run(); engine.rows("p")
[(1, 2), (1, 3), (2, 3)]
>>> sorted(engine.commit(retracts={"e": [(2, 3)]})["p"].retracted)
[(1, 3), (2, 3)]

===========================  ======================================================================================
``Engine``                   a program, its relations, transactions, queries (:mod:`datalog.engine`)
``Transaction``              changes of EDB relations applied together (``engine.transaction()``)
``Change``                   what a commit did to one relation: ``inserted`` and ``retracted`` tuples
``Relation``                 ``engine.relation(name)``: a read-only live table view; Arrow, pandas, Polars
``Subscription``             ``engine.subscribe(name, callback)``: each commit's change of a relation
``TableChange``              one delivered change: ``commit``, ``inserted``, ``retracted``, ``table``
``SubscriptionWarning``      a subscriber's callback raised (the commit stands)
``AbsentRetractionWarning``  a commit retracted facts that were not there (the commit stands)
``Answers``                  ``engine.query("?- body.")``: columns, rows, ``df()``, ``pl()``, ``arrow()``
``Record``, ``NIL``          a record value ``Record((1, "a"))`` and ``nil``, as rows of a record column hold them
``Branch``                   an ADT value ``Branch(("Circle", 2.5))`` (``$Circle(2.5)``), ``Branch(("Empty",))``
``ProgressBar``              a rich progress bar for ``engine.run(progress)`` (:mod:`datalog.engine.progress`)
``Workspace``                a program and its maintained state on disk (:mod:`datalog.workspace`)
``DatalogError``             every error the engine reports: a ``code``, a ``span``, ``render()`` with a caret
``parse``                    program text -> the AST (:mod:`datalog.language.ast`); ``parse_file`` a file's
``parse_query``              a query's text (``?- path(1, x).``) -> its body, for ``engine.ask``
``run``                      the whole pipeline on a program text -> its relations (:mod:`datalog.engine.pipeline`)
===========================  ======================================================================================

Relations are tables too (pyarrow is imported only when a table is asked for), and their
changes can be followed (:mod:`datalog.engine.tables`):

>>> engine.relation("p").to_arrow().to_pydict()
{'c0': [1], 'c1': [2]}
>>> changes = engine.changes("p")                       # the current rows first, then each commit's
>>> engine.commit(inserts={"e": [(2, 5)]}) and None
>>> [(change.commit, change.rows()) for change in changes]
[(1, [(1, 2, 1)]), (2, [(1, 5, 1), (2, 5, 1)])]

The names are imported when first used, so importing one part of the package (the parser,
the engine) does not import the rest. In IPython or Jupyter, ``%load_ext datalog`` adds the
``%%datalog`` cell magic (:mod:`datalog.notebook`, the ``notebook`` extra).
"""

from __future__ import annotations

import importlib

_WHERE = {
    "Engine": "datalog.engine.engine",
    "Transaction": "datalog.engine.transaction",
    "Change": "maintenance.delta",
    "Relation": "datalog.engine.tables",
    "Subscription": "datalog.engine.tables",
    "TableChange": "datalog.engine.tables",
    "SubscriptionWarning": "datalog.engine.tables",
    "AbsentRetractionWarning": "datalog.engine.absent",
    "Answers": "datalog.engine.query",
    "Record": "datalog.language.composites",
    "NIL": "datalog.language.composites",
    "Branch": "datalog.language.composites",
    "ProgressBar": "datalog.engine.progress",
    "Workspace": "datalog.workspace.workspace",
    "DatalogError": "datalog.language.errors",
    "parse": "datalog.language.parser",
    "parse_file": "datalog.language.parser",
    "parse_query": "datalog.language.parser",
    "run": "datalog.engine.pipeline",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'datalog' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython) -> None:
    """``%load_ext datalog`` in IPython or Jupyter: the ``%%datalog`` cell magic
    (:mod:`datalog.notebook`; IPython comes with the ``notebook`` extra)."""
    from datalog import notebook
    notebook.load_ipython_extension(ipython)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
