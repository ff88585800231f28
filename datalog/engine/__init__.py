"""The engine: the pipeline from program text to evaluated relations, transactions, answers."""

from datalog.engine.engine import Engine, Transaction

__all__ = ["Engine", "Transaction"]
