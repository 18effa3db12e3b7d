"""Warden's runtime: agents, tools, approval before execution, suspension during it."""

from agent_core.agent import Agent
from agent_core.chunks import Chunk
from agent_core.engine import ToolCallInfo
from agent_core.errors import (
    AgentNotFound,
    AlreadyDecided,
    AmbiguousToolCall,
    ApprovalExpired,
    CorruptSnapshot,
    FingerprintMismatch,
    GrantNotAllowed,
    GrantNotFound,
    InvalidRequest,
    ModelError,
    ProviderConfigError,
    ResumeDataInvalid,
    SnapshotNotFound,
    StructuredOutputInvalid,
    SuspendPayloadInvalid,
    ToolArgsInvalid,
    ToolCallNotSuspended,
    ToolOutputNotSerializable,
    WardenError,
    WrongDecisionKind,
)
from agent_core.fingerprint import fingerprint
from agent_core.hooks import ToolHookCall
from agent_core.mcp import mcp_tools
from agent_core.memory import Memory
from agent_core.runtime import Runtime
from agent_core.stream import AgentStream, GenerateResult
from agent_core.tools import Tool, ToolContext, ToolWriter, create_tool, tool
from agent_core.views import Grant, PendingToolCall, SuspendedRun, SuspendedRunList

__all__ = [
    "Agent",
    "AgentNotFound",
    "AgentStream",
    "AlreadyDecided",
    "AmbiguousToolCall",
    "ApprovalExpired",
    "Chunk",
    "CorruptSnapshot",
    "FingerprintMismatch",
    "GenerateResult",
    "Grant",
    "GrantNotAllowed",
    "GrantNotFound",
    "InvalidRequest",
    "Memory",
    "ModelError",
    "PendingToolCall",
    "ProviderConfigError",
    "ResumeDataInvalid",
    "Runtime",
    "SnapshotNotFound",
    "StructuredOutputInvalid",
    "SuspendPayloadInvalid",
    "SuspendedRun",
    "SuspendedRunList",
    "Tool",
    "ToolArgsInvalid",
    "ToolCallInfo",
    "ToolCallNotSuspended",
    "ToolContext",
    "ToolHookCall",
    "ToolOutputNotSerializable",
    "ToolWriter",
    "WardenError",
    "WrongDecisionKind",
    "create_tool",
    "fingerprint",
    "mcp_tools",
    "tool",
]
