"""The console script ends a `run` without freeing what it evaluated (datalog.cli.entry): every
output it wrote must still be whole: stdout, files, gzip and SQLite, written by a real process."""

import gzip
import sqlite3
import subprocess
import sys

PROGRAM = """
.decl n(x: number)
n(0).
n(x + 1) :- n(x), x < {last}.
.decl pair(x: number, y: number)
pair(x, y) :- n(x), y = x * 2.
.output n
.output pair(IO=file, filename="pair.csv.gz", compress=true)
.output pair(IO=sqlite, dbname="pairs.db", name="pair")
"""


def test_every_output_of_a_fast_exit_is_whole(tmp_path):
    last = 60_000
    (tmp_path / "prog.dl").write_text(PROGRAM.format(last=last))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "datalog", "run", str(tmp_path / "prog.dl"), "-D", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(int(line) for line in (out / "n.csv").read_text().split()) == list(range(last + 1))
    rows = gzip.decompress((out / "pair.csv.gz").read_bytes()).decode().splitlines()
    assert sorted(tuple(map(int, r.split("\t"))) for r in rows) == [(x, 2 * x) for x in range(last + 1)]
    with sqlite3.connect(out / "pairs.db") as db:
        assert db.execute("select count(*), sum(y) from pair").fetchone() == (last + 1, last * (last + 1))


def test_a_fast_exit_flushes_stdout(tmp_path):
    last = 60_000
    (tmp_path / "prog.dl").write_text(PROGRAM.format(last=last).split(".output pair(IO=file")[0])
    done = subprocess.run([sys.executable, "-m", "datalog", "run", str(tmp_path / "prog.dl"), "-D", "-"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == ["---------------", "n", "x", "==============="] and lines[-1] == "==============="
    assert sorted(int(x) for x in lines[4:-1]) == list(range(last + 1))


def test_a_user_error_still_exits_with_its_code(tmp_path):
    (tmp_path / "bad.dl").write_text(".decl p(x: number)\np(x) :- q(x).\n")
    done = subprocess.run([sys.executable, "-m", "datalog", "run", str(tmp_path / "bad.dl")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and "error[" in done.stderr and "Traceback" not in done.stderr


# A Ctrl-C while the console script imports the commands (before any of them runs): an import
# hook raises it as the engine's module is loaded, in a real process.
INTERRUPTED_IMPORT = """
import sys
class Stop:
    def find_spec(self, name, path=None, target=None):
        if name == "datalog.engine.engine":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Stop())
sys.argv = ["datalog", "run", "prog.dl"]
from datalog.cli import entry
entry()
"""


def test_ctrl_c_while_starting_is_interrupted_not_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr.startswith("error[interrupted]:") and "Traceback" not in done.stderr, done.stderr
