"""Handover: runs whose agent lives in another process (an MCP proxy's), decided here, applied there.

A run started with ``request_context={HANDOVER_KEY: True}`` may be decided by any process on
the same store: the decision is recorded here (compare-and-set, audit) under a lease owned by
``HANDOVER`` + a token, and the process that hosts the agent adopts that lease and applies it
(``Decisions.adopt``). The run declares its tools (``HANDOVER_TOOLS_KEY``) so edited arguments
can be validated, and grants created, where the tools do not live.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_core.json_input import input_model
from storage.records import RunRow

#: Lease owners of decisions recorded by a process that does not host the run's agent (``RemoteAgent``):
#: the process that hosts it adopts the lease and applies the decision (``Decisions.adopt``).
HANDOVER = "handover:"
#: ``request_context`` key of runs whose decisions other processes may record for their host to apply.
HANDOVER_KEY = "warden_handover"
#: ``request_context`` key of a handover run: the definitions of the tools its host may run there,
#: ``{name: {"input_schema": <JSON Schema>, "allow_grants": bool}}``, so any process can validate
#: edited arguments and create grants for them (``declare_tools``, ``handover_tools``).
HANDOVER_TOOLS_KEY = "warden_handover_tools"


class StoredTool:
    """A tool of a handover run's host, as the run declared it: its input schema (to validate edited
    arguments) and whether grants may approve it. It never runs here."""

    resume_schema = None
    idempotent = False

    def __init__(self, name: str, input_schema: Mapping[str, Any], allow_grants: bool = True) -> None:
        self.id = name
        self.input_schema = input_model(name, input_schema)
        self.allow_grants = allow_grants


def declare_tools(tools: Mapping[str, Any]) -> dict[str, Any]:
    """The ``HANDOVER_TOOLS_KEY`` entry for these (hosted) tools, to store with a handover run."""
    return {
        name: {
            "input_schema": tool.input_schema.model_json_schema(),
            "allow_grants": bool(getattr(tool, "allow_grants", True)),
        }
        for name, tool in tools.items()
    }


def asks_for_handover(snapshot: str) -> bool:
    """Was the run started with ``request_context={HANDOVER_KEY: True}``?"""
    try:
        return bool(json.loads(snapshot).get("request_context", {}).get(HANDOVER_KEY))
    except (ValueError, AttributeError):
        return False


def handover_tools(snapshot: str) -> dict[str, StoredTool] | None:
    """The tools a run's host declared, when the run asks for handover; None when it does not.

    A malformed declaration counts as no tool (nothing can be validated against it)."""
    try:
        context = json.loads(snapshot).get("request_context", {})
        if not context.get(HANDOVER_KEY):
            return None
        declared = context.get(HANDOVER_TOOLS_KEY) or {}
    except (ValueError, AttributeError):
        return None
    tools: dict[str, StoredTool] = {}
    if isinstance(declared, dict):
        for name, spec in declared.items():
            if isinstance(spec, dict) and isinstance(spec.get("input_schema", {}), dict):
                try:
                    tools[name] = StoredTool(
                        name, spec.get("input_schema") or {}, spec.get("allow_grants", True) is not False
                    )
                except Exception:  # an unusable declaration: this tool cannot be validated here
                    continue
    return tools


class RemoteAgent:
    """An agent this process does not host, whose runs ask for handover (``HANDOVER_KEY``), e.g. the
    MCP proxy's: a decision is recorded here (compare-and-set, audit) and applied by its host.

    ``tools``: those the run declared (``handover_tools``), so edited arguments are validated here."""

    remote = True
    delegates: Mapping[str, Any] = {}

    def __init__(self, agent_id: str, tools: Mapping[str, Any] | None = None) -> None:
        self.id = agent_id
        self.tools: Mapping[str, Any] = dict(tools or {})

    @classmethod
    def of_run(cls, run: RunRow) -> RemoteAgent | None:
        """The stand-in for a run's agent when the run asks for handover, else None."""
        tools = handover_tools(run.snapshot)
        return None if tools is None else cls(run.agent_id, tools)

    def descendant(self, agent_path: Any) -> RemoteAgent | None:
        return self if list(agent_path or []) == [self.id] else None
