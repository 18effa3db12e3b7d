"""Warden's runtime: agents, tools, approval before execution, suspension during it.

The public names are loaded on first use (PEP 562): ``import agent_core.errors`` or
``from agent_core import wire`` does not build every pydantic model of the runtime, nor load
hashlib, json and the canonical JSON of ``fingerprint``, which keeps the console's first frame
and the headless commands quick (bench/console_stream.py).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.chunks import Chunk
    from agent_core.definition import ToolCallInfo
    from agent_core.errors import (
        ActorRequired,
        AgentNotFound,
        AlreadyDecided,
        AlreadyVoted,
        AmbiguousToolCall,
        ApprovalExpired,
        CorruptSnapshot,
        EditNotSupported,
        FingerprintMismatch,
        GrantNotAllowed,
        GrantNotFound,
        InvalidRequest,
        ModelError,
        PolicyInvalid,
        ProviderConfigError,
        ResumeDataInvalid,
        SelfApprovalNotAllowed,
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
    from agent_core.policy import Policy, PolicyDecision, PolicyRule
    from agent_core.runtime import Runtime
    from agent_core.stream import AgentStream, GenerateResult
    from agent_core.tools import Tool, ToolContext, ToolWriter, create_tool, tool
    from agent_core.views import Grant, PendingToolCall, SuspendedRun, SuspendedRunList

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Agent": "agent_core.agent",
    "Chunk": "agent_core.chunks",
    "ToolCallInfo": "agent_core.definition",
    "ActorRequired": "agent_core.errors",
    "AgentNotFound": "agent_core.errors",
    "AlreadyVoted": "agent_core.errors",
    "SelfApprovalNotAllowed": "agent_core.errors",
    "AlreadyDecided": "agent_core.errors",
    "AmbiguousToolCall": "agent_core.errors",
    "ApprovalExpired": "agent_core.errors",
    "CorruptSnapshot": "agent_core.errors",
    "FingerprintMismatch": "agent_core.errors",
    "GrantNotAllowed": "agent_core.errors",
    "GrantNotFound": "agent_core.errors",
    "InvalidRequest": "agent_core.errors",
    "ModelError": "agent_core.errors",
    "PolicyInvalid": "agent_core.errors",
    "ProviderConfigError": "agent_core.errors",
    "ResumeDataInvalid": "agent_core.errors",
    "SnapshotNotFound": "agent_core.errors",
    "StructuredOutputInvalid": "agent_core.errors",
    "SuspendPayloadInvalid": "agent_core.errors",
    "EditNotSupported": "agent_core.errors",
    "ToolArgsInvalid": "agent_core.errors",
    "ToolCallNotSuspended": "agent_core.errors",
    "ToolOutputNotSerializable": "agent_core.errors",
    "WardenError": "agent_core.errors",
    "WrongDecisionKind": "agent_core.errors",
    "fingerprint": "agent_core.fingerprint",
    "ToolHookCall": "agent_core.hooks",
    "mcp_tools": "agent_core.mcp",
    "Memory": "agent_core.memory",
    "Policy": "agent_core.policy",
    "PolicyDecision": "agent_core.policy",
    "PolicyRule": "agent_core.policy",
    "Runtime": "agent_core.runtime",
    "AgentStream": "agent_core.stream",
    "GenerateResult": "agent_core.stream",
    "Tool": "agent_core.tools",
    "ToolContext": "agent_core.tools",
    "ToolWriter": "agent_core.tools",
    "create_tool": "agent_core.tools",
    "tool": "agent_core.tools",
    "Grant": "agent_core.views",
    "PendingToolCall": "agent_core.views",
    "SuspendedRun": "agent_core.views",
    "SuspendedRunList": "agent_core.views",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:  # a submodule (``from agent_core import wire``) or a wrong name
        raise AttributeError(f"module 'agent_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


class _Package(types.ModuleType):
    """``fingerprint`` is a public function and its submodule's name: loading the submodule
    (``from agent_core.fingerprint import ...`` anywhere) sets the package's attribute to the
    module, after which ``from agent_core import fingerprint`` would give the module. This keeps
    the function there, as when it was bound at import (and costs nothing per call)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "fingerprint" and isinstance(value, types.ModuleType):
            value = value.fingerprint
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "ActorRequired",
    "Agent",
    "AgentNotFound",
    "AgentStream",
    "AlreadyDecided",
    "AlreadyVoted",
    "AmbiguousToolCall",
    "ApprovalExpired",
    "Chunk",
    "CorruptSnapshot",
    "EditNotSupported",
    "FingerprintMismatch",
    "GenerateResult",
    "Grant",
    "GrantNotAllowed",
    "GrantNotFound",
    "InvalidRequest",
    "Memory",
    "ModelError",
    "PendingToolCall",
    "Policy",
    "PolicyDecision",
    "PolicyInvalid",
    "PolicyRule",
    "ProviderConfigError",
    "ResumeDataInvalid",
    "Runtime",
    "SelfApprovalNotAllowed",
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
