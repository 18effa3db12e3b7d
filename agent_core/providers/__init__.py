"""Model providers: turn ``"provider/model"`` strings into ``LanguageModel`` objects.

``openai/<model>`` (any OpenAI-compatible server), ``ollama/<model>`` (a local
Ollama) and ``anthropic/<model>``; or build ``OpenAIModel`` / ``AnthropicModel``
directly with explicit settings. See ``docs/providers.md``.
"""

from __future__ import annotations

from agent_core.providers.anthropic import AnthropicModel
from agent_core.providers.http import HTTPModelError, RetryPolicy
from agent_core.providers.openai import OpenAIModel
from agent_core.providers.router import register_provider, resolve_model
from agent_core.providers.schema import strip_strict_nulls, to_strict_schema

__all__ = [
    "AnthropicModel",
    "HTTPModelError",
    "OpenAIModel",
    "RetryPolicy",
    "register_provider",
    "resolve_model",
    "strip_strict_nulls",
    "to_strict_schema",
]
