"""``datalog run --updates`` and ``datalog explain --maintenance``, run as real subprocesses.

Expected deltas are written by hand (the example in programs/transitive_closure) or
computed by a plain-Python transitive closure, never by the engine; the incremental
strategy must print exactly what the recompute strategy prints.
"""

from __future__ import annotations

import difflib
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from datalog.language.errors import DatalogError
from datalog.language.parser import parse_updates
from tests.cli_process import run_datalog

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "programs"
TIMING = re.compile(r"^batch (\d+): maintained in \d+\.\d ms$")

TC = """\
.decl edge(a: number, b: number)
.input edge
.decl path(a: number, b: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""

# reach is recursive; ratio divides by the reached node, so reaching node 0 fails at run time
FAILING = """\
.decl e(x: number, y: number)
.input e
.decl reach(x: number, y: number)
.output reach
reach(x, y) :- e(x, y).
reach(x, z) :- reach(x, y), e(y, z).
.decl ratio(x: number, r: number)
.output ratio
ratio(x, 100 / y) :- reach(x, y).
"""


def datalog(*args, cwd: Path) -> subprocess.CompletedProcess:
    result = run_datalog(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr        # never, whatever happened
    return result


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    return result


def deltas(stdout: str, batches: int | None = None) -> str:
    """stdout without the timing lines, checking that each batch ends with one (in order)."""
    lines, timed, current = [], [], None
    for line in stdout.splitlines(keepends=True):
        match = TIMING.match(line.rstrip("\n"))
        if match:
            assert int(match.group(1)) == current, stdout         # after the batch's own lines
            timed.append(current)
            continue
        if line.startswith("batch "):
            current = int(line.split()[1].rstrip(":"))
        lines.append(line)
    if batches is not None:
        assert timed == list(range(1, batches + 1)), stdout
    return "".join(lines)


def closure(edges: set) -> set:
    path = set(edges)
    while True:
        new = {(x, w) for (x, y) in path for (z, w) in edges if y == z} - path
        if not new:
            return path
        path |= new


def expected_deltas(relation: str, states: list[set]) -> str:
    out = []
    for number, (old, new) in enumerate(zip(states, states[1:]), 1):
        inserted, erased = sorted(new - old), sorted(old - new)
        out.append(f"batch {number}: +{len(inserted)} -{len(erased)} tuples in {relation}\n")
        out += [f"+{relation}\t" + "\t".join(map(str, row)) + "\n" for row in inserted]
        out += [f"-{relation}\t" + "\t".join(map(str, row)) + "\n" for row in erased]
    return "".join(out)


def tsv(rows) -> str:
    return "".join("\t".join(map(str, row)) + "\n" for row in sorted(rows))


@pytest.fixture
def failing(tmp_path: Path) -> Path:
    (tmp_path / "p.dl").write_text(FAILING)
    (tmp_path / "e.facts").write_text("1\t2\n2\t4\n")
    (tmp_path / "u.dl").write_text("+e(4, 5).\ncommit.\n"
                                   "-e(1, 2).\n+e(5, 0).   // ratio(x, 100 / 0)\ncommit.\n"
                                   "+e(7, 8).\ncommit.\n")
    return tmp_path


def incremental_or_skip() -> None:
    try:
        import maintenance.incremental  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"maintenance.incremental cannot be imported ({exc}): no incremental strategy to "
                    f"compare with recompute yet")


# ---------------------------------------------------------------- the updates file format

def test_parse_updates_batches_signs_values_and_spans():
    text = ('// a comment\n+e(1, -2).\n-e(0x10, 2.5). /* two\nlines */ +e("a\\tb", 1e3).\ncommit.\n\n'
            "commit.\n+commit(3).\ncommit.\n")
    batches = parse_updates(text, "u.dl")
    assert [[(sign, atom.relation, tuple(a.value for a in atom.args)) for sign, atom in b] for b in batches] == [
        [("+", "e", (1, -2)), ("-", "e", (16, 2.5)), ("+", "e", ("a\tb", 1000.0))],
        [],                                                    # an empty batch is allowed
        [("+", "commit", (3,))],                               # commit is not a reserved word
    ]
    first = batches[0][0][1]
    assert (first.span.file, first.span.line, first.span.column) == ("u.dl", 2, 2)
    assert str(batches[0][1][1].args[1].span) == "u.dl:3:10"
    assert [str(b.span) for b in batches] == ["u.dl:5:1", "u.dl:7:1", "u.dl:9:1"]
    assert parse_updates("", "u.dl") == [] and parse_updates("// nothing\n", "u.dl") == []


@pytest.mark.parametrize("text, rendered", [
    ("+edge(1, 2)\ncommit.\n",                 # at the end of the change that misses it
     "u.dl:1:12: error[syntax_error]: missing '.' at the end of this clause (the next line starts with 'commit')\n"
     "  +edge(1, 2)\n             ^"),
    ("+edge(1, 2).\nedge(3, 4).\ncommit.\n",
     "u.dl:2:1: error[syntax_error]: a change starts with + (insert) or - (retract), as in +edge(3, 4).\n"
     "  edge(3, 4).\n  ^^^^^^^^^^"),
    ("+edge(1, x).\ncommit.\n",
     'u.dl:1:10: error[syntax_error]: a change holds constants only, not x (a symbol is quoted: "x")\n'
     "  +edge(1, x).\n           ^"),
    ("+edge(1, 1 + 1).\ncommit.\n",
     "u.dl:1:10: error[syntax_error]: a change holds constants only, not (1 + 1)\n"
     "  +edge(1, 1 + 1).\n           ^^^^^"),
    ("+edge(1, 2).\ncommit.\n-edge(1, 2).\n",
     "u.dl:3:2: error[syntax_error]: this change is not followed by commit.; end every batch with a line commit.\n"
     "  -edge(1, 2).\n   ^^^^^^^^^^"),
    ("+edge(1, 2).\ncomit.\n",
     "u.dl:2:1: error[syntax_error]: unexpected comit.; expected commit. or a change such as +comit(...).\n"
     "  comit.\n  ^^^^^"),
    ("+edge(1, 2).\n  * commit.\n",
     "u.dl:2:3: error[syntax_error]: unexpected '*'; expected '-', name, '+'\n"
     "    * commit.\n    ^"),
    ("+edge(1, 2).\ncommit. `\n",          # not @: a token (a user functor)
     "u.dl:2:9: error[syntax_error]: unexpected character '`'; expected '-', name, '+'\n"
     "  commit. `\n          ^"),
])
def test_syntax_errors_point_into_the_updates_file(tmp_path, text, rendered):
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text("1\t2\n")
    (tmp_path / "u.dl").write_text(text)
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == rendered + "\n"
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()                         # nothing evaluated, nothing written


@pytest.mark.parametrize("change, code, where, caret", [
    ("-path(1, 2).", "not_edb", "u.dl:3:2", "   ^^^^^^^^^^"),       # derived by rules: not in prog.dl
    ("+edges(1, 2).", "undefined_relation", "u.dl:3:2", "   ^^^^^^^^^^^"),
    ("+edge(1, 2, 3).", "arity_mismatch", "u.dl:3:2", "   ^^^^^^^^^^^^^"),
    ('+edge(1, "two").', "type_mismatch", "u.dl:3:10", "           ^^^^^"),
    ("+edge(1.5, 2).", "type_mismatch", "u.dl:3:7", "        ^^^"),
])
def test_errors_against_the_program_point_into_the_updates_file(tmp_path, change, code, where, caret):
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text("1\t2\n")
    # the bad change is in the second batch: the first must not be applied either
    (tmp_path / "u.dl").write_text(f"+edge(2, 3).\ncommit.\n{change}\ncommit.\n")
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{where}: error[{code}]: "), result.stderr
    assert lines[1:] == [f"  {change}", caret]
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_a_column_typed_by_its_data_keeps_one_type(tmp_path):
    (tmp_path / "p.dl").write_text(".input e\nr(x) :- e(x).\n")     # undeclared, no rows yet
    (tmp_path / "e.facts").write_text("")
    (tmp_path / "u.dl").write_text('+e(1).\ncommit.\n+e("a").\ncommit.\n')
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("u.dl:3:4: error[type_mismatch]: column 1 of e holds numbers")


def test_missing_updates_file(tmp_path):
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text("1\t2\n")
    result = datalog("run", "p.dl", "-D", "out", "--updates", "nope.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == "error[missing_input]: updates file nope.dl does not exist\n"
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- deltas

EXAMPLE_DELTAS = """\
batch 1: +0 -5 tuples in path
-path\t1\t9
-path\t8\t6
-path\t8\t7
-path\t8\t9
-path\t8\t14
batch 2: +1 -6 tuples in path
+path\t9\t15
-path\t2\t2
-path\t3\t2
-path\t3\t3
-path\t4\t2
-path\t4\t3
-path\t4\t4
batch 3: +0 -0 tuples in path
batch 4: +7 -0 tuples in path
+path\t5\t5
+path\t6\t5
+path\t6\t6
+path\t7\t5
+path\t7\t6
+path\t7\t7
+path\t9\t5
"""


def test_transitive_closure_example_golden(tmp_path):
    """programs/transitive_closure/updates.dl, deltas worked out by hand on the graph of facts/edge.facts."""
    tc = PROGRAMS / "transitive_closure"
    result = ok(datalog("run", tc / "prog.dl", "-F", tc / "facts", "-D", tmp_path / "out",
                        "--updates", tc / "updates.dl", "--maintenance", "recompute", cwd=tmp_path))
    assert deltas(result.stdout, batches=4) == EXAMPLE_DELTAS
    # batch 3 retracts an edge that is not there: told, pointing at its commit, and nothing else
    assert result.stderr == (f"{tc / 'updates.dl'}:19:1: warning[retract_absent]: edge(100, 101) is not in edge: "
                             "nothing was retracted\n  commit.\n  ^^^^^^^\n")
    edges = {tuple(map(int, line.split("\t"))) for line in (tc / "facts" / "edge.facts").read_text().splitlines()}
    edges = (edges - {(8, 9), (4, 2)}) | {(9, 15), (7, 5)}
    assert (tmp_path / "out" / "path.csv").read_text() == tsv(closure(edges))    # the final state


def random_batches(seed: int, nodes: int = 8, count: int = 6):
    rng = random.Random(seed)
    initial = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(10)}
    batches = []
    for _ in range(count):
        batches.append([(rng.choice("+-"), (rng.randrange(nodes), rng.randrange(nodes)))
                        for _ in range(rng.randrange(0, 5))])
        if rng.random() < 0.5 and initial:                      # retract something that is there
            batches[-1].append(("-", rng.choice(sorted(initial))))
    return initial, batches


def write_updates(path: Path, relation: str, batches) -> None:
    text = []
    for number, batch in enumerate(batches, 1):
        text.append(f"// batch {number}\n")
        text += [f"{sign}{relation}({a}, {b}).\n" for sign, (a, b) in batch]
        text.append("commit.\n\n")
    path.write_text("".join(text))


@pytest.mark.parametrize("seed", range(6))
def test_random_batches_match_a_plain_python_closure(tmp_path, seed):
    initial, batches = random_batches(seed)
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text(tsv(initial))
    write_updates(tmp_path / "u.dl", "edge", batches)
    edges, states = set(initial), [closure(initial)]
    for batch in batches:
        last = {}
        for sign, row in batch:                                 # in a batch the last change of a tuple wins
            last[row] = sign
        edges = (edges | {r for r, s in last.items() if s == "+"}) - {r for r, s in last.items() if s == "-"}
        states.append(closure(edges))
    result = ok(datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute",
                        cwd=tmp_path))
    assert deltas(result.stdout, batches=len(batches)) == expected_deltas("path", states)
    assert (tmp_path / "out" / "path.csv").read_text() == tsv(states[-1])


def test_without_output_every_changed_relation_is_shown(tmp_path):
    (tmp_path / "p.dl").write_text(".decl m(s: symbol, w: float)\n.decl heavy(s: symbol)\n"
                                   "heavy(s) :- m(s, w), w > 1.5.\n")
    (tmp_path / "u.dl").write_text('+m("x y", 2).\n+m("z", 1.25).\ncommit.\n'
                                   '-m("q", 3).\ncommit.\n-m("x y", 2.0).\ncommit.\n')
    result = ok(datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute",
                        cwd=tmp_path))
    assert deltas(result.stdout, batches=3) == (
        "batch 1: +1 -0 tuples in heavy\n+heavy\tx y\n"          # relations by name, EDB ones included
        "batch 1: +2 -0 tuples in m\n+m\tx y\t2\n+m\tz\t1.25\n"  # floats as in output files: 2 not 2.0
        "batch 2: no changes\n"
        "batch 3: +0 -1 tuples in heavy\n-heavy\tx y\n"
        "batch 3: +0 -1 tuples in m\n-m\tx y\t2\n")


def test_stdout_output_dir_prints_initial_outputs_then_deltas(tmp_path):
    (tmp_path / "p.dl").write_text(TC + ".printsize path\n")
    (tmp_path / "edge.facts").write_text("1\t2\n")
    (tmp_path / "u.dl").write_text("+edge(2, 3).\ncommit.\n")
    result = ok(datalog("run", "p.dl", "-D", "-", "--updates", "u.dl", "--maintenance", "recompute",
                        cwd=tmp_path))
    assert deltas(result.stdout, batches=1) == (
        "---------------\npath\na\tb\n===============\n1\t2\n===============\npath\t1\n"   # -D -: headers
        "batch 1: +2 -0 tuples in path\n+path\t1\t3\n+path\t2\t3\n")
    assert not (tmp_path / "path.csv").exists()


# ---------------------------------------------------------------- failures roll back

def test_failed_batch_rolls_back_and_stops(failing):
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=failing)
    assert result.returncode == 1
    assert deltas(result.stdout, batches=1) == (               # only batch 1 was applied
        "batch 1: +3 -0 tuples in reach\n+reach\t1\t5\n+reach\t2\t5\n+reach\t4\t5\n"
        "batch 1: +3 -0 tuples in ratio\n+ratio\t1\t20\n+ratio\t2\t20\n+ratio\t4\t20\n")
    lines = result.stderr.splitlines()
    assert lines[0] == "batch 2 (u.dl:5:1) failed and was rolled back; the 1 later batch was not applied:"
    assert lines[1].startswith("p.dl:9:10: error[division_by_zero]: ")
    # the output files hold the state before the failed batch: batch 1 applied, batch 2 not at all
    # (-e(1, 2) would have removed reach(1, 2), reach(1, 4) ...), batch 3 never
    assert (failing / "out" / "reach.csv").read_text() == tsv(closure({(1, 2), (2, 4), (4, 5)}))
    assert (failing / "out" / "ratio.csv").read_text() == tsv(
        {(x, 100 // y) for x, y in closure({(1, 2), (2, 4), (4, 5)})})


def test_failed_first_batch_leaves_the_initial_outputs(failing):
    (failing / "u.dl").write_text("+e(1, 7).\n+e(2, 0).\ncommit.\n+e(7, 8).\ncommit.\n")
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=failing)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("batch 1 (u.dl:3:1) failed and was rolled back; "
                                    "the 1 later batch was not applied:\np.dl:9:10: error[division_by_zero]")
    assert (failing / "out" / "reach.csv").read_text() == "1\t2\n1\t4\n2\t4\n"
    assert (failing / "out" / "ratio.csv").read_text() == "1\t25\n1\t50\n2\t25\n"


def test_failed_last_batch_says_nothing_about_later_ones(failing):
    (failing / "u.dl").write_text("+e(4, 0).\ncommit.\n")
    result = datalog("run", "p.dl", "-D", "out", "--updates", "u.dl", "--maintenance", "recompute", cwd=failing)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == "batch 1 (u.dl:2:1) failed and was rolled back:"


# ---------------------------------------------------------------- explain --maintenance

def test_explain_maintenance_without_updates(tmp_path):
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text("1\t2\n")
    result = ok(datalog("explain", "p.dl", "--maintenance", cwd=tmp_path))
    assert result.stdout == "no maintenance ran yet: give --updates with a committed batch\n"


def test_explain_maintenance_with_updates_recompute(tmp_path):
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text("1\t2\n")
    (tmp_path / "u.dl").write_text("+edge(2, 3).\ncommit.\n+edge(1, 2).\ncommit.\n")
    result = ok(datalog("explain", "p.dl", "--maintenance", "recompute", "-F", "facts", "--updates", "u.dl",
                        cwd=tmp_path))
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"batch 1: \+3 -0 tuples in 2 relations, maintained in \d+\.\d ms", lines[0])
    assert re.fullmatch(r"batch 2: \+0 -0 tuples in 0 relations, maintained in \d+\.\d ms", lines[1])
    stats = lines[2:]
    assert stats == ["the recompute maintenance reported no statistics"] or stats[0].endswith("rule")
    assert not (tmp_path / "path.csv").exists()                 # explain writes no outputs


def test_explain_maintenance_failing_batch(failing):
    result = datalog("explain", "p.dl", "--maintenance", "recompute", "--updates", "u.dl", cwd=failing)
    assert result.returncode == 1
    assert result.stderr.startswith("batch 2 (u.dl:5:1) failed and was rolled back")


def test_explain_prints_the_stats_table(tmp_path, monkeypatch, capsys):
    """engine.stats() is the maintainer's; whatever keys it returns are printed, aligned, the rule last."""
    from datalog.cli import commands as cli
    from datalog.engine.engine import Engine
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text("1\t2\n")
    (tmp_path / "u.dl").write_text("+edge(2, 3).\ncommit.\n")
    stats = {"path(x, y) :- edge(x, y).": {"operations": 12, "sensitivity_intervals": 4, "regions": 2,
                                           "skipped": False},
             "path(x, z) :- path(x, y), edge(y, z).": {"operations": 1234, "sensitivity_intervals": 40,
                                                       "regions": 17, "skipped": True, "note": "dred"}}
    monkeypatch.setattr(Engine, "stats", lambda self: stats)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["explain", "p.dl", "--maintenance", "recompute", "--updates", "u.dl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "maintenance (recompute) of batch 1, the last one, per rule:",
        "operations  sensitivity_intervals  regions  skipped  note  rule",
        "        12                      4        2  no             path(x, y) :- edge(x, y).",
        "      1234                     40       17  yes      dred  path(x, z) :- path(x, y), edge(y, z).",
    ]


# ---------------------------------------------------------------- incremental == recompute

def run_both(tmp_path: Path, program: Path, facts: Path, updates: Path):
    results = {}
    for strategy in ("recompute", "incremental"):
        out = tmp_path / f"out-{strategy}"
        result = datalog("run", program, "-F", facts, "-D", out, "--updates", updates,
                         "--maintenance", strategy, cwd=tmp_path)
        files = {p.name: p.read_text() for p in sorted(out.glob("*"))} if out.exists() else {}
        results[strategy] = (result.returncode, deltas(result.stdout), result.stderr, files)
    return results


def assert_same(results) -> None:
    """Both strategies: the same deltas, the same exit status and errors, the same output files."""
    status, printed, errors, files = results["recompute"]
    i_status, i_printed, i_errors, i_files = results["incremental"]
    assert i_printed == printed, "incremental printed other deltas than recompute:\n" + "".join(
        difflib.unified_diff(printed.splitlines(True), i_printed.splitlines(True), "recompute", "incremental"))
    assert (i_status, i_errors) == (status, errors)
    assert i_files == files


@pytest.mark.parametrize("name", ["transitive_closure", "access_control"])
def test_incremental_prints_what_recompute_prints_examples(tmp_path, name):
    incremental_or_skip()
    program = PROGRAMS / name
    results = run_both(tmp_path, program / "prog.dl", program / "facts", program / "updates.dl")
    assert results["recompute"][0] == 0, results["recompute"][2]
    assert_same(results)


@pytest.mark.parametrize("seed", range(6))
def test_incremental_prints_what_recompute_prints_random(tmp_path, seed):
    incremental_or_skip()
    initial, batches = random_batches(seed)
    (tmp_path / "p.dl").write_text(TC)
    (tmp_path / "edge.facts").write_text(tsv(initial))
    write_updates(tmp_path / "u.dl", "edge", batches)
    results = run_both(tmp_path, tmp_path / "p.dl", tmp_path, tmp_path / "u.dl")
    assert results["recompute"][0] == 0, results["recompute"][2]
    assert_same(results)


def test_incremental_prints_what_recompute_prints_aggregates(tmp_path):
    incremental_or_skip()
    program = PROGRAMS / "max_sales_per_region"
    (tmp_path / "u.dl").write_text('+sales("arctic", "ole", 500).\ncommit.\n'
                                   '-sales("central", "zoe", 9000).\n+sales("north", "pia", 9100).\ncommit.\n'
                                   '-sales("arctic", "ole", 500).\n-region("coastal").\ncommit.\n')
    results = run_both(tmp_path, program / "prog.dl", program / "facts", tmp_path / "u.dl")
    assert results["recompute"][0] == 0, results["recompute"][2]
    assert_same(results)


def test_incremental_rolls_back_like_recompute(failing):
    incremental_or_skip()
    results = run_both(failing, failing / "p.dl", failing, failing / "u.dl")
    assert results["recompute"][0] == 1
    assert_same(results)


def test_parse_errors_are_datalog_errors():
    for text in ("+", "-e(", "commit", "+e(1).", "e(1). commit.", "+e(_). commit.", '+e("\\q"). commit.'):
        with pytest.raises(DatalogError):
            parse_updates(text, "u.dl")
    rng = random.Random(7)                                      # token soup: a DatalogError or batches
    tokens = ["+", "-", "e", "(", ")", ",", ".", "commit", "1", "-2", "2.5", '"s"', "x", "_", "//c\n", "\n", "*"]
    for _ in range(500):
        text = " ".join(rng.choice(tokens) for _ in range(rng.randrange(1, 12)))
        try:
            parse_updates(text, "u.dl")
        except DatalogError as err:
            assert err.span is not None and err.span.file == "u.dl", text
