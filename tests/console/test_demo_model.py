"""The demo model's phrasings, tool choice and word-by-word streaming (no runtime needed)."""

from __future__ import annotations

import json

from agent_core.models import Message, ModelDone, ModelRequestInfo, TextDelta, ToolSpec
from warden_demo.model import HELP_TEXT, DemoModel

OPS_TOOLS = [ToolSpec(name=n) for n in ("delete_record", "issue_refund", "send_email", "get_weather")]


def info(tools=OPS_TOOLS, purpose="run"):
    return ModelRequestInfo(tools=tools, purpose=purpose)


def ask(prompt, tools=OPS_TOOLS):
    return DemoModel(delay=0).respond([Message(role="user", content=prompt)], info(tools))


def test_demo_model_is_labelled():
    model = DemoModel(delay=0)
    assert model.is_demo is True and model.model_id == "demo"


def test_phrasings_map_to_tool_calls():
    r = ask("delete record abc-123")
    assert [(c.name, c.args) for c in r.tool_calls] == [("delete_record", {"record_id": "abc-123"})]
    r = ask("refund order ord-1042 for 250")
    assert [(c.name, c.args) for c in r.tool_calls] == [("issue_refund", {"order_id": "ord-1042", "amount": 250})]
    r = ask("Please refund order ord-7 for 12.5")
    assert r.tool_calls[0].args == {"order_id": "ord-7", "amount": 12.5}
    r = ask("send an email to x@y.z saying the build is green")
    assert r.tool_calls[0].name == "send_email"
    assert r.tool_calls[0].args["to"] == "x@y.z" and r.tool_calls[0].args["body"] == "the build is green"
    assert ask("what's the weather").tool_calls[0].args == {}
    assert ask("what's the weather in Paris?").tool_calls[0].args == {"city": "Paris"}


def test_find_user_delegates_or_calls_directly():
    r = ask("find user 12345", tools=[ToolSpec(name="agent-data_agent")])
    assert (r.tool_calls[0].name, r.tool_calls[0].args) == ("agent-data_agent", {"prompt": "find user 12345"})
    r = ask("find user 12345", tools=[ToolSpec(name="find_user")])
    assert (r.tool_calls[0].name, r.tool_calls[0].args) == ("find_user", {"user_id": "12345"})


def test_unknown_prompt_gets_help_and_no_tool():
    r = ask("hello there")
    assert r.text == HELP_TEXT and r.tool_calls == []


def test_answers_after_tool_results_including_a_declined_reason():
    model = DemoModel(delay=0)
    history = [
        Message(role="user", content="delete record abc-123"),
        Message(role="assistant", content="", tool_calls=[]),
        Message(
            role="tool",
            name="delete_record",
            tool_call_id="c1",
            content=json.dumps({"deleted": True, "record_id": "abc-123"}),
        ),
    ]
    assert model.respond(history, info()).text == "Done: delete_record returned deleted=True, record_id=abc-123"
    history[-1] = Message(
        role="tool", name="delete_record", tool_call_id="c1", content=json.dumps("wrong customer"), tool_status="denied"
    )
    text = model.respond(history, info()).text
    assert text == "I did not run delete_record: the operator declined. Reason: wrong customer"


def test_resume_purpose_returns_json_for_the_schema():
    model = DemoModel(delay=0)
    r = model.respond([Message(role="user", content="in Lyon please, fahrenheit")], info(purpose="resume"))
    assert json.loads(r.text) == {"city": "Lyon", "units": "imperial"}


async def test_streams_word_by_word_then_done():
    model = DemoModel(delay=0)
    events = [e async for e in model.stream([Message(role="user", content="hi")], info())]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 10 and "".join(deltas) == HELP_TEXT
    assert isinstance(events[-1], ModelDone) and events[-1].response.text == HELP_TEXT
