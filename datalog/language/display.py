"""Values, facts and counts as a person reads them in a message: values in Datalog syntax, as a
program would write them (symbols quoted, with ``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\r`` escaped so
the text parses back to the same symbol; numbers plain; floats as Soufflé prints them; records
``[1, 2]``, ``nil``; ADT branches ``$Cons(1, $Nil)``), facts as ``person("carl")``, and counts with
the noun agreeing (``1 tuple``, ``2 tuples``).

>>> from datalog.language.composites import Branch, Record
>>> fact_text("person", ("carl", 3, 0.5))
'person("carl", 3, 0.5)'
>>> value_text('say "hi"\\n'), value_text(Record((1, Record(()))))
('"say \\\\"hi\\\\"\\\\n"', '[1, nil]')
>>> value_text(Branch(("Cons", 1, Branch(("Nil",))))), value_text(1e17)
('$Cons(1, $Nil)', '1e+17')
>>> plural(1, "tuple"), plural(0, "tuple"), plural(2, "batch", "batches")
('1 tuple', '0 tuples', '2 batches')
"""

from __future__ import annotations

from datalog.language import composites

# Soufflé prints a float with ``std::setprecision(max_digits10)``, 17 digits for a double (see
# :func:`datalog.sources.files.format_value`).
FLOAT_DIGITS = 17
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def value_text(value) -> str:
    """One value in Datalog syntax."""
    if isinstance(value, tuple):                    # a record or an ADT branch
        return composites.render(value, value_text)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPED.get(ch, ch) for ch in value) + '"'
    if isinstance(value, float):
        return f"{value:.{FLOAT_DIGITS}g}"
    return str(value)


def fact_text(relation: str, row: tuple) -> str:
    """``path("a", 4)``: a relation's row as an atom (``p()`` for a nullary relation)."""
    return f"{relation}({', '.join(value_text(v) for v in row)})"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 tuple``, ``2 tuples``: the count and the noun agreeing with it (``nouns``: an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
