"""What the REPL keeps of its commits: the history ``.undo`` walks back (:class:`History`).
(The retractions of facts that were not there are :mod:`datalog.engine.absent`'s.)

``.undo`` commits the inverse of the last commit's change of the EDB relations (what it inserted is
retracted, what it retracted inserted again) as a commit of its own, maintained like any other, so
the derived relations follow; on a workspace that commit is durable as every commit is. A change of
the program (a rule, a declaration, ``.load``, ``.open``, ``.save``) ends the history: the commits
before it are not undone (nor are rules or declarations).

>>> from datalog.engine.engine import Engine
>>> engine = Engine.from_source(".decl e(a: number)\\n.decl c(n: number)\\nc(n) :- n = count : e(_).\\ne(1).")
>>> engine.run()
>>> history = History()
>>> history.record(engine.commit(inserts={"e": [(2,), (3,)]}, retracts={"e": [(1,)]}), engine.idb)
>>> sorted(engine.rows("e")), engine.rows("c")
([(2,), (3,)], [(2,)])
>>> sorted(history.undo(engine)["e"].inserted), engine.rows("e"), engine.rows("c")
([(1,)], [(1,)], [(1,)])
>>> history.undo(engine)
Traceback (most recent call last):
...
datalog.language.errors.NothingToUndo: error[nothing_to_undo]: nothing to undo: every commit of this session is undone
"""

from __future__ import annotations

from datalog.language.errors import NothingToUndo, Span


class History:
    """The EDB changes of the session's commits, last one last, for ``.undo``."""

    def __init__(self) -> None:
        self.commits: list[dict[str, dict[tuple, int]]] = []
        self.ended = False                      # by a change of the program
        self.undone = 0                         # commits undone so far

    def record(self, delta, idb) -> None:
        """A commit was made: its change of the EDB relations is the next one ``.undo`` undoes (a
        commit that changed nothing is not one to undo)."""
        inverse = {}
        for name, change in delta.items():
            if name not in idb and change:
                inverse[name] = {**dict.fromkeys(change.inserted, -1), **dict.fromkeys(change.retracted, +1)}
        if inverse:
            self.commits.append(inverse)

    def end(self) -> None:
        """The program changed: the commits before cannot be undone."""
        self.commits, self.ended, self.undone = [], True, 0

    def undo(self, engine, span: Span | None = None):
        """Commit the inverse of the last commit recorded (and forget it); its delta. Nothing to undo
        is ``nothing_to_undo``; a failed undo (as a failed commit) changes nothing and is kept."""
        if not self.commits:
            why = ("the program changed since the last commit (rules and declarations are not undone)"
                   if self.ended else "every commit of this session is undone" if self.undone
                   else "no commit in this session yet")
            raise NothingToUndo(f"nothing to undo: {why}", span)
        delta = engine.apply(self.commits[-1])
        self.commits.pop()
        self.undone += 1
        return delta

    def __len__(self) -> int:
        return len(self.commits)
