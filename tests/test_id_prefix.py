"""``Runtime.resolve_id``: a unique prefix of 6+ characters names a run or a tool call; every
other case is a typed error (``agent_core.id_prefix``), on a real SQLite file."""

from __future__ import annotations

import pytest

from agent_core import Runtime
from agent_core.errors import AmbiguousIdPrefix, InvalidRequest, SnapshotNotFound, ToolCallNotSuspended
from storage import SqliteStore
from storage.records import PendingCallRow, RunRow

IDS = ["3f9a2c11-aaaa", "3f9a2c22-bbbb", "3f9b0000-cccc", "r1"]


@pytest.fixture
async def runtime(tmp_path):
    store = SqliteStore(tmp_path / "w.db")
    for n, rid in enumerate(IDS):
        calls = [
            PendingCallRow(rid, cid, "t", "approval", {}, "sha256:x", created_at=1000.0)
            for cid in ("toolu_01abc", "toolu_01abd", "c0")
        ]
        await store.save_suspended(RunRow(rid, "a", None, None, "suspended", "{}", suspended_at=1000.0 + n), calls)
    async with Runtime(storage=store) as rt:
        yield rt


async def test_unique_prefixes_and_whole_ids_resolve(runtime):
    assert await runtime.resolve_id("3f9a2c1") == "3f9a2c11-aaaa"
    assert await runtime.resolve_id("3f9b00") == "3f9b0000-cccc"
    assert await runtime.resolve_id("r1") == "r1"  # a whole id, however short
    assert await runtime.resolve_id("toolu_01abc", run_id="r1") == "toolu_01abc"
    assert await runtime.resolve_id("c0", run_id="r1") == "c0"


async def test_ambiguous_short_and_unknown_prefixes_are_typed_errors(runtime):
    with pytest.raises(AmbiguousIdPrefix) as ambiguous:
        await runtime.resolve_id("3f9a2c")
    assert "3f9a2c11-aaaa" in ambiguous.value.message and "3f9a2c22-bbbb" in ambiguous.value.message
    with pytest.raises(AmbiguousIdPrefix):
        await runtime.resolve_id("toolu_01ab", run_id="r1")
    with pytest.raises(InvalidRequest, match="at least 6 characters"):
        await runtime.resolve_id("3f9a")
    with pytest.raises(SnapshotNotFound):
        await runtime.resolve_id("ffffff")
    with pytest.raises(SnapshotNotFound):
        await runtime.resolve_id("zz")  # short and starting nothing: not found, not "too short"
    with pytest.raises(ToolCallNotSuspended):
        await runtime.resolve_id("toolu_99", run_id="r1")
    listed = await runtime.list_suspended_runs()
    assert listed.total == len(IDS)  # nothing changed
