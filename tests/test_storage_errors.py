"""A bad database file or a corrupt row is a typed error with a code, and never hides the other runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core import Agent, Runtime
from storage import CorruptRecord, SqliteStore, StorageError, StoreCorrupt, StoreReadOnly, StoreUnavailable
from tests.helpers import calls_then, echo_results, recording_tool


def _bad_paths(tmp_path: Path) -> dict[str, tuple[Path, type[StorageError]]]:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 12)
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(b"SQLite format 3\x00" + b"\x00" * 40)
    directory = tmp_path / "dir.db"
    directory.mkdir()
    parent_file = tmp_path / "plain"
    parent_file.write_text("not a folder")
    return {
        "garbage": (garbage, StoreCorrupt),
        "truncated": (truncated, StoreCorrupt),
        "directory": (directory, StoreUnavailable),
        "parent is a file": (parent_file / "w.db", StoreUnavailable),
    }


@pytest.mark.parametrize("case", ["garbage", "truncated", "directory", "parent is a file"])
async def test_opening_a_bad_file_is_a_typed_error(tmp_path: Path, case: str) -> None:
    path, expected = _bad_paths(tmp_path)[case]
    store = SqliteStore(path)
    with pytest.raises(expected) as info:
        await store.list_suspended()
    assert info.value.code.startswith("STORAGE_")
    assert "\n" not in info.value.message and str(path) in info.value.message
    # the same error again, not a hang or a different exception
    with pytest.raises(expected):
        await store.get_run("x")
    await store.aclose()


async def test_runtime_over_a_bad_file_raises_storage_error_from_listing(tmp_path: Path) -> None:
    path, _ = _bad_paths(tmp_path)["garbage"]
    agent = Agent(id="a", model=calls_then([], echo_results()))
    rt = Runtime(agents={"a": agent}, storage=SqliteStore(path))  # opened lazily, by the first call
    try:
        with pytest.raises(StoreCorrupt):
            await rt.list_suspended_runs()
        with pytest.raises(StoreCorrupt):
            async with rt:
                pass
    finally:
        await rt.aclose()


async def _three_pending_runs(path: Path) -> tuple[list[str], list[str]]:
    log: list[str] = []
    agent = Agent(
        id="a",
        model=calls_then([("delete_record", {"id": "x"}, None)], echo_results()),
        tools={"delete_record": recording_tool(log)},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)):
        ids = []
        for _ in range(3):
            stream = await agent.stream("go")
            await stream.wait()
            ids.append(stream.run_id)
    return ids, log


@pytest.mark.parametrize(
    ("column", "value"),
    [("args", "{not json"), ("agent_path", "[1,"), ("created_at", "yesterday"), ("resume_schema", "{")],
)
async def test_a_corrupt_pending_call_row_is_isolated(tmp_path: Path, column: str, value: str) -> None:
    path = tmp_path / "w.db"
    ids, log = await _three_pending_runs(path)
    bad = ids[1]
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE pending_calls SET {column} = ? WHERE run_id = ?", (value, bad))
    agent = Agent(id="a", model=calls_then([], echo_results()), tools={"delete_record": recording_tool(log)})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)) as rt:
        listing = await rt.list_suspended_runs()
        assert sorted(r.run_id for r in listing.runs) == sorted([ids[0], ids[2]])
        assert [u.run_id for u in listing.unreadable] == [bad]
        assert column in listing.unreadable[0].error
        with pytest.raises(CorruptRecord) as info:
            await rt.get_suspended_run(bad)
        assert info.value.code == "STORAGE_RECORD_CORRUPT" and bad in info.value.message
        with pytest.raises(CorruptRecord):
            await agent.approve_tool_call(run_id=bad)
        # nothing changed for the corrupt run, and the others can still be decided
        assert await rt.store.audit_log(bad) == []
        assert (await rt.store.get_run(bad)).status == "suspended"
        result = await agent.approve_tool_call_generate(run_id=ids[0])
        assert result.finish_reason == "stop" and log == ["x"]


async def test_a_corrupt_run_row_is_isolated(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    ids, _ = await _three_pending_runs(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET suspended_at = 'soon' WHERE run_id = ?", (ids[2],))
    async with Runtime(agents={}, storage=SqliteStore(path)) as rt:
        listing = await rt.list_suspended_runs()
        assert sorted(r.run_id for r in listing.runs) == sorted(ids[:2])
        assert [u.run_id for u in listing.unreadable] == [ids[2]]


async def test_a_read_only_store_lists_and_refuses_decisions_without_changing_anything(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    ids, log = await _three_pending_runs(path)
    agent = Agent(id="a", model=calls_then([], echo_results()), tools={"delete_record": recording_tool(log)})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path, read_only=True)) as rt:
        assert (await rt.list_suspended_runs()).total == 3
        with pytest.raises(StoreReadOnly) as info:
            await agent.approve_tool_call(run_id=ids[0])
        assert info.value.code == "STORAGE_READ_ONLY"
    assert log == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM pending_calls WHERE status = 'pending'").fetchone()[0] == 3
        assert db.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0] == 0


async def test_read_only_needs_an_existing_database(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "missing.db", read_only=True)
    with pytest.raises(StoreUnavailable):
        await store.list_suspended()
    await store.aclose()
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.parametrize("command", [["runs", "list"], ["runs", "show", "abcdef12"], ["runs", "approve", "abcdef12"]])
def test_cli_reports_a_bad_database_in_one_line(tmp_path: Path, command: list[str]) -> None:
    import subprocess
    import sys

    path, _ = _bad_paths(tmp_path)["garbage"]
    warden = Path(sys.executable).parent / "warden"
    out = subprocess.run([str(warden), *command, "--db", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "STORAGE_CORRUPT" in lines[0] and "Traceback" not in out.stderr


async def test_lone_surrogates_in_ids_and_filters_are_typed_errors(tmp_path: Path) -> None:
    from agent_core import SnapshotNotFound
    from storage import UnstorableText

    path = tmp_path / "w.db"
    ids, log = await _three_pending_runs(path)
    agent = Agent(id="a", model=calls_then([], echo_results()), tools={"delete_record": recording_tool(log)})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)) as rt:
        with pytest.raises((UnstorableText, SnapshotNotFound)) as info:
            await agent.approve_tool_call(run_id="\ud800")
        assert "\\ud800" in info.value.message or "\ud800" not in info.value.message
        with pytest.raises(UnstorableText):
            await rt.list_suspended_runs(thread_id="\udfff")
        with pytest.raises(UnstorableText):
            await agent.approve_tool_call(run_id=ids[0], tool_call_id="\ud800x")
        assert (await rt.list_suspended_runs()).total == 3 and log == []
