"""Sealed JSON records (datalog.sources.sealed): a record reads back as written, and a damaged
one is never taken for another body."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from datalog.sources import sealed
from tiers import examples  # make test: a quarter of the examples (tests/tiers.py)

bodies = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                      max_leaves=20)


@settings(max_examples=examples(150), deadline=None)
@given(body=bodies, at=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_a_damaged_record_reads_as_its_body_or_fails(tmp_path_factory, body, at, byte):
    where = tmp_path_factory.mktemp("sealed") / "r.json"
    sealed.write(where, body)
    assert sealed.read(where) == body
    data = bytearray(where.read_bytes())
    data[at % len(data)] = byte
    where.write_bytes(bytes(data))
    try:
        got = sealed.read(where)
    except ValueError:                      # not JSON, not a record, or the checksum fails
        return
    assert got == body                      # only a change that leaves the canonical body reads


def test_what_is_not_a_record_is_a_value_error(tmp_path):
    where = tmp_path / "r.json"
    for text in ("[1, 2]", '{"body": 1}', '{"sha256": "ab"}', '{"body": 1, "sha256": 5}', "{not json"):
        where.write_text(text)
        with pytest.raises(ValueError) as caught:
            sealed.read(where)
        assert not isinstance(caught.value, sealed.Mismatch)
    where.write_text(json.dumps({"body": {"a": 1}, "sha256": "0" * 64}))
    with pytest.raises(sealed.Mismatch):
        sealed.read(where)
    with pytest.raises(OSError):
        sealed.read(tmp_path / "missing.json")
