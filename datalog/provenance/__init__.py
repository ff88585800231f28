"""Provenance: why a fact is in its relation (a proof of least height) and why another is not
(the literal each rule fails at), built on demand from the relations as they are now, or, with
``provenance=True``, read off kept least heights.

* :mod:`instances`: a clause's rule instances for one head tuple, read through trie indexes;
* :mod:`explain`: heights by iterative deepening, proofs (``why``) and failures (``why_not``);
* :mod:`proof`: the proof tree, as Soufflé's text layout, an outline, JSON and notebook HTML;
* :mod:`heights`: kept least heights (``--provenance``), by semi-naive rounds over levels;
* :mod:`repair`: those heights brought up to date after a commit where it reached.

Soufflé's interactive explain commands (``-t explain``) are :mod:`datalog.cli.explain_interface`.

It sits below the engine, which hands it the program's clauses and its current relations
(:meth:`datalog.engine.engine.Engine.why`).
"""

from datalog.provenance.explain import Explainer, RuleFailure, WhyNot
from datalog.provenance.proof import Proof, fact_text

__all__ = ["Explainer", "Proof", "WhyNot", "RuleFailure", "fact_text"]
