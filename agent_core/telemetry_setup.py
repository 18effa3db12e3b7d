"""Configuring the OpenTelemetry SDK from the standard ``OTEL_*`` variables (``warden serve``, the console).

Only when the variables ask for it and the application has not set a provider itself: an
application that configures its own SDK keeps it. The SDK comes with ``pip install 'warden[otel]'``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent_core.errors import WardenError

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricExporter
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["TelemetrySetupError", "configure_from_env", "flush", "requested_exporters"]

#: the providers ``configure_from_env`` installed (their ``shutdown`` exports what is buffered).
_installed: list[Any] = []

_ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
_KNOWN = {"otlp", "console", "none"}


class TelemetrySetupError(WardenError):
    """``OTEL_*`` variables ask for an exporter Warden cannot set up (unknown name, SDK not installed)."""

    code = "TELEMETRY_SETUP_FAILED"


def requested_exporters(env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The trace and metric exporters ``env`` asks for (empty: telemetry stays off).

    ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` name them (comma-separated); an OTLP
    endpoint alone asks for ``otlp`` for both. ``OTEL_SDK_DISABLED=true`` turns everything off.
    """
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return [], []
    implied = "otlp" if any(env.get(name) for name in _ENDPOINTS) else "none"
    out: list[list[str]] = []
    for var in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        names = [n.strip().lower() for n in env.get(var, implied).split(",") if n.strip()]
        unknown = [n for n in names if n not in _KNOWN]
        if unknown:
            raise TelemetrySetupError(
                f"{var}={env[var]!r}: unknown exporter {unknown[0]!r} (Warden sets up otlp, console or none)"
            )
        out.append([n for n in names if n != "none"])
    return out[0], out[1]


def configure_from_env(env: Mapping[str, str] | None = None) -> bool:
    """Install a tracer and meter provider as ``OTEL_*`` asks; True when one was installed.

    Does nothing when nothing is asked, or when the application already set a provider.
    """
    from agent_core.telemetry import provider_set

    traces, metric_names = requested_exporters(os.environ if env is None else env)
    if not (traces or metric_names) or provider_set():
        return False
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TelemetrySetupError(
            f"OTEL_* variables ask for telemetry but the OpenTelemetry SDK is not installed ({exc.name}); "
            "install it with: pip install 'warden[otel]'"
        ) from None
    # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES are read by the SDK; "warden" when neither names a service.
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "warden"}))
    if traces:
        provider = TracerProvider(resource=resource)
        for name in traces:
            provider.add_span_processor(BatchSpanProcessor(_span_exporter(name)))
        trace.set_tracer_provider(provider)
        _installed.append(provider)
    if metric_names:
        readers: list[MetricReader] = [PeriodicExportingMetricReader(_metric_exporter(n)) for n in metric_names]
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        metrics.set_meter_provider(meter_provider)
        _installed.append(meter_provider)
    return True


def flush() -> None:
    """Export what the providers installed here still buffer, and stop them.

    The SDK does this at interpreter exit, but a server stopped by a signal may end without running
    exit handlers (uvicorn re-raises the signal): ``warden serve`` calls this as it shuts down.
    """
    while _installed:
        _installed.pop().shutdown()


def _span_exporter(name: str) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _metric_exporter(name: str) -> MetricExporter:
    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()
