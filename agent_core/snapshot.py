"""The resumable state of a run, what is stored while it waits for a decision, and queries over it.

A run is a tree: a delegation call (``agent-<key>``) holds the sub-agent's
run as ``child``, so nested runs of any depth live in the top run's one
snapshot and are saved atomically with it. ``format`` versions the JSON.
The models and the call state machine are in ``agent_core.call_state``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from agent_core.call_state import CallState, RunState

__all__ = ["Leaf", "find_call", "pending_leaves", "used_ids"]


@dataclass(slots=True)
class Leaf:
    """A call waiting for an operator, wherever it sits in the run tree. (A plain dataclass: built on
    every suspension from values already in the state, nothing to validate.)"""

    call: CallState
    agent_path: list[str]
    kind: Literal["approval", "suspend"]


def pending_leaves(state: RunState) -> list[Leaf]:
    """Every call waiting for a decision, oldest first (the last one is the latest)."""
    leaves = list(_walk_leaves(state))
    leaves.sort(key=lambda leaf: (leaf.call.pending_since, leaf.call.seq))
    return leaves


def _walk_leaves(state: RunState) -> Iterator[Leaf]:
    for call in state.calls:
        if call.status == "awaiting_approval":
            yield Leaf(call=call, agent_path=list(state.agent_path), kind="approval")
        elif call.status == "suspended":
            yield Leaf(call=call, agent_path=list(state.agent_path), kind="suspend")
        elif call.status == "delegated" and call.child is not None:
            yield from _walk_leaves(call.child)


def find_call(state: RunState, tool_call_id: str) -> tuple[RunState, CallState] | None:
    for call in state.calls:
        if call.id == tool_call_id:
            return state, call
        if call.child is not None:
            found = find_call(call.child, tool_call_id)
            if found:
                return found
    return None


def used_ids(state: RunState, into: set[str] | None = None) -> set[str]:
    """All tool-call ids of the run tree, so new ids stay unique within the top run."""
    ids = into if into is not None else set()
    for m in state.messages:
        for tc in m.tool_calls:
            if tc.id:
                ids.add(tc.id)
    for call in state.calls:
        ids.add(call.id)
        if call.child is not None:
            used_ids(call.child, ids)
    return ids
