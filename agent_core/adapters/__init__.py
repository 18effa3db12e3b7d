"""Agents written with other frameworks, hosted by a Warden ``Runtime``.

``from_pydantic_ai``, ``from_openai_agents`` and ``from_langgraph`` wrap a
framework's agent (or compiled graph) as a hosted agent: the framework's own
approval mechanism stops the call, Warden stores the framework's serialised
state with the run and resumes it when a decision comes, in any process that
hosts the same agent id. Each framework is an optional extra and is imported
only when its adapter is called (``import agent_core`` never imports one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_core.adapters.hosted import FrameworkAgent

__all__ = ["from_langgraph", "from_openai_agents", "from_pydantic_ai"]


def from_pydantic_ai(agent: Any, *, id: str, name: str | None = None, **options: Any) -> FrameworkAgent:
    """Host a ``pydantic_ai.Agent`` (needs ``warden[pydantic-ai]``); see ``docs/frameworks.md``."""
    from agent_core.adapters.for_pydantic_ai import from_pydantic_ai as build

    return build(agent, id=id, name=name, **options)


def from_openai_agents(agent: Any, *, id: str, name: str | None = None, **options: Any) -> FrameworkAgent:
    """Host an OpenAI Agents SDK ``agents.Agent`` (needs ``warden[openai-agents]``); see ``docs/frameworks.md``."""
    from agent_core.adapters.for_openai_agents import from_openai_agents as build

    return build(agent, id=id, name=name, **options)


def from_langgraph(graph: Any, *, id: str, name: str | None = None, **options: Any) -> FrameworkAgent:
    """Host a compiled LangGraph graph with a checkpointer (needs ``warden[langgraph]``); see ``docs/frameworks.md``."""
    from agent_core.adapters.for_langgraph import from_langgraph as build

    return build(graph, id=id, name=name, **options)
