"""Tool hooks: the agent's before/after_tool_call and a tool's on_input_available / on_output."""

from __future__ import annotations

import logging

from pydantic import BaseModel

from agent_core import Agent, ToolHookCall, create_tool
from agent_core.models import Message
from tests.helpers import IdIn, calls_then, echo_results, types


def tool_results(messages: list[Message]) -> dict[str, str]:
    return {m.tool_call_id or "": m.content for m in messages if m.role == "tool"}


async def test_before_tool_call_sees_the_call_and_can_block_execute():
    ran: list[str] = []
    seen: list[ToolHookCall] = []

    async def delete(inp: IdIn, ctx):
        ran.append(inp.id)
        return {"deleted": inp.id}

    def before(call: ToolHookCall):
        seen.append(call)
        if call.args["id"] == "keep":
            return {"proceed": False, "output": {"blocked": True, "why": "protected"}}
        return None

    record: list = []
    agent = Agent(
        id="a",
        model=calls_then([("delete", {"id": "keep"}, "c1"), ("delete", {"id": "x"}, "c2")], echo_results(), record),
        tools={"delete": create_tool(id="delete-record", input_schema=IdIn, execute=delete)},
        hooks={"before_tool_call": before},
    )
    res = await agent.generate("go", request_context={"user": "u1"})
    assert ran == ["x"]
    assert [(c.tool_name, c.tool_call_id, c.args, c.request_context, c.agent_path) for c in seen] == [
        ("delete", "c1", {"id": "keep"}, {"user": "u1"}, ["a"]),
        ("delete", "c2", {"id": "x"}, {"user": "u1"}, ["a"]),
    ]
    assert all(c.run_id == res.run_id for c in seen)
    results = tool_results(record[-1])
    assert results["c1"] == '{"blocked": true, "why": "protected"}'
    assert results["c2"] == '{"deleted": "x"}'
    assert [r.result for r in res.tool_results] == [{"blocked": True, "why": "protected"}, {"deleted": "x"}]


async def test_before_tool_call_runs_after_approval_and_proceed_true_continues():
    order: list[str] = []

    async def delete(inp: IdIn, ctx):
        order.append("execute")
        return "ok"

    async def before(call):  # async hooks work too
        order.append("before")
        return {"proceed": True}

    def on_input(call):
        order.append("input:" + call.args["id"])

    agent = Agent(
        id="a",
        model=calls_then([("delete", {"id": "1"}, "c1")], echo_results()),
        tools={
            "delete": create_tool(
                id="delete",
                input_schema=IdIn,
                execute=delete,
                require_approval=True,
                hooks={"on_input_available": on_input},
            )
        },
        hooks={"before_tool_call": before},
    )
    stream = await agent.stream("go")
    await stream.wait()
    assert stream.status == "suspended" and order == ["input:1"]  # input hook before the gate
    res = await agent.approve_tool_call_generate(run_id=stream.run_id, tool_call_id="c1")
    assert res.finish_reason == "stop" and order == ["input:1", "before", "execute"]


async def test_raising_before_hook_is_a_tool_error_the_model_sees():
    ran: list[str] = []

    async def delete(inp: IdIn, ctx):
        ran.append(inp.id)
        return "ok"

    def before(call):
        raise RuntimeError("policy store down")

    record: list = []
    agent = Agent(
        id="a",
        model=calls_then([("delete", {"id": "1"}, "c1")], echo_results(), record),
        tools={"delete": create_tool(id="delete", input_schema=IdIn, execute=delete)},
        hooks={"before_tool_call": before},
    )
    stream = await agent.stream("go")
    chunks = await stream.chunks()
    assert ran == [] and stream.status == "finished"
    err = next(c for c in chunks if c.type == "tool-error")
    assert "before_tool_call" in err.payload.error and "policy store down" in err.payload.error
    assert "policy store down" in tool_results(record[-1])["c1"]


async def test_after_tool_call_observes_results_and_errors_and_its_failure_is_only_logged(caplog):
    seen: list[tuple] = []

    async def flaky(inp: IdIn, ctx):
        if inp.id == "bad":
            raise ValueError("nope")
        return {"id": inp.id}

    def after(call, result=None, error=None):
        seen.append((call.tool_call_id, result, type(error).__name__ if error else None))
        raise RuntimeError("observer broke")

    outputs: list = []
    agent = Agent(
        id="a",
        model=calls_then([("t", {"id": "ok"}, "c1"), ("t", {"id": "bad"}, "c2")], echo_results()),
        tools={
            "t": create_tool(
                id="t", input_schema=IdIn, execute=flaky, hooks={"on_output": lambda call, out: outputs.append(out)}
            )
        },
        hooks={"after_tool_call": after},
    )
    with caplog.at_level(logging.ERROR, logger="agent_core.hooks"):
        res = await agent.generate("go")
    assert sorted(seen) == [("c1", {"id": "ok"}, None), ("c2", None, "ValueError")]
    assert outputs == [{"id": "ok"}]
    assert res.tool_results[0].result == {"id": "ok"}  # the result stands
    assert "observer broke" in caplog.text


async def test_after_hook_does_not_run_when_execute_suspends_and_does_when_it_completes():
    seen: list = []

    class Ask(BaseModel):
        answer: str

    async def ask(inp: IdIn, ctx):
        if ctx.resume_data is None:
            return await ctx.suspend({"q": "?"})
        return {"answer": ctx.resume_data.answer}

    agent = Agent(
        id="a",
        model=calls_then([("ask", {"id": "1"}, "c1")], echo_results()),
        tools={"ask": create_tool(id="ask", input_schema=IdIn, resume_schema=Ask, execute=ask)},
        hooks={"after_tool_call": lambda call, result=None, error=None: seen.append(result)},
    )
    stream = await agent.stream("go")
    await stream.wait()
    assert stream.status == "suspended" and seen == []
    await agent.resume_generate({"answer": "42"}, run_id=stream.run_id)
    assert seen == [{"answer": "42"}]


async def test_raising_on_input_available_fails_the_call_before_the_gate():
    async def delete(inp: IdIn, ctx):
        return "ok"

    def bad(call):
        raise KeyError("x")

    agent = Agent(
        id="a",
        model=calls_then([("delete", {"id": "1"}, "c1")], echo_results()),
        tools={
            "delete": create_tool(
                id="delete",
                input_schema=IdIn,
                execute=delete,
                require_approval=True,
                hooks={"on_input_available": bad},
            )
        },
    )
    stream = await agent.stream("go")
    chunks = await stream.chunks()
    assert stream.status == "finished" and "tool-call-approval" not in types(chunks)
    assert "on_input_available" in next(c for c in chunks if c.type == "tool-error").payload.error


async def test_unknown_hook_names_are_rejected():
    import pytest

    with pytest.raises(ValueError):
        Agent(id="a", model=calls_then([], echo_results()), hooks={"beforeToolCall": print})
    from agent_core.errors import InvalidToolDefinition

    with pytest.raises(InvalidToolDefinition):
        create_tool(id="t", execute=lambda i, c: None, hooks={"onOutput": print})


async def test_sync_tool_with_hooks():
    seen: list = []

    def add(inp: IdIn, ctx):
        return inp.id + "!"

    agent = Agent(
        id="a",
        model=calls_then([("add", {"id": "x"}, "c1")], echo_results()),
        tools={"add": create_tool(id="add", input_schema=IdIn, execute=add)},
        hooks={"after_tool_call": lambda call, result=None, error=None: seen.append(result)},
    )
    res = await agent.generate("go")
    assert seen == ["x!"] and res.text == 'add="x!"'


async def test_reference_approval_bound_hook_example():
    """The reference document's "approval bound to the exact arguments" example (docs/examples)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "examples" / "approval_bound_hook.py"
    spec = importlib.util.spec_from_file_location("approval_bound_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    outcomes = await module.main()
    assert outcomes[0] == 'Tool said: {"refunded": "ord-1042"}'
    assert outcomes[1] == 'Tool said: "Tool call blocked: approval did not match issue_refund arguments."'
    assert module.approved_fingerprints == {module.action_fingerprint("issue_refund", {"order_id": "someone-else"})}
