"""The symbol table: each distinct symbol as a 64-bit word, and back (Soufflé's own design).

The compiled kernel joins words, not Python objects. A symbol's word is its ordinal in the
table, from 0, in the order the table first met it (the symbols of one batch in sorted order,
so that the words of a run do not depend on string hashing). Words are equal exactly when the
symbols are, which is all a join, ``=`` and ``!=`` need; they are not ordered as the symbols
are, so ``<`` between symbols stays on the tuple path (:mod:`datalog.evaluation.kernel_plan`).
One table serves one evaluation (:func:`datalog.evaluation.fixpoint.evaluate`), so that a
relation read by several strata has the same words in each; decoding gives back the very
string objects that went in.

>>> table = SymbolTable()
>>> table.words(["b", "a", "b"]), table.word("c"), table.word("B"), table.symbols[1]
([1, 0, 1], 2, 3, 'b')
>>> table.ranks().tolist()          # "B" < "a" < "b" < "c"
[1, 2, 3, 0]
>>> text, starts = table.text(); bytes(text), starts.tolist()
(b'abcB', [0, 1, 2, 3, 4])
"""

from __future__ import annotations

from typing import Iterable


class SymbolTable:
    """Symbols to words (:meth:`word`, :meth:`words`) and words to symbols (:attr:`symbols`)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.symbols: list[str] = []          # word -> symbol
        self._ranks = None                    # (see ranks)
        self._text = None                     # (see text)

    def word(self, symbol: str) -> int:
        """The word of ``symbol``, a new one if the table has not met it."""
        word = self.ids.get(symbol)
        if word is None:
            word = self.ids[symbol] = len(self.symbols)
            self.symbols.append(symbol)
        return word

    def words(self, symbols: Iterable[str]) -> list[int]:
        """The words of ``symbols`` in order; the ones not met before get new words, in sorted order."""
        symbols = symbols if isinstance(symbols, (list, tuple)) else list(symbols)
        new = sorted(set(symbols).difference(self.ids))
        self.ids.update(zip(new, range(len(self.symbols), len(self.symbols) + len(new))))
        self.symbols.extend(new)
        return list(map(self.ids.__getitem__, symbols))

    def ranks(self):
        """Per word, its symbol's place among the table's symbols in Python's (code point) order:
        an int64 numpy array, so that sorting by ranks sorts by the symbols."""
        import numpy as np                        # (only the columnar evaluator asks)
        if self._ranks is None or len(self._ranks) != len(self.symbols):
            order = np.argsort(np.array(self.symbols, dtype=object), kind="stable")
            self._ranks = np.empty(len(order), np.int64)
            self._ranks[order] = np.arange(len(order), dtype=np.int64)
        return self._ranks

    def text(self):
        """Every symbol's UTF-8 bytes one after another (a uint8 array) and where each starts (an
        int64 array, one more than the symbols: word ``w``'s bytes are ``text[starts[w]:starts[w + 1]]``),
        for writing symbols in C (:func:`lftj.text.delimited`); made again only when the table grew."""
        import numpy as np                        # (only the columnar evaluator asks)
        if self._text is None or len(self._text[1]) != len(self.symbols) + 1:
            encoded = [symbol.encode("utf-8") for symbol in self.symbols]
            starts = np.zeros(len(encoded) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=starts[1:])
            self._text = (np.frombuffer(b"".join(encoded), np.uint8), starts)
        return self._text
