"""Shared helpers for the benchmark scripts (not a test: they print figures)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def percentiles(samples_s: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples_s)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return p50 * 1000, p99 * 1000


def per_call_us(fn, n: int) -> float:
    """Microseconds per call of ``fn`` over ``n`` calls, after a warm-up."""
    import time

    for _ in range(min(n, 500)):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6
