"""``ConsoleSettings``: how a console behaves, one object (no textual import).

What the console is *given* to work on (its backend, the page of pending runs read before it
started, a first-frame callback) is passed to ``WardenApp`` beside it; everything that only
tunes it (the typing guard, refresh intervals, sizes, the clocks tests inject) is here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tui.typing_guard import BURST_GAP, OPEN_GUARD, QUIET


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class ConsoleSettings:
    #: seconds during which keys do not act on a dialog (or the picker) that just opened;
    #: 0 turns the whole guard off unless ``typing_quiet`` / ``burst_gap`` are given.
    approval_guard: float = OPEN_GUARD
    #: a dialog does not take the focus within this many seconds of a key (None: the default)
    typing_quiet: float | None = None
    #: a key this soon after the previous one is typing, and does not act on a dialog (None: the default)
    burst_gap: float | None = None
    #: ring the terminal bell when a call waits (and when a deadline is near)
    bell: bool = True
    #: the guard's monotonic clock (tests move a fake one)
    clock: Callable[[], float] = time.monotonic
    #: wall-clock "now" (UTC): ages and deadlines (stable in snapshots)
    now: Callable[[], datetime] = field(default=_utc_now)
    #: seconds between reads of the store: the picker, the pending panel, the status bar's count (0: never)
    picker_refresh: float = 2.0
    pending_refresh: float = 2.0
    status_refresh: float = 2.0
    #: seconds between two writes of buffered chunks to the log
    flush_interval: float = 1 / 20
    max_log_lines: int = 2000
    #: rows of a page of pending runs (the panel, the picker)
    per_page: int = 50
    #: open the picker at start when runs are pending
    open_picker: bool = True
    #: close the backend when the console quits
    close_backend: bool = True
    #: inputs blink (off for stable snapshots)
    cursor_blink: bool = True

    @property
    def quiet(self) -> float:
        if self.typing_quiet is not None:
            return self.typing_quiet
        return 0.0 if self.approval_guard <= 0 else QUIET

    @property
    def burst(self) -> float:
        if self.burst_gap is not None:
            return self.burst_gap
        return 0.0 if self.approval_guard <= 0 else BURST_GAP
