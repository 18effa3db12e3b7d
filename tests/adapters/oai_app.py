"""A runtime hosting an OpenAI Agents SDK agent with a fake ``Model`` (no network), for in-process and CLI tests
(``--app tests.adapters.oai_app:build``).

Environment as ``tests.adapters.hosting`` says.
``python -m tests.adapters.oai_app approve RUN`` approves the run's latest call and waits.
The model follows ``tests.adapters.script`` (``delete ID`` calls ``delete_record``, which the framework
gates; ``lookup Q`` calls ``lookup``, which it does not; ``then`` separates turns) and answers with the
results it saw (logged as ``model``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent as OpenAIAgent
from agents import RunConfig, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from agent_core import Policy, Runtime
from agent_core.adapters import from_openai_agents
from tests.adapters.hosting import exec_log, hang, hosting, script
from tests.adapters.script import turns
from tests.helpers import ExecLog


class ScriptModel(Model):
    """The SDK's ``Model`` interface, answering from the conversation (deterministic, offline)."""

    def __init__(self, log: ExecLog | None = None) -> None:
        self.log = log

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = [i if isinstance(i, dict) else i.model_dump() for i in input] if isinstance(input, list) else []
        items = items or [{"role": "user", "content": input}]
        start = max(i for i, item in enumerate(items) if item.get("role") == "user")
        after = items[start + 1 :]
        outputs = [str(i["output"]) for i in after if i.get("type") == "function_call_output"]
        kinds = [i.get("type") for i in after]
        done = sum(1 for i, k in enumerate(kinds) if k == "function_call" and kinds[i + 1 : i + 2] != [k])
        turn = turns(str(items[start]["content"]), done)
        if turn is None:
            if self.log is not None:
                self.log.record("model", {"seen": outputs})
            return _answer("; ".join(outputs) or "nothing to do")
        calls = [
            ResponseFunctionToolCall(
                type="function_call",
                call_id=f"oai-{len(outputs) + i}",
                name=name,
                arguments=json.dumps(args),
                id=f"fc{len(outputs) + i}",
            )
            for i, (name, args) in enumerate(turn)
        ]
        return ModelResponse(output=calls, usage=Usage(), response_id=None) if calls else _answer("nothing to do")

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Warden runs the agent with Runner.run")


def _answer(text: str) -> ModelResponse:
    message = ResponseOutputMessage(
        id="msg",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )
    return ModelResponse(output=[message], usage=Usage(), response_id=None)


def openai_agent(log: ExecLog | None, *, hang: str = "") -> OpenAIAgent[Any]:
    @function_tool(needs_approval=True)
    async def delete_record(record_id: str) -> str:
        """Delete a record by id."""
        if log is not None:
            log.record("delete_record", {"record_id": record_id})
        if hang == "tool":
            await asyncio.sleep(600)
        return f"deleted {record_id}"

    @function_tool
    def lookup(query: str) -> str:
        """Look a record up (not marked for approval)."""
        if log is not None:
            log.record("lookup", {"query": query})
        return f"found {query}"

    return OpenAIAgent(
        name="records", instructions="Manage records.", model=ScriptModel(log), tools=[delete_record, lookup]
    )


def build(policy: Policy | None = None, **options: Any) -> Runtime:
    agent = openai_agent(exec_log(), hang=hang())
    hosted = from_openai_agents(agent, id="records", run_config=RunConfig(tracing_disabled=True), **options)
    return hosting(hosted, policy=policy)


if __name__ == "__main__":
    script(build, sys.argv)
