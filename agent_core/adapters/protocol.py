"""What Warden and a framework adapter say to each other: calls the framework stopped on, Warden's
verdicts on them, what the framework did meanwhile, and the ``Framework`` protocol itself.

Plain data, no framework import: each ``for_*`` module translates its framework to these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agent_core.errors import WardenError
from agent_core.json_input import input_model
from agent_core.models import Message
from agent_core.tools import Tool


@dataclass
class Pending:
    """A tool call the framework stopped on; ``id`` is the framework's own tool-call id."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass
class Verdict:
    """Warden's decision on a ``Pending`` call, in the framework's terms.

    ``args``: the operator's edited arguments (None: as the model made the call); ``message``: what the
    model is told when the call does not run (a decline's reason, an expiry)."""

    approved: bool
    args: dict[str, Any] | None = None
    message: str | None = None


@dataclass
class Seen:
    """Something the framework did while it ran: a tool call it made, a tool result, or text."""

    kind: Literal["tool-call", "tool-result", "text"]
    id: str = ""
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    is_error: bool = False
    text: str = ""


@dataclass
class Outcome:
    """Where a framework run stopped: its serialised ``state`` (stored in Warden's snapshot), what it
    did, the calls it waits on (none: it finished with ``text``)."""

    state: Any
    events: list[Seen] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    text: str = ""


class Gate(Protocol):
    """Warden's own approval question for a call the framework did not mark (policy, request flag)."""

    @property
    def asks(self) -> bool:
        """False when the answer is always "no" (no request policy, no agent default): no hook needed."""
        ...

    async def requires_approval(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool: ...

    def requires_approval_now(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        """The same question for a hook that cannot await (an async policy function means "ask")."""
        ...


class Framework(Protocol):
    """One framework's agent, driven by Warden: start a run, resume it with verdicts."""

    #: ``"pydantic-ai"``, ``"openai-agents"``, ``"langgraph"``: shown as the agent's model id.
    kind: str

    @property
    def tools(self) -> Mapping[str, FrameworkTool]: ...

    async def start(self, messages: list[Message], gate: Gate, *, run_id: str, thread_id: str | None) -> Outcome: ...

    async def resume(self, state: Any, verdicts: dict[str, Verdict], gate: Gate, *, run_id: str) -> Outcome: ...


class FrameworkTool(Tool):
    """A framework's tool as Warden sees it: its name, description and input schema (to validate an
    operator's edit and match grants). It runs inside its framework, never through Warden's engine.

    ``editable=False``: the framework cannot run edited arguments (``EditNotSupported``)."""

    def __init__(
        self,
        name: str,
        description: str,
        schema: Mapping[str, Any] | None,
        *,
        require_approval: bool | None,
        editable: bool = True,
    ) -> None:
        async def inside_the_framework(_inp: Any, _ctx: Any) -> Any:
            raise WardenError(f"tool {name!r} runs inside its framework, not in Warden's engine")

        super().__init__(
            id=name,
            description=description,
            input_schema=input_model(name, schema or {"type": "object"}, label="tool"),
            execute=inside_the_framework,
            require_approval=require_approval,
        )
        self.editable = editable
