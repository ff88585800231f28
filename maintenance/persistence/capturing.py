"""The maintainer's state written as records: the state record, then (format version 3) the pages
of the paged rules' traces (nodes, then the node index), of their sensitivity groups and of the
support counts. :func:`capture` returns None for a maintainer it cannot reproduce exactly
(another maintainer class, queued regions, an aggregate view left over from a rule that fell
back to whole evaluation); the workspace then builds the maintainer at the first commit.
"""

from __future__ import annotations

from itertools import count

from maintenance.gjt import TReduct
from maintenance.incremental import IncrementalMaintainer, WholeRule
from maintenance.change_oracle import ROW
from maintenance.persistence.records import LINKS, bucket, count_rows, to_json
from maintenance.rule import RuleMaintainer
from maintenance.stabbing import start_of
from maintenance.theta_rule import ThetaRule
from maintenance.trace import TraceNode


# Page sizes the writer chooses; the file records what it chose (the state's ``page``, the group
# and count pages' numbers), and a reader follows the file.
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
            nodes, entries = _paged(rule, len(rules), m.registry, wheres, where_ids, where_list, eids, groups)
            record.update(kind="paged", first=1 + len(pages), nodes=len(nodes), entries=entries)
            pages.extend({"nodes": nodes[i:i + PAGE]} for i in range(0, len(nodes), PAGE))
            record["links"] = 1 + len(pages)
            pages.extend({"links": [node[:2] for node in nodes[i:i + LINKS]]} for i in range(0, len(nodes), LINKS))
        elif type(rule) is RuleMaintainer:
            record.update(_trace(rule, m.registry, wheres, where_ids, where_list))
            if rule.views:
                record["views"] = [_trace(view.rule, m.registry, wheres, where_ids, where_list) for view in rule.views]
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


def _paged(rule, index: int, registry, wheres, where_ids, where_list, eids, groups: dict) -> tuple[list, int]:
    """The node records of ``rule``'s trace, by id (preorder; the root is 0): ``[parent, key,
    [[child key, child id], ...], [[leaf key, head], ...], [[eid, where, alpha, start, end,
    region start, region end], ...]]``; every entry also goes to ``groups`` under ``(where,
    alpha)`` as ``[rule, eid, node, start, end, region start, region end]``. Returns the records
    and the number of entries."""
    order, stack = [], [rule.root]
    while stack:
        node = stack.pop()
        order.append(node)
        kids = node.kids or ()
        stack.extend(child for child in reversed(kids) if isinstance(child, TraceNode))
    ids = {id(node): i for i, node in enumerate(order)}
    records, total, numbered = [], 0, registry.numbered
    positions = [_where(n << 32, registry, wheres, where_ids, where_list) if len(one) or one.stored else None
                 for n, one in enumerate(numbered)]      # (an index's position in ``wheres``)
    for i, node in enumerate(order):
        kids, leaves, entries = [], [], []
        for k, child in node.items():
            if isinstance(child, TraceNode):
                kids.append([to_json(k), ids[id(child)]])
            else:
                leaves.append([to_json(k), list(child)])
        for handle in node.entries or ():
            sensitivity, row = numbered[handle >> 32], handle & ROW
            where, eid, alpha = positions[handle >> 32], next(eids), sensitivity.alpha_list[sensitivity.alphas[row]]
            start, end = sensitivity.start(row), sensitivity.end(row)
            lo, hi = (start, end) if not sensitivity.kinds[row] & 0x3F else sensitivity.region(row)
            entries.append([eid, where, list(alpha), start, end, lo, hi])
            group = groups.get((where, alpha))
            if group is None:
                group = groups[where, alpha] = []
            group.append([index, eid, i, start, end, lo, hi])
        total += len(entries)
        root = node.parent is None
        records.append([None if root else ids[id(node.parent)], None if root else to_json(node.key),
                        kids, leaves, entries])
    return records, total


def _where(handle: int, registry, wheres, where_ids, where_list) -> int:
    """The position of the entry's sensitivity index in the state's ``wheres``."""
    where = wheres[id(registry.numbered[handle >> 32])]
    if where not in where_ids:
        where_ids[where] = len(where_list)
        where_list.append(where)
    return where_ids[where]


def _group_pages(groups: dict) -> list[dict]:
    """The groups hashed into pages of about :data:`GROUPS` (see
    :func:`~maintenance.persistence.records.bucket`), each group's rows by start (a large one is
    read as a block indexed in that order)."""
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


def _trace(rule, registry, wheres, where_ids, where_list) -> dict:
    """Nodes in preorder as [parent, key] (the root is node 0), leaves as [node, key, head],
    entries as [where, alpha, start, end, node, region start, region end]."""
    nodes, leaves, entries = [], [], []
    stack, ids = [rule.root], {id(rule.root): 0}
    while stack:
        node = stack.pop()
        for handle in node.entries or ():
            entry = registry.entry(handle)
            _, start, end = entry.region
            entries.append([_where(handle, registry, wheres, where_ids, where_list), list(entry.alpha), entry.start,
                            entry.end, ids[id(node)], start, end])
        children = list(node.items())
        for key, child in children:
            if isinstance(child, TraceNode):
                ids[id(child)] = len(nodes) + 1
                nodes.append([ids[id(node)], to_json(key)])
            else:
                leaves.append([ids[id(node)], to_json(key), list(child)])
        stack.extend(child for _, child in reversed(children) if isinstance(child, TraceNode))
    return {"nodes": nodes, "leaves": leaves, "entries": entries}
