"""Retractions of facts that are not there, through the Python API: an AbsentRetractionWarning
(code retract_absent, the facts named, as the CLI's warning[retract_absent] says), the commit made
all the same; none when every retraction removes a fact."""

from __future__ import annotations

import warnings

import pytest

from datalog import AbsentRetractionWarning, Engine, Workspace

PROGRAM = ".decl e(a: number, b: number)\n.decl p(a: number, b: number)\np(x, y) :- e(x, y).\ne(1, 2). e(2, 3).\n"


def _absent(call) -> list[AbsentRetractionWarning]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w.message for w in caught if issubclass(w.category, AbsentRetractionWarning)]


@pytest.mark.parametrize("on", ["engine", "workspace"])
def test_retracting_absent_facts_warns_and_the_commit_stands(tmp_path, on):
    ws = Workspace.create(tmp_path / "ws", PROGRAM) if on == "workspace" else None
    engine = ws.engine if ws else Engine.from_source(PROGRAM)
    engine.run()
    [warning] = _absent(lambda: engine.commit(inserts={"e": [(5, 5)]}, retracts={"e": [(1, 2), (7, 7)]}))
    assert warning.code == "retract_absent" and warning.facts == [("e", (7, 7))]
    assert str(warning) == "warning[retract_absent]: 1 of 2 retractions removed nothing (no such fact): e(7, 7)"
    assert sorted(engine.rows("p")) == [(2, 3), (5, 5)]                 # made all the same
    [warning] = _absent(lambda: engine.retract("e", [(9, 9)]))
    assert warning.facts == [("e", (9, 9))] and "e(9, 9) is not in e: nothing was retracted" in str(warning)
    assert _absent(lambda: engine.retract("e", [(2, 3)])) == []         # it was there
    assert _absent(lambda: engine.commit(inserts={"e": [(1, 1)]})) == []
    assert sorted(engine.rows("p")) == [(1, 1), (5, 5)]
    if ws:
        seq = ws.seq
        ws.close()
        with Workspace.open(tmp_path / "ws", readonly=True) as again:
            assert sorted(again.engine.rows("p")) == [(1, 1), (5, 5)] and again.seq == seq


def test_the_warning_before_the_first_run_counts_the_inputs_loaded():
    engine = Engine.from_source(PROGRAM)                  # not run yet: commit evaluates first
    [warning] = _absent(lambda: engine.commit(retracts={"e": [(1, 2), (3, 4), (4, 5), (5, 6), (6, 7)]}))
    assert warning.facts == [("e", (3, 4)), ("e", (4, 5)), ("e", (5, 6)), ("e", (6, 7))]
    assert str(warning).endswith("e(3, 4), e(4, 5), e(5, 6) and 1 more")
    assert engine.rows("p") == [(2, 3)]
