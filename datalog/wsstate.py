"""The incremental maintainer's state as data records, and back (workspace format, see
``datalog/workspace.md``): support counts, and per non-recursive rule what maintains it --

  * an LFTJ rule (:class:`maintenance.rule.RuleMaintainer`): its trace tree and sensitivity
    entries, and the same for the body of each aggregate it reads (an
    :class:`maintenance.aggregate.AggregateView`, whose per-group accumulators are folded
    again from the restored trace's leaves: each leaf is one contribution);
  * a theta-join rule (:class:`maintenance.theta_rule.ThetaRule`): ``rho[n]`` of every node
    of its T-reduct (the indexes are rebuilt from them) and, for the §7 approximation, the
    materialized projection;
  * a whole-rule fallback (:class:`maintenance.incremental.WholeRule`): its derived rows.

Restoring constructs the rules without evaluating them and builds the trie indexes the LFTJ
rules read (so that changes come as surgeries, as after a build), a root level of many keys
already as ChunkedKeys (see there). :func:`capture` returns
None for a maintainer it cannot reproduce exactly (another maintainer class, queued regions,
an aggregate view left over from a rule that fell back to whole evaluation); the workspace
then builds the maintainer at the first commit. Values are JSON data; a JSON array is read
back as a tuple (keys, ``alpha`` prefixes and head tuples are tuples of scalars).
"""

from __future__ import annotations

from collections import Counter

from datalog.errors import WorkspaceCorrupt
from maintenance.gjt import TReduct
from maintenance.incremental import IncrementalMaintainer, WholeRule
from maintenance.rule import RuleMaintainer
from maintenance.sensitivity import Entry, SensitivityIndex
from maintenance.surgery import chunk_large
from maintenance.theta_rule import ThetaRule
from maintenance.trace import TraceNode


def capture(engine) -> dict | None:
    """The maintainer of ``engine`` as one JSON-able record, or None when it cannot be captured."""
    m = engine.maintainer
    if type(m) is not IncrementalMaintainer or m.pending:
        return None
    if len(m.views) != sum(len(getattr(rule, "views", ())) for rule in m.rules.values()):
        return None
    wheres = {id(index): where for where, index in m.registry.indexes.items()}
    where_list, where_ids = [], {}
    position = {id(c): i for i, c in enumerate(engine.checked.clauses)}
    rules = []
    for key, rule in m.rules.items():
        record = {"clause": position[key]}
        if type(rule) is RuleMaintainer:
            record.update(_trace(rule, wheres, where_ids, where_list))
            if rule.views:
                record["views"] = [_trace(view.rule, wheres, where_ids, where_list) for view in rule.views]
        elif type(rule) is ThetaRule:
            record.update(kind="theta", **_theta(rule.view))
        elif type(rule) is WholeRule:
            record.update(kind="whole", derived=_counts(rule.derived))
        else:
            return None
        rules.append(record)
    support = {name: _counts(counter) for name, counter in m.support.items()}
    return {"drop_prefix": m.drop_prefix, "wheres": [[r, list(o), lv] for r, o, lv in where_list],
            "rules": rules, "support": support}


def _counts(counter) -> list:
    return [[list(row), n] for row, n in counter.items()]


def _theta(view) -> dict:
    """rho[n] of every node of the view's T-reduct (in ``reduct.nodes`` order), and the
    materialized projection of a §7 view."""
    if isinstance(view, TReduct):
        return {"rho": [_counts(view.rho[n.id]) for n in view.nodes]}
    return {"rho": [_counts(view.reduct.rho[n.id]) for n in view.reduct.nodes], "result": _counts(view.result)}


def _trace(rule, wheres, where_ids, where_list) -> dict:
    """Nodes in preorder as [parent, key] (the root is node 0), leaves as [node, key, head],
    entries as [where, alpha, start, end, node, region start, region end]."""
    nodes, leaves, entries = [], [], []
    stack, ids = [rule.root], {id(rule.root): 0}
    while stack:
        node = stack.pop()
        for entry in node.entries or ():
            where = wheres[id(entry.index)]
            if where not in where_ids:
                where_ids[where] = len(where_list)
                where_list.append(where)
            _, start, end = entry.region
            entries.append([where_ids[where], list(entry.alpha), entry.start, entry.end,
                            ids[id(node)], start, end])
        children = [(k, node.children[k]) for k in node.keys or ()]
        for key, child in children:
            if isinstance(child, TraceNode):
                ids[id(child)] = len(nodes) + 1
                nodes.append([ids[id(node)], _json(key)])
            else:
                leaves.append([ids[id(node)], _json(key), list(child)])
        stack.extend(child for _, child in reversed(children) if isinstance(child, TraceNode))
    return {"nodes": nodes, "leaves": leaves, "entries": entries}


def restore(engine, state: dict, where) -> None:
    """Give ``engine`` (relations restored, nothing evaluated) the maintainer of ``state``."""
    try:
        _restore(engine, state)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        engine.maintainer = None
        raise WorkspaceCorrupt(f"workspace file {where}: the maintainer record is malformed ({exc})") from None


def _restore(engine, state: dict) -> None:
    m = IncrementalMaintainer(_NoRules(engine), state["drop_prefix"])
    m.engine = engine
    clauses = engine.checked.clauses
    wheres = [(r, tuple(o), lv) for r, o, lv in state["wheres"]]
    expected = {id(c) for s in engine.checked.strata if not s.recursive for c in s.clauses if c.body}
    groups: dict[tuple, list] = {}                 # (where's position, alpha) -> entries, of every rule
    for record in state["rules"]:
        clause = clauses[record["clause"]]
        rule = m.construct(clause, evaluate_views=False)
        kind = record.get("kind", "rule")
        if kind != {ThetaRule: "theta", WholeRule: "whole"}.get(type(rule), "rule"):
            raise ValueError(f"clause {record['clause']} is not maintained as a {kind} rule")
        if kind == "theta":
            _fill(rule.view, record)
        elif kind == "whole":
            rule.derived = Counter({_tuple(row): n for row, n in record["derived"]})
        else:
            _restore_rule(engine, rule, record, wheres, m.registry, groups)
        m.rules[id(clause)] = rule
    if set(m.rules) != expected:
        raise ValueError("the rules do not match the program")
    for (where, alpha), entries in groups.items():
        m.registry.indexes[wheres[where]].load(alpha, entries)
    m.support = {name: Counter() for name in engine.idb}
    for name, rows in state["support"].items():
        m.support[name] = Counter({_tuple(row): n for row, n in rows})
    m._virtualize()
    engine.maintainer = m


def _restore_rule(engine, rule, record, wheres, registry, groups) -> None:
    """An LFTJ rule's trace, and its aggregate views' traces and accumulators."""
    views = record.get("views", [])
    if len(views) != len(rule.views):
        raise ValueError("the aggregate views do not match the rule")
    _rebuild(rule, record, wheres, registry, groups, tuple)
    for view, stored in zip(rule.views, views):
        contributions = _rebuild(view.rule, stored, wheres, registry, groups, _contribution)
        view.fold(Counter(contributions), None)
    for one in [rule] + [view.rule for view in rule.views]:
        for atom in one.plan.atoms:
            chunk_large(engine.db[atom.relation].index(atom.order))


def _contribution(head) -> tuple:
    """An aggregate body's leaf: (group, witness, value)."""
    group, witness, value = head
    return tuple(group), tuple(witness), value


def _fill(view, record) -> None:
    """A theta-join view's stored rho (its indexes filled as it is) and projection."""
    reduct = view if isinstance(view, TReduct) else view.reduct
    reduct.restore([{_tuple(t): n for t, n in rows} for rows in record["rho"]])
    if not isinstance(view, TReduct):
        view.result = {_tuple(t): n for t, n in record["result"]}


def _rebuild(rule, record, wheres, registry, groups: dict, head_of) -> list:
    """The rule's trace tree; its entries are attached to their nodes and collected in ``groups``
    for the indexes (as ``Registry.add`` would file them one by one). :func:`capture` writes each
    node's children in ascending key order and its entries in region order, so they are appended
    as they come; an out-of-order file is refused (ValueError), not restored into a wrong tree.
    Returns the leaves' heads (``head_of`` of each stored one). The entry loop calls no helper
    per entry or value: it builds most of the trace's objects (1.2M entries at 1M EDB tuples)."""
    nodes = [rule.root]
    for parent, key in record["nodes"]:
        above = nodes[parent]
        if type(key) is list:
            key = tuple(key)
        node = TraceNode(above, key, above.depth + 1)
        _append_child(above, key, node)
        nodes.append(node)
    heads = []
    for node, key, head in record["leaves"]:
        head = head_of(head)
        _append_child(nodes[node], tuple(key) if type(key) is list else key, head)
        heads.append(head)
    indexes = registry.indexes
    by_where = [indexes.get(key) or indexes.setdefault(key, SensitivityIndex()) for key in wheres]
    for where, alpha, start, end, node, lo, hi in record["entries"]:
        alpha, owner = tuple(alpha), nodes[node]
        if type(start) is list:
            start = tuple(start)
        if type(end) is list:
            end = tuple(end)
        if type(lo) is list:
            lo = tuple(lo)
        if type(hi) is list:
            hi = tuple(hi)
        entry = Entry(by_where[where], alpha, start, end, (owner, lo, hi), rule)
        entries = owner.entries
        if entries is None:
            owner.entries = [entry]
        else:
            before = entries[-1].region[1]             # region starts ascend (None: unbounded)
            if before is not None and (lo is None or lo < before):
                raise ValueError("sensitivity entries out of order")
            entries.append(entry)
        group = groups.get((where, alpha))
        if group is None:
            groups[where, alpha] = [entry]
        else:
            group.append(entry)
    rule.intervals += len(record["entries"])
    return heads


def _append_child(node: TraceNode, key, child) -> None:
    if node.children is None:
        node.children, node.keys = {key: child}, [key]
    elif node.keys[-1] < key:
        node.children[key] = child
        node.keys.append(key)
    else:
        raise ValueError("trace children out of order")


class _NoRules:
    """The engine as the maintainer's constructor sees it, with no strata to build."""

    def __init__(self, engine):
        self._engine = engine
        self.checked = _Checked(engine.checked)

    def __getattr__(self, name):
        return getattr(self._engine, name)


class _Checked:
    def __init__(self, checked):
        self._checked, self.strata = checked, []

    def __getattr__(self, name):
        return getattr(self._checked, name)


def _json(value):
    return list(value) if isinstance(value, tuple) else value


def _tuple(value):
    return tuple(value) if type(value) is list else value
