"""Small text helpers shared by the console and the headless CLI (no textual import)."""

from __future__ import annotations


def format_age(seconds: float) -> str:
    """``42s``, ``5m``, ``1h05m``, ``1d1h``."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{seconds // 86400}d{(seconds % 86400) // 3600}h"
