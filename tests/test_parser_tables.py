"""The stored LALR tables (datalog/language/parser/tables.py) are the grammar's, and the parser
loaded from them parses exactly as one built from grammar.lark does."""

from __future__ import annotations

from pathlib import Path

import lark
import pytest

from datalog.language.parser import lalr, tables

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(ROOT.glob("tests/constructs/*/prog.dl")) + sorted(ROOT.glob("programs/*/prog.dl")) + \
    sorted(ROOT.glob("tests/errors/*.dl"))


def test_the_stored_tables_are_the_grammars():
    text = (ROOT / "datalog/language/parser/grammar.lark").read_text()
    assert tables.GRAMMAR_SHA256 == lalr.grammar_digest(text), \
        "grammar.lark changed: regenerate the tables with python -m datalog.language.parser.lalr"


@pytest.fixture(scope="module")
def parsers():
    text = (ROOT / "datalog/language/parser/grammar.lark").read_text()
    stored = lalr._stored_parser(text)
    if stored is None:
        pytest.skip(f"tables.py is for lark {tables.LARK_VERSION}, this is {lark.__version__}")
    return stored, lalr._built_parser(text)


@pytest.mark.parametrize("path", PROGRAMS, ids=[f"{p.parent.name}/{p.name}" for p in PROGRAMS])
def test_the_stored_parser_parses_as_the_built_one(parsers, path):
    stored, built = parsers
    text = path.read_text(encoding="utf-8", errors="replace")
    outcomes = []
    for parser in (stored, built):
        try:
            outcomes.append(parser.parse(text, start="start"))
        except lark.exceptions.UnexpectedInput as exc:           # the same error, at the same place
            outcomes.append((type(exc).__name__, exc.line, exc.column, sorted(getattr(exc, "expected", ()) or ())))
    assert outcomes[0] == outcomes[1]
