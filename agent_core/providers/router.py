"""The model router: ``"provider/model"`` strings to provider objects.

Settings come from the environment so that an agent defined in code as
``model="openai/gpt-5-mini"`` runs against whatever server the operator points
it at. Missing settings fail here, when the agent is built, with a message
naming the variable to set, rather than as an HTTP 401 mid-run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from agent_core.errors import ProviderConfigError
from agent_core.models import LanguageModel
from agent_core.providers.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicModel
from agent_core.providers.openai import DEFAULT_OPENAI_BASE_URL, OpenAIModel

__all__ = ["DEFAULT_OLLAMA_BASE_URL", "ProviderFactory", "register_provider", "resolve_model"]

DEFAULT_OLLAMA_BASE_URL = "http://localhost:11434/v1"

#: ``factory(model_name, env) -> LanguageModel``
ProviderFactory = Callable[[str, Mapping[str, str]], LanguageModel]


def _openai(model: str, env: Mapping[str, str]) -> LanguageModel:
    base_url = env.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    api_key = env.get("OPENAI_API_KEY") or None
    if api_key is None and base_url.rstrip("/") == DEFAULT_OPENAI_BASE_URL:
        raise ProviderConfigError(
            f"model 'openai/{model}' needs an API key: set OPENAI_API_KEY (or set OPENAI_BASE_URL to an "
            "OpenAI-compatible server that needs none, e.g. http://localhost:11434/v1 for Ollama)"
        )
    return OpenAIModel(model, base_url=base_url, api_key=api_key)


def _ollama(model: str, env: Mapping[str, str]) -> LanguageModel:
    base_url = env.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_BASE_URL
    return OpenAIModel(
        model, base_url=base_url, api_key=env.get("OLLAMA_API_KEY") or None, provider_name="ollama", strict=False
    )


def _anthropic(model: str, env: Mapping[str, str]) -> LanguageModel:
    base_url = env.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_BASE_URL
    api_key = env.get("ANTHROPIC_API_KEY") or None
    if api_key is None and base_url.rstrip("/") == DEFAULT_ANTHROPIC_BASE_URL:
        raise ProviderConfigError(f"model 'anthropic/{model}' needs an API key: set ANTHROPIC_API_KEY")
    return AnthropicModel(model, base_url=base_url, api_key=api_key)


_PROVIDERS: dict[str, ProviderFactory] = {"openai": _openai, "ollama": _ollama, "anthropic": _anthropic}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``"<name>/<model>"`` strings resolve through ``factory`` (replaces a provider of that name)."""
    _PROVIDERS[name] = factory


def resolve_model(spec: str | LanguageModel, *, env: Mapping[str, str] | None = None) -> LanguageModel:
    """Return the model for ``spec``: a ``LanguageModel`` as is, or a ``provider/model`` string.

    ``env`` defaults to ``os.environ`` (tests pass their own mapping).
    """
    if isinstance(spec, LanguageModel):
        return spec
    if not isinstance(spec, str):
        raise ProviderConfigError(f"a model is a 'provider/model' string or a LanguageModel, not {spec!r}")
    known = ", ".join(sorted(_PROVIDERS))
    provider, sep, model = spec.partition("/")
    if not sep or not provider or not model:
        raise ProviderConfigError(
            f"model {spec!r} is not of the form 'provider/model' (e.g. 'openai/gpt-5-mini'); known providers: {known}"
        )
    factory = _PROVIDERS.get(provider)
    if factory is None:
        raise ProviderConfigError(f"unknown model provider {provider!r} in {spec!r}; known providers: {known}")
    return factory(model, os.environ if env is None else env)
