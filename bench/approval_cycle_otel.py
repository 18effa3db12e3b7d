"""The approval cycle of ``approval_cycle.py`` with tracing off and with an OpenTelemetry SDK on.

Off: no provider set (the API's no-op; the default). On: the SDK with an in-memory span exporter
(a simple, synchronous span processor) and an in-memory metric reader, so the figure is the cost
of building and ending every span and recording the metrics, without any network.
Usage: python bench/approval_cycle_otel.py [cycles] [--off]   (--off: only the rows without an SDK)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from approval_cycle import measure

from storage import InMemoryStore, SqliteStore


async def rows(cycles: int, label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, store in (
            ("SqliteStore synchronous=NORMAL", SqliteStore(Path(tmp) / "normal.db")),
            ("InMemoryStore", InMemoryStore()),
        ):
            p50, p99 = await measure(store, cycles)
            print(f"  {label + ', ' + name:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")


def install_sdk() -> object:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    return exporter


async def main(cycles: int, off_only: bool) -> None:
    print(f"approval cycle, {cycles} warm cycles each (stream -> approval -> approve -> tool -> finish)")
    await rows(cycles, "no SDK")
    if off_only:
        return
    exporter = install_sdk()
    await rows(cycles, "SDK, in-memory exporter")
    spans = len(exporter.get_finished_spans())  # type: ignore[attr-defined]
    print(f"  ({spans} spans exported in memory)")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    asyncio.run(main(int(args[0]) if args else 2000, "--off" in sys.argv))
