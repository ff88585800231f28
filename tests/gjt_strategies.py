"""Hypothesis strategies for the GJT tests: random GCQs and random update streams.

Relations have fixed arities (r/2, s/3, t/2, u/1) so an atom may repeat a relation
(self-joins).  Predicates compare two variables (``x < y``, ``x != y``,
bands ``x < y + 2``, two inequalities between one pair) or filter one (``x > 1``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from datalog.planning.gjt.query import GCQ, Atom, Predicate

ARITY = {"r": 2, "s": 3, "t": 2, "u": 1}
VARS = ("a", "b", "c", "d", "e", "f")
VALUES = st.integers(0, 3)


@st.composite
def predicates(draw, variables):
    left = draw(st.sampled_from(variables))
    op = draw(st.sampled_from(("<", "<", "<=", ">", ">=", "=", "!=")))
    if draw(st.integers(0, 5)) == 0:
        return Predicate(left, op, None, draw(VALUES))
    right = draw(st.sampled_from([v for v in variables if v != left] or [left]))
    return Predicate(left, op, right, draw(st.sampled_from((0, 0, 0, 1, -1, 2))))


@st.composite
def gcqs(draw, max_atoms: int = 3, max_predicates: int = 3) -> GCQ:
    atoms = []
    for _ in range(draw(st.integers(1, max_atoms))):
        relation = draw(st.sampled_from(sorted(ARITY)))
        unique = draw(st.integers(0, 5)) > 0          # mostly distinct variables in one atom
        names = draw(st.lists(st.sampled_from(VARS), min_size=ARITY[relation], max_size=ARITY[relation],
                              unique=unique))
        atoms.append(Atom(relation, tuple(names)))
    variables = sorted({v for a in atoms for v in a.vars})
    preds = draw(st.lists(predicates(variables), max_size=max_predicates))
    if preds and draw(st.booleans()):        # two inequalities between one pair, or a band
        p = preds[0]
        if p.right is not None:
            preds.append(Predicate(p.right, draw(st.sampled_from(("<", "<="))), p.left, draw(st.sampled_from((0, 2, 3)))))
    out = draw(st.one_of(st.none(), st.sets(st.sampled_from(variables))))
    return GCQ(tuple(atoms), tuple(preds), None if out is None else frozenset(out))


@st.composite
def update_streams(draw, relations, max_length: int = 12, max_batch: int = 1, arity=None, min_length: int = 3):
    """Lists of batches of (relation, row, multiplicity) that keep every relation positive."""
    arity = arity or ARITY
    db: dict[str, dict[tuple, int]] = {}
    stream = []
    for _ in range(draw(st.integers(min_length, max_length))):
        batch = []
        for _ in range(draw(st.integers(1, max_batch))):
            relation = draw(st.sampled_from(sorted(relations)))
            current = db.setdefault(relation, {})
            if current and draw(st.integers(0, 3)) == 0:          # delete some copies
                row = draw(st.sampled_from(sorted(current)))
                d = -draw(st.integers(1, current[row]))
            else:
                row = tuple(draw(VALUES) for _ in range(arity[relation]))
                d = draw(st.integers(1, 2))
            m = current.get(row, 0) + d
            if m:
                current[row] = m
            else:
                del current[row]
            batch.append((relation, row, d))
        stream.append(batch)
    return stream
