"""Tables shown to a person: HTML for Jupyter (``_repr_html_``), a rich table for a terminal
(``__rich__``). The first :data:`SHOWN` rows are shown, then a line counting them all; values
are written as Soufflé writes them (records and ADTs as their text), HTML-escaped.

>>> print(html("path", ["src", "dst"], [(1, 2), (1, 3)], 2))
<table class="datalog">
<caption>path: 2 rows</caption>
<thead><tr><th>src</th><th>dst</th></tr></thead>
<tbody>
<tr><td style="text-align: right">1</td><td style="text-align: right">2</td></tr>
<tr><td style="text-align: right">1</td><td style="text-align: right">3</td></tr>
</tbody>
</table>
>>> from rich.console import Console
>>> console = Console(width=40, color_system=None)
>>> with console.capture() as captured:
...     console.print(rich_table("names", ["who"], [("<ann>",), ("bo",)], 3, shown=2))
>>> print(captured.get().rstrip())
names: 3 rows, the first 2 shown
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ who                          ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ <ann>                        │
│ bo                           │
└──────────────────────────────┘
"""

from __future__ import annotations


from datalog.sources.files import format_value

SHOWN = 20                          # rows shown before a table is cut (a line says how many there are)


def caption(title: str, total: int, shown: int) -> str:
    """``title: N rows``, and how many are shown when not all are."""
    text = f"{title}: {total} row{'s' * (total != 1)}"
    return text + (f", the first {shown} shown" if shown < total else "")


def html(title: str, columns: list[str], rows: list[tuple], total: int, shown: int = SHOWN) -> str:
    """An HTML table of the first ``shown`` of ``rows`` (``total`` in all), numbers right-aligned."""
    rows = rows[:shown]
    from html import escape                       # (for notebooks only: start-up)
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = ["<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows]
    return "\n".join(['<table class="datalog">', f"<caption>{escape(caption(title, total, len(rows)))}</caption>",
                      f"<thead><tr>{head}</tr></thead>", "<tbody>", *body, "</tbody>", "</table>"])


def _cell(value) -> str:
    from html import escape
    align = ' style="text-align: right"' if _is_number(value) else ""
    return f"<td{align}>{escape(format_value(value))}</td>"


def rich_table(title: str, columns: list[str], rows: list[tuple], total: int, shown: int = SHOWN):
    """A ``rich.table.Table`` of the first ``shown`` of ``rows`` (``total`` in all)."""
    from rich.table import Table                # rich draws: imported when a table is shown
    from rich.text import Text
    rows = rows[:shown]
    text = caption(title, total, len(rows))
    if not columns:                             # a nullary relation: its count says it all
        return Text(text)
    table = Table(title=text, min_width=len(text))     # the caption on one line
    for i, name in enumerate(columns):
        numeric = bool(rows) and all(_is_number(row[i]) for row in rows)
        table.add_column(name, justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(escape_markup(format_value(v)) for v in row))
    return table


def escape_markup(text: str) -> str:
    """``text`` shown as it is by rich (a ``[`` does not start markup)."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
