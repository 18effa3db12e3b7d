"""A decision taken in the process that suspended the run reuses its state, only when that is exact.

The reused state must be what validating the claim's snapshot text would give: the text must be
byte-identical to what this process stored, and the state JSON-exact. Counted by the validations
of snapshot text (``RunState.from_json``)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agent_core import Agent, FingerprintMismatch, Runtime
from agent_core.call_state import CallState, RunState
from agent_core.models import Message
from agent_core.saved_states import SavedStates, json_exact
from storage import InMemoryStore, SqliteStore
from tests.helpers import calls_then, echo_results, recording_tool


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run ids whose snapshot text was validated into a state."""
    seen: list[str] = []
    original = RunState.from_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[RunState], text: str, *, run_id: str, store: str) -> RunState:
        seen.append(run_id)
        return original(cls, text, run_id=run_id, store=store)

    monkeypatch.setattr(RunState, "from_json", classmethod(counting))
    return seen


def _agent(log: list, record: list | None = None, args: dict | None = None) -> Agent:
    model = calls_then([("d", args or {"id": "1"}, "x")], echo_results(), record=record)
    return Agent(id="a", model=model, tools={"d": recording_tool(log, id="d")})


async def test_a_decision_in_the_saving_process_reuses_the_state(validations):
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=InMemoryStore()):
        for _ in range(3):
            out = await agent.generate("go")
            assert out.status == "suspended"
            done = await agent.approve_tool_call(run_id=out.run_id)
            await done.wait()
            assert done.status == "finished" and await done.text() == 'd={"deleted": true}', done.error
    assert validations == [] and log == ["1", "1", "1"]


async def test_a_snapshot_another_process_changed_is_validated_from_its_text(tmp_path, validations):
    log: list = []
    record: list = []
    agent = _agent(log, record)
    db = tmp_path / "w.db"
    async with Runtime(agents={"a": agent}, storage=SqliteStore(db)):
        out = await agent.generate("go")
        with sqlite3.connect(db) as con:  # another process rewrites the stored snapshot
            (text,) = con.execute("SELECT snapshot FROM runs WHERE run_id = ?", (out.run_id,)).fetchone()
            data = json.loads(text)
            data["messages"][0]["content"] = "changed elsewhere"
            con.execute("UPDATE runs SET snapshot = ? WHERE run_id = ?", (json.dumps(data), out.run_id))
        done = await agent.approve_tool_call(run_id=out.run_id)
        await done.wait()
        assert done.status == "finished", done.error
    assert validations == [out.run_id]
    assert record[-1][0].content == "changed elsewhere", "the decision ran on the stored text, not the kept state"


async def test_a_refused_decision_leaves_the_state_usable(validations):
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=InMemoryStore()):
        out = await agent.generate("go")
        with pytest.raises(FingerprintMismatch):
            await agent.approve_tool_call(run_id=out.run_id, fingerprint="sha256:nope")
        assert log == []
        done = await agent.approve_tool_call(run_id=out.run_id)
        await done.wait()
        assert done.status == "finished", done.error
    assert validations == [] and log == ["1"]


async def test_a_state_that_is_not_json_exact_is_never_reused(validations):
    log: list = []
    agent = _agent(log, args={"id": "1", "tags": ("a", "b")})  # a tuple: stored as a JSON list
    async with Runtime(agents={"a": agent}, storage=InMemoryStore()):
        out = await agent.generate("go")
        done = await agent.approve_tool_call(run_id=out.run_id)
        await done.wait()
        assert done.status == "finished", done.error
    assert validations == [out.run_id]


async def test_a_message_changed_by_the_caller_after_the_save_does_not_reach_the_decision(validations):
    log: list = []
    record: list = []
    agent = _agent(log, record)
    mine = Message(role="user", content="go")
    async with Runtime(agents={"a": agent}, storage=InMemoryStore()):
        out = await agent.generate([mine])
        mine.content = "changed by the caller"
        done = await agent.approve_tool_call(run_id=out.run_id)
        await done.wait()
        assert done.status == "finished", done.error
    assert validations == []
    assert record[-1][0].content == "go"


async def test_args_the_caller_changed_in_a_chunk_after_the_save_do_not_reach_the_tool(validations):
    """A chunk's ``args`` is the state's own dict: a caller that edits it in place (say, to redact
    it for display) must not change what the decision runs; the stored snapshot decides."""
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=InMemoryStore()):
        out = await agent.stream("go")
        edited = 0
        for chunk in await out.chunks():
            args = getattr(chunk.payload, "args", None)
            if isinstance(args, dict):
                args["id"] = "changed by the caller"
                edited += 1
        assert out.status == "suspended" and edited
        done = await agent.approve_tool_call(run_id=out.run_id)
        await done.wait()
        assert done.status == "finished", done.error
    assert log == ["1"]
    assert validations == [out.run_id], "the changed state was not reused: the snapshot was validated"


def _state(run_id: str, **fields: object) -> RunState:
    return RunState(run_id=run_id, agent_id="a", agent_path=["a"], **fields)


def test_the_map_is_bounded_and_entries_are_taken_once():
    saved = SavedStates(limit=2)
    states = {r: _state(r) for r in ("r1", "r2", "r3")}
    for run_id, state in states.items():
        saved.put(run_id, state.to_json(), state)
    assert len(saved) == 2
    assert saved.take("r1", states["r1"].to_json()) is None, "the oldest entry was evicted"
    assert saved.take("r3", states["r3"].to_json()) is states["r3"]
    assert saved.take("r3", states["r3"].to_json()) is None, "taken, not copied"
    assert saved.take("r2", states["r2"].to_json() + " ") is None, "different text: not reused"
    assert len(saved) == 0


@pytest.mark.parametrize(
    "fields",
    [
        {"request_context": {"t": (1, 2)}},
        {"request_context": {"x": float("nan")}},
        {"request_context": {"x": float("inf")}},
        {"policies": {"v": {1: "non-string key"}}},
        {"framework_state": {"set": {1, 2}}},
        {"messages": [Message(role="user", content="hi"), object()]},
        {"calls": [CallState(id="c", name="n", suspend_payload=())]},
        {"calls": [CallState(id="c", name="n", result=frozenset())]},
        {"calls": [CallState(id="c", name="n", child=RunState.model_construct(request_context={"t": ()}))]},
    ],
)
def test_json_exact_rejects_values_json_would_change(fields):
    state = RunState.model_construct(run_id="r", agent_id="a", agent_path=["a"], **fields)
    assert not json_exact(state)
    saved = SavedStates()
    saved.put("r", "{}", state)
    assert len(saved) == 0


def test_json_exact_accepts_plain_json():
    state = _state("r", request_context={"a": [1, 2.5, "x", None, True, {"b": -0.0}]})
    assert json_exact(state)
    assert RunState.from_json(state.to_json(), run_id="r", store="t") == state
