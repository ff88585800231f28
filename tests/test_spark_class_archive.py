"""The Spark driver's class archive (datalog.spark.class_archive): a Spark command maps it and
prints exactly what it printed without it; a damaged archive, or one that others may write, is
not used and Spark still starts; the first command without one writes it at its exit."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datalog.spark import class_archive
from tiers import long_only

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = """
.decl edge(a: number, b: number)
.input edge(IO=spark, path="edges.parquet")
.decl path(a: number, b: number)
.output path(IO=stdout)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
EDGES = [(1, 2), (2, 3), (3, 4), (7, 7)]


def _program(where: Path) -> str:
    """The program over a Parquet file at ``where``; returns what it prints, as the same
    program over a fact file prints it (no Spark)."""
    pq.write_table(pa.table({"a": [e[0] for e in EDGES], "b": [e[1] for e in EDGES]}), where / "edges.parquet")
    (where / "p.dl").write_text(PROGRAM)
    (where / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in EDGES))
    (where / "plain.dl").write_text(PROGRAM.replace('(IO=spark, path="edges.parquet")', ""))
    plain = _run(where, where / "unused", program="plain.dl")
    assert plain.returncode == 0 and "path" in plain.stdout, plain.stderr
    return plain.stdout


def _run(where: Path, cache: Path, log: Path | None = None, program: str = "p.dl") -> subprocess.CompletedProcess:
    """``datalog run p.dl -D -`` in a child, with the class archive cache ``cache`` and, if
    given, the JVM's class-sharing log in ``log``."""
    java = os.environ.get("DATALOG_SPARK_JAVA_OPTIONS", "") + (f" -Xlog:cds=info:file={log}" if log else "")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATALOG_CACHE_DIR": str(cache), "DATALOG_SPARK_JAVA_OPTIONS": java}
    return subprocess.run([sys.executable, "-m", "datalog", "run", program, "-F", ".", "-D", "-"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)


def _prepared() -> Path:
    """The tests' archive (made by conftest's pytest_sessionstart, or now)."""
    assert class_archive.prepare({}), "the class archive could not be made"
    archive = class_archive.archive_path({})
    assert archive is not None and archive.exists()
    return archive


def test_a_command_maps_the_archive_and_prints_what_it_printed_without(tmp_path):
    archive = _prepared()
    expected = _program(tmp_path)
    done = _run(tmp_path, archive.parent, tmp_path / "cds.log")
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected           # no line of the JVM's among the output
    log = (tmp_path / "cds.log").read_text()
    assert f"Opened archive {archive}" in log and "Mapped dynamic region" in log


def test_a_damaged_archive_is_not_used_and_spark_starts(tmp_path):
    archive = _prepared()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    damaged = cache / archive.name                          # the same name: the key is the cache's
    shutil.copyfile(archive, damaged)                       # a region's bytes overwritten (this crashed
    with open(damaged, "r+b") as f:                         # the JVM before the archive was checksummed)
        f.seek(4096)
        f.write(b"\xff" * 100_000)
    expected = _program(tmp_path)
    done = _run(tmp_path, cache, tmp_path / "cds.log")
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    log = (tmp_path / "cds.log").read_text()
    assert f"Opened archive {damaged}" in log and "Mapped dynamic region" not in log


def test_a_cache_or_archive_others_may_write_is_not_used(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    environ = {"DATALOG_CACHE_DIR": str(cache)}
    assert class_archive.java_options({}, lambda: None, environ) == ""
    os.chmod(cache, 0o700)
    archive = class_archive.archive_path({}, environ)
    archive.write_bytes(b"x" * 64)
    os.chmod(archive, 0o666)
    options = class_archive.java_options({}, lambda: None, environ)
    assert "SharedArchiveFile" not in options and f"-XX:ArchiveClassesAtExit={archive}." in options
    os.chmod(archive, 0o444)
    assert class_archive.java_options({}, lambda: None, environ).startswith(f"-XX:SharedArchiveFile={archive} ")


def test_it_is_off_when_switched_off_or_the_user_shares_classes_already(tmp_path):
    environ = {"DATALOG_CACHE_DIR": str(tmp_path)}
    assert class_archive.java_options({}, lambda: None, {**environ, class_archive.SWITCH: "0"}) == ""
    own = {"spark.driver.extraJavaOptions": "-XX:SharedArchiveFile=/mine.jsa"}
    assert class_archive.java_options(own, lambda: None, environ) == ""
    assert class_archive.java_options({}, lambda: None, {**environ, "JAVA_TOOL_OPTIONS": "-Xshare:off"}) == ""
    assert "-XX:+VerifySharedSpaces" in class_archive.java_options({}, lambda: None, environ)


def test_a_dump_is_moved_into_place_only_when_its_jvm_has_ended_and_wrote_it(tmp_path):
    archive = tmp_path / "spark-0123456789abcdef.jsa"
    jvm = subprocess.Popen(["sleep", "1"])                  # stands for the JVM; a zombie once it ends
    dump = tmp_path / f"{archive.name}.{jvm.pid}.tmp"
    dump.write_bytes(b"archive")
    started = time.monotonic()
    class_archive.main(["--install", str(jvm.pid), str(dump)])
    assert time.monotonic() - started >= 0.5                # it waited for the process to end
    assert archive.read_bytes() == b"archive" and not dump.exists()
    jvm.wait()
    archive.unlink()
    empty = subprocess.Popen(["true"])
    dump = tmp_path / f"{archive.name}.{empty.pid}.tmp"
    dump.write_bytes(b"")                                   # it wrote nothing: no archive
    class_archive.main(["--install", str(empty.pid), str(dump)])
    empty.wait()
    assert not archive.exists()


@long_only
def test_the_first_command_without_an_archive_writes_it_at_its_exit(tmp_path):
    cache = tmp_path / "cache"
    expected = _program(tmp_path)
    first = _run(tmp_path, cache)
    assert first.returncode == 0, first.stderr
    assert first.stdout == expected        # the JVM's dump says nothing on stdout
    deadline = time.monotonic() + 240
    while not list(cache.glob("spark-*.jsa")) and time.monotonic() < deadline:
        time.sleep(1)
    (archive,) = cache.glob("spark-*.jsa")
    second = _run(tmp_path, cache, tmp_path / "cds.log")
    assert second.returncode == 0 and second.stdout == expected
    assert f"Opened archive {archive}" in (tmp_path / "cds.log").read_text()
