"""A coding agent whose one tool is a real ``bash``: the shell-policy tests (tests/commands/).

The model runs each user message as a command line (``bash(command=<message>)``), then
answers with the tool's result. The tool really runs ``bash -c`` in a work directory, so a
test sees on disk whether a command ran. ``--app tests.apps.shell_app:runtime`` reads the
store from ``WARDEN_TEST_DB``, the work directory from ``WARDEN_TEST_WORKDIR`` and the
policy file from ``WARDEN_TEST_POLICY``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from pydantic import BaseModel

from agent_core import Agent, Policy, Runtime, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import open_store


class Command(BaseModel):
    command: str


def shell_tool(workdir: Path, ran: list[str] | None = None):
    """``bash``: runs ``command`` with ``bash -c`` in ``workdir`` (records it in ``ran``)."""

    def execute(inp: Command, ctx) -> dict:
        if ran is not None:
            ran.append(inp.command)
        done = subprocess.run(
            ["bash", "-c", inp.command], cwd=workdir, capture_output=True, text=True, timeout=30, check=False
        )
        return {"exit": done.returncode, "stdout": done.stdout[-2000:], "stderr": done.stderr[-2000:]}

    return create_tool(id="bash", description="Run a shell command line", input_schema=Command, execute=execute)


def model() -> FunctionModel:
    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            n = sum(1 for m in messages if m.role == "user")
            return ModelResponse(
                tool_calls=[ToolCall(name="bash", args={"command": messages[-1].content}, id=f"sh{n}")]
            )
        return ModelResponse(text=messages[-1].content)

    return FunctionModel(fn)


def build_runtime(db: str, workdir: Path, policy: Policy | None, ran: list[str] | None = None) -> Runtime:
    agent = Agent(id="coder", model=model(), tools={"bash": shell_tool(workdir, ran)})
    return Runtime(agents={"coder": agent}, storage=open_store(db), policy=policy)


def runtime() -> Runtime:
    path = os.environ.get("WARDEN_TEST_POLICY")
    return build_runtime(
        os.environ["WARDEN_TEST_DB"], Path(os.environ["WARDEN_TEST_WORKDIR"]), Policy.load(path) if path else None
    )
