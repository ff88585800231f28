"""``datalog explain-fact prog.dl "path(1, 4)"`` and ``datalog why ws/ "path(1, 4)"``: why a fact
is in its relation (a proof), or why it is not (the literal each rule fails at); and the same for
the REPL's ``.why`` and ``.whynot``. Thin: :meth:`datalog.engine.engine.Engine.why` does the work.
"""

from __future__ import annotations

import sys

from datalog.cli.options import add_path_option, add_preprocessor_options, parse_options
from datalog.engine.engine import Engine
from datalog.engine.updates import read_updates
from datalog.cli.report import apply_and_report


def add_commands(sub) -> None:
    fact = sub.add_parser("explain-fact", help='why a fact is derived (its proof), or why not: '
                                               'datalog explain-fact prog.dl "path(1, 4)"')
    fact.add_argument("program")
    fact.add_argument("fact", help='one tuple, such as "path(1, 4)"')
    fact.add_argument("-F", "--fact-dir", default=".", help="directory of .facts input files (default .)")
    fact.add_argument("--updates", metavar="FILE", help="apply the batches of FILE first")
    add_kept_option(fact)
    add_form_options(fact)
    add_path_option(fact)
    add_preprocessor_options(fact)
    fact.set_defaults(func=_explain_fact)
    why = sub.add_parser("why", help='why a fact of a workspace is derived, or why not: datalog why ws/ "path(1, 4)"')
    why.add_argument("workspace")
    why.add_argument("fact")
    add_kept_option(why)
    add_form_options(why)
    why.set_defaults(func=_why_workspace)


KEPT_HELP = ("keep every derived fact's least proof height (computed after evaluation, brought up to date "
             "after a commit on the next question), so that a proof is read off them instead of searched for")


def add_kept_option(parser) -> None:
    parser.add_argument("--provenance", action="store_true", help=KEPT_HELP)


def add_form_options(parser) -> None:
    parser.add_argument("--format", choices=["text", "tree", "json"], default="text",
                        help="text: Soufflé's proof-tree layout (default); tree: one line a fact, premises "
                             "indented under it; json: the proof as JSON")
    parser.add_argument("--depth", type=int, default=None,
                        help="rule levels shown: deeper sub-proofs are cut (default: all); for why not, "
                             "how many levels of missing facts are explained (default 1)")
    parser.add_argument("--why-not", action="store_true", help="explain the fact's absence (it must be absent)")


def explanation(engine: Engine, fact: str, form: str = "text", depth: int | None = None,
                why_not: bool = False) -> str:
    """The proof of ``fact`` if its relation holds it, else (or with ``why_not``) why it does not."""
    relation, row = engine.ground_fact(fact)
    if not why_not and row in engine.stored_relation(relation):
        proof = engine.why(fact, depth)
        return proof.to_json() if form == "json" else proof.to_tree() if form == "tree" else proof.to_text()
    report = engine.why_not(fact, 1 if depth is None else depth)
    if form == "json":
        import json
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
    return report.to_text()


def _explain_fact(args) -> int:
    engine = Engine.from_file(args.program, args.fact_dir, allow_paths=args.allow_paths,
                              parse_options=parse_options(args), provenance=args.provenance)
    batches = read_updates(engine, args.updates) if args.updates else []
    engine.run()
    _, status = apply_and_report(engine, batches, lambda number, delta, seconds: None)
    print(explanation(engine, args.fact, args.format, args.depth, args.why_not))
    return status


def _why_workspace(args) -> int:
    from datalog.workspace.workspace import Workspace
    with Workspace.open(args.workspace, readonly=True, provenance=args.provenance) as ws:
        print(explanation(ws.engine, args.fact, args.format, args.depth, args.why_not))
    sys.stdout.flush()
    return 0
