"""A class-data archive for the Spark driver's JVM: from the second start on, Spark's classes are
mapped from one file instead of being read and verified from pyspark's 279 jars.

Starting the session and running a first job took 10.5-11.3 s here (C1, local[2]) and takes
4.7-5.6 s with the archive; 7.4 s against 12-14 s with the default JIT (Java 17, pyspark 4.3;
the whole of a process that starts Spark and runs a first job: 12 s -> 5 s). This is the JDK's
own dynamic archive (CDS, JEP 350): a JVM started with ``-XX:ArchiveClassesAtExit=F`` writes the
classes it loaded to ``F`` when it exits; one started with ``-XX:SharedArchiveFile=F`` maps them.
The JVM checks the archive against itself and its class path before it uses it (its build, its
flags, every jar's size and time) and, with ``-XX:+VerifySharedSpaces`` (always given here), the
checksums of its regions; when anything differs it runs without it, as before, only slower.
(Without the checksums an archive with overwritten bytes crashed the JVM; a session that does
not start with the archive is started once more without it, and the archive removed.)

The archive is kept in the user's cache (``$DATALOG_CACHE_DIR``, else ``$XDG_CACHE_HOME/datalog``,
else ``~/.cache/datalog``; about 190 MB), named by a digest of the Java installation, the pyspark
version and its jars, and the class path settings: a new Java or pyspark makes a new one. It is
used only when it and its directory belong to this user and no one else may write them. The
first Spark command without one is slower (a whole process 20-24 s against 12-16 s: its JVM
records what it loads) and writes it as its JVM exits, after the command (15-30 s of one core,
in the background): the JVM dumps to a temporary name, a detached watcher waits for it to
end and renames the dump into place, so no reader sees a partly written archive.
:func:`prepare` makes one now and waits (the test suite does, once). ``DATALOG_SPARK_CLASS_ARCHIVE=0``
turns it off; so does a class-sharing option of the user's own (``-Xshare``, ``SharedArchiveFile``).

The JVM's log lines (the archive's among them) go to its standard error, which is ``spark.log``
(:mod:`datalog.spark.session`), never to standard output, which may be the program's output.

>>> _mine_only(0o40700, os.getuid(), os.getuid()), _mine_only(0o40777, os.getuid(), os.getuid())
(True, False)
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Callable

SWITCH = "DATALOG_SPARK_CLASS_ARCHIVE"
# Checksums of the archive's regions, written and checked (a damaged archive is then not used:
# without them one crashed the JVM), and the JVM's log to stderr (spark.log), never stdout.
CHECKED = "-XX:+VerifySharedSpaces -Xlog:disable -Xlog:all=warning:stderr"
STALE = 3600.0                                       # seconds: a temporary dump older is a dead run's
_dumps: dict[int, Path] = {}                         # this process's dump, if its JVM writes one


def install_now(jvm_pid: int, end_jvm: Callable[[], bool]) -> None:
    """Move this process's dump into place now: ``end_jvm`` lets the JVM ``jvm_pid`` exit (it
    writes the dump as it does) and says whether it has (:func:`prepare`'s child)."""
    dump = _dumps.get(os.getpid())
    if dump is not None and end_jvm():
        _install(jvm_pid, dump)


def java_options(settings: dict[str, str], jvm_pid: Callable[[], int | None], environ=os.environ) -> str:
    """The options that make this process's Spark driver use the archive, or write it; "" when
    it is off (see the module docstring). ``settings``: the session's Spark settings;
    ``jvm_pid``: the driver JVM's process id once it runs (asked at this process's exit, when
    the JVM writes the archive)."""
    if environ.get(SWITCH, "1") == "0" or _user_shares_classes(settings, environ):
        return ""
    where = _cache_dir(environ)
    if where is None:
        return ""
    archive = where / f"spark-{_key(settings, environ)}.jsa"
    if _usable(archive):
        return f"-XX:SharedArchiveFile={archive} {CHECKED}"
    _remove_stale(where)
    dump = where / f"{archive.name}.{os.getpid()}.tmp"
    if _dumps.get(os.getpid()) != dump:                 # one watcher at exit, however many sessions
        atexit.register(_install_when_written, jvm_pid, dump)
    _dumps[os.getpid()] = dump
    return f"-XX:ArchiveClassesAtExit={dump} {CHECKED}"


def discard(settings: dict[str, str], environ=os.environ) -> None:
    """Remove the archive a session with ``settings`` would use (its JVM did not start with it)."""
    archive = archive_path(settings, environ)
    if archive is not None:
        with contextlib.suppress(OSError):
            archive.unlink()


def archive_path(settings: dict[str, str], environ=os.environ) -> Path | None:
    """Where the archive of a session with ``settings`` is (whether or not it exists yet)."""
    where = _cache_dir(environ)
    return None if where is None else where / f"spark-{_key(settings, environ)}.jsa"


def prepare(settings: dict[str, str], environ=os.environ, timeout: float = 180.0) -> bool:
    """Make the archive now, if it is on and missing: a child process starts Spark, runs a
    small job of each kind a refresh runs, and exits; its JVM writes the archive. One process
    at a time (a lock in the cache directory); whether the archive is there afterwards. For
    the test suite, whose many short Spark processes should all find it."""
    import fcntl
    import subprocess
    import sys
    archive = archive_path(settings, environ)
    if environ.get(SWITCH, "1") == "0" or archive is None:
        return False
    with open(archive.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _usable(archive):
            try:
                subprocess.run([sys.executable, "-m", "datalog.spark.session", "--class-archive"], env=dict(environ),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                pass
        return _usable(archive)


def _user_shares_classes(settings: dict[str, str], environ) -> bool:
    given = " ".join([settings.get("spark.driver.extraJavaOptions", ""), environ.get("JAVA_TOOL_OPTIONS", ""),
                      environ.get("JDK_JAVA_OPTIONS", "")])
    return "-Xshare" in given or "SharedArchiveFile" in given or "ArchiveClassesAtExit" in given


def _cache_dir(environ) -> Path | None:
    """The cache directory, made private to this user; None if it cannot be, or is not theirs."""
    root = environ.get("DATALOG_CACHE_DIR") or (Path(environ["XDG_CACHE_HOME"]) / "datalog"
                                                 if environ.get("XDG_CACHE_HOME") else Path.home() / ".cache" / "datalog")
    where = Path(root)
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = where.stat()
    except OSError:
        return None
    return where if _mine_only(info.st_mode, info.st_uid, os.getuid()) else None


def _mine_only(mode: int, owner: int, me: int) -> bool:
    """Owned by ``me`` and writable by no one else (group and others)."""
    return owner == me and not mode & 0o022


def _usable(archive: Path) -> bool:
    try:
        info = archive.stat()
    except OSError:
        return False
    return info.st_size > 0 and _mine_only(info.st_mode, info.st_uid, os.getuid())


def _key(settings: dict[str, str], environ) -> str:
    """A digest of what the archive depends on: the Java installation, pyspark and its jars,
    the class path settings. (The JVM checks all of it again; this only picks the file.)"""
    import pyspark
    digest = hashlib.sha256(pyspark.__version__.encode())
    java = Path(environ["JAVA_HOME"]) / "bin" / "java" if environ.get("JAVA_HOME") else shutil.which("java")
    if java is not None:
        java = Path(os.path.realpath(java))
        for part in [java, *sorted(java.parent.parent.glob("lib/server/libjvm.*"))]:
            info = part.stat() if part.exists() else None
            digest.update(f"{part}:{info and info.st_size}:{info and info.st_mtime_ns}\n".encode())
    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("*.jar")):
        digest.update(jar.name.encode())
    for name in ("spark.jars", "spark.jars.packages", "spark.driver.extraClassPath"):
        digest.update(f"{name}={settings.get(name, '')}\n".encode())
    digest.update(environ.get("SPARK_DIST_CLASSPATH", "").encode())
    return digest.hexdigest()[:16]


def _remove_stale(where: Path) -> None:
    """Temporary dumps that a run killed before its JVM finished left behind."""
    now = time.time()
    for left in where.glob("spark-*.jsa.*.tmp"):
        try:
            if now - left.stat().st_mtime > STALE:
                left.unlink()
        except OSError:
            pass


def _install_when_written(jvm_pid: Callable[[], int | None], dump: Path) -> None:
    """At this process's exit: the JVM, whose standard input closes with this process, exits
    and writes the archive as it does (15-20 s here); a detached watcher waits for it and then
    moves the archive into place, so the command that wrote it does not wait."""
    import subprocess
    import sys
    pid = jvm_pid()
    if pid is None or not _running(pid):
        return                                  # none, or it has ended and was installed
    subprocess.Popen([sys.executable, "-m", "datalog.spark.class_archive", "--install", str(pid), str(dump)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)


def _install(pid: int, dump: Path, timeout: float = 120.0) -> None:
    """Wait (up to ``timeout`` seconds) for the JVM ``pid`` to end, then rename its archive
    ``dump`` to the archive's name. A JVM that does not end in time, or wrote nothing, leaves
    no archive (its temporary file goes the next time, :func:`_remove_stale`)."""
    deadline = time.monotonic() + timeout
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _running(pid):
        return
    final = dump.with_name(dump.name.rsplit(".", 2)[0])
    try:
        if dump.stat().st_size > 0:
            os.replace(dump, final)
    except OSError:
        pass


def _running(pid: int) -> bool:
    """Whether process ``pid`` has not ended (a zombie, never reaped in some containers, has)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def main(argv: list[str]) -> None:
    """``python -m datalog.spark.class_archive --install PID DUMP``: the watcher of
    :func:`_install_when_written`, or of :func:`install_now`."""
    if argv[:1] == ["--install"]:
        _install(int(argv[1]), Path(argv[2]))


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])


__all__ = ["java_options", "archive_path", "prepare", "main", "SWITCH"]
