"""A fact given to ``explain-fact`` / ``why`` that is not one tuple is ``bad_fact``, and the tuple it
suggests instead has a value of each column's type (``can("a", "a", "a")``, not ``can(1, 1, 1)``
for symbol columns): the suggestion is itself a fact the command takes."""

from __future__ import annotations

import re

import pytest

from datalog.cli import main
from datalog.engine.engine import Engine
from datalog.language.errors import BadFact

PROGRAM = """\
.decl grant(u: symbol, r: symbol, a: symbol)
grant("ann", "doc", "read").
.decl can(u: symbol, r: symbol, a: symbol)
can(u, r, a) :- grant(u, r, a).
.type Name <: symbol
.decl mixed(n: number, f: float, u: unsigned, s: Name)
mixed(1, 1.5, 2, "x").
"""


def _suggestion(engine: Engine, fact: str) -> str:
    with pytest.raises(BadFact) as caught:
        engine.ground_fact(fact)
    return re.search(r"such as (.*)$", caught.value.message).group(1)


@pytest.mark.parametrize("fact, expected", [
    ('can(x, "doc", "read")', 'can("a", "a", "a")'),
    ('mixed(1, 1.5, y, "x")', 'mixed(1, 1.5, 1, "a")'),
    ("mixed(_, _, _, _)", 'mixed(1, 1.5, 1, "a")'),
])
def test_the_suggested_fact_has_a_value_of_each_columns_type(fact, expected):
    engine = Engine.from_source(PROGRAM)
    engine.run()
    suggested = _suggestion(engine, fact)
    assert suggested == expected
    relation, row = engine.ground_fact(suggested)         # taken as it is: one tuple of the right types
    assert relation == fact.split("(")[0] and len(row) == len(engine.schema[relation].types)


def test_explain_fact_prints_the_typed_suggestion(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.dl").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    assert main(["explain-fact", "p.dl", 'can(x, "doc", "read")']) == 1
    err = capsys.readouterr().err
    assert err.startswith("<query>:1:5: error[bad_fact]: ") and 'such as can("a", "a", "a")' in err
    assert main(["explain-fact", "p.dl", 'can("a", "a", "a")', "--why-not"]) == 0     # the suggestion is taken
    assert "can" in capsys.readouterr().out
