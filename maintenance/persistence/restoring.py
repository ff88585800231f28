"""The maintainer rebuilt from its state record, nothing evaluated. Restoring constructs the rules
without evaluating them and makes the trie indexes the LFTJ rules read (so that changes come as
surgeries, as after a build), lazily: a node is built from its rows when a commit first reads it.
A rule the state record holds whole -- every rule of format version 2; in version 3 an LFTJ
rule that reads aggregates, a theta-join rule, a whole-rule fallback -- is rebuilt at once here;
a paged rule's trace, the sensitivity groups and the support counts of version 3 are read from
their pages when first needed (:mod:`maintenance.persistence.stored`,
:mod:`maintenance.persistence.stored_counts`).
"""

from __future__ import annotations

from array import array
from collections import Counter

from maintenance.gjt import TReduct
from maintenance.incremental import IncrementalMaintainer, WholeRule
from maintenance.persistence.records import MALFORMED, malformed, read_counts, to_tuple
from maintenance.persistence.stored import _Stored, _StoredGroups
from maintenance.persistence.stored_counts import _StoredCounts
from maintenance.sensitivity import OTHER, SAME, WHOLE
from maintenance.theta_rule import ThetaRule
from maintenance.trace import TraceNode


def restore(program, db, state: dict, where, frames=None, rows=None) -> IncrementalMaintainer:
    """The maintainer of ``state`` for the planned ``program`` over its relations ``db``
    (restored, nothing evaluated); ``frames`` (:class:`datalog.workspace.format.Frames`) holds
    the pages a version 3 state names; ``rows`` checks stored rows against their relation's
    columns (``rows.check_rows(name, rows, where, what)``, raising ``workspace_corrupt``: the
    workspace's :class:`datalog.workspace.validate.Columns`). ``workspace_corrupt`` if the state
    does not fit."""
    try:
        return _restore(program, db, state, where, frames, rows)
    except MALFORMED as exc:
        raise malformed(where, exc) from None


def _restore(program, db, state: dict, where, frames, rows) -> IncrementalMaintainer:
    m = IncrementalMaintainer(program, db, state["drop_prefix"], build=False)
    clauses = program.clauses
    wheres = [(r, tuple(o), lv) for r, o, lv in state["wheres"]]
    by_where = [m.registry.index(key) for key in wheres]
    stored = _Stored(frames, where, state, by_where, rows) if "groups" in state else None
    expected = {c.index for s in program.strata if not s.recursive and not s.constrained for c in s.clauses if c.body}
    for position, record in enumerate(state["rules"]):
        clause = clauses[record["clause"]]
        rule = m.construct(clause, evaluate_views=False)
        kind, built = record.get("kind", "rule"), {ThetaRule: "theta", WholeRule: "whole"}.get(type(rule), "rule")
        if kind != built and (kind, built) != ("paged", "rule"):
            raise ValueError(f"clause {record['clause']} is not maintained as a {kind} rule")
        if kind == "theta":
            _fill(rule.view, record)
        elif kind == "whole":
            rule.derived = Counter(read_counts(record["derived"], clause.head.relation, rows, where,
                                               f"the rows clause {record['clause']} derived"))
        elif kind == "paged":
            if stored is None or rule.views:
                raise ValueError(f"clause {record['clause']} is not maintained as a paged rule")
            stored.attach(position, rule, record)
            _index_tries(db, rule)
        else:
            _restore_rule(db, rule, record, by_where, m.registry, rows, where)
        m.rules[clause.index] = rule
    if set(m.rules) != expected:
        raise ValueError("the rules do not match the program")
    if stored is not None:
        for position, entries in enumerate(state["groups"]["counts"]):
            by_where[position].keep_stored(_StoredGroups(stored, position), entries)
    m.support = {name: Counter() for name in program.idb}
    for name, counts in state["support"].items():
        if name not in m.support:
            raise ValueError(f"support counts of {name}, which is not derived")
        if isinstance(counts, dict):
            if stored is None:
                raise ValueError("paged support counts without pages")
            m.support[name] = _StoredCounts(stored, counts["first"], counts["pages"], name)
        else:
            m.support[name] = Counter(read_counts(counts, name, rows, where, f"the support counts of {name}"))
    m.virtualize()
    return m


def _restore_rule(db, rule, record, by_where, registry, rows=None, where=None) -> None:
    """An LFTJ rule's trace (its leaves' heads, with ``rows``, checked to be rows of its head
    relation), and its aggregate views' traces and accumulators."""
    views = record.get("views", [])
    if len(views) != len(rule.views):
        raise ValueError("the aggregate views do not match the rule")
    heads = _rebuild(rule, record, by_where, registry, tuple)
    if rows is not None:
        rows.check_rows(rule.head_relation, heads, where, f"the trace of clause {record['clause']}")
    for view, stored in zip(rule.views, views):
        contributions = _rebuild(view.rule, stored, by_where, registry, _contribution)
        view.fold(Counter(contributions), None)
    _index_tries(db, rule)


def _index_tries(db, rule) -> None:
    """The trie indexes the rule (and its aggregate views) read, so that changes come as surgeries:
    lazy ones (``Relation.lazy_index``), whose nodes are built when a commit first reads them."""
    for relation, order in rule.read_indexes():
        db[relation].lazy_index(order)


def _contribution(head) -> tuple:
    """An aggregate body's leaf: (group, witness, value)."""
    group, witness, value = head
    return tuple(group), tuple(witness), value


def _fill(view, record) -> None:
    """A theta-join view's stored rho (its indexes filled as it is) and projection."""
    reduct = view if isinstance(view, TReduct) else view.reduct
    reduct.restore([{to_tuple(t): n for t, n in _multiplicities(rows)} for rows in record["rho"]])
    if not isinstance(view, TReduct):
        view.result = {to_tuple(t): n for t, n in _multiplicities(record["result"])}


def _multiplicities(pairs):
    """Stored ``[tuple, multiplicity]`` pairs: each multiplicity a positive integer, each tuple
    a list (ValueError otherwise)."""
    for t, n in pairs:
        if type(n) is not int or n <= 0 or type(t) is not list:
            raise ValueError(f"{n!r} is not the multiplicity of a tuple")
        yield t, n


def _rebuild(rule, record, by_where, registry, head_of) -> list:
    """The rule's trace tree; its entries filed in their indexes and attached to their nodes (as
    ``Registry.record`` files them one by one, with no journal). :func:`capture` writes each
    node's children in ascending key order and its entries in region order, so they are appended
    as they come; an out-of-order file is refused (ValueError), not restored into a wrong tree.
    Returns the leaves' heads (``head_of`` of each stored one)."""
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
    number, last = rule.number, {}
    for where, alpha, start, end, node, lo, hi in record["entries"]:
        owner, index = nodes[node], by_where[where]
        start, end, lo, hi = to_tuple(start), to_tuple(end), to_tuple(lo), to_tuple(hi)
        if type(lo) is type(start) and type(hi) is type(end) and lo == start and hi == end:
            kind, region = SAME, None
        elif lo is None and hi is None:
            kind, region = WHOLE, None
        else:
            kind, region = OTHER, (lo, hi)
        before = last.get(node, None)
        if before is not None and (lo is None or lo < before[0]):
            raise ValueError("sensitivity entries out of order")
        last[node] = (lo,) if lo is not None else None
        handle = index.number << 32 | index.add(tuple(alpha), start, end, owner, number, kind, region)
        if owner.entries is None:
            owner.entries = array("Q", (handle,))
        else:
            owner.entries.append(handle)
    rule.intervals += len(record["entries"])
    return heads


def _append_child(node: TraceNode, key, child) -> None:
    if node.kids is None:                       # (a stored node keeps its list of keys)
        node.kids, node.keys = [child], [key]
    elif node.keys[-1] < key:
        node.kids.append(child)
        node.keys.append(key)
    else:
        raise ValueError("trace children out of order")
