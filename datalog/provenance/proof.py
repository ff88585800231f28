"""A proof tree and its three forms: text (Soufflé's inference-rule layout), JSON, and HTML for a
notebook (collapsible ``<details>``).

A :class:`Proof` node is one of

* ``rule``: the fact derived by a rule instance: the clause (``rule``, its number among the
  relation's clauses as Soufflé counts them, ``position`` file:line:col), the ``binding`` of its
  variables, and ``premises``: a proof per positive body atom, then the negated atoms shown
  absent, the comparisons that hold, and the aggregates with their values;
* ``edb``: a fact given from outside (``source``: file:line of a program fact, the input file, or
  the commit that inserted it);
* ``absent`` (a negated atom: ``!person("tim")``), ``constraint`` (``1 != 2``), ``aggregate``
  (``n = count : {...} = 3`` over its contributing facts, the ``premises``; ``rule`` is its
  kind, count, sum, ...);
* ``cut``: a fact whose proof is below the depth asked for (``why(fact, depth)``).

``height`` is the proof's height: 0 for an EDB fact, one more than the highest proof of a
positive body atom for a rule instance.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

from datalog.language.display import fact_text, value_text
from datalog.sources.files import format_value


__all__ = ["Proof", "fact_text", "value_text"]     # the facts' text: datalog.language.display


@dataclass
class Proof:
    kind: str                       # rule | edb | absent | constraint | aggregate | cut
    text: str                       # the fact, negated atom, comparison or aggregate as printed
    relation: str | None = None
    row: tuple | None = None
    height: int = 0
    rule: str | None = None
    rule_number: int | None = None
    position: str | None = None
    binding: dict = field(default_factory=dict)
    premises: list["Proof"] = field(default_factory=list)
    source: str | None = None
    value: object = None            # an aggregate's value
    more: int = 0                   # an aggregate's contributing facts left out

    # ---- walking
    def nodes(self):
        yield self
        for p in self.premises:
            yield from p.nodes()

    # ---- forms
    def to_dict(self) -> dict:
        out = {"kind": self.kind, "fact" if self.relation else "literal": self.text}
        if self.relation is not None:
            out["relation"], out["tuple"] = self.relation, list(self.row)
        if self.kind in ("rule", "edb", "cut"):
            out["height"] = self.height
        for key in ("rule", "rule_number", "position", "source"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.binding:
            out["binding"] = {k: _json_value(v) for k, v in self.binding.items()}
        if self.kind == "aggregate":
            out["value"] = _json_value(self.value)
            if self.more:
                out["more"] = self.more
        if self.premises:
            out["premises"] = [p.to_dict() for p in self.premises]
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_text(self, cut_label=None, width=len) -> str:
        """Soufflé's layout: premises side by side over a line ending in the rule's label, the
        fact centred under it (``cut_label(node)`` names a node below the depth asked for;
        ``width(text)``: its columns, Soufflé counts UTF-8 bytes)."""
        return render(self, cut_label, width)

    def to_tree(self) -> str:
        """One line a node, premises indented under their fact: narrower than Soufflé's layout
        for deep proofs. A rule node names its rule number and position, an EDB fact its source."""
        lines: list[str] = []
        _outline(self, "", "", lines)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        return "<div class='datalog-proof'>" + _html(self, True) + "</div>"


def _json_value(value):
    return value if isinstance(value, (int, float, str)) else format_value(value)


# ---------------------------------------------------------------- text: Soufflé's inference layout

def _label(node: Proof, cut_label) -> str:
    if node.kind == "cut":
        return cut_label(node) if cut_label else node.text + " ..."
    return node.text


class _Box:
    """A laid-out node: ``width`` columns, ``lines`` from the top (the fact is the last line)."""

    def __init__(self, node: Proof, cut_label, measure):
        self.text, self.measure = _label(node, cut_label), measure
        inner = node.kind in ("rule", "aggregate") and node.premises
        self.children = [_Box(p, cut_label, measure) for p in node.premises] if inner else []
        self.tag = f"(R{node.rule_number})" if node.kind == "rule" else f"({node.rule})" if inner else ""
        size = measure(self.text)
        self.width = max(sum(c.width + 1 for c in self.children), size) if self.children else size

    def pad(self, text: str) -> str:
        return text + " " * (self.width - self.measure(text))

    def lines(self) -> list[str]:
        """Rows of exactly ``width`` characters, top first."""
        if not self.children:
            return [self.text]
        columns = [c.lines() for c in self.children]
        depth = max(len(c) for c in columns)
        rows = []
        for r in range(depth):           # children aligned at the bottom, one space after each
            parts = []
            for box, col in zip(self.children, columns):
                pad = depth - len(col)
                parts.append((col[r - pad] if r >= pad else " " * box.width) + " ")
            rows.append(self.pad("".join(parts)))
        rows.append(("-" * (self.width - len(self.tag)) + self.tag))
        left = (self.width - self.measure(self.text)) // 2
        rows.append(self.pad(" " * left + self.text))
        return rows


def render(proof: Proof, cut_label=None, width=len) -> str:
    return "\n".join(_Box(proof, cut_label, width).lines())


def utf8_width(text: str) -> int:
    """Columns as Soufflé counts them: UTF-8 bytes."""
    return len(text.encode("utf-8"))


def _outline(node: Proof, lead: str, rest: str, lines: list[str]) -> None:
    note = ""
    if node.kind == "rule":
        note = f"   (R{node.rule_number}{', ' + node.position if node.position else ''})"
    elif node.kind == "edb" and node.source:
        note = f"   ({node.source})"
    elif node.kind == "cut":
        note = "   ..."
    lines.append(f"{lead}{node.text}{note}")
    for i, premise in enumerate(node.premises):
        last = i == len(node.premises) - 1
        _outline(premise, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "), lines)


# ---------------------------------------------------------------- HTML: nested <details>

def _html(node: Proof, open_: bool) -> str:
    text = html.escape(node.text)
    note = []
    if node.kind == "rule":
        note.append(f"R{node.rule_number}: {html.escape(node.rule or '')}")
        if node.position:
            note.append(html.escape(node.position))
    elif node.kind == "edb" and node.source:
        note.append(html.escape(node.source))
    elif node.kind == "absent":
        note.append("absent")
    elif node.kind == "cut":
        note.append("proof below the depth asked for")
    meta = f" <small style='color:#777'>{' · '.join(note)}</small>" if note else ""
    if not node.premises:
        return f"<div style='margin-left:1.2em'><code>{text}</code>{meta}</div>"
    inner = "".join(_html(p, False) for p in node.premises)
    return (f"<details{' open' if open_ else ''} style='margin-left:1.2em'><summary><code>{text}</code>{meta}"
            f"</summary>{inner}</details>")
