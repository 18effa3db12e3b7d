"""``provider/model`` strings and the environment."""

from __future__ import annotations

import pytest

from agent_core.errors import ProviderConfigError
from agent_core.models import FunctionModel, LanguageModel
from agent_core.providers import AnthropicModel, OpenAIModel, register_provider, resolve_model
from agent_core.providers.router import _PROVIDERS


def test_openai_uses_key_and_default_base_url() -> None:
    model = resolve_model("openai/gpt-5-mini", env={"OPENAI_API_KEY": "sk-1"})
    assert isinstance(model, OpenAIModel)
    assert (model.model, model.model_id) == ("gpt-5-mini", "openai/gpt-5-mini")
    assert model.base_url == "https://api.openai.com/v1" and model.api_key == "sk-1"
    assert model.strict


def test_openai_base_url_override_needs_no_key() -> None:
    model = resolve_model("openai/qwen2.5:7b", env={"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"})
    assert isinstance(model, OpenAIModel)
    assert model.base_url == "http://127.0.0.1:8000/v1" and model.api_key is None


def test_missing_openai_key_names_the_variable() -> None:
    with pytest.raises(ProviderConfigError, match="set OPENAI_API_KEY") as info:
        resolve_model("openai/gpt-5-mini", env={})
    assert info.value.code == "PROVIDER_CONFIG_ERROR"


def test_ollama_defaults_to_localhost_without_key() -> None:
    model = resolve_model("ollama/llama3.2", env={})
    assert isinstance(model, OpenAIModel)
    assert model.base_url == "http://localhost:11434/v1" and model.api_key is None
    assert model.model_id == "ollama/llama3.2" and model.model == "llama3.2"
    other = resolve_model("ollama/llama3.2", env={"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"})
    assert isinstance(other, OpenAIModel) and other.base_url == "http://gpu-box:11434/v1"


def test_anthropic_key_and_base_url() -> None:
    model = resolve_model("anthropic/claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert isinstance(model, AnthropicModel)
    assert model.base_url == "https://api.anthropic.com" and model.api_key == "sk-ant"
    proxied = resolve_model("anthropic/claude-sonnet-4-5", env={"ANTHROPIC_BASE_URL": "http://proxy:9000"})
    assert isinstance(proxied, AnthropicModel) and proxied.base_url == "http://proxy:9000"
    with pytest.raises(ProviderConfigError, match="set ANTHROPIC_API_KEY"):
        resolve_model("anthropic/claude-sonnet-4-5", env={})


@pytest.mark.parametrize("spec", ["gpt-5-mini", "openai/", "/gpt", ""])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(ProviderConfigError, match="'provider/model'"):
        resolve_model(spec, env={})


def test_unknown_provider_lists_known_ones() -> None:
    expected = r"unknown model provider 'mistral'.*anthropic, ollama, openai"
    with pytest.raises(ProviderConfigError, match=expected):
        resolve_model("mistral/large", env={})


def test_model_objects_pass_through_and_custom_providers_register() -> None:
    fm = FunctionModel(lambda m, i: "hi")
    assert resolve_model(fm) is fm

    def factory(name: str, env: object) -> LanguageModel:
        return FunctionModel(lambda m, i: name, model_id=f"echo/{name}")

    register_provider("echo", factory)
    try:
        assert resolve_model("echo/abc", env={}).model_id == "echo/abc"
    finally:
        _PROVIDERS.pop("echo")


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = resolve_model("openai/gpt-5-mini")
    assert isinstance(model, OpenAIModel) and model.api_key == "sk-env"
