"""A Delta Lake table as a source (``.input r(IO=delta, path=...[, cdf=true])``), read through the
``deltalake`` package (delta-rs: no JVM jar to download). The one module that imports it.

A snapshot is the table's data files at one version (:func:`snapshot`), which Spark reads as
Parquet; the change data feed between two versions (:func:`changes`) comes as one Arrow table,
on the driver: it holds the changes only. Refused (``unsupported``): tables whose readers need
deletion vectors or column mapping (their files alone are not the table), and partitioned tables
(their partition values live in the log, not in the files).
"""

from __future__ import annotations

from dataclasses import dataclass

from datalog.language.errors import MissingInput, SparkUnavailable, Unsupported

try:                                            # the optional extra: pip install 'datalog-lftj[spark]'
    import pyarrow as pa
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError
except ImportError as exc:                      # pragma: no cover - depends on the installation
    _MISSING = exc
else:
    _MISSING = None

INSERTS = ("insert", "update_postimage")        # _change_type values that add a row
RETRACTS = ("delete", "update_preimage")         # ... and that remove one


@dataclass
class Snapshot:
    version: int
    files: list[str]                 # the data files' URIs
    schema: "pa.Schema"


def _table(path: str, relation: str, version: int | None = None) -> "DeltaTable":
    if _MISSING is not None:
        raise SparkUnavailable(f"IO=delta for {relation} needs the deltalake package (pip install "
                               f"'datalog-lftj[spark]'): {_MISSING}")
    try:
        table = DeltaTable(path, version=version)
    except TableNotFoundError:
        raise MissingInput(f"{path} is not a Delta Lake table (no _delta_log) for {relation}") from None
    except Exception as exc:                     # delta-rs raises its own kinds for a damaged log
        raise MissingInput(f"cannot read the Delta Lake table {path} for {relation}: {exc}") from None
    features = set(table.protocol().reader_features or ())
    if features & {"deletionVectors", "columnMapping"}:
        raise Unsupported(f"the Delta Lake table {path} ({relation}) uses {', '.join(sorted(features))}: its data "
                          f"files alone are not its rows, which is all this reader reads")
    if table.metadata().partition_columns:
        raise Unsupported(f"the Delta Lake table {path} ({relation}) is partitioned: its partition values are "
                          f"not in its files, which is all this reader reads")
    return table


def snapshot(path: str, relation: str) -> Snapshot:
    """The table's latest version: its number, its data files and its schema."""
    table = _table(path, relation)
    return Snapshot(table.version(), list(table.file_uris()), pa.schema(table.schema().to_arrow()))


def latest(path: str, relation: str) -> tuple[int, str]:
    """(the table's latest version, its table id: a new one when the table is dropped and made again)."""
    table = _table(path, relation)
    return table.version(), str(table.metadata().id)


def table_id(path: str, relation: str, version: int) -> str:
    """The id of the table at ``version`` (the metadata action's ``id``)."""
    return str(_table(path, relation, version).metadata().id)


def changes(path: str, relation: str, after: int, upto: int) -> "pa.Table":
    """The change data feed of versions ``after``+1 .. ``upto``: the data columns,
    ``_change_type`` and ``_commit_version`` (insertions, deletions and the two images of an
    update). ``unsupported`` when the table does not record its changes."""
    table = _table(path, relation, upto)
    config = table.metadata().configuration or {}
    if str(config.get("delta.enableChangeDataFeed", "false")).lower() != "true":
        raise Unsupported(f"the Delta Lake table {path} ({relation}) does not record its change data feed "
                          f"(delta.enableChangeDataFeed); read it without cdf=true")
    try:
        feed = table.load_cdf(starting_version=after + 1, ending_version=upto)
        feed = feed.read_all() if hasattr(feed, "read_all") else feed
        return pa.table(feed)
    except Exception as exc:                     # a vacuumed version, a damaged log
        raise MissingInput(f"cannot read the change data feed of the Delta Lake table {path} ({relation}) from "
                           f"version {after + 1} to {upto}: its change files or log entries are gone (a VACUUM or "
                           f"log clean-up removes them) or damaged, so the changes since the last refresh cannot be "
                           f"known. Make the workspace again from the table as it is (datalog init), or read the "
                           f"table without cdf=true (every refresh then diffs the whole table): {exc}") from None


__all__ = ["Snapshot", "snapshot", "latest", "table_id", "changes", "INSERTS", "RETRACTS"]
