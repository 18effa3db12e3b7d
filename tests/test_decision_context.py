"""The context shown beside a decision comes from the stored run: request, model text, step, transcript."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agent_core import Agent, Memory, Runtime, create_tool
from agent_core.call_state import RunState
from agent_core.decision_context import call_context, transcript
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import SqliteStore
from tests.apps.supervisors import build_runtime


class IdIn(BaseModel):
    id: str


def _tools(log: list[str]) -> dict:
    async def lookup(inp: IdIn, ctx) -> dict:
        log.append(f"lookup {inp.id}")
        return {"found": inp.id}

    async def delete(inp: IdIn, ctx) -> dict:
        log.append(f"delete {inp.id}")
        return {"deleted": True}

    return {
        "lookup": create_tool(id="lookup", description="Look a record up", input_schema=IdIn, execute=lookup),
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by ID, for good",
            input_schema=IdIn,
            require_approval=True,
            execute=delete,
        ),
    }


def _model(fn) -> FunctionModel:
    return FunctionModel(fn)


async def _state(rt: Runtime, run_id: str) -> RunState:
    row = await rt.store.get_run(run_id)
    assert row is not None
    return RunState.from_json(row.snapshot, run_id=run_id, store=rt.store.name)


def _describe(rt: Runtime):
    def describe(agent_path: list[str], tool_name: str) -> str | None:
        top = rt.get_agent(agent_path[0])
        owner = top.descendant(agent_path)
        tool = owner.tools.get(tool_name) if owner else None
        return tool.description if tool else None

    return describe


async def test_two_calls_in_one_step_after_thread_history(tmp_path: Path) -> None:
    log: list[str] = []

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        last = messages[-1]
        if last.role == "user" and "first" in last.content:
            return ModelResponse(text="Hello.")
        if last.role == "user":
            return ModelResponse(
                text="I will look abc up, then delete it.",
                tool_calls=[ToolCall("lookup", {"id": "abc"}, "c1"), ToolCall("delete_record", {"id": "abc"}, "c2")],
            )
        return ModelResponse(text="done")

    agent = Agent(id="ops", model=_model(fn), tools=_tools(log), memory=Memory())
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db")) as rt:
        await agent.generate("first message", thread_id="t-1", resource_id="ana")
        result = await agent.generate("please delete abc", thread_id="t-1", resource_id="ana")
        assert result.finish_reason == "suspended"
        state = await _state(rt, result.run_id)

        ctx = call_context(state, "c2", describe_tool=_describe(rt))
        assert ctx is not None
        assert ctx.request == "please delete abc"
        assert ctx.model_text == "I will look abc up, then delete it."
        assert (ctx.position, ctx.of) == (2, 2)
        assert [(c.tool_name, c.state) for c in ctx.step_calls] == [
            ("lookup", "done"),
            ("delete_record", "waiting for approval"),
        ]
        assert ctx.tool_description == "Delete a record by ID, for good"
        assert (ctx.thread_id, ctx.resource_id, ctx.agent_path) == ("t-1", "ana", ["ops"])
        assert ctx.pending_since and ctx.delegated_prompt is None
        assert call_context(state, "nope") is None

        entries = transcript(state)
        assert entries[0].role == "user" and entries[0].text == "please delete abc"  # earlier history left out
        assert "first message" not in [e.text for e in entries]
        assert [tc["name"] for tc in entries[1].tool_calls] == ["lookup", "delete_record"]


async def test_a_call_a_policy_blocked_is_named_so_beside_the_one_waiting(tmp_path: Path) -> None:
    """The dialog's "Also" line tells a policy deny from an operator's decline."""
    from agent_core import Policy

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(
                tool_calls=[ToolCall("lookup", {"id": "abc"}, "c1"), ToolCall("delete_record", {"id": "abc"}, "c2")]
            )
        return ModelResponse(text="done")

    policy = Policy.from_dict(
        {
            "rules": [
                {"id": "reads-reviewed", "tools": ["lookup"], "decision": "ask"},
                {"id": "kept", "tools": ["delete_record"], "decision": "deny", "reason": "kept this week"},
            ]
        }
    )
    log: list[str] = []
    agent = Agent(id="ops", model=_model(fn), tools=_tools(log))
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db"), policy=policy) as rt:
        result = await agent.generate("look abc up and delete it")
        assert result.finish_reason == "suspended"
        ctx = call_context(await _state(rt, result.run_id), "c1")
        assert ctx is not None and ctx.policy_rule == "reads-reviewed"
        assert [(c.tool_name, c.state) for c in ctx.step_calls] == [
            ("lookup", "waiting for approval"),
            ("delete_record", "blocked by policy"),
        ]
        assert log == []


async def test_a_call_several_steps_in_keeps_the_original_request(tmp_path: Path) -> None:
    log: list[str] = []

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        tools_seen = [m for m in messages if m.role == "tool"]
        if not tools_seen:
            return ModelResponse(text="Looking first.", tool_calls=[ToolCall("lookup", {"id": "x9"}, "s0")])
        return ModelResponse(text="Found it; deleting.", tool_calls=[ToolCall("delete_record", {"id": "x9"}, "s1")])

    agent = Agent(id="ops", model=_model(fn), tools=_tools(log))
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db")) as rt:
        result = await agent.generate("clean up x9")
        state = await _state(rt, result.run_id)
        ctx = call_context(state, "s1")
        assert ctx is not None and ctx.request == "clean up x9" and ctx.model_text == "Found it; deleting."
        roles = [(e.role, e.tool_name or "") for e in transcript(state)]
        assert roles == [("user", ""), ("assistant", ""), ("tool", "lookup"), ("assistant", "")]


async def test_a_call_inside_a_sub_agent(tmp_path: Path) -> None:
    rt = build_runtime(str(tmp_path / "w.db"), str(tmp_path / "exec.db"))
    async with rt:
        agent = rt.get_agent("supervisor")
        result = await agent.generate("Find user with ID 12345", thread_id="t-1")
        assert result.finish_reason == "suspended"
        state = await _state(rt, result.run_id)
        call_id = result.suspend_payload.tool_call_id
        ctx = call_context(state, call_id, describe_tool=_describe(rt))
        assert ctx is not None
        assert ctx.agent_path == ["supervisor", "team-agent", "data-agent"]
        assert ctx.request == "Find user with ID 12345"
        assert ctx.delegated_prompt == "Find user with ID 12345"
        assert ctx.tool_description == "Finds user by ID"
        paths = [e.agent_path for e in transcript(state)]
        assert ["supervisor", "team-agent", "data-agent"] in paths and paths[0] == ["supervisor"]
