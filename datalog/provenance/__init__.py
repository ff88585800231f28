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

from importlib import import_module

# Where each name is: imported on first use, so that an engine that never explains (every
# ``datalog run``) does not import the explainer at start-up (PEP 562's module __getattr__).
_HOMES = {"Explainer": "explain", "RuleFailure": "explain", "WhyNot": "explain",
          "Proof": "proof", "fact_text": "proof"}

__all__ = ["Explainer", "Proof", "WhyNot", "RuleFailure", "fact_text"]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
