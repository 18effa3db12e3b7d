"""The demo's agents written with other frameworks, hosted by Warden beside its own (offline).

One agent per framework whose extra is installed, each with that framework's own test model:
pydantic-ai's ``FunctionModel``, an OpenAI Agents SDK ``Model``, a LangChain chat model. They
share the demo's sample records: ``delete record ID`` deletes one (gated by the framework's own
approval mechanism), ``show record ID`` reads one (not gated). ``make demo`` shows them
(``WARDEN_DEMO_FRAMEWORKS=1``); ``warden runs ... --app warden_demo.frameworks_app:runtime`` decides
their calls from another process. Nothing here imports textual.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from warden_demo.records import delete_row, records_path, seed_records

EXAMPLES = ("delete record abc-124", "show record abc-125", "show record def-200 and delete record def-201")
_VERB = re.compile(r"\b(delete|show)\s+(?:the\s+)?record\s+([\w.-]+)", re.I)


def intents(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the demo models make for a prompt, in order."""
    return [
        ("delete_record" if verb.lower() == "delete" else "show_record", {"record_id": record})
        for verb, record in _VERB.findall(text)
    ]


def reply(results: list[str]) -> str:
    return "Done. " + " ".join(results) if results else 'Try "delete record abc-124" or "show record abc-125".'


def show_row(path: Path, record_id: str) -> dict[str, Any]:
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT id, title FROM records WHERE id = ?", (record_id,)).fetchone()
    finally:
        db.close()
    return {"record_id": record_id, "title": row[1] if row else None}


def _pydantic_ai(records: Path) -> Any:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from agent_core.adapters import from_pydantic_ai

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else []
        returns = [str(p.content) for p in parts if p.part_kind == "tool-return"]
        if returns:
            return ModelResponse(parts=[TextPart(reply(returns))])
        prompt = next((str(p.content) for p in parts if p.part_kind == "user-prompt"), "")
        calls: list[Any] = [ToolCallPart(name, args) for name, args in intents(prompt)]
        return ModelResponse(parts=calls or [TextPart(reply([]))])

    agent: PydanticAgent[None, str] = PydanticAgent(FunctionModel(model), name="Records (pydantic-ai)")

    @agent.tool_plain(requires_approval=True)
    def delete_record(record_id: str) -> str:
        """Delete a sample record by id."""
        return json.dumps(delete_row(records, record_id))

    @agent.tool_plain
    def show_record(record_id: str) -> str:
        """Show a sample record."""
        return json.dumps(show_row(records, record_id))

    return from_pydantic_ai(agent, id="pydantic-ai-records", description="pydantic-ai agent (deferred tools)")


def _openai_agents(records: Path) -> Any:
    from agents import Agent as OpenAIAgent
    from agents import RunConfig, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from agent_core.adapters import from_openai_agents

    class DemoModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            items = input if isinstance(input, list) else [{"role": "user", "content": input}]
            last_user = max(i for i, item in enumerate(items) if isinstance(item, dict) and item.get("role") == "user")
            outputs = [
                str(i["output"])
                for i in items[last_user:]
                if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            calls = [] if outputs else intents(str(items[last_user].get("content", "")))
            if calls:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call", call_id=f"call_{i}_{os.urandom(4).hex()}", name=n, arguments=json.dumps(a)
                    )
                    for i, (n, a) in enumerate(calls)
                ]
            else:
                text = ResponseOutputText(type="output_text", text=reply(outputs), annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="msg", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("Warden runs the agent with Runner.run")

    @function_tool(needs_approval=True)
    def delete_record(record_id: str) -> str:
        """Delete a sample record by id."""
        return json.dumps(delete_row(records, record_id))

    @function_tool
    def show_record(record_id: str) -> str:
        """Show a sample record."""
        return json.dumps(show_row(records, record_id))

    agent = OpenAIAgent(name="Records (OpenAI Agents)", model=DemoModel(), tools=[delete_record, show_record])
    return from_openai_agents(
        agent,
        id="openai-agents-records",
        run_config=RunConfig(tracing_disabled=True),
        description="OpenAI Agents SDK agent (needs_approval)",
    )


def _langgraph(records: Path, checkpoints: Path) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.sqlite import SqliteSaver

    from agent_core.adapters import from_langgraph

    class DemoChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "warden-demo"

        def bind_tools(self, tools: Any, **kwargs: Any) -> DemoChatModel:
            return self

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            last_user = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
            results = [str(m.content) for m in messages[last_user:] if isinstance(m, ToolMessage)]
            calls = [] if results else intents(str(messages[last_user].content))
            message = AIMessage(
                content="" if calls else reply(results),
                tool_calls=[
                    {"name": n, "args": a, "id": f"lc_{i}_{os.urandom(4).hex()}", "type": "tool_call"}
                    for i, (n, a) in enumerate(calls)
                ],
            )
            return ChatResult(generations=[ChatGeneration(message=message)])

    @tool
    def delete_record(record_id: str) -> str:
        """Delete a sample record by id."""
        return json.dumps(delete_row(records, record_id))

    @tool
    def show_record(record_id: str) -> str:
        """Show a sample record."""
        return json.dumps(show_row(records, record_id))

    graph = create_agent(
        DemoChatModel(),
        tools=[delete_record, show_record],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_record": True})],
        checkpointer=SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False)),
        name="Records (LangGraph)",
    )
    return from_langgraph(graph, id="langgraph-records", description="LangGraph agent (HumanInTheLoopMiddleware)")


def framework_agents(db_path: str | Path) -> dict[str, Any]:
    """``{key: hosted agent}`` for each framework whose package is installed (the extras are optional)."""
    records = records_path(db_path)
    seed_records(records)
    checkpoints = records.with_name(records.name.replace(".records.sqlite", "") + ".langgraph.sqlite")
    builders = {
        "pydantic_ai_records": lambda: _pydantic_ai(records),
        "openai_agents_records": lambda: _openai_agents(records),
        "langgraph_records": lambda: _langgraph(records, checkpoints),
    }
    agents: dict[str, Any] = {}
    for key, build in builders.items():
        try:
            agent = build()
        except ImportError:  # that framework's extra is not installed
            continue
        agent.examples = EXAMPLES
        agents[key] = agent
    return agents
