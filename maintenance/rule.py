"""The maintenance rule of one non-recursive rule (§4): record, match, revisit.

For ``F(x, y) :- G(x, z), H(y, z), I(x, y, z), R(z).`` the maintenance rule is

    deltaF(x, y, D) :- (Body[G, H, I, R] ... Body[G', H', I', R'])(x, y, z, D),
                       ChangeOracle(x, y, z).

:class:`RuleMaintainer` evaluates the body by a recording triejoin
(:func:`lftj.recording.leapfrog_recorded` at each depth) that keeps its trace
as a tree of binding prefixes (:mod:`maintenance.trace`) and files every
iterator operation's sensitivity interval in the sensitivity index of
(relation, index order, level), keyed by ``alpha``, the atom's earlier keys.
A region of the change oracle is a trace node and a key interval of its
depth. Revisiting a region drops the old trace below it -- its leaves are the
old satisfying assignments, ``Body[G, H, I, R]`` inside the region -- and
evaluates the region again on the new relations, recording afresh:
``Body[G', H', I', R']`` inside the region. Their difference is the delta.

Levels of an atom's index:
  * ``const``: a constant column; a probe of that key (its region: the whole rule);
  * ``var``: the first column of a variable; joined at that variable's depth.
    When the atom's columns up to here are exactly the first variables of the
    order, no index is kept: a surgery at ``alpha + (key,)`` is itself the region
    (the trace node at path ``alpha``, interval ``[key, key]``) -- the paper's
    dropped indices;
  * ``repeat``: a variable seen at an earlier level of the same atom; a probe;
  * ``wild``: a trailing wildcard column; never opened, changes there do not matter.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from lftj.recording import leapfrog_recorded
from maintenance.sensitivity import end_of, start_of
from maintenance.trace import TraceNode

FULL = (None, None)


class AtomLevels:
    """How each level of one atom's index is read."""

    def __init__(self, atom_plan, relation_arity: int, drop_prefix: bool = True):
        self.relation, self.order = atom_plan.relation, atom_plan.order
        self.kinds: list[tuple] = []                      # (kind, value) per level
        consts = list(atom_plan.prefix)
        seen = set()
        for j in range(relation_arity):
            if j < len(consts):
                self.kinds.append(("const", consts[j]([])))
            elif j - len(consts) < len(atom_plan.depths):
                d = atom_plan.depths[j - len(consts)]
                self.kinds.append(("repeat" if d in seen else "var", d))
                seen.add(d)
            else:
                self.kinds.append(("wild", None))
        depths = [v for k, v in self.kinds if k in ("var", "repeat")]
        self.dropped = [drop_prefix and not consts and depths[:j + 1] == list(range(j + 1))
                        for j in range(len(depths))]

    def key(self, j: int, binding):
        kind, value = self.kinds[j]
        return value if kind == "const" else binding[value]

    def alpha(self, j: int, binding) -> tuple:
        return tuple(self.key(i, binding) for i in range(j))


class RuleMaintainer:
    def __init__(self, clause, plan, db, registry, drop_prefix: bool = True, overrides=None):
        """``overrides``: id(placed) -> (check, probe) for checks that read maintained aggregates."""
        self.clause, self.plan, self.db, self.registry = clause, plan, db, registry
        self.head_relation = clause.head.relation
        self.depth = plan.depth
        self.atoms = [AtomLevels(a, db[a.relation].arity, drop_prefix) for a in plan.atoms]
        self.participants = [[] for _ in range(self.depth)]    # (atom, level) joined at each depth
        self.repeats = [[] for _ in range(self.depth)]         # (atom, level) probed at each depth
        for a, levels in enumerate(self.atoms):
            for j, (kind, d) in enumerate(levels.kinds):
                if kind == "var":
                    self.participants[d].append((a, j))
                elif kind == "repeat":
                    self.repeats[d].append((a, j))
        self.checks = [[] for _ in range(self.depth + 1)]
        self.views: list = []
        for placed in plan.placed:
            check, probe = (overrides or {}).get(id(placed)) or (None, None)
            if check is not None:
                placed = _with_probe(placed, probe)
            self.checks[placed.depth + 1].append((placed, check or placed.make(db)))
            if placed.probe is not None and placed.probe.relation in db:
                db[placed.probe.relation].index(placed.probe.order)   # so its changes come as surgeries
        # §2.2.1 short-circuit: variables from depth ``short`` on do not reach the head; below a
        # node of that depth the search stops at the first witness (None: every variable is needed)
        self.short = plan.needed if plan.needed < plan.depth else None
        self.root = TraceNode(None, None, 0)
        self.binding = [None] * len(plan.slots)
        self.operations = 0
        self.intervals = 0
        self.regions = 0
        self.visited: list[tuple] = []              # regions revisited in the last maintenance
        self.log: list | None = None                # debug: every iterator operation of the trace
        self.skipped = False
        registry.register(self)

    # ------------------------------------------------------------ evaluation
    def evaluate(self, node: TraceNode, lo, hi, out: Counter) -> None:
        """Evaluate the region (node, [lo, hi]) on the current relations, recording as it goes."""
        b = self.binding
        for depth, key in enumerate(node.path()):
            b[depth] = key
        self._assign_above(node.depth, b)
        if node.depth == 0:
            record = (lo, hi) == FULL
            if record:
                self._record_constants(node)
            if not self._checks(0, b, node, None, record):
                return
        if self.depth == 0:
            self._emit(node, None, out)
            return
        self._visit(node, lo, hi, out)

    def _assign_above(self, depth: int, b) -> None:
        """Bind again the variables assigned above a region at ``depth`` (``v = x + 1``, an
        aggregate's value): the binding still holds whatever the last region evaluated, and the
        checks placed above ``depth`` do not run again. They passed when the region's node was
        recorded; they are not recorded here."""
        for index in range(depth + 1 if depth else 0):
            for placed, check in self.checks[index]:
                if placed.kind == "assign":
                    check(b)

    def _visit(self, node: TraceNode, lo, hi, out: Counter) -> bool:
        """The leapfrog of depth ``d`` at ``node`` inside [lo, hi]; True if a leaf was reached."""
        d, b = node.depth, self.binding
        short, found = self.short is not None and d >= self.short, False
        members = self.participants[d]
        levels = [self._keys(a, j, b, lo, hi) for a, j in members]

        def record(i, start, end):
            a, j = members[i]
            self.operations += 1
            if self.log is not None:
                self.log.append((tuple(b[:d]), a, j, start, end))
            if not self.atoms[a].dropped[j - self._consts(a)]:
                self.registry.add(self, self.atoms[a], j, self.atoms[a].alpha(j, b), start, end,
                                  (node, start, end))

        for key in leapfrog_recorded(levels, lo, hi, record):
            b[d] = key
            if not self._repeats_hold(d, b, node, key) or not self._checks(d + 1, b, node, key, True):
                continue
            if d + 1 == self.depth:
                self._emit(node, key, out)
                found = True
            else:
                child = TraceNode(node, key, d + 1)
                self.registry.set_child(node, key, child)
                found = self._visit(child, None, None, out) or found
            if short and found:
                break                    # one witness is enough: the head is bound already
        return found

    def widen(self, region: tuple) -> tuple:
        """A region at or below depth ``short`` becomes its whole existential subtree: that
        search stopped at its first witness, so keys past it were never recorded."""
        node, lo, hi = region
        if self.short is None or node.depth < self.short:
            return region
        while node.depth > self.short:
            node = node.parent
        return node, None, None

    def _emit(self, node: TraceNode, key, out: Counter) -> None:
        head = self.plan.head(self.binding)
        out[head] += 1
        if key is not None:
            self.registry.set_child(node, key, head)
        else:
            self.registry.set_child(node, (), head)      # a rule without variables: one leaf

    # ------------------------------------------------------------ probes
    def _record_constants(self, node: TraceNode) -> None:
        """Constant levels: the whole rule depends on whether each constant path exists."""
        for levels in self.atoms:
            for j, (kind, value) in enumerate(levels.kinds):
                if kind == "const":
                    self.operations += 1
                    self.registry.add(self, levels, j, levels.alpha(j, []), value, value, (node, None, None))

    def _repeats_hold(self, d: int, b, node, key) -> bool:
        for a, j in self.repeats[d]:
            levels = self.atoms[a]
            self.operations += 1
            self.registry.add(self, levels, j, levels.alpha(j, b), key, key, (node, key, key))
            trie = self._trie(a, j, b)
            if trie is None or key not in trie.children:
                return False
        return True

    def _checks(self, index: int, b, node, key, record: bool) -> bool:
        for placed, check in self.checks[index]:
            if placed.probe is not None and record:
                self._record_probe(placed.probe, b, node, key)
            if not check(b):
                return False
        return True

    def _record_probe(self, probe, b, node, key) -> None:
        """``!r(x, _)`` or ``r(1, _)``: sensitive to the existence of the probed branch."""
        path = tuple(f(b) for f in probe.path)
        region = (node, key, key) if key is not None else (node, None, None)
        self.operations += 1
        if not path:                     # r(_): any first-level key, or r() itself
            self.registry.add_probe(self, probe, 0, (), None, None, region)
        else:
            self.registry.add_probe(self, probe, len(path) - 1, path[:-1], path[-1], path[-1], region)

    # ------------------------------------------------------------ tries
    def _consts(self, a: int) -> int:
        return sum(1 for kind, _ in self.atoms[a].kinds if kind == "const")

    def _trie(self, a: int, j: int, b):
        """Atom ``a``'s trie node at level ``j`` under the current binding (None if absent)."""
        levels = self.atoms[a]
        node = self.db[levels.relation].index(levels.order)
        for i in range(j):
            node = node.children.get(levels.key(i, b))
            if node is None:
                return None
        return node

    def _keys(self, a: int, j: int, b, lo, hi) -> list:
        """The keys the leapfrog over [lo, hi] reads at atom ``a``'s level ``j``: the leapfrog
        never reads a key below ``lo`` or past the first key above ``hi`` (recording.py)."""
        node = self._trie(a, j, b)
        return node.window(lo, hi) if node is not None else []

    # ------------------------------------------------------------ regions
    def drop(self, node: TraceNode, lo, hi, old: Counter) -> None:
        """Forget the trace of region (node, [lo, hi]): its entries and the subtrees below it;
        the head tuples of its leaves go to ``old``."""
        for entry in node.entries_within(start_of(lo), end_of(hi)):
            self.registry.remove(entry)
        for key, child in node.children_in(lo, hi):
            if isinstance(child, TraceNode):
                self._drop_subtree(child, old)
            else:
                old[child] += 1
            self.registry.del_child(node, key)

    def _drop_subtree(self, node: TraceNode, old: Counter) -> None:
        for entry in list(node.entries or ()):
            self.registry.remove(entry)
        for key, child in list(node.children.items()) if node.children else []:
            if isinstance(child, TraceNode):
                self._drop_subtree(child, old)
            else:
                old[child] += 1
        self.registry.detach(node)


def _with_probe(placed, probe):
    return replace(placed, probe=probe)
