"""Soak: SIGKILL workspace writers at random instants, then fuzz the inputs for minutes.

Kills (--kills N, default 1000): `datalog update ws batches.dl` processes, each committing a
stream of batches (printing `batch K: maintained in ...` after each durable commit), and
sometimes `datalog compact ws`, `datalog addblock`/`removeblock` (a rule block toggled in and
out) or `datalog init` of a fresh workspace, are killed with SIGKILL at a random instant
between their start and their expected end (measured unkilled first). After every kill the
workspace is reopened: it must hold the last acknowledged commit or the one in flight, never
less, with the block in its program exactly when that commit has it, and equal, relation by
relation, its program and EDB evaluated from scratch. A killed init leaves a whole workspace or
none (opening says `workspace_missing`, and init again into the directory succeeds). The log grows past its
compaction threshold, so commits also compact.

Fuzzing (--fuzz-minutes M, default 60): the generators of bench/fuzzcases.py (fact files,
programs at the edges of numbers, updates files, forged workspace records and planted
symlinks; tests/test_fuzz_inputs.py runs the same generators briefly) drive the `datalog`
command line, in-process in a worker subprocess, each case in a fresh directory:

  facts    run -D D; run --updates; init; update; query; export -D D
  programs the same, on programs whose facts and rules sit at the edges of numbers
  updates  run --updates; init; update; then the workspace reopened against from scratch
  forged   query; status; update; compact; export -D D; a reader's state against from scratch

Each step's outcome: ok, error[code] (a coded DatalogError, exit 1), a crash (an exception that
would print a traceback), uncoded (exit 1 without a code), hang (over --case-seconds; SIGALRM,
or the worker killed); and after each case, files written outside D and the workspace (the
case directory is listed before and after; a planted symlink's target is checked) and
temporary files left behind.
`wrong` counts states that differ from evaluating from scratch after updates (a defect). A
forged workspace whose reader serves such a state without complaint ("served forged") is
then given to `datalog verify`: "caught" when it reports the differences, "verify missed" (a
failure) when it calls the workspace sound.

Prints a table of outcomes and every distinct failure with an example; writes
<out>/soak.md and soak.json. Exit status 1 if a commit was lost or any failure was seen.
Not part of `make test`.
"""
from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from . import provenance, table
from .fuzzcases import WORKSPACE_PROGRAM

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}   # a seed replays the same records

KILL_PROGRAM = WORKSPACE_PROGRAM        # the forged workspaces' program: recursion, negation, aggregates
KILL_EDB = {"e": {(1, 2), (2, 3), (4, 4)}, "v": {(1,), (2,), (3,), (4,), (5,)},
            "m": {("a", 1.5), ("b", 2.25), ("a", 0.5)}}


def add_arguments(p) -> None:
    p.add_argument("--kills", type=int, default=1000, help="SIGKILLs of writers (default 1000)")
    p.add_argument("--fuzz-minutes", type=float, default=60.0, help="minutes of fuzzing (default 60)")
    p.add_argument("--batches", type=int, default=60, help="batches per `datalog update` process (default 60)")
    p.add_argument("--case-seconds", type=float, default=30.0,
                   help="time limit of one fuzz step; over it is a hang (default 30)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out",
                   help="directory for the report (default bench/out)")


# ---------------------------------------------------------------- kills

def commit_of(k: int) -> list[tuple[str, str, tuple]]:
    """Commit ``k`` (from 1) of the stream: a few (sign, relation, row) changes, no row twice."""
    rng, changes, seen = random.Random(k), [], set()
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(["e", "e", "v", "m"])
        row = ((rng.randint(0, 7), rng.randint(0, 7)) if name == "e" else (rng.randint(0, 8),) if name == "v"
               else (rng.choice("abc"), rng.choice([0.5, 1.5, 2.25, -1.0])))
        if (name, row) not in seen:
            seen.add((name, row))
            changes.append(("+" if rng.random() < 0.6 else "-", name, row))
    return changes


class EdbStream:
    """The EDB after commits 1..n of the stream; checks ask for ever later n, so the last one is
    kept and moved forward (from the start again only for an earlier n)."""

    def __init__(self):
        self.n, self.tables = 0, {name: set(rows) for name, rows in KILL_EDB.items()}

    def after(self, n: int) -> dict[str, set]:
        if n < self.n:
            self.__init__()
        for k in range(self.n + 1, n + 1):
            for sign, name, row in commit_of(k):
                (self.tables[name].add if sign == "+" else self.tables[name].discard)(row)
        self.n = n
        return {name: set(rows) for name, rows in self.tables.items()}


def _literal(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def updates_text(first: int, count: int) -> str:
    """Commits ``first`` .. ``first + count - 1`` of the stream as an updates file."""
    out = []
    for k in range(first, first + count):
        out += [f"{sign}{name}({', '.join(map(_literal, row))})." for sign, name, row in commit_of(k)]
        out.append("commit.")
    return "\n".join(out) + "\n"


def _datalog(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "datalog", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, env=ENV)


ACK = re.compile(r"^batch (\d+): maintained in", re.M)


KILL_BLOCK = "cyclic(x) :- path(x, x).\nfree(x) :- v(x), !cyclic(x), x < 4.\n"    # addblock'ed, removed
ACTIONS = ("update", "compact", "block", "init")


class KillCampaign:
    """Writers killed at random instants; after each kill the workspace checked against the oracle.

    A workspace's commit number ``seq`` counts update commits and block changes alike, so the
    campaign keeps, per durable ``seq``, how many of the stream's commits it holds and whether
    the block is in its program (``history``)."""

    def __init__(self, root: Path, args):
        from bench.fuzzcases import from_scratch
        from datalog.workspace.workspace import Workspace
        self.Workspace, self.from_scratch = Workspace, from_scratch
        self.root, self.ws, self.args, self.rng = root, root / "ws", args, random.Random(args.seed)
        self.history = [(0, False)]             # per durable seq: (stream commits held, block in)
        self.counts = Counter({"kills": 0, "lost commits": 0, "differs from scratch": 0})
        self.edb = EdbStream()
        self.failures: list[str] = []
        self.duration = dict.fromkeys(ACTIONS, 1.0)
        Workspace.create(self.ws, KILL_PROGRAM).close()
        self.batches = root / "batches.dl"
        (root / "block.dl").write_text(KILL_BLOCK)
        (root / "prog.dl").write_text(KILL_PROGRAM)

    @property
    def committed(self) -> int:
        return len(self.history) - 1

    def calibrate(self) -> None:
        """One unkilled run of each command: how long each takes, and that it works."""
        for action in ACTIONS:
            started = time.perf_counter()
            child = self._start(action)
            out, err = child.communicate()
            self.duration[action] = time.perf_counter() - started
            if child.returncode != 0:
                self.failures.append(f"calibration {action} exited {child.returncode}: {err.strip()[-200:]}")
            self._settle(action, out, child.returncode, f"calibration {action}")

    def _start(self, action: str) -> subprocess.Popen:
        if action == "compact":
            return _datalog("compact", str(self.ws))
        if action == "block":                   # toggles: added when absent, removed when present
            if self.history[-1][1]:
                return _datalog("removeblock", str(self.ws), "block")
            return _datalog("addblock", str(self.ws), str(self.root / "block.dl"))
        if action == "init":
            shutil.rmtree(self.root / "fresh", ignore_errors=True)
            return _datalog("init", str(self.root / "fresh"), str(self.root / "prog.dl"))
        stream = self.history[-1][0]
        self.batches.write_text(updates_text(stream + 1, self.args.batches))
        return _datalog("update", str(self.ws), str(self.batches))

    def _pick(self) -> str:
        roll = self.rng.random()
        return "compact" if roll < 0.08 else "block" if roll < 0.16 else "init" if roll < 0.22 else "update"

    def round(self) -> None:
        action = self._pick()
        child = self._start(action)
        time.sleep(self.rng.uniform(0, self.duration[action] * 0.95))
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate()
        if child.returncode == -signal.SIGKILL:
            self.counts["kills"] += 1
            self.counts[f"kills during {action}"] += 1
        else:
            self.counts[f"{action} finished before its kill"] += 1
            if child.returncode != 0 or "Traceback" in err:
                self.failures.append(f"{action} exited {child.returncode}: {err.strip()[-300:]}")
        self._settle(action, out, child.returncode, f"after a kill during {action}")

    def _settle(self, action: str, out: str, returncode: int, what: str) -> None:
        """What the workspace may hold now, checked; ``history`` extended by what became durable."""
        if action == "init":
            self._check_init(returncode == 0, what)
            return
        acked = len(ACK.findall(out)) if action == "update" else int(action == "block" and returncode == 0)
        self.counts["acknowledged commits"] += acked
        stream, block = self.history[-1]
        if action == "update":
            candidates = [(stream + i, block) for i in range(1, acked + 2)]
        elif action == "block":
            candidates = [(stream, not block)]
        else:
            candidates = []
        low = self.committed + acked
        self._check(low, low + (action in ("update", "block") and returncode != 0), candidates, what)

    def _check(self, low: int, high: int, candidates: list, what: str) -> None:
        """The workspace holds a commit in [low, high], equal to its EDB and program from scratch."""
        try:
            with self.Workspace.open(self.ws, readonly=True) as ws:
                seq, held = ws.seq, {n: set(ws.engine.db[n].tuples) for n in ws.engine.relations()}
                blocks = [b["name"] for b in ws.blocks]
        except Exception as exc:                                   # noqa: BLE001 -- reported
            self.failures.append(f"{what}: reopening failed: {type(exc).__name__}: {exc}")
            self.counts["unreadable after a kill"] += 1
            return
        if seq < low:
            self.counts["lost commits"] += low - seq
            self.failures.append(f"{what}: commit {low} acknowledged, the workspace holds {seq}")
        elif seq > high:
            self.failures.append(f"{what}: the workspace holds {seq}, more than {high} were started")
            return
        self.history += candidates[:max(seq - self.committed, 0)]
        stream, block = self.history[min(seq, self.committed)]
        if ("block" in blocks) != block:
            self.failures.append(f"{what}: commit {seq} has blocks {blocks}, expected block={block}")
        program = KILL_PROGRAM + (KILL_BLOCK if block else "")
        if held != self.from_scratch(program, self.edb.after(stream)):
            self.counts["differs from scratch"] += 1
            self.failures.append(f"{what}: commit {seq} differs from evaluating its EDB from scratch")
        self.counts["checks"] += 1
        self.counts["in-flight commit found durable"] += seq == high and high > low

    def _check_init(self, finished: bool, what: str) -> None:
        """A killed init leaves a whole workspace or none: opening it gives the program's state, or
        says there is no workspace, and then a new init into the same directory succeeds."""
        fresh = self.root / "fresh"
        try:
            with self.Workspace.open(fresh, readonly=True) as ws:
                held = {n: set(ws.engine.db[n].tuples) for n in ws.engine.relations()}
            if held != self.from_scratch(KILL_PROGRAM, {n: set(r) for n, r in KILL_EDB.items()}):
                self.failures.append(f"{what}: the new workspace differs from its program from scratch")
            self.counts["init: whole workspace"] += 1
            return
        except Exception as exc:                                   # noqa: BLE001 -- classified
            code = getattr(exc, "code", type(exc).__name__)
        if finished or code != "workspace_missing":
            self.failures.append(f"{what}: opening the workspace init left: {code}")
        again = _datalog("init", str(fresh), str(self.root / "prog.dl"))
        _, err = again.communicate()
        if again.returncode != 0:
            self.failures.append(f"{what}: init again into the same directory failed: {err.strip()[-200:]}")
        self.counts["init: no workspace, init again ok"] += again.returncode == 0


def kill_campaign(args) -> tuple[Counter, list[str], int]:
    root = Path(tempfile.mkdtemp(prefix="soak-kill-"))
    try:
        campaign = KillCampaign(root, args)
        campaign.calibrate()
        started = time.perf_counter()
        while campaign.counts["kills"] < args.kills:
            campaign.round()
            done = campaign.counts["kills"]
            if done and done % 50 == 0 and campaign.counts["_reported"] != done:
                campaign.counts["_reported"] = done
                campaign.calibrate()             # the log grows: opening (replaying it) takes longer
                print(f"  {done} kills, commit {campaign.committed}, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
        del campaign.counts["_reported"]
        campaign.counts["seconds"] = round(time.perf_counter() - started)
        return campaign.counts, campaign.failures, campaign.committed
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- fuzzing: the worker

def worker() -> None:
    """Run fuzz cases read from stdin (one JSON line each: kind, seed, step seconds); answer each
    with one JSON line of step outcomes. Memory is capped, so a runaway allocation is a
    MemoryError (a crash outcome) and not the machine's."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    pristine = _pristine_workspace()
    for line in sys.stdin:
        request = json.loads(line)
        reply = run_case(request["kind"], request["seed"], request["seconds"], pristine)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _pristine_workspace() -> dict[str, bytes]:
    from bench import fuzzcases as fz
    where = Path(tempfile.mkdtemp(prefix="soak-pristine-"))
    try:
        fz.make_workspace(where / "ws")
        return fz.workspace_files(where / "ws")
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run_case(kind: str, seed: str, seconds: float, pristine: dict[str, bytes]) -> dict:
    """One case in a fresh directory: its steps' outcomes, and what was written outside."""
    from bench import fuzzcases as fz
    root = Path(tempfile.mkdtemp(prefix=f"soak-{kind}-"))
    previous = os.getcwd()
    try:
        for name in ("F", "D"):
            (root / name).mkdir()
        (root / "victim").write_bytes(b"must not change\n")
        os.chdir(root)
        rng = random.Random(seed)
        steps, describe, before = CASES[kind](rng, root, seconds, pristine)
        return {"steps": steps, "describe": describe, "leftovers": fz.leftovers(root),
                "outside": fz.written_outside(before, fz.listing(root), ("D", "ws"))}
    finally:
        os.chdir(previous)
        shutil.rmtree(root, ignore_errors=True)


def cli(argv: list[str], seconds: float) -> str:
    """``datalog ARGV`` in this process, output captured: ok, error[code], uncoded, exit N, hang or
    crash (an exception that would have been printed as a traceback)."""
    import contextlib
    import io

    from bench.fuzzcases import Hang, time_limit
    from datalog.cli.commands import main
    err = io.StringIO()
    try:
        with time_limit(seconds), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        return "hang"
    except SystemExit as exc:                    # argparse
        code = exc.code
    except BaseException as exc:                 # noqa: BLE001 -- the traceback a user would see
        first = str(exc).splitlines()[0][:100] if str(exc) else ""
        return f"crash {type(exc).__name__}: {first} @ {_raised_at(exc)}"
    if code == 0:
        return "ok"
    found = re.search(r"error\[(\w+)\]", err.getvalue())
    if code == 1:
        return f"error[{found.group(1)}]" if found else "uncoded: " + err.getvalue().strip()[:100]
    return f"exit {code}"


def _raised_at(exc: BaseException) -> str:
    """The innermost frame of the project's code that the exception passed: ``path:line``."""
    import traceback
    ours = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(str(REPO))]
    return f"{Path(ours[-1].filename).relative_to(REPO)}:{ours[-1].lineno}" if ours else "?"


def _facts(rng, root: Path, seconds: float, _pristine) -> tuple:
    from bench import fuzzcases as fz
    case = fz.fact_case(rng, str(root))
    for name, data in case.files.items():
        (root / "F" / name).write_bytes(data)
    (root / "p.dl").write_text(case.program)
    (root / "u.dl").write_text(case.updates())
    before = fz.listing(root)
    steps = [("run", cli(["run", "p.dl", "-F", "F", "-D", "D"], seconds)),
             ("run --updates", cli(["run", "p.dl", "-F", "F", "-D", "D", "--updates", "u.dl"], seconds)),
             ("init", cli(["init", "ws", "p.dl", "-F", "F"], seconds))]
    if steps[-1][1] == "ok":
        variables = ", ".join("_" for _ in case.types)
        steps += [("update", cli(["update", "ws", "u.dl"], seconds)),
                  ("query", cli(["query", "ws", f"s({variables})"], seconds)),
                  ("export", cli(["export", "ws", "-D", "D"], seconds))]
    return steps, case.describe(), before


def _programs(rng, root: Path, seconds: float, _pristine) -> tuple:
    from bench import fuzzcases as fz
    case = fz.program_case(rng, str(root), extreme=True)
    (root / "p.dl").write_text(case.program)
    (root / "u.dl").write_text(case.updates)
    before = fz.listing(root)
    steps = [("run", cli(["run", "p.dl", "-D", "D"], seconds)),
             ("run --updates", cli(["run", "p.dl", "-D", "D", "--updates", "u.dl"], seconds)),
             ("init", cli(["init", "ws", "p.dl"], seconds))]
    if steps[-1][1] == "ok":
        steps += [("update", cli(["update", "ws", "u.dl"], seconds)),
                  ("query", cli(["query", "ws", "n(X)"], seconds)),
                  ("export", cli(["export", "ws", "-D", "D"], seconds))]
    return steps, case.describe(), before


def _updates(rng, root: Path, seconds: float, _pristine) -> tuple:
    from bench import fuzzcases as fz
    case = fz.updates_case(rng)
    for name, data in case.files.items():
        (root / "F" / name).write_bytes(data)
    (root / "p.dl").write_text(case.program)
    (root / "u.dl").write_bytes(case.text)
    before = fz.listing(root)
    steps = [("run --updates", cli(["run", "p.dl", "-F", "F", "-D", "D", "--updates", "u.dl"], seconds)),
             ("init", cli(["init", "ws", "p.dl", "-F", "F"], seconds))]
    if steps[-1][1] == "ok":
        steps.append(("update", cli(["update", "ws", "u.dl"], seconds)))
        steps.append(("against scratch", _against_scratch(root / "ws", case.program, fz.EDB_TYPES, "wrong")))
    return steps, case.describe(), before


def _against_scratch(path: Path, program: str, edb_names, differs: str) -> str:
    """A reader's relations against evaluating its EDB from scratch: ok, or ``differs``."""
    from bench.fuzzcases import from_scratch, outcome_of
    from datalog.workspace.workspace import Workspace
    found = {}

    def read():
        with Workspace.open(path, readonly=True) as ws:
            if ws.blocks[0]["text"] != program:
                found["program"] = True
            found["held"] = {n: set(ws.engine.db[n].tuples) for n in ws.engine.relations()}

    outcome = outcome_of(read)
    if outcome != "ok" or "program" in found:
        return outcome if outcome != "ok" else "ok (program changed)"
    edb = {n: found["held"].get(n, set()) for n in edb_names}
    try:
        return "ok" if from_scratch(program, edb) == found["held"] else differs
    except Exception as exc:                     # noqa: BLE001 -- values a forged file smuggled in
        return f"{differs} ({type(exc).__name__} from scratch)"


def _forged(rng, root: Path, seconds: float, pristine: dict[str, bytes]) -> tuple:
    from bench import fuzzcases as fz
    forgery = fz.forge(rng, pristine)
    fz.write_forgery(forgery, root / "ws", root / "victim")
    (root / "u.dl").write_text('+e(9, 9).\n-e(1, 2).\n+m("z", 4.5).\ncommit.\n')
    before = fz.listing(root)
    steps = [("against scratch", _against_scratch(root / "ws", fz.WORKSPACE_PROGRAM, ("e", "v", "m"),
                                                   "served forged"))]
    if steps[0][1].startswith("served forged"):  # verify the workspace as forged, before a writer changes it
        steps.append(("verify", _verify(seconds)))
    steps += [("query", cli(["query", "ws", "path(1, X)"], seconds)),
              ("status", cli(["status", "ws"], seconds)),
              ("update", cli(["update", "ws", "u.dl"], seconds)),
              ("compact", cli(["compact", "ws"], seconds)),
              ("export", cli(["export", "ws", "-D", "D"], seconds))]
    if (root / "victim").read_bytes() != b"must not change\n":
        steps.append(("symlink target", "written through a planted symlink"))
    return steps, forgery.describe(), before


def _verify(seconds: float) -> str:
    """``datalog verify ws`` on a forged workspace whose reader served a state unlike its EDB
    evaluated from scratch: ``caught`` (differences reported, exit 1), a coded error, or
    ``verify missed`` (it says the workspace is sound)."""
    outcome = cli(["verify", "ws"], seconds)
    if outcome.startswith("uncoded"):
        return "caught"
    return {"ok": "verify missed", "exit 2": "verify unavailable"}.get(outcome, outcome)


CASES = {"facts": _facts, "programs": _programs, "updates": _updates, "forged": _forged}


# ---------------------------------------------------------------- fuzzing: the campaign

class Worker:
    """The worker subprocess; restarted when a case outlives its limit (a hang SIGALRM did not
    end, e.g. inside one long C call) or the worker dies."""

    def __init__(self):
        self.proc = None

    def ask(self, request: dict, limit: float) -> dict | None:
        if self.proc is None:
            self.proc = subprocess.Popen([sys.executable, "-c", "from bench.soak import worker; worker()"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=ENV)
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], limit)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.stop()
            return None
        return json.loads(line)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def is_failure(outcome: str) -> bool:
    return not (outcome.startswith(("ok", "error[", "served forged")) or outcome in ("caught", "verify unavailable"))


def fuzz_campaign(args) -> tuple[Counter, dict, Counter]:
    """Cases of each kind in turn until the time is up: outcomes by (kind, step), failures by a
    key without numbers (with the first example of each), and per kind how many cases ran."""
    outcomes, failures, cases = Counter(), {}, Counter()
    deadline = time.monotonic() + args.fuzz_minutes * 60
    worker, i = Worker(), 0
    try:
        while time.monotonic() < deadline:
            kind = list(CASES)[i % len(CASES)]
            seed = f"{args.seed}-{kind}-{i}"
            i += 1
            reply = worker.ask({"kind": kind, "seed": seed, "seconds": args.case_seconds},
                               args.case_seconds * 8 + 120)
            cases[kind] += 1
            if reply is None:
                reply = {"steps": [["worker", "hang (worker killed)"]], "describe": "", "outside": []}
            if reply["outside"]:
                reply["steps"].append(["files", "written outside: " + ", ".join(reply["outside"])])
            if reply.get("leftovers"):
                reply["steps"].append(["files", "temporary files left: " + ", ".join(reply["leftovers"])])
            for step, outcome in reply["steps"]:
                outcomes[kind, step, _family(outcome)] += 1
                if is_failure(outcome):
                    key = (kind, step, re.sub(r"\d+", "N", outcome)[:110])
                    if key not in failures:             # said at once: a long campaign's findings can be fixed while it runs
                        print(f"  finding: {kind} / {step}: {outcome[:300]}  [seed {seed}]", file=sys.stderr,
                              flush=True)
                    failures.setdefault(key, {"count": 0, "seed": seed, "example": reply["describe"][:600],
                                              "outcome": outcome})["count"] += 1
            if sum(cases.values()) % 100 == 0:
                print(f"  {sum(cases.values())} fuzz cases, {len(failures)} distinct findings", file=sys.stderr,
                      flush=True)
    finally:
        worker.stop()
    return outcomes, failures, cases


def _family(outcome: str) -> str:
    """An outcome for the table: ok, error[code], or the failure's class."""
    if outcome.startswith(("ok", "error[")) or outcome in ("hang", "served forged", "wrong", "caught",
                                                            "verify missed", "verify unavailable"):
        return outcome.split(" (")[0]
    if outcome.startswith("crash"):
        return "crash " + outcome.split()[1].rstrip(":")
    return outcome.split(":")[0]


# ---------------------------------------------------------------- report

def run(args) -> int:
    state = provenance.state()
    started = time.perf_counter()
    kills, kill_failures, committed = kill_campaign(args) if args.kills > 0 else (Counter(), [], 0)
    outcomes, findings, cases = fuzz_campaign(args) if args.fuzz_minutes > 0 else (Counter(), {}, Counter())
    lines = [f"# Soak ({time.perf_counter() - started:.0f} s)", "", provenance.line(state), ""]
    headers = ["kills", "count"]
    rows = [[name, str(count)] for name, count in sorted(kills.items())] + [["last commit", str(committed)]]
    lines += ["## SIGKILL of writers", "", table.markdown(headers, rows), ""]
    print(table.text(headers, rows, right={1}))
    if kill_failures:
        lines += ["Failures:", ""] + [f"- {f}" for f in kill_failures[:50]] + [""]
        print("\n".join(kill_failures[:50]))
    print()
    headers = ["kind", "step", "outcome", "count"]
    rows = [[k, s, o, str(n)] for (k, s, o), n in sorted(outcomes.items())]
    summary = f"fuzz cases: {dict(cases)} in {args.fuzz_minutes:g} min"
    print(summary)
    print(table.text(headers, rows, right={3}))
    lines += ["## Fuzzing", "", summary, "", table.markdown(headers, rows, right={3}), ""]
    if findings:
        print("\nfindings (distinct; a seed replays: PYTHONHASHSEED=0 python -c "
              "'from bench.soak import replay; replay(KIND, SEED)'):")
        lines += ["## Findings", ""]
        for (kind, step, _), info in sorted(findings.items(), key=lambda kv: -kv[1]["count"]):
            text = f"{info['count']:>5}  {kind} / {step}: {info['outcome']}  [seed {info['seed']}]"
            print(text)
            lines += [f"- {text}", "", "  ```", *("  " + x for x in info["example"].splitlines()), "  ```", ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "soak.md").write_text("\n".join(lines) + "\n")
    (args.out / "soak.json").write_text(json.dumps({
        "kills": dict(kills), "kill_failures": kill_failures, "cases": dict(cases),
        "outcomes": [[k, s, o, n] for (k, s, o), n in sorted(outcomes.items())],
        "findings": [{"kind": k, "step": s, **info} for (k, s, _), info in findings.items()]}, indent=1))
    failed = kill_failures or any(is_failure(o) for o in findings.values() for o in [o["outcome"]])
    return 1 if failed else 0


def replay(kind: str, seed: str, seconds: float = 30.0) -> None:
    """Run one fuzz case again in this process and print its steps (seed from the findings; run
    with PYTHONHASHSEED=0, as the worker is, for a forgery to hit the same record)."""
    reply = run_case(kind, seed, seconds, _pristine_workspace())
    print(reply["describe"])
    for step, outcome in reply["steps"]:
        print(f"{step}: {outcome}")
    print("written outside:", reply["outside"])
