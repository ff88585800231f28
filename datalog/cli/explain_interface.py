"""Soufflé's interactive explain interface (``datalog run prog.dl -t explain``, or a program with
``.pragma "provenance" "explain"``), over the engine's on-demand proofs.

Commands, as Soufflé reads them, one a line: ``explain R(v, ...)``, ``subproof R(n)``,
``explainnegation R(v, ...)`` (then a rule number and a value per body variable, one a line),
``setdepth n``, ``rule R n``, ``measure R``, ``output [FILE]``, ``format json|proof``,
``exit`` / ``q`` / ``quit``; anything else prints the help. As in Soufflé, prompts and
information are printed only when standard input is a terminal, trees and errors always (a
transcript of piped commands is the trees alone). ``-t explore`` is the same interface (Soufflé's
is a curses screen). ``query`` is not supported.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import replace

from datalog.language import ast
from datalog.language.ast import Comparison, Negation, Variable, Wildcard
from datalog.language.errors import DatalogError
from datalog.language.parser import parse_query
from datalog.provenance import Proof, fact_text
from datalog.provenance.instances import Instances
from datalog.provenance.proof import utf8_width, value_text

HELP = """
----------
Commands:
----------
setdepth <depth>: Set a limit for printed derivation tree height
explain <relation>(<element1>, <element2>, ...): Prints derivation tree
explainnegation <relation>(<element1>, <element2>, ...): Enters an interactive
    interface where the non-existence of a tuple can be explained
subproof <relation>(<label>): Prints derivation tree for a subproof, label is
    generated if a derivation tree exceeds height limit
rule <relation name> <rule number>: Prints a rule
output <filename>: Write output into a file, or provide empty filename to
    disable output
format <json|proof>: switch format between json and proof-trees
measure <relation name>: the size and time of the proofs of a tenth of its tuples
query <relation>(<element1>, x, ...), ...: true. or false., or the answers for the
    variables one at a time (; for the next)
exit: Exits this interface

"""


class Interface:
    """One session of commands over ``engine`` (evaluated), reading ``stdin``, writing ``stdout``."""

    def __init__(self, engine, stdin=None, stdout=None):
        self.engine = engine
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout
        self.interactive = self.stdin.isatty() if hasattr(self.stdin, "isatty") else False
        self.depth, self.json, self.output = 4, False, None
        self.subproofs: list[tuple[str, tuple]] = []

    # ---- Soufflé's four channels
    def prompt(self, text: str) -> None:
        if self.interactive:
            self.stdout.write(text)
            self.stdout.flush()

    def info(self, text: str) -> None:
        if self.interactive:
            self.stdout.write(text)

    def error(self, text: str) -> None:
        self.stdout.write(text)

    def read(self) -> str:
        line = self.stdin.readline()
        return line.rstrip("\n") if line else "q"

    # ---- the loop
    def run(self) -> int:
        self.prompt("Explain is invoked.\n")
        while True:
            self.prompt("Enter command > ")
            if not self.command(self.read()):
                break
        if self.output is not None:
            self.output.close()
        return 0

    def command(self, line: str) -> bool:
        name, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if not name:
            return True
        handler = getattr(self, f"_{name}", None) if name in COMMANDS else None
        if name in ("exit", "q", "quit"):
            self.prompt("Exiting explain\n")
            return False
        if handler is None:
            self.error(HELP)
            return True
        handler(rest)
        return True

    # ---- commands
    def _setdepth(self, rest: str) -> None:
        try:
            self.depth = int(rest)
        except ValueError:
            self.error(f"<{rest}> is not a valid depth\n" if rest else "Usage: setdepth <depth>\n")
            return
        self.info(f"Depth is now {self.depth}\n")

    def _explain(self, rest: str) -> None:
        if not rest:
            self.error('Usage: explain relation_name("<string element1>", <number element2>, ...)\n')
            return
        fact = self._fact(rest)
        if isinstance(fact, str):
            self.write(fact)
            return
        self.tree(fact)

    def _subproof(self, rest: str) -> None:
        name, _, label = rest.partition("(")
        try:
            index = int(label.rstrip(") "))
        except ValueError:
            self.error("Usage: subproof relation_name(<label>)\n")
            return
        if not 0 <= index < len(self.subproofs) or self.subproofs[index][0] != name.strip():
            self.write("Subproof not found")
            return
        self.tree(self.subproofs[index])

    def _explainnegation(self, rest: str) -> None:
        if not rest:
            self.error('Usage: explainnegation relation_name("<string element1>", <number element2>, ...)\n')
            return
        if rest.partition("(")[0].strip() not in self.engine.db:
            self.write("Relation not found")
            return
        try:
            relation, row = self.engine.ground_fact(rest)
        except DatalogError as err:
            self.error(err.render() + "\n")
            return
        rules = [c for c in self.engine.checked.clauses if c.head.relation == relation]
        if not any(c.body for c in rules):
            self.info("The tuple would be an input fact!\n")
            return
        self.info("".join(f"{i}: {c}\n\n" for i, c in enumerate(rules, 1)))
        self.prompt("Pick a rule number: ")
        try:
            clause = rules[int(self.read()) - 1]
        except (ValueError, IndexError):
            self.error("Usage: pick a rule number from the list\n")
            return
        if row in self.engine.db[relation]:
            self.info("The tuple exists, cannot explain negation of it!\n")
            return
        if not clause.body:
            self.info("The rule is a fact!\n")
            return
        evaluator = Instances(self.engine.db, clause)
        binding = evaluator.head_binding(row)
        if binding is None:
            self.info("The variable bindings don't match, cannot explain!\n")
            return
        for name in _body_variables(clause, binding):
            self.prompt(f"Pick a value for {name}: ")
            binding[name] = _value(self.read())
        self.write(_negation_tree(evaluator, clause, rest, binding, _rule_number(self.engine, clause)))

    def _rule(self, rest: str) -> None:
        parts = rest.split()
        try:
            name, number = parts[0], int(parts[1])
            clause = [c for c in self.engine.checked.clauses if c.head.relation == name][number - 1]
        except (ValueError, IndexError):
            self.error("Usage: rule <relation name> <rule number>\n")
            return
        self.info(f"{clause}\n")

    def _measure(self, rest: str) -> None:
        relation = self.engine.db.get(rest)
        if relation is None:
            self.info("No relation found\n")
            return
        rows = relation.sorted_rows()
        skip = max(1, len(rows) // 10)
        started, done = time.perf_counter(), 0
        for row in rows[::skip]:
            begin = time.perf_counter()
            size = sum(1 for _ in self.engine.explainer().why(rest, row).nodes())
            self.stdout.write(f"Tuples expanded: {size}, Time: {time.perf_counter() - begin:.6f}\n")
            done += 1
        self.info(f"total: {done} {time.perf_counter() - started:.6f}\n")

    def _output(self, rest: str) -> None:
        if self.output is not None:
            self.output.close()
        self.output = open(rest, "w", encoding="utf-8") if rest else None

    def _format(self, rest: str) -> None:
        if rest in ("json", "proof"):
            self.json = rest == "json"
        else:
            self.error("Usage: format <json|proof>\n")

    def _query(self, rest: str) -> None:
        """``query path("a", x), path(x, "b")``: the answers one at a time, as Soufflé gives them
        (``x = B0``; a line ``;`` asks for the next; the last ends with ``.``); ``true.`` or
        ``false.`` for a query without variables."""
        if not rest:
            self.error("Usage: query <relation1>(<element1>, <element2>, ...), <relation2>(...), ...\n")
            return
        try:
            names, rows = self.engine.ask(parse_query(f"?- {rest}."))
        except DatalogError as err:
            self.error(err.render() + "\n")
            return
        if not names:
            self.write("true." if rows else "false.")
            return
        if not rows:
            self.write("false.")
            return
        rows = sorted(rows, key=_souffle_order(self.engine))
        for i, row in enumerate(rows):
            answer = ", ".join(f"{n} = {_answer_value(v)}" for n, v in zip(names, row))
            if i == len(rows) - 1:
                self.write(answer + ".")
            else:
                self.write(answer)
                if self.read().strip() != ";":
                    return

    # ---- trees
    def _fact(self, text: str):
        """(relation, row) of a held fact, or the text Soufflé prints instead of a tree."""
        name = text.partition("(")[0].strip()
        if name not in self.engine.db:
            return "Relation not found"
        try:
            relation, row = self.engine.ground_fact(text)
        except DatalogError:
            return "Tuple not found"
        return (relation, row) if row in self.engine.db[relation] else "Tuple not found"

    def tree(self, fact) -> None:
        relation, row = fact
        proof = _with_souffle_floats(self.engine.explainer().why(relation, row, self.depth - 1))
        self.write(proof.to_text(self._cut_label, utf8_width), proof)

    def _cut_label(self, node) -> str:
        fact = (node.relation, node.row)
        if fact not in self.subproofs:
            self.subproofs.append(fact)
        return f"subproof {node.relation}({self.subproofs.index(fact)})"

    def write(self, text: str, proof=None) -> None:
        out = self.output or self.stdout
        if self.json and proof is not None:
            out.write("{ \"proof\":\n" + _souffle_json(proof, 1, self._cut_label) + ",\"rules\": [\n" +
                      ",\n".join(f"\t{{ \"rule-number\": \"(R{n})\", \"rule\": {_quote(str(c))}}}"
                                 for n, c in _numbered(self.engine)) + "\n]\n}\n")
        else:
            out.write(text + "\n")
        out.flush()


_TOKEN = re.compile(r'"[^"]*"|[^,\s()]+')
COMMANDS = ("setdepth", "explain", "subproof", "explainnegation", "rule", "measure", "output", "format",
            "query", "exit", "q", "quit")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _souffle_json(node, pos: int, cut_label) -> str:
    """Soufflé's JSON of a proof tree: ``premises`` / ``rule-number`` / ``children`` for a rule
    node, ``axiom`` for a leaf."""
    tab = "\t" * pos
    if node.kind not in ("rule", "aggregate") or not node.premises:
        text = cut_label(node) if node.kind == "cut" else node.text
        return f"{tab}{{ \"axiom\": {_quote(text)}}}"
    label = f"(R{node.rule_number})" if node.kind == "rule" else f"({node.rule})"
    children = ",\n".join(_souffle_json(p, pos + 1, cut_label) for p in node.premises)
    return (f"{tab}{{ \"premises\": {_quote(node.text)},\n{tab}  \"rule-number\": \"{label}\",\n"
            f"{tab}  \"children\": [\n{children}{tab}]\n{tab}}}")


def _numbered(engine):
    counts: dict[str, int] = {}
    for clause in engine.checked.clauses:
        name = clause.head.relation
        counts[name] = counts.get(name, 0) + 1
        if clause.body:
            yield counts[name], clause


def _rule_number(engine, clause) -> int:
    return next(n for n, c in _numbered(engine) if c is clause)


def _body_variables(clause, bound: dict) -> list[str]:
    """The body's variables the head does not bind, in order of first appearance."""
    seen: list[str] = []
    for literal in clause.body:
        for node in _variables(literal):
            if node not in bound and node not in seen:
                seen.append(node)
    return seen


def _variables(literal) -> list[str]:
    return [v.name for v in ast.variables(literal)]


def _value(text: str):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _negation_tree(evaluator, clause, head_text: str, binding: dict, number: int) -> str:
    """Soufflé's ``explainnegation`` tree: each body literal under the chosen binding, marked
    ``✓`` where it holds and ``x`` where it does not (atoms and negations first, then comparisons)."""
    children = []
    literals = [lit for lit in clause.body if not isinstance(lit, Comparison)] + \
               [lit for lit in clause.body if isinstance(lit, Comparison)]
    for literal in literals:
        holds = evaluator.holds(literal, binding)
        if isinstance(literal, Comparison):
            text = f"{_shown(evaluator, literal.left, binding)} {literal.op} {_shown(evaluator, literal.right, binding)}"
        else:
            atom = literal.atom if isinstance(literal, Negation) else literal
            # Soufflé prints a negation here without its arguments: !neg()
            text = f"!{atom.relation}()" if isinstance(literal, Negation) else \
                f"{atom.relation}({', '.join(_shown(evaluator, a, binding) for a in atom.args)})"
        children.append(Proof("constraint", f"{text} {'✓' if holds else 'x'}"))
    name, _, inner = head_text.strip().partition("(")
    tokens = _TOKEN.findall(inner)                 # as typed, joined by "," (Soufflé prints them so)
    head = name.strip() + "(" + ",".join(tokens) + ")"
    tree = Proof("rule", head, rule_number=number, premises=children)
    return tree.to_text(width=utf8_width)


def _with_souffle_floats(node):
    """The proof with each fact's floats as Soufflé's explain prints them (``%f``: ``1.100000``;
    the engine's own text keeps every digit)."""
    text = node.text
    if node.row is not None and any(isinstance(v, float) for v in node.row):
        text = f"{node.relation}({', '.join(_souffle_value(v) for v in node.row)})"
    return replace(node, text=text, premises=[_with_souffle_floats(p) for p in node.premises])


def _souffle_value(value) -> str:
    return f"{value:f}" if isinstance(value, float) else value_text(value)


def _answer_value(value) -> str:
    """A value of a query answer as Soufflé prints it: symbols bare, floats as %g."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _souffle_order(engine):
    """The sort key of answer rows in Soufflé's order: a symbol by its number in Soufflé's symbol
    table, which numbers symbols as they first occur (here: in the program's text, then the rest
    by their text); numbers by value."""
    ranks: dict[str, int] = {}
    for statement in engine.program.statements:
        if isinstance(statement, ast.Rule):
            for node in ast.walk((statement.heads, statement.body)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    ranks.setdefault(node.value, len(ranks))

    def key(row):
        return tuple((0, ranks[v], "") if isinstance(v, str) and v in ranks else
                     (1, 0, v) if isinstance(v, str) else (0, v, "") for v in row)
    return key


def _shown(evaluator, term, binding) -> str:
    if isinstance(term, Wildcard) or (isinstance(term, Variable) and term.name not in binding):
        return str(term)
    try:
        return fact_text("", (evaluator.eval(term, binding),))[1:-1]
    except Exception:                       # noqa: BLE001  (shown as written when it has no value)
        return str(term)


__all__ = ["Interface"]
