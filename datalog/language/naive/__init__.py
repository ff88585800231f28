"""The slow, obviously correct reference evaluator: the test oracle for the engine.

No indexes, no semi-naive deltas, no join planning. Relations are Python sets of
tuples; strata are the strongly connected components of the dependency graph;
inside a stratum every rule is re-evaluated by nested loops over substitutions
until no rule derives a new tuple.

>>> from datalog.language.parser import parse
>>> db = evaluate(parse('''
...     edge(1, 2). edge(2, 3).
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... '''))
>>> sorted(db["path"])
[(1, 2), (1, 3), (2, 3)]

Semantics follow Soufflé; where the two could differ, the choice is stated in
the docstring of the function that makes it (see :func:`aggregates.aggregate`,
:func:`values.arith`, the functors in :mod:`values`).

The modules, each importing only those before it and the language layer:

* :mod:`values`: rows, substitutions; comparisons, arithmetic and functors
* :mod:`nodes`: walking the AST; bodies without disjunction
* :mod:`aggregates`: what an aggregate ranges over, and its value
* :mod:`rules`: the substitutions satisfying one rule's body
* :mod:`fixpoint`: a program, stratum by stratum, each to its fixpoint
"""

from datalog.language.naive.fixpoint import evaluate, stratify

__all__ = ["evaluate", "stratify"]
