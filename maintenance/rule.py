"""The maintenance rule of one non-recursive rule (§4): record, match, revisit.

For ``F(x, y) :- G(x, z), H(y, z), I(x, y, z), R(z).`` the maintenance rule is

    deltaF(x, y, D) :- (Body[G, H, I, R] ... Body[G', H', I', R'])(x, y, z, D),
                       ChangeOracle(x, y, z).

:class:`RuleMaintainer` evaluates the body by the triejoin (:mod:`lftj.triejoin`)
whose leapfrog runs over recording iterators (:mod:`lftj.recording`); it keeps
the join's output as its trace, a tree of binding prefixes (:mod:`maintenance.trace`),
and files every iterator operation's sensitivity interval in the sensitivity index of
(relation, index order, level), keyed by ``alpha``, the atom's earlier keys.
A region of the change oracle is a trace node and a key interval of its
depth. Revisiting a region drops the old trace below it -- its leaves are the
old satisfying assignments, ``Body[G, H, I, R]`` inside the region -- and
evaluates the region again on the new relations, recording afresh:
``Body[G', H', I', R']`` inside the region. Their difference is the delta.

The levels of each atom's index are read as :mod:`maintenance.levels` says.
"""

from __future__ import annotations

from collections import Counter
from sys import getsizeof

from datalog.planning.plan import Assign
from lftj.recording import leapfrog_recorded, leapfrog_recording
from lftj.triejoin import JoinPlan, Triejoin
from maintenance.budget import MemoryBudget
from maintenance.levels import AtomLevels, LookupPath, lookup_path
from maintenance.trace import TraceNode

FULL = (None, None)


class RuleMaintainer:
    """The maintenance rule of one clause: its recorded trace (``root``), the sensitivity entries
    the trace recorded (filed in ``registry``), and ``evaluate`` / ``drop`` of a region.

    Invariant: every leaf under ``root`` is one satisfying assignment of the body on the current
    relations, at the path of its binding, and every iterator operation that produced the trace
    has its sensitivity entry (unless its index is dropped, see the module docstring)."""

    AT_ONCE = True       # a first recording's leapfrogs run at once (False: through Recording iterators)

    def __init__(self, clause, plan, db, registry, drop_prefix: bool = True, overrides=None):
        """``plan``: a compiled plan; ``overrides``: the position of a filter in the plan -> (check,
        LookupPath) for a filter that reads a maintained aggregate."""
        self.clause, self.plan, self.db, self.registry = clause, plan, db, registry
        self.head_relation = clause.head.relation
        self.depth = plan.depth
        self.atoms = [AtomLevels(a, db[a.relation].arity, drop_prefix) for a in plan.atoms]
        self.participants = [[] for _ in range(self.depth)]    # (atom, level) joined at each depth
        self.repeats = [[] for _ in range(self.depth)]         # (atom, level) looked up at each depth
        for a, levels in enumerate(self.atoms):
            for j, (kind, d) in enumerate(levels.kinds):
                if kind == "var":
                    self.participants[d].append((a, j))
                elif kind == "repeat":
                    self.repeats[d].append((a, j))
        self.checks = [[] for _ in range(self.depth + 1)]      # (filter, check, lookup) once each depth is bound
        self.views: list = []
        for k, compiled in enumerate(plan.filters):
            check, lookup = (overrides or {}).get(k) or (compiled.make(db), lookup_path(compiled))
            self.checks[compiled.depth + 1].append((compiled.filter, check, lookup))
            if lookup is not None and lookup.relation in db:
                db[lookup.relation].index(lookup.order)        # so its changes come as surgeries
        self.recorded = [[self._recorded(index, check, lookup) for _, check, lookup in checks]
                         for index, checks in enumerate(self.checks)]
        # the triejoin of the body: checks placed above depth 0 record their lookups as they run
        self.join = JoinPlan(self.depth, [[a for a, _ in members] for members in self.participants],
                             [[a for a, _ in members] for members in self.repeats],
                             [[]] + self.recorded[1:], plan.needed, len(plan.slots))
        self.binding = [None] * len(plan.slots)
        self.kept: list[list] = []                  # per depth: (atom, level, alpha, index or None) per participant
        self.records = [self._recorder(d) for d in range(self.depth)]
        # §2.2.1 short-circuit: variables from depth ``short`` on do not reach the head; below a
        # node of that depth the search stops at the first witness (None: every variable is needed)
        self.short = plan.needed if plan.needed < plan.depth else None
        self.root = TraceNode(None, None, 0)
        self.node = self.root                       # the trace node the triejoin is at
        self.region: tuple = (self.root, None, None)  # the region being evaluated
        self.out: Counter | None = None             # where the region's leaves are counted
        self.operations = 0
        self.intervals = 0
        self.regions = 0
        self.visited: list[tuple] = []              # regions revisited in the last maintenance
        self.log: list | None = None                # debug: every iterator operation of the trace
        self.skipped = False
        registry.register(self)

    def read_indexes(self):
        """(relation, column order) of every trie index this rule and its aggregate views' rules
        read: built (or made lazy) so that changes of those relations come as surgeries."""
        for one in [self] + [view.rule for view in self.views]:
            for atom in one.plan.atoms:
                yield atom.relation, atom.order

    # ------------------------------------------------------------ evaluation
    def evaluate(self, node: TraceNode, lo, hi, out: Counter) -> None:
        """Evaluate the region (node, [lo, hi]) on the current relations, recording as it goes:
        the triejoin from ``node``'s depth, its leapfrog over recording iterators opened on the
        region, the trace below ``node`` recorded as the join's output."""
        b = self.binding
        for depth, key in enumerate(node.path()):
            b[depth] = key
        self._assign_above(node.depth, b)
        self.node, self.out = node, out
        if node.depth == 0:
            record = (lo, hi) == FULL
            if record:
                self._record_constants(node)
            if not all(check(b) for check in (self.recorded[0] if record else [c for _, c, _ in self.checks[0]])):
                return
        if self.depth == 0:
            self._emit(b)
            return
        self.region = (node, lo, hi)
        Triejoin(self.join, self._positioned(node.depth), b, self._emit, self._leapfrog, trace=self).visit(node.depth)

    def _assign_above(self, depth: int, b) -> None:
        """Bind again the variables assigned above a region at ``depth`` (``v = x + 1``, an
        aggregate's value): the binding still holds whatever the last region evaluated, and the
        checks placed above ``depth`` do not run again. They passed when the region's node was
        recorded; they are not recorded here."""
        for index in range(depth + 1 if depth else 0):
            for f, check, _ in self.checks[index]:
                if isinstance(f, Assign):
                    check(b)

    def _positioned(self, depth: int) -> list:
        """Each atom's trie node below its constants and the levels bound above ``depth`` (None
        where the binding's path is absent: its leapfrog is over no keys)."""
        b, nodes = self.binding, []
        for levels in self.atoms:
            node = self.db[levels.relation].index(levels.order)
            for kind, value in levels.kinds:
                if node is None or kind == "wild" or (kind != "const" and value >= depth):
                    break
                node = node.children.get(value if kind == "const" else b[value])
            nodes.append(node)
        return nodes

    def _leapfrog(self, parents):
        """The leapfrog of the depth the trace is at, over recording iterators; at the region's
        node they are opened on the region's interval. An iterator opened at its end stops the
        join before the next is opened (the paper: "if either iterator is at end, stop")."""
        node = self.node
        region, lo, hi = self.region
        if node is not region:
            lo = hi = None
        if self.AT_ONCE and self.registry.journal is None and self.log is None and node.depth < self.join.needed \
                and not node.entries:
            return self._leapfrog_at_once(node, lo, hi, parents)
        levels = (parent.window(lo, hi) if parent is not None else () for parent in parents)
        return leapfrog_recording(levels, lo, hi, self.records[node.depth])

    def _leapfrog_at_once(self, node, lo, hi, parents) -> list:
        """A first recording's leapfrog (outside a transaction, at a node with no entry yet, where
        the join takes every key: not an existential depth), run to its end at once
        (:func:`lftj.recording.leapfrog_recorded`) and its operations filed in bulk
        (``Registry.record_run``) -- the same keys and entries as over recording iterators,
        without a call per operation; one by one through the recorder if the bulk declines."""
        d, b = node.depth, self.binding
        keys, who, starts, ends = leapfrog_recorded(
            [parent.window(lo, hi) if parent is not None else () for parent in parents], lo, hi)
        targets = [None if index is None else (index, index.alpha_id(alpha(b))) for _, _, alpha, index in self.kept[d]]
        before, after, budget = self.operations, self.operations + len(who), self.registry.budget
        if budget is not None and (before == 0 or before // (MemoryBudget.every + 1) != after // (MemoryBudget.every + 1)):
            budget.check(self)                  # (as the recorder: as a build starts, then every 64k)
        if self.registry.record_run(self, node, targets, who, starts, ends):
            self.operations = after
        else:
            record = self.records[d]
            for i, start, end in zip(who, starts, ends):
                record(i, start, end)
        return keys

    def _recorder(self, d: int):
        """``record(i, start, end)`` of depth ``d``'s ``i``-th participant: a sensitivity entry
        under the atom's earlier keys, whose region is the trace node the leapfrog runs at."""
        members, atoms, registry, b = self.participants[d], self.atoms, self.registry, self.binding

        every = MemoryBudget.every
        kept = [(a, j, atoms[a].alphas[j],
                 None if atoms[a].dropped[j - atoms[a].consts] else registry.index((atoms[a].relation, atoms[a].order, j)))
                for a, j in members]
        self.kept.append(kept)

        ids: dict = {}               # participant -> its alpha's id at ``at`` (the alpha is the node's)
        at = None

        def record(i, start, end):
            nonlocal at
            a, j, alpha, index = kept[i]
            self.operations += 1
            if (not self.operations & every or self.operations == 1 and registry.journal is None) \
                    and registry.budget is not None:           # (every 64k operations, and as a build starts)
                registry.budget.check(self)
            if self.log is not None:
                self.log.append((tuple(b[:d]), a, j, start, end))
            if index is not None:
                node = self.node
                if node is not at:
                    ids.clear()
                    at = node
                aid = ids.get(i)
                if aid is None:
                    aid = ids[i] = index.alpha_id(alpha(b))
                registry.record_same(self, index, aid, start, end, node)
        return record

    # ------------------------------------------------------------ the trace: the join's output trie
    def open(self, key) -> None:
        node = self.node
        child = TraceNode(node, key, node.depth + 1)
        self.registry.set_child(node, key, child)
        self.node = child

    def up(self) -> None:
        """The join leaves the node: its lists and entries, grown by appends (a list of two keys
        holds eight slots, an array of two handles five), are copied to their exact size."""
        node = self.node
        kids = node.kids
        if kids is not None and len(kids) > 1:
            node.kids = kids[:]
            if node.keys is not None:
                node.keys = node.keys[:]
        entries = node.entries
        if entries is not None and len(entries) > 1:
            node.entries = entries[:]
        self.node = node.parent

    def _emit(self, b) -> None:
        """A leaf: the head tuple the binding derives, under the key of the last depth."""
        head = self.plan.head(b)
        self.out[head] += 1
        self.registry.set_child(self.node, b[self.depth - 1] if self.depth else (), head)

    def widen(self, region: tuple) -> tuple:
        """A region at or below depth ``short`` becomes its whole existential subtree: that
        search stopped at its first witness, so keys past it were never recorded."""
        node, lo, hi = region
        if self.short is None or node.depth < self.short:
            return region
        while node.depth > self.short:
            node = node.parent
        return node, None, None

    def state_bytes(self, row_bytes: float) -> int:
        """The memory of this rule's trace (its nodes in memory: one still on disk counts as its
        shell) and of its sensitivity entries at ``row_bytes`` each (``Registry.row_bytes``)."""
        size, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            size += getsizeof(node)
            if type(node) is not TraceNode:           # a LazyTraceNode: the rest is on disk
                continue
            if node.kids:
                size += getsizeof(node.kids) + (getsizeof(node.keys) if node.keys is not None else 0)
                for child in node.kids:
                    if type(child) is tuple:
                        size += getsizeof(child)
                    else:
                        stack.append(child)
            if node.entries is not None:
                size += getsizeof(node.entries)
        return size + int(self.intervals * row_bytes)

    # ------------------------------------------------------------ lookups
    def _record_constants(self, node: TraceNode) -> None:
        """Constant levels: the whole rule depends on whether each constant path exists."""
        for levels in self.atoms:
            for j, (kind, value) in enumerate(levels.kinds):
                if kind == "const":
                    self.operations += 1
                    self.registry.add(self, levels, j, levels.alpha(j, []), value, value, (node, None, None))

    def seek(self, r: int, key) -> None:
        """The ``r``-th repeated variable of the depth the trace is at is looked up: the trace
        is sensitive to ``[key, key]`` of that level."""
        node = self.node
        a, j = self.repeats[node.depth][r]
        levels = self.atoms[a]
        self.operations += 1
        self.registry.add(self, levels, j, levels.alpha(j, self.binding), key, key, (node, key, key))

    def _recorded(self, index: int, check, lookup: LookupPath | None):
        """``check`` recording first the lookup its literal makes (``!r(x, _)``, ``r(1, _)``)."""
        if lookup is None:
            return check

        def recorded(b) -> bool:
            self._record_lookup(lookup, b, self.node, b[index - 1] if index else None)
            return check(b)
        return recorded

    def _record_lookup(self, lookup: LookupPath, b, node, key) -> None:
        """``!r(x, _)`` or ``r(1, _)``: sensitive to the existence of the looked-up branch."""
        path = tuple(f(b) for f in lookup.path)
        region = (node, key, key) if key is not None else (node, None, None)
        self.operations += 1
        if not path:                     # r(_): any first-level key, or r() itself
            self.registry.add_lookup(self, lookup, 0, (), None, None, region)
        else:
            self.registry.add_lookup(self, lookup, len(path) - 1, path[:-1], path[-1], path[-1], region)

    # ------------------------------------------------------------ regions
    def drop(self, node: TraceNode, lo, hi, old: Counter) -> None:
        """Forget the trace of region (node, [lo, hi]): its entries and the subtrees below it;
        the head tuples of its leaves go to ``old``."""
        registry = self.registry
        for handle in registry.within(node, lo, hi):
            registry.remove(handle)
        for key, child in node.children_in(lo, hi):
            if isinstance(child, TraceNode):
                self._drop_subtree(child, old)
            else:
                old[child] += 1
            self.registry.del_child(node, key)

    def _drop_subtree(self, node: TraceNode, old: Counter) -> None:
        for handle in list(node.entries or ()):
            self.registry.remove(handle)
        for key, child in list(node.items()):
            if isinstance(child, TraceNode):
                self._drop_subtree(child, old)
            else:
                old[child] += 1
        self.registry.detach(node)

