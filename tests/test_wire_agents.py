"""``wire.encode_agents``: each agent's ``provider`` is the part of its model id before ``/``."""

from __future__ import annotations

from agent_core import Agent, wire
from agent_core.models import FunctionModel, ModelResponse


def _model(model_id: str) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(text="hi"), model_id=model_id)


def test_provider_is_the_model_ids_prefix():
    agents = {
        "a": Agent(id="a", name="A", instructions="", model=_model("openai/gpt-4o-mini")),
        "b": Agent(id="b", name="B", instructions="", model=_model("demo")),
    }
    encoded = wire.encode_agents(agents)
    assert encoded["a"]["provider"] == "openai" and encoded["a"]["modelId"] == "openai/gpt-4o-mini"
    assert encoded["b"]["provider"] == "demo"  # an id without "/" is its own provider


def test_provider_of_a_missing_model_is_unknown():
    assert wire.model_provider(None) == "unknown"
    assert wire.model_provider("") == "unknown"
    assert wire.model_provider("anthropic/claude/3") == "anthropic"
