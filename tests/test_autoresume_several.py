"""Issue #11.8: auto-resume with several pending calls in a thread decides only the calls it designates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_core import Agent, Memory, Runtime
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import recording_tool


def agent_with(log: list, answer: dict[str, Any] | None) -> tuple[Agent, list]:
    resume_calls: list = []

    def model(messages, info):
        if info.purpose == "resume":
            resume_calls.append(info.output_schema)
            return ModelResponse(text=json.dumps(answer) if answer is not None else "hmm")
        last = messages[-1]
        if last.role == "user" and last.content.startswith("delete"):
            ids = last.content.split()[1:]
            return ModelResponse(tool_calls=[ToolCall(name="d", args={"id": i}, id=f"c{i}") for i in ids])
        return ModelResponse(text="ok: " + last.content)

    agent = Agent(
        id="a",
        model=FunctionModel(model),
        tools={"d": recording_tool(log)},
        memory=Memory(),
        default_options={"auto_resume_suspended_tools": True},
    )
    return agent, resume_calls


async def _pending(agent: Agent) -> list[str]:
    runs = (await agent.list_suspended_runs(thread_id="t")).runs
    return sorted(c.tool_call_id for r in runs for c in r.tool_calls)


@pytest.mark.parametrize("two_per_step", [True, False], ids=["one-run", "two-runs"])
@pytest.mark.parametrize(
    "answer",
    [
        {"decision": "approve", "toolCallIds": []},  # designates nothing
        {"decision": "approve"},  # no ids at all
        {"decision": "unclear", "toolCallIds": ["c1"]},
        {"decision": "approve", "toolCallIds": ["nope"]},  # an unknown id
        None,  # not JSON
    ],
)
async def test_yes_to_several_pending_calls_decides_nothing_and_starts_no_run(tmp_path, answer, two_per_step):
    log: list = []
    agent, _ = agent_with(log, answer)
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")):
        if two_per_step:
            assert (await agent.generate("delete 1 2", thread_id="t")).finish_reason == "suspended"
        else:
            await agent.generate("delete 1", thread_id="t")
            await agent.generate("delete 2", thread_id="t")  # the unclear follow-up of a single call
        runs_before = (await agent.list_suspended_runs(thread_id="t")).total
        assert await _pending(agent) == ["c1", "c2"]

        reply = await agent.generate("yes", thread_id="t")

        assert log == []  # nothing approved
        assert await _pending(agent) == ["c1", "c2"]
        assert (await agent.list_suspended_runs(thread_id="t")).total == runs_before  # no new pending run
        assert reply.finish_reason == "stop" and "c1" in reply.text and "c2" in reply.text
        assert "explicitly" in reply.text


@pytest.mark.parametrize("two_per_step", [True, False], ids=["one-run", "two-runs"])
async def test_designated_call_only_is_approved(tmp_path, two_per_step):
    log: list = []
    agent, schemas = agent_with(log, {"decision": "approve", "toolCallIds": ["c2"]})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")):
        if two_per_step:
            await agent.generate("delete 1 2", thread_id="t")
        else:
            await agent.generate("delete 1", thread_id="t")
            await agent.generate("delete 2", thread_id="t")
        await agent.generate("yes, go ahead with c2", thread_id="t")
        assert log == ["2"]
        assert await _pending(agent) == ["c1"]
        assert sorted(schemas[-1]["properties"]["toolCallIds"]["items"]["enum"]) == ["c1", "c2"]


async def test_an_approval_of_several_needs_an_explicit_yes(tmp_path):
    log: list = []
    agent, _ = agent_with(log, {"decision": "approve", "toolCallIds": ["c1", "c2"]})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")):
        await agent.generate("delete 1 2", thread_id="t")
        await agent.generate("maybe? not sure", thread_id="t")
        assert log == [] and await _pending(agent) == ["c1", "c2"]
        await agent.generate("yes, both", thread_id="t")
        assert sorted(log) == ["1", "2"] and await _pending(agent) == []


async def test_decline_of_designated_calls(tmp_path):
    log: list = []
    agent, _ = agent_with(log, {"decision": "decline", "toolCallIds": ["c1"]})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")):
        await agent.generate("delete 1 2", thread_id="t")
        await agent.generate("no, not c1", thread_id="t")
        assert log == [] and await _pending(agent) == ["c2"]
