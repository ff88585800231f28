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

Restoring constructs the rules without evaluating them and makes the trie indexes the LFTJ
rules read (so that changes come as surgeries, as after a build), lazily: a node is built
from its rows when a commit first reads it. :func:`capture` returns
None for a maintainer it cannot reproduce exactly (another maintainer class, queued regions,
an aggregate view left over from a rule that fell back to whole evaluation); the workspace
then builds the maintainer at the first commit. Values are JSON data; a JSON array is read
back as a tuple (keys, ``alpha`` prefixes and head tuples are tuples of scalars).
"""

from __future__ import annotations

from collections import Counter
from itertools import count

from maintenance.gjt import TReduct
from maintenance.incremental import IncrementalMaintainer, WholeRule
from maintenance.persistence.records import LINKS, MALFORMED, bucket, count_rows, malformed, to_json, to_tuple
from maintenance.persistence.stored import _Stored, _StoredGroups
from maintenance.persistence.stored_counts import _StoredCounts
from maintenance.rule import RuleMaintainer
from maintenance.sensitivity import Entry, SensitivityIndex
from maintenance.stabbing import start_of
from maintenance.theta_rule import ThetaRule
from maintenance.trace import TraceNode


PAGE = 256                 # trace nodes a page (format version 3)
GROUPS = 64                # sensitivity groups a page, about
COUNTS = 1024              # support counts a page, about


def capture(m, paged: bool = True) -> list[dict] | None:
    """The maintainer ``m`` as records -- the state, then the pages of its paged rules' traces
    (nodes, then the node index), of their sensitivity groups and of the support counts -- or
    None when it cannot be captured. Reading every part of a restored maintainer that was still
    on disk. ``paged=False``: every rule in the state record, as format version 2 stores them
    (for the tests of reading older files)."""
    if type(m) is not IncrementalMaintainer or m.pending:
        return None
    if len(m.views) != sum(len(getattr(rule, "views", ())) for rule in m.rules.values()):
        return None
    wheres = {id(index): where for where, index in m.registry.indexes.items()}
    where_list, where_ids = [], {}
    rules, pages, groups, eids = [], [], {}, count()
    for key, rule in m.rules.items():
        record = {"clause": key}
        if type(rule) is RuleMaintainer and not rule.views and paged:
            nodes, entries = _paged(rule, len(rules), wheres, where_ids, where_list, eids, groups)
            record.update(kind="paged", first=1 + len(pages), nodes=len(nodes), entries=entries)
            pages.extend({"nodes": nodes[i:i + PAGE]} for i in range(0, len(nodes), PAGE))
            record["links"] = 1 + len(pages)
            pages.extend({"links": [node[:2] for node in nodes[i:i + LINKS]]} for i in range(0, len(nodes), LINKS))
        elif type(rule) is RuleMaintainer:
            record.update(_trace(rule, wheres, where_ids, where_list))
            if rule.views:
                record["views"] = [_trace(view.rule, wheres, where_ids, where_list) for view in rule.views]
        elif type(rule) is ThetaRule:
            record.update(kind="theta", **_theta(rule.view))
        elif type(rule) is WholeRule:
            record.update(kind="whole", derived=count_rows(rule.derived))
        else:
            return None
        rules.append(record)
    support = {name: count_rows(counts) for name, counts in m.support.items()}
    counts = [0] * len(where_list)
    for (where, _), entries in groups.items():
        counts[where] += len(entries)
    state = {"drop_prefix": m.drop_prefix, "wheres": [[r, list(o), lv] for r, o, lv in where_list],
             "rules": rules, "support": support}
    if not paged:
        return [{"state": state}]
    group_pages = _group_pages(groups)
    state.update(page=PAGE, groups={"first": 1 + len(pages), "pages": len(group_pages), "counts": counts})
    pages += group_pages
    for name, rows in support.items():
        buckets = [[] for _ in range(max(1, -(-len(rows) // COUNTS)))]
        for row, n in rows:
            buckets[bucket(0, row, len(buckets))].append([row, n])
        support[name] = {"first": 1 + len(pages), "pages": len(buckets)}
        pages.extend({"counts": part} for part in buckets)
    state["frames"] = len(pages)
    return [{"state": state}, *pages]


def _paged(rule, index: int, wheres, where_ids, where_list, eids, groups: dict) -> tuple[list, int]:
    """The node records of ``rule``'s trace, by id (preorder; the root is 0): ``[parent, key,
    [[child key, child id], ...], [[leaf key, head], ...], [[eid, where, alpha, start, end,
    region start, region end], ...]]``; every entry also goes to ``groups`` under ``(where,
    alpha)`` as ``[rule, eid, node, start, end, region start, region end]``. Returns the records
    and the number of entries."""
    order, stack = [], [rule.root]
    while stack:
        node = stack.pop()
        order.append(node)
        kids = [node.children[k] for k in node.keys or ()]
        stack.extend(child for child in reversed(kids) if isinstance(child, TraceNode))
    ids = {id(node): i for i, node in enumerate(order)}
    records, total = [], 0
    for i, node in enumerate(order):
        kids, leaves, entries = [], [], []
        for k in node.keys or ():
            child = node.children[k]
            if isinstance(child, TraceNode):
                kids.append([to_json(k), ids[id(child)]])
            else:
                leaves.append([to_json(k), list(child)])
        for entry in node.entries or ():
            where, eid, (_, lo, hi) = _where(entry, wheres, where_ids, where_list), next(eids), entry.region
            entries.append([eid, where, list(entry.alpha), entry.start, entry.end, lo, hi])
            groups.setdefault((where, entry.alpha), []).append([index, eid, i, entry.start, entry.end, lo, hi])
        total += len(entries)
        root = node.parent is None
        records.append([None if root else ids[id(node.parent)], None if root else to_json(node.key),
                        kids, leaves, entries])
    return records, total


def _where(entry, wheres, where_ids, where_list) -> int:
    """The position of the entry's sensitivity index in the state's ``wheres``."""
    where = wheres[id(entry.index)]
    if where not in where_ids:
        where_ids[where] = len(where_list)
        where_list.append(where)
    return where_ids[where]


def _group_pages(groups: dict) -> list[dict]:
    """The groups hashed into pages of about :data:`GROUPS` (see :func:`~maintenance.persistence.records.bucket`), each group's
    rows by start (a large one is read as a block indexed in that order)."""
    pages = [[] for _ in range(max(1, -(-len(groups) // GROUPS)))]
    for (where, alpha), entries in groups.items():
        try:
            entries.sort(key=_start)
        except TypeError:                   # keys that do not compare: the reader sorts them
            pass
        pages[bucket(where, alpha, len(pages))].append([where, list(alpha), entries])
    return [{"groups": page} for page in pages]


def _start(row: list):
    return start_of(row[3])


def _theta(view) -> dict:
    """rho[n] of every node of the view's T-reduct (in ``reduct.nodes`` order), and the
    materialized projection of a §7 view."""
    if isinstance(view, TReduct):
        return {"rho": [count_rows(view.rho[n.id]) for n in view.nodes]}
    return {"rho": [count_rows(view.reduct.rho[n.id]) for n in view.reduct.nodes], "result": count_rows(view.result)}


def _trace(rule, wheres, where_ids, where_list) -> dict:
    """Nodes in preorder as [parent, key] (the root is node 0), leaves as [node, key, head],
    entries as [where, alpha, start, end, node, region start, region end]."""
    nodes, leaves, entries = [], [], []
    stack, ids = [rule.root], {id(rule.root): 0}
    while stack:
        node = stack.pop()
        for entry in node.entries or ():
            _, start, end = entry.region
            entries.append([_where(entry, wheres, where_ids, where_list), list(entry.alpha), entry.start,
                            entry.end, ids[id(node)], start, end])
        children = [(k, node.children[k]) for k in node.keys or ()]
        for key, child in children:
            if isinstance(child, TraceNode):
                ids[id(child)] = len(nodes) + 1
                nodes.append([ids[id(node)], to_json(key)])
            else:
                leaves.append([ids[id(node)], to_json(key), list(child)])
        stack.extend(child for _, child in reversed(children) if isinstance(child, TraceNode))
    return {"nodes": nodes, "leaves": leaves, "entries": entries}


def restore(program, db, state: dict, where, frames=None) -> IncrementalMaintainer:
    """The maintainer of ``state`` for the planned ``program`` over its relations ``db``
    (restored, nothing evaluated); ``frames`` (:class:`datalog.workspace.format.Frames`) holds
    the pages a version 3 state names. ``workspace_corrupt`` if the state does not fit."""
    try:
        return _restore(program, db, state, where, frames)
    except MALFORMED as exc:
        raise malformed(where, exc) from None


def _restore(program, db, state: dict, where, frames) -> IncrementalMaintainer:
    m = IncrementalMaintainer(program, db, state["drop_prefix"], build=False)
    clauses = program.clauses
    wheres = [(r, tuple(o), lv) for r, o, lv in state["wheres"]]
    by_where = [m.registry.indexes.setdefault(key, SensitivityIndex()) for key in wheres]
    stored = _Stored(frames, where, state, by_where) if "groups" in state else None
    expected = {c.index for s in program.strata if not s.recursive for c in s.clauses if c.body}
    groups: dict[tuple, list] = {}                 # (where's position, alpha) -> entries, of every rule
    for position, record in enumerate(state["rules"]):
        clause = clauses[record["clause"]]
        rule = m.construct(clause, evaluate_views=False)
        kind, built = record.get("kind", "rule"), {ThetaRule: "theta", WholeRule: "whole"}.get(type(rule), "rule")
        if kind != built and (kind, built) != ("paged", "rule"):
            raise ValueError(f"clause {record['clause']} is not maintained as a {kind} rule")
        if kind == "theta":
            _fill(rule.view, record)
        elif kind == "whole":
            rule.derived = Counter({to_tuple(row): n for row, n in record["derived"]})
        elif kind == "paged":
            if stored is None or rule.views:
                raise ValueError(f"clause {record['clause']} is not maintained as a paged rule")
            stored.attach(position, rule, record)
            _index_tries(db, rule)
        else:
            _restore_rule(db, rule, record, wheres, m.registry, groups)
        m.rules[clause.index] = rule
    if set(m.rules) != expected:
        raise ValueError("the rules do not match the program")
    for (where, alpha), entries in groups.items():
        by_where[where].load(alpha, entries)
    if stored is not None:
        for position, entries in enumerate(state["groups"]["counts"]):
            by_where[position].keep_stored(_StoredGroups(stored, position), entries)
    m.support = {name: Counter() for name in program.idb}
    for name, rows in state["support"].items():
        if name not in m.support:
            raise ValueError(f"support counts of {name}, which is not derived")
        if isinstance(rows, dict):
            if stored is None:
                raise ValueError("paged support counts without pages")
            m.support[name] = _StoredCounts(stored, rows["first"], rows["pages"])
        else:
            m.support[name] = Counter({to_tuple(row): n for row, n in rows})
    m.virtualize()
    return m


def _restore_rule(db, rule, record, wheres, registry, groups) -> None:
    """An LFTJ rule's trace, and its aggregate views' traces and accumulators."""
    views = record.get("views", [])
    if len(views) != len(rule.views):
        raise ValueError("the aggregate views do not match the rule")
    _rebuild(rule, record, wheres, registry, groups, tuple)
    for view, stored in zip(rule.views, views):
        contributions = _rebuild(view.rule, stored, wheres, registry, groups, _contribution)
        view.fold(Counter(contributions), None)
    _index_tries(db, rule)


def _index_tries(db, rule) -> None:
    """The trie indexes the rule (and its aggregate views) read, so that changes come as surgeries:
    lazy ones (``Relation.lazy_index``), whose nodes are built when a commit first reads them."""
    for one in [rule] + [view.rule for view in rule.views]:
        for atom in one.plan.atoms:
            db[atom.relation].lazy_index(atom.order)


def _contribution(head) -> tuple:
    """An aggregate body's leaf: (group, witness, value)."""
    group, witness, value = head
    return tuple(group), tuple(witness), value


def _fill(view, record) -> None:
    """A theta-join view's stored rho (its indexes filled as it is) and projection."""
    reduct = view if isinstance(view, TReduct) else view.reduct
    reduct.restore([{to_tuple(t): n for t, n in rows} for rows in record["rho"]])
    if not isinstance(view, TReduct):
        view.result = {to_tuple(t): n for t, n in record["result"]}


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
