"""What the three test apps share: the runtime around their hosted agent, and the ``approve`` script.

Environment: ADAPTER_DB (store path), ADAPTER_EXEC (execution log), ADAPTER_LEASE (seconds),
ADAPTER_HANG=tool (the tool hangs after recording its run, so a test can kill -9 the process), or
ADAPTER_HANG=resume (the process stalls after a decision, before the framework is resumed).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from agent_core import Policy, Runtime
from agent_core.adapters.hosted import FrameworkAgent
from storage import SqliteStore
from tests.helpers import ExecLog


def exec_log() -> ExecLog:
    return ExecLog(os.environ["ADAPTER_EXEC"])


def hang() -> str:
    return os.environ.get("ADAPTER_HANG", "")


class _StalledStore(SqliteStore):
    """ADAPTER_HANG=resume: the decision is durable, then the process stalls before the started mark
    (before the framework is resumed), so a test can kill -9 it between the decision and the resume."""

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        exec_log().record("stalled", {"tool_call_id": tool_call_id})
        await asyncio.sleep(600)
        return await super().mark_started(run_id, tool_call_id, owner)


def hosting(agent: FrameworkAgent, runtime_class: type[Runtime] = Runtime, *, policy: Policy | None = None) -> Runtime:
    """``agent`` as ``records`` on the store ADAPTER_DB names; ``policy``: the runtime's (``--app`` builds
    without one: a run started elsewhere is decided under the policy it stored)."""
    return runtime_class(
        agents={"records": agent},
        storage=(_StalledStore if hang() == "resume" else SqliteStore)(os.environ["ADAPTER_DB"]),
        lease_seconds=float(os.environ.get("ADAPTER_LEASE", "30")),
        policy=policy,
    )


def script(build: Callable[[], Runtime], argv: list[str]) -> None:
    """``python -m tests.adapters.<app> approve RUN``: approve the run's latest call as carol, and wait."""

    async def approve(run_id: str) -> None:
        async with build() as runtime:
            await (await runtime.approve_tool_call(run_id=run_id, actor="carol")).wait()

    if argv[1:2] == ["approve"]:
        asyncio.run(approve(argv[2]))
