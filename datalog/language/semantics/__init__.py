"""Soufflé's relation semantics defined by rewriting the program (issue 18): pragmas, ``eqrel``,
``inline``, the magic-set transformation. :func:`lower` applies them in order before the rewrite
stage, so that the engine, its maintenance and every later stage see plain rules."""

from datalog.language.semantics.lowering import lower

__all__ = ["lower"]
