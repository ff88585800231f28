"""Sealed JSON: a small record the engine writes and later trusts, kept with its checksum.

The file holds ``{"body": <the record>, "sha256": <hex SHA-256 of the body's canonical JSON>}``
(keys sorted, no spaces), written atomically (:mod:`datalog.sources.atomic`). Reading parses JSON
only -- nothing is executed -- and checks the checksum, so that a damaged or edited record is
told apart from a good one. A Spark-resident workspace's manifest, a change-carrying source's
watermark and a snapshot's file listing are sealed records; each caller says in its own coded
error what a broken one means for it.

>>> import tempfile, os
>>> where = os.path.join(tempfile.mkdtemp(), "r.json")
>>> write(where, {"b": [1, 2], "a": "x"})
>>> read(where)
{'b': [1, 2], 'a': 'x'}
>>> open(where, "w").write('{"body": {"a": "y", "b": [1, 2]}, "sha256": "00"}') and None
>>> read(where)
Traceback (most recent call last):
    ...
datalog.sources.sealed.Mismatch: the record fails its checksum (damaged or edited)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from datalog.sources import atomic


class Mismatch(ValueError):
    """The record parsed, but its body is not the one its checksum was made of."""


def canonical(body) -> bytes:
    """The bytes the checksum is taken of."""
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def write(path: str | Path, body, indent: int | None = None) -> None:
    """Replace the record at ``path`` by ``body`` (JSON data), atomically."""
    text = json.dumps({"body": body, "sha256": hashlib.sha256(canonical(body)).hexdigest()}, indent=indent)
    atomic.write(Path(path), [text.encode()])


def read(path: str | Path):
    """The body of the record at ``path``. Raises ``OSError`` when it cannot be read,
    ``ValueError`` when it is not a record (not JSON, no body or checksum) and :class:`Mismatch`,
    a ``ValueError``, when the body fails its checksum."""
    document = json.loads(Path(path).read_bytes())
    if not isinstance(document, dict) or "body" not in document or not isinstance(document.get("sha256"), str):
        raise ValueError("not a sealed record (a body and its sha256)")
    body = document["body"]
    if hashlib.sha256(canonical(body)).hexdigest() != document["sha256"]:
        raise Mismatch("the record fails its checksum (damaged or edited)")
    return body


__all__ = ["Mismatch", "canonical", "read", "write"]
