"""Auto-resume: turn the next user message of a thread into resume data for its suspended tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from agent_core.chunks import Chunk
from agent_core.models import Message
from agent_core.snapshot import RunState

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.runtime import Runtime


async def auto_resume(runtime: Runtime, agent: Agent, state: RunState,
                      new_messages: list[Message]) -> AsyncIterator[Chunk] | None:
    """Not yet supported: the new message starts an ordinary run."""
    return None
