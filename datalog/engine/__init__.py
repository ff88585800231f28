"""The engine: the pipeline from program text to evaluated relations, transactions, answers."""

from datalog.engine.engine import Engine
from datalog.engine.transaction import Transaction

__all__ = ["Engine", "Transaction"]
