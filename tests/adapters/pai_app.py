"""A runtime hosting a pydantic-ai agent (its own ``FunctionModel``), for in-process and CLI tests
(``--app tests.adapters.pai_app:build``).

Environment: as ``tests.adapters.hosting`` says.
``python -m tests.adapters.pai_app approve RUN`` approves the run's latest call and waits.
The model follows ``tests.adapters.script`` (``delete ID`` calls ``delete_record``, which the framework
gates; ``lookup Q`` calls ``lookup``, which it does not; ``then`` separates turns) and answers with the
results it saw (logged as ``model``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_core import Policy, Runtime
from agent_core.adapters import from_pydantic_ai
from tests.adapters.hosting import exec_log, hang, hosting, script
from tests.adapters.script import turns
from tests.helpers import ExecLog


def pydantic_agent(log: ExecLog, *, hang: str = "") -> PydanticAgent[None, str]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        start = max(i for i, m in enumerate(messages) if any(p.part_kind == "user-prompt" for p in m.parts))
        prompt = next(str(p.content) for p in messages[start].parts if p.part_kind == "user-prompt")
        rounds = [
            [str(p.content) for p in m.parts if isinstance(p, ToolReturnPart)]
            for m in messages[start + 1 :]
            if isinstance(m, ModelRequest)
        ]
        turn = turns(prompt, len(rounds))
        if turn is None:
            seen = [r for results in rounds for r in results]
            log.record("model", {"seen": seen})
            return ModelResponse(parts=[TextPart("; ".join(seen) or "nothing to do")])
        if not turn:
            return ModelResponse(parts=[TextPart("nothing to do")])
        n = sum(len(r) for r in rounds)
        return ModelResponse(
            parts=[ToolCallPart(name, args, tool_call_id=f"pai-{n + i}") for i, (name, args) in enumerate(turn)]
        )

    agent: PydanticAgent[None, str] = PydanticAgent(FunctionModel(model), name="records")

    @agent.tool_plain(requires_approval=True)
    async def delete_record(record_id: str) -> str:
        """Delete a record by id."""
        log.record("delete_record", {"record_id": record_id})
        if hang == "tool":
            await asyncio.sleep(600)
        return f"deleted {record_id}"

    @agent.tool_plain
    def lookup(query: str) -> str:
        """Look a record up (not marked for approval)."""
        log.record("lookup", {"query": query})
        return f"found {query}"

    return agent


def build(policy: Policy | None = None, **options: Any) -> Runtime:
    return hosting(from_pydantic_ai(pydantic_agent(exec_log(), hang=hang()), id="records", **options), policy=policy)


if __name__ == "__main__":
    script(build, sys.argv)
