"""Time left before an approval expires, as the console shows it (no textual import).

A call with ``expires_at`` (``approval_timeout``) shows its time left in the
pending list and in its dialog; under ``WARN_SECONDS`` it is shown as a warning
(and the console logs it and rings the bell once). Past the deadline the call
is shown as expiring: the sweep makes it expired (fail-closed), never declined.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

#: Under this many seconds left, the call is shown as a warning (style, log line, bell).
WARN_SECONDS = 60.0


def seconds_left(expires_at: datetime | None, now: datetime) -> float | None:
    """Seconds until the deadline (negative once past); None for a call without one."""
    return None if expires_at is None else (expires_at - now).total_seconds()


def format_left(seconds: float) -> str:
    """``1h 02m``, ``4m 05s``, ``42s``; ``0s`` once past."""
    s = max(0, int(seconds))
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s}s"


def urgent(seconds: float | None) -> bool:
    return seconds is not None and seconds < WARN_SECONDS


def time_left_text(expires_at: datetime | None, now: datetime, *, prefix: str = "⏳ ") -> Text | None:
    """The time-left label (None without a deadline): dim, bold red when urgent, "expiring" once past."""
    left = seconds_left(expires_at, now)
    if left is None:
        return None
    if left <= 0:
        return Text(f"{prefix}expiring now (not run)", style="bold red")
    return Text(f"{prefix}{format_left(left)} left", style="bold red" if urgent(left) else "dim")
