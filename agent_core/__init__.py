"""Warden's runtime: agents, tools, approval before execution, suspension during it."""

from agent_core.agent import Agent
from agent_core.chunks import Chunk
from agent_core.engine import ToolCallInfo
from agent_core.errors import (
    AgentNotFound,
    AlreadyDecided,
    AmbiguousToolCall,
    CorruptSnapshot,
    FingerprintMismatch,
    InvalidRequest,
    ModelError,
    ProviderConfigError,
    ResumeDataInvalid,
    SnapshotNotFound,
    StructuredOutputInvalid,
    SuspendPayloadInvalid,
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
from agent_core.views import PendingToolCall, SuspendedRun, SuspendedRunList

__all__ = [
    "Agent",
    "AgentNotFound",
    "AgentStream",
    "AlreadyDecided",
    "AmbiguousToolCall",
    "Chunk",
    "CorruptSnapshot",
    "FingerprintMismatch",
    "GenerateResult",
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
