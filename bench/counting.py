"""The counting twin: first-order incremental view maintenance by delta rules with support counts.

What a user might pick instead of the sensitivity-index method for a non-recursive rule (Gupta,
Mumick and Subrahmanian 1993, "counting"): every head tuple keeps the number of its derivations,
and a transaction's change of the body relations is pushed through one delta rule per body atom,

    dH  +=  R1_new, ..., R(i-1)_new, dRi, R(i+1)_old, ..., Rn_old        (i = 1..n)

with signed tuples (+1 inserted, -1 retracted; the sum over i telescopes to new join - old join).
A head tuple is in the relation while its count is positive. Each delta rule joins its delta
atom's tuples with the other atoms in a fixed order, each looked up by a hash index on the
positions its earlier variables bind (a dict from key to the rows), or by membership when every
position is bound. The indexes are kept in the old state while the delta rules run; an atom read
in the new state is the old index without the retracted rows, plus the inserted rows.

Only positive atoms over variables (what join3 and triangles need): it is the benchmark's
peer, not a maintainer of the engine (tests/test_counting_twin.py checks it against evaluating
the rule again after random updates).

>>> twin = Counting(("q", "ac"), [("r", "ab"), ("s", "bc")], {"r": [(1, 2)], "s": [(2, 3), (2, 4)]})
>>> sorted(twin.rows())
[(1, 3), (1, 4)]
>>> twin.apply({"s": [(2, 5)]}, {"r": [(1, 2)]})
(set(), {(1, 3), (1, 4)})
>>> gained, lost = twin.apply({"r": [(7, 2)]}, {}); sorted(gained), lost
([(7, 3), (7, 4), (7, 5)], set())
"""

from __future__ import annotations

from collections import Counter, defaultdict


class Counting:
    """``head``: (name, variables); ``body``: [(relation, variables)], a variable a one-letter
    name or any hashable; ``relations``: the initial rows of each relation the body reads."""

    def __init__(self, head: tuple, body: list, relations: dict):
        self.head_vars = list(head[1])
        self.body = [(rel, list(vars_)) for rel, vars_ in body]
        names = []
        for _, vars_ in self.body:
            names += [v for v in vars_ if v not in names]
        self.var = {v: k for k, v in enumerate(names)}
        self.width = len(names)
        self.rows_of = {rel: set(map(tuple, relations.get(rel, ()))) for rel, _ in self.body}
        self.plans = [self._plan(i) for i in range(len(self.body))]
        self.indexes: dict[tuple, dict] = {}               # (relation, positions) -> key -> rows
        for plan in self.plans:
            for rel, positions, *_, full in plan[1]:
                if positions and not full and (rel, positions) not in self.indexes:
                    self.indexes[(rel, positions)] = self._index(self.rows_of[rel], positions)
        out: Counter = Counter()
        self._run(0, list(self.rows_of[self.body[0][0]]), 1, {}, out)
        self.count = +out

    def rows(self) -> set:
        return set(self.count)

    # ------------------------------------------------------------ plans
    def _plan(self, i: int) -> tuple:
        """Delta rule ``i``: the delta atom's (variable index per position), then the other atoms,
        each next one sharing the most bound variables: (relation, bound positions, their
        variables, free positions, their variables, whether it is read in the new state)."""
        var = self.var
        bound = set(self.body[i][1])
        first = [var[v] for v in self.body[i][1]]
        rest, steps = [j for j in range(len(self.body)) if j != i], []
        while rest:
            j = max(rest, key=lambda j: (sum(v in bound for v in self.body[j][1]), -j))
            rest.remove(j)
            rel, vars_ = self.body[j]
            key = tuple(p for p, v in enumerate(vars_) if v in bound)
            free = tuple(p for p, v in enumerate(vars_) if v not in bound and vars_.index(v) == p)
            same = tuple((p, vars_.index(v)) for p, v in enumerate(vars_) if v not in bound and vars_.index(v) != p)
            # (a variable repeated in one atom: the later position must equal the first)
            steps.append((rel, key, tuple(var[vars_[p]] for p in key), free,
                          tuple(var[vars_[p]] for p in free), same, j < i, len(key) == len(vars_)))
            bound |= set(vars_)
        return first, steps

    @staticmethod
    def _index(rows, positions) -> dict:
        index: dict = defaultdict(list)
        for row in rows:
            index[tuple(row[p] for p in positions)].append(row)
        return index

    # ------------------------------------------------------------ a transaction
    def apply(self, inserts: dict, retracts: dict) -> tuple[set, set]:
        """Insert and retract EDB rows (an absent retraction or a present insertion is ignored; a
        row both inserted and retracted stays); returns the head tuples (gained, lost)."""
        delta = {}
        for rel in self.rows_of:
            present = self.rows_of[rel]
            asked = {tuple(r) for r in inserts.get(rel, ())}
            plus = asked - present
            minus = {tuple(r) for r in retracts.get(rel, ()) if tuple(r) in present} - asked
            if plus or minus:
                delta[rel] = (plus, minus)
        out: Counter = Counter()
        for i, (rel, _) in enumerate(self.body):
            if rel in delta:
                plus, minus = delta[rel]
                self._run(i, plus, 1, delta, out)
                self._run(i, minus, -1, delta, out)
        for rel, (plus, minus) in delta.items():            # the indexes move to the new state
            rows = self.rows_of[rel]
            rows |= plus
            rows -= minus
            for (name, positions), index in self.indexes.items():
                if name == rel:
                    for row in plus:
                        index[tuple(row[p] for p in positions)].append(row)
                    for row in minus:
                        key = tuple(row[p] for p in positions)
                        bucket = index[key]
                        bucket.remove(row)
                        if not bucket:
                            del index[key]
        gained, lost, count = set(), set(), self.count
        for head, change in out.items():
            if not change:
                continue
            before = count.get(head, 0)
            after = before + change
            if after:
                count[head] = after
            else:
                del count[head]
            if before <= 0 < after:
                gained.add(head)
            elif after <= 0 < before:
                lost.add(head)
        return gained, lost

    def _run(self, i: int, rows, sign: int, delta: dict, out: Counter) -> None:
        """Delta rule ``i`` over ``rows`` (of atom ``i``, each with ``sign``) into ``out``."""
        first, steps = self.plans[i]
        head = [self.var[v] for v in self.head_vars]
        repeated = [(p, first.index(v)) for p, v in enumerate(first) if first.index(v) != p]
        b = [None] * self.width
        fresh: dict = {}                                    # (relation, positions) -> index of inserted rows
        rows_of, indexes = self.rows_of, self.indexes

        def lookup(rel, positions, key, full, new):
            present = rows_of[rel]
            changed = delta.get(rel) if new else None
            if full:                                        # every position bound: membership
                if changed is None:
                    return (key,) if key in present else ()
                plus, minus = changed
                return (key,) if (key in present and key not in minus) or key in plus else ()
            found = indexes[(rel, positions)].get(key, ()) if positions else present
            if changed is None:
                return found
            plus, minus = changed
            extra = fresh.get((rel, positions))
            if extra is None:
                extra = fresh[(rel, positions)] = self._index(plus, positions)
            return [r for r in found if r not in minus] + extra.get(key, [])

        def join(k):
            if k == len(steps):
                out[tuple(b[v] for v in head)] += sign
                return
            rel, positions, kvars, free, fvars, same, new, full = steps[k]
            for row in lookup(rel, positions, tuple(b[v] for v in kvars), full, new):
                if same and any(row[p] != row[q] for p, q in same):
                    continue
                for p, v in zip(free, fvars):
                    b[v] = row[p]
                join(k + 1)

        for row in rows:
            if repeated and any(row[p] != row[q] for p, q in repeated):
                continue
            for p, v in enumerate(first):
                b[v] = row[p]
            join(0)
