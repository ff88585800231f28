"""The notebook integration (issue 20, part 4): the ``%%datalog`` cell magic run in a real IPython
shell (IPython.testing) and in a real Jupyter kernel (nbclient and ipykernel); its answers are
the engine's own (compared with ``Engine.ask`` / ``rows``, not written down); a failing statement
changes nothing; relations and answers show as HTML in Jupyter and as rich tables in a terminal."""

from __future__ import annotations

import pytest

IPython = pytest.importorskip("IPython", reason="the notebook extra (make test installs it)")
pd = pytest.importorskip("pandas")

from IPython.core.error import UsageError  # noqa: E402

from datalog import Engine, Workspace, notebook  # noqa: E402
from datalog.cli.report import summary  # noqa: E402
from datalog.language.parser import parse_query  # noqa: E402

PROGRAM = """
.decl edge(src: number, dst: number)
.decl path(src: number, dst: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture(scope="module")
def ip():
    from IPython.testing.globalipapp import start_ipython
    shell = start_ipython()
    shell.run_line_magic("load_ext", "datalog")
    return shell


@pytest.fixture
def fresh(ip):
    """A cell magic whose session engines start empty."""
    notebook._SESSIONS.clear()
    yield ip
    notebook._SESSIONS.clear()


def cell(ip, text: str, line: str = ""):
    return ip.run_cell_magic("datalog", line, text)


def state(engine) -> dict:
    return {name: engine.rows(name) for name in engine.relations()}


def test_a_cell_grows_the_session_engine_and_prints_the_deltas(fresh, capsys):
    """What a cell prints is each statement's change, as a twin engine's commits give it."""
    twin = Engine.from_source(PROGRAM)
    twin.run()
    assert cell(fresh, PROGRAM + "edge(1, 2). edge(2, 3).\n") is None
    expected = [summary(twin.commit(inserts={"edge": [row]})) for row in [(1, 2), (2, 3)]]
    assert capsys.readouterr().out.splitlines()[-2:] == expected
    assert state(notebook.engine()) == state(twin)
    cell(fresh, "-edge(1, 2).")
    assert capsys.readouterr().out.strip() == summary(twin.commit(retracts={"edge": [(1, 2)]}))
    cell(fresh, "begin\nedge(3, 4).\nedge(4, 5).\ncommit")
    assert capsys.readouterr().out.splitlines()[-1] == summary(twin.commit(inserts={"edge": [(3, 4), (4, 5)]}))
    assert state(notebook.engine()) == state(twin)


QUERIES = ["?- path(1, X).", "?- path(X, Y), X < Y, !edge(X, Y).", "?- path(X, X).", "?- edge(_, Y)."]


@pytest.mark.parametrize("query", QUERIES)
def test_query_answers_are_a_dataframe_of_the_engines_answers(fresh, query):
    cell(fresh, PROGRAM + "edge(1, 2). edge(2, 3). edge(3, 1). edge(3, 4).")
    frame = cell(fresh, query)
    names, rows = notebook.engine().ask(parse_query(query))
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == names
    assert [tuple(r) for r in frame.itertuples(index=False)] == rows
    answers = cell(fresh, query, "--as table")                   # what engine.query gives, as it is
    result = notebook.engine().query(query)
    assert type(answers) is type(result) and (answers.columns, answers.rows) == (result.columns, result.rows)
    assert answers.df().equals(frame) and answers.title == result.title


def test_answers_as_other_kinds_and_stored(fresh):
    cell(fresh, PROGRAM + "edge(1, 2). edge(2, 3).")
    rows = notebook.engine().rows("path")
    table = cell(fresh, "?- path(X, Y).", "--as arrow -o saved")
    assert [tuple(r.values()) for r in table.to_pylist()] == rows and fresh.user_ns["saved"] is table
    answers = cell(fresh, "?- path(X, Y).", "--as table")
    assert answers.rows == rows and answers.columns == ["X", "Y"]
    assert "<th>X</th>" in answers._repr_html_()
    assert cell(fresh, "?- path(1, 3).") is None                  # no variables: true or false, printed


def test_earlier_queries_of_a_cell_are_displayed_the_last_is_its_value(fresh, monkeypatch):
    shown = []
    monkeypatch.setattr(notebook, "display", shown.append)
    value = cell(fresh, PROGRAM + "edge(1, 2).\n?- edge(X, _).\nedge(2, 3).\n?- path(1, X).", "-o last")
    assert [list(frame["X"]) for frame in shown] == [[1]]
    assert list(value["X"]) == [2, 3] and fresh.user_ns["last"] is value


@pytest.mark.parametrize("bad, code", [
    ("edge(1, 2, 3).", "arity_mismatch"),
    ("?- nothing(X).", "undefined_relation"),
    ("path(x, y) :- edge(x, z).", "unbound_variable"),
    ("edge(1, 2)", "syntax_error"),                      # the cell ends inside a statement
    ("commit", "transaction_state"),
])
def test_a_failing_statement_stops_the_cell_with_its_diagnostic_and_changes_nothing(fresh, bad, code):
    cell(fresh, PROGRAM + "edge(1, 2).")
    before = state(notebook.engine())
    with pytest.raises(UsageError) as raised:
        cell(fresh, bad + "\nedge(7, 8).")                   # the statement after it does not run
    assert f"error[{code}]" in str(raised.value) and "^" in str(raised.value)
    assert state(notebook.engine()) == before
    result = fresh.run_cell("%%datalog\n" + bad + "\n")        # in a cell: an error, no traceback
    assert not result.success and isinstance(result.error_in_exec, UsageError)


def test_named_sessions_and_the_notebooks_own_engine(fresh):
    cell(fresh, PROGRAM + "edge(1, 2).", "one")
    cell(fresh, PROGRAM + "edge(5, 6).", "two")
    assert notebook.engine("one").rows("path") == [(1, 2)]
    assert notebook.engine("two").rows("path") == [(5, 6)]
    mine = Engine.from_source(PROGRAM)
    mine.insert("edge", pd.DataFrame({"src": [1, 2], "dst": [2, 3]}))
    fresh.user_ns["mine"] = mine
    frame = cell(fresh, "edge(3, 4).\n?- path(1, X).", "mine")
    twin = Engine.from_source(PROGRAM + "edge(1, 2). edge(2, 3). edge(3, 4).")
    twin.run()
    assert [(x,) for x in frame["X"]] == [row[1:] for row in twin.query("path(1, X)")]
    assert state(mine) == state(twin)


def test_workspace_sessions_make_durable_commits(fresh, tmp_path):
    path = tmp_path / "ws"
    cell(fresh, PROGRAM + "edge(1, 2).", f"-w {path}")              # none there: created from the session
    cell(fresh, "edge(2, 3).", f"-w {path}")
    assert notebook._SESSIONS["default"].workspace is not None      # the session continues on it
    with Workspace.open(path, readonly=True) as reader:
        assert reader.engine.rows("path") == [(1, 2), (1, 3), (2, 3)]
    notebook._SESSIONS["default"].close()
    with Workspace.open(path) as ws:                                # a Workspace variable of the notebook
        fresh.user_ns["ws"] = ws
        cell(fresh, "-edge(1, 2).", "ws")
        seq = ws.seq
    with Workspace.open(path, readonly=True) as reader:
        assert reader.seq == seq and reader.engine.rows("path") == [(2, 3)]


def test_a_workspace_directory_that_exists_empty_gets_the_session_saved_in_it(fresh, tmp_path):
    """``-w`` on an existing empty directory tried to open it (workspace_missing)."""
    path = tmp_path / "ws"
    path.mkdir()
    cell(fresh, PROGRAM + "edge(1, 2).", f"-w {path}")
    assert notebook._SESSIONS["default"].workspace is not None
    cell(fresh, "edge(2, 3).")
    notebook._SESSIONS["default"].close()
    with Workspace.open(path, readonly=True) as reader:
        assert reader.engine.rows("path") == [(1, 2), (1, 3), (2, 3)]
    damaged = tmp_path / "damaged"                                   # a log without its snapshot:
    damaged.mkdir()                                                  # opened, and so reported
    (damaged / "log").write_bytes(b"not a log")
    with pytest.raises(UsageError) as caught:
        cell(fresh, "edge(3, 4).", f"other -w {damaged}")
    assert "error[workspace_" in str(caught.value)
    assert (damaged / "log").read_bytes() == b"not a log" and not (damaged / "snapshot").exists()


def test_quit_ends_the_cell_without_a_traceback_and_the_session_stays(fresh, capsys):
    """``.quit`` raised the REPL's internal Quit: a traceback in the notebook."""
    result = fresh.run_cell("%%datalog\n" + PROGRAM + "edge(1, 2).\n.quit\nedge(2, 3).\n")
    out = capsys.readouterr().out
    assert result.error_in_exec is None and result.error_before_exec is None
    assert notebook.QUIT in out and "Traceback" not in out and "Quit" not in out.replace(".quit", "")
    assert notebook.engine().rows("edge") == [(1, 2)]                # what came before it stays done
    cell(fresh, "edge(2, 3).")                                       # and the session goes on
    assert notebook.engine().rows("path") == [(1, 2), (1, 3), (2, 3)]


def test_facts_directory_for_inputs(fresh, tmp_path):
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    cell(fresh, PROGRAM + ".input edge\n", f"-F {tmp_path}")
    assert notebook.engine().rows("path") == [(1, 2), (1, 3), (2, 3)]


def test_long_work_reports_to_a_progress_bar(fresh, monkeypatch):
    bars = []

    class Recording(notebook.ProgressBar):
        def __init__(self):
            super().__init__(delay=3600)                            # never drawn: the lines are recorded
            bars.append(self)
    monkeypatch.setattr(notebook, "ProgressBar", Recording)
    cell(fresh, PROGRAM + "edge(1, 2). edge(2, 3).")
    lines = [line for bar in bars for line in bar.lines]
    assert any(line.startswith("stratum") for line in lines)
    assert notebook.engine().progress is None                       # only while the cell runs


def test_relations_show_as_rich_tables_in_a_terminal(fresh):
    engine = Engine.from_source(PROGRAM + 'edge(1, 2). edge(2, 3).')
    engine.run()
    text = fresh.display_formatter.format(engine.relation("path"))[0]["text/plain"]
    assert "path: 3 rows" in text and "┃ src ┃ dst ┃" in text
    assert [line.count("│") for line in text.splitlines() if "│" in line] == [3, 3, 3]


def test_relations_show_as_html_cut_to_their_first_rows():
    engine = Engine.from_source(".decl n(x: number, s: symbol)")
    engine.insert("n", [(i, f"<{i}>") for i in range(100)])
    html = engine.relation("n")._repr_html_()
    assert "n: 100 rows, the first 20 shown" in html and html.count("<tr>") == 21
    assert "&lt;0&gt;" in html and "<0>" not in html


# ---------------------------------------------------------------- a real Jupyter kernel

def test_the_cell_magic_in_a_jupyter_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import json
    import sys
    spec = tmp_path / "kernels" / "datalog-test"                    # this Python's kernel, whatever else
    spec.mkdir(parents=True)                                        # the machine has installed
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "datalog test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    cells = [
        "%load_ext datalog",
        "%%datalog\n" + PROGRAM + "edge(1, 2). edge(2, 3).",
        "%%datalog -o frame\n?- path(1, X).",
        "list(frame['X'])",
        "from datalog import notebook\nnotebook.engine().relation('path')",
        "%%datalog\n?- path(1, X, Y).",
    ]
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(book, timeout=120, kernel_name="datalog-test", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [c.outputs for c in book.cells]
    twin = Engine.from_source(PROGRAM)
    twin.run()
    printed = "".join(o["text"] for o in outputs[1] if o["output_type"] == "stream").splitlines()
    assert printed[-2:] == [summary(twin.commit(inserts={"edge": [row]})) for row in [(1, 2), (2, 3)]]
    frame_html = outputs[2][0]["data"]["text/html"]                 # the DataFrame, as the cell's value
    assert "<table" in frame_html
    assert outputs[3][0]["data"]["text/plain"] == str([x for _, x in twin.query("path(1, X)")])
    relation = outputs[4][0]["data"]
    assert '<table class="datalog">' in relation["text/html"] and "path: 3 rows" in relation["text/html"]
    error, = outputs[5]                                             # shown without a traceback
    assert error["name"] == "stderr" and error["text"].startswith("UsageError: ")
    assert "error[arity_mismatch]" in error["text"] and "Traceback" not in error["text"]


# ---------------------------------------------------------------- the README's cells

def readme_cells() -> list[tuple[str, str | None]]:
    """The ``ipython`` cells of docs/python-api.md ("From Python and notebooks"), each with the ``text``
    block right after it, if any: what the cell prints, then its value."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "docs" / "python-api.md").read_text(encoding="utf-8")
    start = text.index("## From Python and notebooks")
    end = text.find("\n## ", start + 1)
    text = text[start:end if end >= 0 else len(text)]
    return re.findall(r"```ipython\n(.*?)```\s*(?:```text\n(.*?)```)?", text, re.S)


def test_readme_cells_print_what_the_readme_says(fresh, capsys):
    cells = readme_cells()
    assert len(cells) >= 2
    for source, expected in cells:
        capsys.readouterr()
        if source.startswith("%%"):
            first, _, body = source.partition("\n")
            value = fresh.run_cell_magic(first[2:].split()[0], first[2:].partition(" ")[2], body)
            if value is not None:
                print(value)
        else:
            assert fresh.run_cell(source).success
        if expected:
            assert capsys.readouterr().out == expected
