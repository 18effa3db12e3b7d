"""An application module that sets its own OpenTelemetry tracer provider when imported (tests/telemetry)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from agent_core import Agent, Runtime
from storage import InMemoryStore
from tests.helpers import script

provider = TracerProvider(resource=Resource({"service.name": "the-app's-own"}))
trace.set_tracer_provider(provider)
runtime = Runtime(agents={"ops": Agent(id="ops", model=script("hi"))}, storage=InMemoryStore())
