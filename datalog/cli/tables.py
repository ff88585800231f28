"""Plain-text tables: aligned columns, numbers to the right.

>>> print(aligned(["x", "name"], [(1, "ann"), (20, "bo")]))
 x  name
--  ----
 1  ann
20  bo
"""

from __future__ import annotations

from datalog.sources.files import format_value


def aligned(headers: list[str], rows: list[tuple]) -> str:
    """A header line, a rule of dashes, then one line per row; a column of numbers is right-aligned."""
    cells = [[format_value(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_is_number(row[i]) for row in rows) for i in range(len(headers))]

    def line(texts) -> str:
        return "  ".join(t.rjust(w) if num else t.ljust(w)
                         for t, w, num in zip(texts, widths, numeric)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(row) for row in cells])


def limited(headers: list[str], rows: list[tuple], limit: int) -> str:
    """The first ``limit`` rows :func:`aligned`, then a line counting them all (the REPL's answers)."""
    shown = aligned(headers, rows[:limit])
    count = f"{len(rows)} row{'s' * (len(rows) != 1)}"
    if len(rows) > limit:
        count += f", the first {limit} shown (.limit N shows more)"
    return f"{shown}\n{count}"


def stats_table(stats: dict) -> str:
    """One row per rule: every key ``engine.stats()`` reports (numbers right-aligned), the rule last."""
    rows = {str(rule): (values if isinstance(values, dict) else {"value": values})
            for rule, values in stats.items()}
    keys = list(dict.fromkeys(key for values in rows.values() for key in values))
    cells = [[_cell(values.get(key, "")) for key in keys] for values in rows.values()]
    widths = [max([len(key)] + [len(row[i]) for row in cells]) for i, key in enumerate(keys)]
    numeric = [all(_is_number(values.get(key)) for values in rows.values() if values.get(key) is not None)
               for key in keys]

    def line(texts, rule):
        parts = [text.rjust(w) if num else text.ljust(w) for text, w, num in zip(texts, widths, numeric)]
        return "  ".join(parts + [rule]).rstrip()

    return "\n".join([line(keys, "rule")] + [line(row, rule) for row, rule in zip(cells, rows)])


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
