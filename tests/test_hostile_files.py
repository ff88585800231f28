"""Hostile files and a hostile environment (issue 23, items 1 and 4): links and other entries
planted in a workspace, ``.input``/``.output`` paths that lead out of ``-F``/``-D``, the umask,
outputs all or none, and a full disk, a read-only file system or a non-writable directory.

Everything runs for real where it can: the CLI as a subprocess, real symlinks, hard links and
FIFOs, real permissions (as root, the CLI runs with the capabilities that bypass them dropped,
by ``setpriv``), a real full disk and a real read-only file system (a small tmpfs mounted in a
private mount namespace, by ``unshare -m``: skipped where that is not permitted). A full disk is
also injected (an ``OSError(ENOSPC)`` from ``os.fsync``/``os.write``) so that it is tested
everywhere."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from datalog.engine.engine import Engine
from datalog.engine.pipeline import run as run_pipeline
from datalog.language.errors import (InputPath, OutputError, OutputPath, WorkspaceCorrupt, WorkspaceIO,
                                     WorkspaceLocked)
from datalog.sources import atomic
from datalog.workspace.workspace import LOG, SNAPSHOT, Workspace
from tests.workspace_oracle import BLOCK, PROGRAM, commit_of, contents, edb_after, from_scratch
from tests.cli_process import run_datalog

ROOT = Path(__file__).resolve().parent.parent
VICTIM = "precious data, not the engine's\n"


def datalog(*args, cwd=None, prefix=(), umask=None) -> subprocess.CompletedProcess:
    """The CLI as a subprocess (``prefix``: a command that runs it, e.g. ``setpriv ...``)."""
    return run_datalog(*args, cwd=cwd, prefix=prefix, umask=umask)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def refused(result: subprocess.CompletedProcess, code: str, *words: str) -> str:
    """The run failed with the coded error ``code`` whose text holds ``words``; no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    assert f"error[{code}]" in result.stderr, result.stderr
    for word in words:
        assert str(word) in result.stderr, (word, result.stderr)
    return result.stderr


def updates(ks) -> str:
    """The updates file of commits ``ks`` of the oracle's stream, one batch each."""
    lines = []
    for k in ks:
        inserts, retracts = commit_of(k)
        lines += [f"-{n}({', '.join(map(str, r))})." for n, rows in retracts.items() for r in rows]
        lines += [f"+{n}({', '.join(map(str, r))})." for n, rows in inserts.items() for r in rows]
        lines.append("commit.")
    return "\n".join(lines) + "\n"


def committed(path: Path, n: int) -> None:
    """A workspace at ``path`` with commits 1..n of the stream."""
    with Workspace.create(path, PROGRAM) as ws:
        for k in range(1, n + 1):
            ws.engine.commit(*commit_of(k))


def assert_holds(path: Path, n: int, blocks: int = 1) -> None:
    """The workspace reopens (as the writer) at commit ``n`` equal to evaluating the program
    from scratch over the EDB after commits 1..n: no acknowledged commit lost, none added."""
    with Workspace.open(path) as ws:
        assert ws.seq == n and len(ws.blocks) == blocks
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(n))


def temporaries(directory: Path) -> list[str]:
    return sorted(str(p) for p in directory.rglob("*") if atomic.is_temporary(p.name) or p.name.endswith(".tmp"))


def victim(tmp_path: Path, name: str = "victim.txt") -> Path:
    target = tmp_path / name
    target.write_text(VICTIM)
    return target


# ---------------------------------------------------------------- links planted in a workspace

def test_compact_never_writes_through_links_at_the_old_temporary_names(tmp_path):
    """Defect: a symlink at ws/snapshot.tmp made compact overwrite its target. The temporary
    names are fresh now, and any name that exists is never opened for writing."""
    ws = tmp_path / "ws"
    (tmp_path / "prog.dl").write_text(PROGRAM)
    ok(datalog("init", ws, tmp_path / "prog.dl"))
    targets = {}
    for name in ["snapshot.tmp", "log.tmp", "maintainer.0.tmp", "maintainer.1.tmp", "maintainer.2.tmp", "lock.tmp"]:
        targets[name] = victim(tmp_path, f"victim-{name}")
        (ws / name).symlink_to(targets[name])
    for k in (1, 2):
        (tmp_path / "upd").write_text(updates([k]))
        ok(datalog("update", ws, tmp_path / "upd"))
        ok(datalog("compact", ws))
    assert all(t.read_text() == VICTIM for t in targets.values())
    assert_holds(ws, 2)


def test_a_planted_temporary_name_fails_the_write_and_is_not_followed(tmp_path, monkeypatch):
    """Whatever the name, creation is exclusive and does not follow a link: with every temporary
    name taken by a planted link, compaction is workspace_io and nothing is written through."""
    committed(tmp_path / "ws", 1)
    target = victim(tmp_path)
    planted = tmp_path / "ws" / ".snapshot.planted.tmp"
    planted.symlink_to(target)
    monkeypatch.setattr(atomic, "temporary_name", lambda path: planted)
    with Workspace.open(tmp_path / "ws") as ws, pytest.raises(WorkspaceIO, match=str(tmp_path / "ws")):
        ws.compact()
    assert target.read_text() == VICTIM and planted.is_symlink()
    with pytest.raises(FileExistsError):
        atomic.write(tmp_path / "ws" / "snapshot", [b"x"])
    assert target.read_text() == VICTIM
    monkeypatch.undo()
    assert_holds(tmp_path / "ws", 1)


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dangling"])
def test_a_link_at_the_lock_is_refused_and_its_target_kept(tmp_path, kind):
    """Defect: a symlink at ws/lock made update truncate its target to 0 bytes (and a dangling one
    made it create its target)."""
    committed(tmp_path / "ws", 1)
    target = victim(tmp_path) if kind != "dangling" else tmp_path / "created-elsewhere"
    (tmp_path / "ws" / "lock").unlink()
    if kind == "hardlink":
        os.link(target, tmp_path / "ws" / "lock")
    else:
        (tmp_path / "ws" / "lock").symlink_to(target)
    (tmp_path / "upd").write_text(updates([2]))
    refused(datalog("update", tmp_path / "ws", tmp_path / "upd"), "workspace_corrupt", tmp_path / "ws" / "lock")
    assert target.read_text() == VICTIM if kind != "dangling" else not target.exists()
    ok(datalog("query", tmp_path / "ws", "path(1, X)"))               # readers take no lock
    (tmp_path / "ws" / "lock").unlink()
    assert_holds(tmp_path / "ws", 1)


def _plant(entry: Path, kind: str, outside: Path) -> None:
    """Replace ``entry`` by a ``kind``: a symlink to a copy of it elsewhere (valid content), a FIFO
    or a directory."""
    if kind == "symlink":
        shutil.copyfile(entry, outside)
        entry.unlink()
        entry.symlink_to(outside)
    else:
        entry.unlink()
        os.mkfifo(entry) if kind == "fifo" else entry.mkdir()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
@pytest.mark.parametrize("name", [SNAPSHOT, LOG, "maintainer.0", "lock"])
def test_workspace_entries_that_are_not_regular_files_are_refused(tmp_path, name, kind):
    """Every entry the writer opens must be a regular file of the workspace: a link (even to a valid
    copy), a FIFO (which would block a reader forever) or a directory is workspace_corrupt naming
    it, never followed; the readers' entries (snapshot, log) likewise for a reader."""
    ws = tmp_path / "ws"
    committed(ws, 0)
    assert (ws / name).is_file()
    copied = (ws / name).read_bytes()
    _plant(ws / name, kind, tmp_path / f"copy-of-{name}")
    (tmp_path / "upd").write_text(updates([1]))
    refused(datalog("update", ws, tmp_path / "upd"), "workspace_corrupt", ws / name)
    if name in (SNAPSHOT, LOG):
        refused(datalog("query", ws, "path(1, X)"), "workspace_corrupt", ws / name)
    else:
        ok(datalog("query", ws, "path(1, X)"))
    if kind == "symlink":                                       # the link's target: never written
        assert (tmp_path / f"copy-of-{name}").read_bytes() == copied


def test_status_does_not_block_on_a_fifo_lock(tmp_path):
    committed(tmp_path / "ws", 0)
    (tmp_path / "ws" / "lock").unlink()
    os.mkfifo(tmp_path / "ws" / "lock")
    assert "writer: none" in ok(datalog("status", tmp_path / "ws")).stdout


def test_a_linked_spark_directory_is_refused(tmp_path):
    committed(tmp_path / "ws", 0)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "ws" / "spark").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(WorkspaceCorrupt, match="spark"):
        Workspace.open(tmp_path / "ws", readonly=True)


def test_a_hard_linked_log_is_refused_for_writing(tmp_path):
    """The writer appends to the log in place: a second name of it would change too."""
    committed(tmp_path / "ws", 1)
    os.link(tmp_path / "ws" / LOG, tmp_path / "second-name")
    before = (tmp_path / "second-name").read_bytes()
    with pytest.raises(WorkspaceCorrupt, match="hard links"):
        Workspace.open(tmp_path / "ws")
    with Workspace.open(tmp_path / "ws", readonly=True) as reader:
        assert reader.seq == 1
    assert (tmp_path / "second-name").read_bytes() == before


# ---------------------------------------------------------------- .input / .output paths

TWO_OUTPUTS = """\
.decl a(x: number)
a(1). a(2).
.output a
.decl b(x: number)
b(3).
.output b(filename="{name}")
"""


def _outside_forms(tmp_path: Path) -> dict[str, str]:
    """Filenames for ``b`` that lead out of ``out/``, each to a file next to ``out``."""
    (tmp_path / "out").mkdir(exist_ok=True)
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    (tmp_path / "out" / "link").symlink_to(tmp_path / "elsewhere")
    return {"dotdot": ("../x.csv", tmp_path / "x.csv"),
            "deeper": ("sub/../../x.csv", tmp_path / "x.csv"),
            "absolute": (str(tmp_path / "x.csv"), tmp_path / "x.csv"),
            "symlink": ("link/x.csv", tmp_path / "elsewhere" / "x.csv")}


@pytest.mark.parametrize("form", ["dotdot", "deeper", "absolute", "symlink"])
def test_an_output_path_leading_out_is_refused_unless_allowed(tmp_path, form):
    """Defect: .output r(filename="../../x.csv") or an absolute filename wrote outside -D. Refused
    at the directive (output_path), nothing written at all; --allow-paths writes it (Soufflé)."""
    name, where = _outside_forms(tmp_path)[form]
    (tmp_path / "p.dl").write_text(TWO_OUTPUTS.format(name=name))
    err = refused(datalog("run", "p.dl", "-D", "out", cwd=tmp_path), "output_path", name, "relation b", "p.dl:6:")
    assert "--allow-paths" in err
    assert not where.exists() and sorted(os.listdir(tmp_path / "out")) == ["link"]
    ok(datalog("run", "p.dl", "-D", "out", "--allow-paths", cwd=tmp_path))
    assert where.read_text() == "3\n" and (tmp_path / "out" / "a.csv").read_text() == "1\n2\n"


def test_export_refuses_a_path_from_the_stored_program(tmp_path):
    """Defect: datalog export ws -D out wrote where the workspace's stored program said."""
    (tmp_path / "p.dl").write_text(TWO_OUTPUTS.format(name="../../escaped.csv"))
    ok(datalog("init", "ws", "p.dl", cwd=tmp_path))
    refused(datalog("export", "ws", "-D", "out/deep", cwd=tmp_path), "output_path", "../../escaped.csv")
    assert not (tmp_path / "escaped.csv").exists() and not (tmp_path / "out" / "deep" / "a.csv").exists()
    ok(datalog("export", "ws", "-D", "out/deep", "--allow-paths", cwd=tmp_path))
    assert (tmp_path / "escaped.csv").read_text() == "3\n"


def test_an_input_path_leading_out_is_refused_unless_allowed(tmp_path):
    (tmp_path / "facts").mkdir()
    (tmp_path / "secret.facts").write_text("7\n")
    (tmp_path / "facts" / "link.facts").symlink_to(tmp_path / "secret.facts")
    for name in ["../secret.facts", str(tmp_path / "secret.facts"), "link.facts"]:
        (tmp_path / "p.dl").write_text(f'.decl s(x: number)\n.input s(filename="{name}")\n.output s\n')
        refused(datalog("run", "p.dl", "-F", "facts", "-D", "-", cwd=tmp_path), "input_path", name, "p.dl:2:")
        assert "7" in ok(datalog("run", "p.dl", "-F", "facts", "-D", "-", "--allow-paths", cwd=tmp_path)).stdout
    (tmp_path / "b.dl").write_text('.decl s(x: number)\n.input s(filename="../secret.facts")\nt(x) :- s(x).\n.decl t(c0: number)\n')
    (tmp_path / "p.dl").write_text(".decl u(x: number)\nu(1).\n")
    ok(datalog("init", "ws", "p.dl", cwd=tmp_path))
    refused(datalog("addblock", "ws", "b.dl", "-F", "facts", cwd=tmp_path), "input_path", "../secret.facts")
    ok(datalog("addblock", "ws", "b.dl", "-F", "facts", "--allow-paths", cwd=tmp_path))
    assert ok(datalog("query", "ws", "t(X)", cwd=tmp_path)).stdout == "7\n"


def test_paths_inside_the_directories_still_work(tmp_path):
    (tmp_path / "facts" / "in").mkdir(parents=True)
    (tmp_path / "facts" / "in" / "e.tsv").write_text("1\t2\n")
    (tmp_path / "p.dl").write_text('.decl e(x: number, y: number)\n.input e(filename="in/e.tsv")\n'
                                   '.output e(filename="sub/dir/e.csv")\n.output e(IO=stdout)\n')
    out = ok(datalog("run", "p.dl", "-F", "facts", "-D", "out", cwd=tmp_path)).stdout
    assert (tmp_path / "out" / "sub" / "dir" / "e.csv").read_text() == "1\t2\n" and "1\t2" in out
    assert "1\t2" in ok(datalog("run", "p.dl", "-F", "facts", "-D", "-", cwd=tmp_path)).stdout


def test_the_python_api_takes_the_same_policy(tmp_path):
    (tmp_path / "secret.facts").write_text("7\n")
    (tmp_path / "facts").mkdir()
    reading = '.decl s(x: number)\n.input s(filename="../secret.facts")\n'
    with pytest.raises(InputPath):
        Engine.from_source(reading, tmp_path / "facts").run()
    with pytest.raises(InputPath):
        run_pipeline(reading, tmp_path / "facts")
    assert run_pipeline(reading, tmp_path / "facts", allow_paths=True)["s"].tuples == {(7,)}
    engine = Engine.from_source(reading, tmp_path / "facts", allow_paths=True)
    engine.run()
    assert engine.rows("s") == [(7,)]
    writing = Engine.from_source('.decl a(x: number)\na(1).\n.output a(filename="../a.csv")\n')
    writing.run()
    with pytest.raises(OutputPath):
        writing.write_outputs(tmp_path / "out")
    assert not (tmp_path / "a.csv").exists()
    writing.allow_paths = True
    writing.write_outputs(tmp_path / "out")
    assert (tmp_path / "a.csv").read_text() == "1\n"


# ---------------------------------------------------------------- modes, all or none

@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_created_files_take_their_mode_from_the_umask(tmp_path, umask):
    """Defect: output CSVs were created 0600 (mkstemp's mode)."""
    (tmp_path / "p.dl").write_text(PROGRAM)
    ok(datalog("run", "p.dl", "-D", "out", cwd=tmp_path, umask=umask))
    ok(datalog("init", "ws", "p.dl", cwd=tmp_path, umask=umask))
    (tmp_path / "upd").write_text(updates([1]))
    ok(datalog("update", "ws", "upd", cwd=tmp_path, umask=umask))
    ok(datalog("compact", "ws", cwd=tmp_path, umask=umask))
    made = [tmp_path / "out" / "path.csv", *[p for p in (tmp_path / "ws").iterdir() if p.is_file()]]
    assert {p.name for p in made} >= {"path.csv", SNAPSHOT, LOG, "maintainer.1", "lock"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in made} == {p.name: 0o666 & ~umask for p in made}


def _later_output_fails(tmp_path: Path, failure: str) -> str:
    """A program with outputs a then b where writing b fails (``failure``); a.csv holds old text."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("old\n")
    if failure == "directory":
        (out / "b.csv").mkdir()
        name = "b.csv"
    else:                                            # its directory cannot be made: a file is there
        (out / "f").write_text("")
        name = "f/b.csv"
    (tmp_path / "p.dl").write_text(TWO_OUTPUTS.format(name=name))
    return name


@pytest.mark.parametrize("failure", ["directory", "parent_is_file"])
def test_a_failing_output_leaves_every_output_as_it_was(tmp_path, failure):
    """Defect: when a later .output failed, earlier ones were already written."""
    name = _later_output_fails(tmp_path, failure)
    refused(datalog("run", "p.dl", "-D", "out", cwd=tmp_path), "output_error", Path("out") / name, "relation b")
    assert (tmp_path / "out" / "a.csv").read_text() == "old\n"
    assert not temporaries(tmp_path / "out")


def test_outputs_are_all_or_none_when_the_disk_fills_at_the_last_one(tmp_path, monkeypatch):
    """The second file's fsync fails (ENOSPC injected): the first, already staged, is removed too."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.csv").write_text("old\n")
    engine = Engine.from_source(TWO_OUTPUTS.format(name="b.csv"))
    engine.run()
    _fail_after(monkeypatch, "fsync", 1)
    with pytest.raises(OutputError, match="b.csv"):
        engine.write_outputs(tmp_path / "out")
    assert os.listdir(tmp_path / "out") == ["a.csv"] and (tmp_path / "out" / "a.csv").read_text() == "old\n"


# ---------------------------------------------------------------- a full disk (injected)

def _fail_after(monkeypatch, name: str, calls: int, code: int = errno.ENOSPC) -> None:
    """``os.<name>`` works ``calls`` times more, then fails with ``code`` (a full disk cannot be made
    without privileges; the real one is in test_a_full_disk_on_a_real_tmpfs)."""
    real, left = getattr(os, name), [calls]

    def failing(*args):
        left[0] -= 1
        if left[0] < 0:
            raise OSError(code, os.strerror(code))
        return real(*args)
    monkeypatch.setattr(os, name, failing)


def test_a_full_disk_during_a_commit_loses_nothing_acknowledged(tmp_path, monkeypatch):
    committed(tmp_path / "ws", 3)
    with Workspace.open(tmp_path / "ws") as ws:
        _fail_after(monkeypatch, "write", 0)
        with pytest.raises(WorkspaceIO, match=str(tmp_path / "ws" / LOG)):
            ws.engine.commit(*commit_of(4))
        monkeypatch.undo()
        assert contents(ws.engine) == from_scratch(PROGRAM, edb_after(3))     # undone in memory
        ws.engine.commit(*commit_of(4))                                       # and the next one works
    assert_holds(tmp_path / "ws", 4)


@pytest.mark.parametrize("operation", ["compact", "addblock", "init"])
def test_a_full_disk_while_writing_a_snapshot_changes_nothing(tmp_path, monkeypatch, operation):
    committed(tmp_path / "ws", 2)
    _fail_after(monkeypatch, "fsync", 0)
    with pytest.raises(WorkspaceIO, match="No space left"):
        if operation == "init":
            Workspace.create(tmp_path / "ws2", PROGRAM)
        else:
            with Workspace.open(tmp_path / "ws") as ws:
                ws.compact() if operation == "compact" else ws.addblock("extra", BLOCK)
    monkeypatch.undo()
    assert not temporaries(tmp_path)
    assert_holds(tmp_path / "ws", 2)
    if operation == "init":
        Workspace.create(tmp_path / "ws2", PROGRAM).close()               # an init cut short is redone


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_standard_output_on_a_full_device_is_a_coded_error(tmp_path):
    """/dev/full: every write fails with ENOSPC, a real full disk under stdout."""
    (tmp_path / "p.dl").write_text(PROGRAM)
    committed(tmp_path / "ws", 1)
    for args in [("run", "p.dl", "-D", "-"), ("query", "ws", "path(1, X)"), ("status", "ws")]:
        with open("/dev/full", "w") as full:
            result = subprocess.run([sys.executable, "-m", "datalog", *args], stdout=full, stderr=subprocess.PIPE,
                                    text=True, cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert result.returncode == 1 and "error[io_error]" in result.stderr and "No space left" in result.stderr
        assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr


# ---------------------------------------------------------------- real permissions

def _unprivileged() -> list[str]:
    """A command prefix under which permissions hold: none for a user, for root ``setpriv``
    without the capabilities that bypass them (skipped if that is not possible)."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search"]
    if shutil.which("setpriv") is None or subprocess.run([*prefix, "true"]).returncode != 0:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    return prefix


@pytest.fixture
def restore_modes(tmp_path):
    yield
    for path in [tmp_path, *tmp_path.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_unwritable_directories_are_coded_errors(tmp_path, restore_modes):
    as_user = _unprivileged()
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "out").mkdir(mode=0o555)
    refused(datalog("run", "p.dl", "-D", "out", cwd=tmp_path, prefix=as_user), "output_error",
            "out/path.csv", "Permission denied")
    (tmp_path / "locked").mkdir(mode=0o555)
    refused(datalog("init", "locked/ws", "p.dl", cwd=tmp_path, prefix=as_user), "workspace_io", "locked/ws")
    committed(tmp_path / "ws", 1)
    ok(datalog("export", "ws", "-D", "out2", cwd=tmp_path, prefix=as_user))
    (tmp_path / "out2").chmod(0o555)
    refused(datalog("export", "ws", "-D", "out2", cwd=tmp_path, prefix=as_user), "output_error", "out2/path.csv")
    (tmp_path / "ws").chmod(0o555)                       # its files writable: commits append, no new file
    (tmp_path / "upd").write_text(updates([2]))
    ok(datalog("update", "ws", "upd", cwd=tmp_path, prefix=as_user))
    refused(datalog("compact", "ws", cwd=tmp_path, prefix=as_user), "workspace_io", "ws/", "Permission denied")
    (tmp_path / "b.dl").write_text(BLOCK)
    refused(datalog("addblock", "ws", "b.dl", cwd=tmp_path, prefix=as_user), "workspace_io", "ws/")
    for entry in (tmp_path / "ws").iterdir():
        entry.chmod(0o444)                               # all read-only: a reader only
    refused(datalog("update", "ws", "upd", cwd=tmp_path, prefix=as_user), "workspace_io", "ws/lock")
    ok(datalog("query", "ws", "path(1, X)", cwd=tmp_path, prefix=as_user))
    (tmp_path / "ws").chmod(0o000)
    refused(datalog("query", "ws", "path(1, X)", cwd=tmp_path, prefix=as_user), "workspace_io", "ws",
            "Permission denied")
    (tmp_path / "ws").chmod(0o755)
    for entry in (tmp_path / "ws").iterdir():
        entry.chmod(0o644)
    assert not temporaries(tmp_path)
    assert_holds(tmp_path / "ws", 2)


# ---------------------------------------------------------------- a real full disk, a read-only file system

def _namespaced(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` (bash) in a private mount namespace where ``$M`` is a fresh 320 KB tmpfs; it
    vanishes with the namespace. A user gets one in a user namespace (``-r``), where the kernel
    allows it; skipped where mounting is not permitted."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    probe = subprocess.run([*unshare, "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
                           capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("no private mount namespace here (unshare -m and mount need privileges)")
    mount = tmp_path / "m"
    mount.mkdir()
    env = {**os.environ, "M": str(mount), "PY": sys.executable, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*unshare, "bash", "-c", "set -u; mount -t tmpfs -o size=320k tmpfs $M\n" + script],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


_RUN = """\
run() { name=$1; shift; $PY -m datalog "$@" >$name.out 2>$name.err; echo $? >$name.rc; }
"""


def _result(tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(name, int((tmp_path / f"{name}.rc").read_text()),
                                       (tmp_path / f"{name}.out").read_text(), (tmp_path / f"{name}.err").read_text())


def test_a_full_disk_on_a_real_tmpfs(tmp_path):
    """Every writing command on a full file system: a coded error naming the path, no temporary
    file left, no acknowledged commit lost (the workspace is copied out and reopened)."""
    committed(tmp_path / "ws", 3)
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "b.dl").write_text(BLOCK)
    (tmp_path / "big").write_text("".join(f"+v({i}).\n" for i in range(100, 2100)) + "commit.\n")   # 20 KB logged
    (tmp_path / "upd").write_text(updates([4]))
    done = _namespaced(tmp_path, _RUN + """\
cp -a ws $M/ws
run small update $M/ws upd            # fits: a commit while there is room
dd if=/dev/zero of=$M/fill bs=4096 2>/dev/null    # now the disk is full
run big update $M/ws big
run compact compact $M/ws
run addblock addblock $M/ws b.dl
run init init $M/ws2 p.dl
run run run p.dl -D $M/out
run export export $M/ws -D $M/out2
rm $M/fill
find $M -name '*.tmp' > tmps
cp -a $M/ws after
""")
    assert done.returncode == 0, done.stderr
    ok(_result(tmp_path, "small"))
    refused(_result(tmp_path, "big"), "workspace_io", "ws/log", "No space left")
    assert "rolled back" in _result(tmp_path, "big").stderr
    for name in ["compact", "addblock", "init"]:
        refused(_result(tmp_path, name), "workspace_io", "No space left")
    refused(_result(tmp_path, "run"), "output_error", "out/path.csv", "No space left")
    refused(_result(tmp_path, "export"), "output_error", "out2/path.csv", "No space left")
    assert (tmp_path / "tmps").read_text() == ""
    assert_holds(tmp_path / "after", 4)


def test_a_read_only_file_system(tmp_path):
    committed(tmp_path / "ws", 2)
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "upd").write_text(updates([3]))
    done = _namespaced(tmp_path, _RUN + """\
cp -a ws $M/ws
mount -o remount,ro $M
run update update $M/ws upd
run compact compact $M/ws
run query query $M/ws "path(1, X)"
run run run p.dl -D $M/out
run init init $M/ws2 p.dl
""")
    assert done.returncode == 0, done.stderr
    for name in ["update", "compact", "init"]:
        refused(_result(tmp_path, name), "workspace_io", "Read-only file system")
    refused(_result(tmp_path, "run"), "output_error", "Read-only file system")
    ok(_result(tmp_path, "query"))


def test_a_second_writer_sees_the_holders_pid(tmp_path):
    """The lock is taken without truncating: a second writer sees the holder's pid."""
    committed(tmp_path / "ws", 0)
    with Workspace.open(tmp_path / "ws"):
        with pytest.raises(WorkspaceLocked, match=str(os.getpid())):
            Workspace.open(tmp_path / "ws")
