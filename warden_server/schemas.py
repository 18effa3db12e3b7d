"""Request bodies and query strings of the HTTP API, as pydantic models.

Field names are the camelCase ones Mastra's server and ``@mastra/client-js``
send. Unknown fields are ignored (Mastra clients send ``requestContext``,
``format``, ``clientTools`` ... that Warden has no use for), but a known field
of the wrong type is a 422.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictBool, StringConstraints, model_validator

from agent_core.limits import MAX_APPROVAL_TIMEOUT
from agent_core.options import ListFilters, ListKind, SentRunOptions, Sort

#: A thread, resource, run or tool-call id: a non-empty string.
Id = Annotated[str, StringConstraints(min_length=1)]

MAX_PAGE = 1_000_000
"""Highest ``page`` of a listing (``page * perPage`` must fit the store's integers)."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ThreadRef(_Body):
    """Mastra's thread object: ``{"id": ..., ...}`` (other keys ignored)."""

    id: Id


class MemoryRef(_Body):
    """Mastra's ``memory`` option: ``thread`` is an id or ``{"id": ...}``."""

    thread: Id | ThreadRef | None = None
    resource: Id | None = None

    @property
    def thread_id(self) -> str | None:
        if isinstance(self.thread, ThreadRef):
            return self.thread.id
        return self.thread


class ContentPart(_Body):
    type: str = "text"
    text: str | None = None


class MessageIn(_Body):
    role: str = Field(pattern="^(system|user|assistant|tool)$")
    content: str | list[ContentPart] = ""

    def to_dict(self) -> dict[str, str]:
        if isinstance(self.content, str):
            text = self.content
        else:
            text = "".join(p.text or "" for p in self.content if p.type == "text")
        return {"role": self.role, "content": text}


class _ThreadScoped(_Body):
    memory: MemoryRef | None = None
    thread_id: Id | None = Field(default=None, alias="threadId")
    resource_id: Id | None = Field(default=None, alias="resourceId")

    def resolved_thread_id(self) -> str | None:
        if self.thread_id is not None:
            return self.thread_id
        return self.memory.thread_id if self.memory else None

    def resolved_resource_id(self) -> str | None:
        if self.resource_id is not None:
            return self.resource_id
        return self.memory.resource if self.memory else None


class StreamBody(_ThreadScoped):
    """``POST /api/agents/{agentId}/stream`` and ``/generate``."""

    messages: str | list[MessageIn | str] | MessageIn
    require_tool_approval: StrictBool | None = Field(default=None, alias="requireToolApproval")
    max_steps: int | None = Field(default=None, alias="maxSteps", ge=1, le=1000)
    request_context: dict[str, Any] | None = Field(default=None, alias="requestContext")
    approval_timeout: float | None = Field(default=None, alias="approvalTimeout", gt=0, le=MAX_APPROVAL_TIMEOUT)
    #: who starts the run (``requested_by``); with tokens it must be the token's name.
    actor: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None

    def options(self) -> SentRunOptions:
        """The run's options, as ``Agent.stream`` takes them (only those the body sets)."""
        options = SentRunOptions(
            thread_id=self.resolved_thread_id(),
            resource_id=self.resolved_resource_id(),
            require_tool_approval=self.require_tool_approval,
            max_steps=self.max_steps,
            request_context=self.request_context,
        )
        if self.approval_timeout is not None:
            options["approval_timeout"] = self.approval_timeout
        if self.actor is not None:
            options["actor"] = self.actor
        return options

    def messages_arg(self) -> str | list[dict[str, str]]:
        msgs = self.messages
        if isinstance(msgs, str):
            return msgs
        if isinstance(msgs, MessageIn):
            return [msgs.to_dict()]
        return [{"role": "user", "content": m} if isinstance(m, str) else m.to_dict() for m in msgs]


class _Decision(_Body):
    run_id: Id = Field(alias="runId")
    tool_call_id: Id | None = Field(default=None, alias="toolCallId")


class ApproveBody(_Decision):
    """``approve-tool-call`` and ``approve-tool-call-generate``; ``args``: run with these (edited) arguments."""

    fingerprint: str | None = None
    args: dict[str, Any] | None = None


class GrantBody(_Body):
    """``POST /api/grants``: ``expiresIn`` seconds (default 3600; ``null``: until revoked)."""

    tool_name: str = Field(alias="toolName", min_length=1, max_length=256)
    scope: Literal["run", "thread", "resource", "agent"]
    scope_id: str | None = Field(default=None, alias="scopeId", max_length=256)
    agent_id: str | None = Field(default=None, alias="agentId", max_length=256)
    args_match: dict[str, Any] | None = Field(default=None, alias="argsMatch")
    expires_in: float | None = Field(default=3600, alias="expiresIn", gt=0)
    #: a shell or SQL tool's grant: ``{"argument", "prefixes"}`` or ``{"argument", "statements", "dialect"}``
    command_match: dict[str, Any] | None = Field(default=None, alias="commandMatch")


class DeclineBody(_Decision):
    """``decline-tool-call`` and ``decline-tool-call-generate``."""

    reason: str | None = None


class ResumeBody(_Decision):
    """``resume-stream`` and ``resume-generate``."""

    resume_data: dict[str, Any] = Field(alias="resumeData")


# ``threadId``, or ``memory.thread``, is required: said in the OpenAPI document as the server checks it.
_NEEDS_THREAD: dict[str, Any] = {
    "anyOf": [
        {"required": ["threadId"], "properties": {"threadId": {"type": "string"}}},
        {
            "required": ["memory"],
            "properties": {
                "memory": {
                    "type": "object",
                    "required": ["thread"],
                    "properties": {"thread": {"not": {"type": "null"}}},
                }
            },
        },
    ]
}


class SendToolApprovalBody(_ThreadScoped):
    """``send-tool-approval``: decide the pending call of a thread."""

    model_config = ConfigDict(json_schema_extra=_NEEDS_THREAD)

    approved: StrictBool
    run_id: Id | None = Field(default=None, alias="runId")
    tool_call_id: Id | None = Field(default=None, alias="toolCallId")
    resume_data: dict[str, Any] | None = Field(default=None, alias="resumeData")
    reason: str | None = None

    @model_validator(mode="after")
    def _needs_thread(self) -> SendToolApprovalBody:
        if not self.resolved_thread_id():
            raise ValueError("threadId (or memory.thread) is required")
        return self


class SuspendedRunsQuery(_Body):
    """``GET /api/agents/{agentId}/suspended-runs`` query string."""

    thread_id: Id | None = Field(default=None, alias="threadId")
    resource_id: Id | None = Field(default=None, alias="resourceId")
    page: int = Field(default=0, ge=0, le=MAX_PAGE)
    per_page: int = Field(default=50, alias="perPage", ge=1, le=1000)
    #: words that must all appear in the agent id, thread id, or a pending call's tool name or arguments.
    q: str | None = Field(default=None, max_length=500)
    tool_name: Id | None = Field(default=None, alias="toolName")
    kind: ListKind | None = None
    #: age (newest first), agent, or tool; each newest first within its group.
    sort: Sort = "age"
    #: add ``counts``: pending calls per kind under the same filters.
    with_counts: bool = Field(default=False, alias="withCounts")

    def filters(self) -> ListFilters:
        """The listing's keyword arguments (``Runtime.list_suspended_runs``)."""
        return ListFilters(
            thread_id=self.thread_id,
            resource_id=self.resource_id,
            page=self.page,
            per_page=self.per_page,
            query=self.q,
            tool_name=self.tool_name,
            kind=self.kind,
            sort=self.sort,
            with_counts=self.with_counts,
        )


class AllSuspendedRunsQuery(SuspendedRunsQuery):
    """``GET /api/suspended-runs``: every agent's pending runs, or one agent's with ``agentId``."""

    agent_id: Id | None = Field(default=None, alias="agentId")


class AuditQuery(_Body):
    """``GET /api/audit``: entries in order; ``after`` is the ``seq`` to continue from (``nextAfter``)."""

    run_id: Id | None = Field(default=None, alias="runId")
    agent_id: Id | None = Field(default=None, alias="agentId")
    actor: Id | None = None
    decision: Id | None = None
    since: AwareDatetime | None = None
    after: int = Field(default=0, ge=0, le=2**53)
    limit: int = Field(default=100, ge=1, le=1000)


BODY_MODELS: dict[str, type[BaseModel]] = {
    "StreamBody": StreamBody,
    "ApproveBody": ApproveBody,
    "DeclineBody": DeclineBody,
    "ResumeBody": ResumeBody,
    "SendToolApprovalBody": SendToolApprovalBody,
}
