"""Model providers: turn ``"provider/model"`` strings into ``LanguageModel`` objects."""

from __future__ import annotations

from agent_core.errors import ProviderConfigError
from agent_core.models import LanguageModel


def resolve_model(spec: str | LanguageModel) -> LanguageModel:
    """Return the model for ``spec``: a ``LanguageModel`` as is, or a ``provider/model`` string."""
    if isinstance(spec, LanguageModel):
        return spec
    provider = spec.split("/", 1)[0] if "/" in spec else ""
    raise ProviderConfigError(
        f"no provider for model {spec!r}: providers are not available yet (provider {provider!r})"
    )
