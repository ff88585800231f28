"""``datalog update ws/ upd.dl --changes DIR`` and ``datalog refresh ws/ --changes DIR``: each commit's
change of every ``.output`` relation (every relation when the program has none) written to ``DIR``
for downstream jobs, once the commit is durable.

One file per commit and changed relation, ``DIR/<commit, 10 digits>-<relation>.parquet`` (or
``.csv`` with ``--changes-format csv``, with a header line): the relation's columns, named and
typed as ``engine.relation(name).to_arrow()`` has them, and ``weight`` (int8: +1 inserted, -1
retracted). Files sort in commit order by name. Each is written atomically
(:mod:`datalog.sources.atomic`): a reader sees a whole file or none. ``DIR`` is made if missing;
it is the user's command line, so it may be anywhere.

A file that cannot be written does not undo its commit (it is durable already): the command
says which files are missing on stderr and exits 1.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from datalog.engine.tables import SubscriptionWarning, TableChange
from datalog.language.errors import OutputError
from datalog.language.rewrites import is_internal
from datalog.sources import atomic

FORMATS = ("parquet", "csv")


def add_options(parser) -> None:
    parser.add_argument("--changes", metavar="DIR",
                        help="write each commit's changes of the .output relations to DIR as files "
                             "with a weight column (+1 inserted, -1 retracted)")
    parser.add_argument("--changes-format", choices=FORMATS, default="parquet",
                        help="format of the --changes files (default parquet)")


class ChangeFiles:
    """Subscribed to the relations of ``engine`` that ``--changes`` writes, for as long as the
    ``with`` block lasts."""

    def __init__(self, engine, directory: str | None, fmt: str = "parquet"):
        self.engine, self.fmt = engine, fmt
        self.directory = Path(directory) if directory is not None else None
        self.subscriptions = []
        self.written: list[Path] = []
        self._quiet = warnings.catch_warnings()      # failures are reported by report(), once

    def __enter__(self) -> "ChangeFiles":
        if self.directory is None:
            return self
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot make the --changes directory {self.directory}: {exc.strerror or exc}") from None
        from datalog.engine import arrow
        arrow.warm(self.fmt)                 # set-up, not the first commit's time
        self._quiet.__enter__()
        warnings.simplefilter("ignore", SubscriptionWarning)
        engine = self.engine
        names = list(dict.fromkeys(d.relation for d in engine.checked.directives("output"))) or \
            [name for name in engine.relations() if not is_internal(name)]
        self.subscriptions = [engine.subscribe(name, self.write, snapshot=False) for name in names]
        return self

    def __exit__(self, *exc) -> None:
        if self.directory is None:
            return
        for subscription in self.subscriptions:
            subscription.close()
        self._quiet.__exit__(*exc)

    def write(self, change: TableChange) -> None:
        from datalog.engine import arrow                 # pyarrow only when changes are written
        path = self.directory / f"{change.commit:010d}-{change.relation}.{self.fmt}"
        try:
            atomic.write(path, [arrow.file_bytes(change.table, self.fmt)])
        except OSError as exc:
            raise OutputError(f"cannot write the changes file {path}: {exc.strerror or exc}") from None
        self.written.append(path)

    def report(self) -> int:
        """Print each file that could not be written (stderr); the exit status: 1 if one could not."""
        failures = [(commit, exc) for s in self.subscriptions for commit, exc in s.errors]
        for commit, exc in sorted(failures, key=lambda f: f[0]):
            message = exc.render() if hasattr(exc, "render") else f"{type(exc).__name__}: {exc}"
            print(f"commit {commit} is made, but its changes were not written:\n{message}", file=sys.stderr)
        return 1 if failures else 0
