"""A scripted ConsoleBackend with fixed ids and times: for snapshot tests (stable SVGs).

Behaviour tests use the real runtime on SQLite (see conftest); this fake only
feeds the screens deterministic data.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from agent_core.chunks import Chunk, make_chunk
from agent_core.decision_context import CallContext, RunContextView, StepCall, TranscriptEntry
from agent_core.errors import ResumeDataInvalid
from tui.backend import AgentInfo, PendingCall, PendingPage, PendingRun

NOW = datetime(2026, 1, 15, 12, 0, 0, tzinfo=UTC)
FP = "sha256:3f1c9a0b7e2d4c6a8b1e0f9d7c5a3b2e1d0c9b8a7f6e5d4c3b2a1908f7e6d5c4"
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City", "minLength": 1, "description": "City to get the weather for"},
        "units": {
            "enum": ["metric", "imperial"],
            "type": "string",
            "title": "Units",
            "default": "metric",
            "description": "Temperature units",
        },
        "days": {"type": "integer", "title": "Days", "default": 1, "description": "Forecast length"},
        "alerts": {"type": "boolean", "title": "Alerts", "default": False},
    },
    "required": ["city"],
}


class FakeStream:
    def __init__(
        self, run_id: str, chunks: list[Chunk], *, status: str = "finished", hold_after: int | None = None
    ) -> None:
        self.run_id = run_id
        self.chunks = chunks
        self.status = status
        self.hold_after = hold_after

    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        return self._iter()

    async def _iter(self) -> AsyncIterator[Chunk]:
        for i, chunk in enumerate(self.chunks):
            if self.hold_after is not None and i == self.hold_after:
                await asyncio.Event().wait()  # mid-stream forever (the snapshot is taken now)
            yield chunk


def text_chunks(run_id: str, text: str) -> list[Chunk]:
    return [make_chunk("text-delta", run_id, text=w) for w in text.replace(" ", " \0").split("\0")]


def approval_call(
    run_id: str = "run-0001",
    args: dict[str, Any] | None = None,
    tool: str = "delete_record",
    path: tuple[str, ...] = ("ops",),
) -> PendingCall:
    return PendingCall(
        run_id,
        "call_0_0",
        tool,
        args if args is not None else {"record_id": "abc-123"},
        "approval",
        fingerprint=FP,
        agent_path=path,
    )


def input_call(run_id: str = "run-0002") -> PendingCall:
    return PendingCall(
        run_id,
        "call_0_0",
        "get_weather",
        {},
        "input",
        suspend_payload={"question": "Which city should I get the weather for?"},
        resume_schema=WEATHER_SCHEMA,
        agent_path=("ops",),
    )


class FakeBackend:
    store_label = "/home/demo/.local/share/warden/warden.db"

    #: no recovery or sweep to schedule (as over a server)
    maintenance = None

    def __init__(self, pending: list[PendingRun] | None = None, *, hold_after: int | None = None) -> None:
        self.pending = pending or []
        self.hold_after = hold_after
        self.calls: list[tuple[str, Any]] = []
        self.contexts: dict[str, RunContextView] = {}

    def list_agents(self) -> list[AgentInfo]:
        return [AgentInfo("ops", "Ops agent", "demo", True), AgentInfo("supervisor", "Supervisor", "demo", True)]

    async def start_run(self, agent_id: str, prompt: str, *, thread_id=None, resource_id=None) -> FakeStream:
        self.calls.append(("start", prompt))
        rid = "run-0001"
        chunks = [make_chunk("start", rid, agent_id=agent_id), make_chunk("step-start", rid, step=0)]
        chunks += text_chunks(rid, "I will delete record abc-123 after you approve it. Streaming words one by one ")
        chunks.append(
            make_chunk(
                "tool-call", rid, tool_call_id="call_0_0", tool_name="delete_record", args={"record_id": "abc-123"}
            )
        )
        chunks.append(
            make_chunk(
                "tool-call-approval",
                rid,
                tool_call_id="call_0_0",
                tool_name="delete_record",
                args={"record_id": "abc-123"},
                fingerprint=FP,
                agent_path=["ops"],
            )
        )
        return FakeStream(rid, chunks, status="suspended", hold_after=self.hold_after)

    async def approve(self, run_id, tool_call_id, fingerprint, *, args=None) -> FakeStream:
        self.calls.append(("approve", (run_id, tool_call_id, fingerprint)) if args is None else ("edit", args))
        return FakeStream(run_id, [make_chunk("finish", run_id, finish_reason="stop")])

    def grants_allowed(self, tool_name: str) -> bool:
        return True

    def command_argument(self, tool_name: str) -> str | None:
        return getattr(self, "shell_tools", {}).get(tool_name)

    async def grant(self, tool_name: str, spec: Any) -> Any:
        self.calls.append(("grant", (tool_name, spec)))
        return SimpleNamespace(id="grant_0001")

    async def list_grants(self) -> list[Any]:
        return []

    async def revoke_grant(self, grant_id: str) -> None:
        self.calls.append(("revoke", grant_id))

    async def decline(self, run_id, tool_call_id, reason) -> FakeStream:
        self.calls.append(("decline", (run_id, tool_call_id, reason)))
        return FakeStream(run_id, [make_chunk("finish", run_id, finish_reason="stop")])

    async def resume(self, run_id, tool_call_id, data) -> FakeStream:
        self.calls.append(("resume", (run_id, tool_call_id, data)))
        if not data.get("city"):
            raise ResumeDataInvalid(
                "resume data for get_weather is invalid",
                errors=[{"loc": ("city",), "msg": "Field required", "type": "missing"}],
            )
        return FakeStream(run_id, [make_chunk("finish", run_id, finish_reason="stop")])

    async def list_pending(
        self, *, page=0, per_page=50, agent_id=None, thread_id=None, resource_id=None, query=None, with_counts=False
    ):
        runs = self.pending[page * per_page : (page + 1) * per_page]
        counts = None
        if with_counts:
            kinds = [c.kind for r in self.pending for c in r.calls]
            counts = {"approval": kinds.count("approval"), "input": kinds.count("input")}
        return PendingPage(runs, len(self.pending), page, per_page, counts)

    async def get_run(self, run_id: str) -> PendingRun:
        return next(r for r in self.pending if r.run_id == run_id)

    async def run_context(self, run_id: str) -> RunContextView:
        self.calls.append(("context", run_id))
        return self.contexts.get(run_id) or sample_context(run_id)

    async def aclose(self) -> None:
        pass


def sample_context(run_id: str, *, of: int = 2) -> RunContextView:
    """A fixed context: the user's request, the model's text, a tool description, call 1 of ``of``."""
    steps = [
        StepCall(
            tool_call_id="call_0_0",
            tool_name="delete_record",
            args={"record_id": "abc-123"},
            state="waiting for approval",
        ),
        StepCall(tool_call_id="call_0_1", tool_name="lookup_order", args={"order_id": "A-7"}, state="done"),
    ][:of]
    ctx = CallContext(
        run_id=run_id,
        tool_call_id="call_0_0",
        tool_name="delete_record",
        agent_path=["ops"],
        thread_id="thread-ops-1",
        resource_id="customer-42",
        request="Please delete record abc-123, it is a duplicate of abc-122.",
        model_text="I will delete record abc-123 after you approve it.",
        tool_description="Delete a record by ID (cannot be undone)",
        position=1,
        of=of,
        step_calls=steps,
        pending_since=NOW.timestamp() - 125,
    )
    transcript = [
        TranscriptEntry(role="user", text=ctx.request or ""),
        TranscriptEntry(
            role="assistant",
            text=ctx.model_text,
            tool_calls=[{"id": "call_0_0", "name": "delete_record", "args": {"record_id": "abc-123"}}],
            agent_path=["ops"],
        ),
    ]
    return RunContextView(run_id, {"call_0_0": ctx}, transcript, [])


def sample_pending() -> list[PendingRun]:
    rows = [
        ("run-7f3a9c01", "ops", "thread-ops-1", approval_call("run-7f3a9c01"), 42),
        (
            "run-1b2c3d02",
            "ops",
            None,
            PendingCall(
                "run-1b2c3d02",
                "call_0_0",
                "issue_refund",
                {"order_id": "ord-1042", "amount": 250},
                "approval",
                fingerprint="sha256:9a8b7c6d5e4f" + "0" * 52,
                agent_path=("ops",),
            ),
            300,
        ),
        ("run-5e6f7a03", "ops", "thread-ops-2", input_call("run-5e6f7a03"), 3900),
        (
            "run-9d8c7b04",
            "supervisor",
            "thread-sup",
            PendingCall(
                "run-9d8c7b04",
                "call_1_0",
                "find_user",
                {"user_id": "12345"},
                "approval",
                fingerprint="sha256:1234abcd5678" + "f" * 52,
                agent_path=("supervisor", "data-agent"),
            ),
            90000,
        ),
    ]
    return [
        PendingRun(rid, agent, thread, None, NOW - timedelta(seconds=age), (call,))
        for rid, agent, thread, call, age in rows
    ]
