"""``configure_from_env``: an SDK only when ``OTEL_*`` asks for one and the application set none."""

from __future__ import annotations

import sys

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_core import Agent, telemetry
from agent_core.telemetry_setup import TelemetrySetupError, configure_from_env, flush, requested_exporters
from tests.helpers import drain, script
from tests.telemetry.conftest import Otel


def test_nothing_asked_nothing_installed(no_sdk: None) -> None:
    assert requested_exporters({}) == ([], [])
    assert configure_from_env({"OTEL_SERVICE_NAME": "x"}) is False
    assert telemetry.provider_set() is False


def test_an_endpoint_asks_for_otlp_and_the_sdk_disabled_wins() -> None:
    assert requested_exporters({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}) == (["otlp"], ["otlp"])
    assert requested_exporters({"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}) == (
        ["console"],
        [],
    )
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
    assert requested_exporters(env) == ([], [])


def test_an_unknown_exporter_is_a_typed_error() -> None:
    with pytest.raises(TelemetrySetupError) as info:
        requested_exporters({"OTEL_TRACES_EXPORTER": "zipkin"})
    assert info.value.code == "TELEMETRY_SETUP_FAILED"
    assert "zipkin" in info.value.message


def test_the_applications_provider_is_kept(otel: Otel) -> None:
    mine = trace.get_tracer_provider()
    assert configure_from_env({"OTEL_TRACES_EXPORTER": "console"}) is False
    assert trace.get_tracer_provider() is mine


async def test_the_installed_sdk_traces_warden_runs(no_sdk: None) -> None:
    assert configure_from_env({"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}) is True
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider) and telemetry.active() is True
    assert provider.resource.attributes["service.name"] == "warden"
    seen = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(seen))
    agent = Agent(id="ops", model=script("hello"))
    await drain(await agent.stream("hi"))
    assert sorted(s.name for s in seen.get_finished_spans()) == ["chat function", "invoke_agent ops"]
    flush()


def test_an_app_that_sets_its_own_provider_keeps_it(no_sdk: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--app`` is imported before ``OTEL_*`` is read (serve, the console, ``warden runs``)."""
    from warden_demo.runtime_choice import Settings, runtime_and_store_label

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.delitem(sys.modules, "tests.apps.otel_own_provider", raising=False)
    runtime, _ = runtime_and_store_label(Settings(app="tests.apps.otel_own_provider:runtime"))
    from tests.apps import otel_own_provider

    assert runtime is otel_own_provider.runtime
    assert trace.get_tracer_provider() is otel_own_provider.provider


def test_a_bad_exporter_name_is_one_line_before_any_runtime(no_sdk: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from warden_demo.runtime_choice import CliError, Settings, demo_runtime_builder

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "jaeger")
    with pytest.raises(CliError) as info:
        demo_runtime_builder(Settings())
    assert str(info.value).startswith("TELEMETRY_SETUP_FAILED: OTEL_TRACES_EXPORTER='jaeger'")
    assert telemetry.provider_set() is False
