"""``ConsoleSettings``: how a console behaves, one object (no textual import).

What the console is *given* to work on (its backend, the page of pending runs read before it
started, a first-frame callback) is passed to ``WardenApp`` beside it; everything that only
tunes it (the typing guard, refresh intervals, sizes, the clocks tests inject) is here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from tui.typing_guard import BURST_GAP, OPEN_GUARD, QUIET


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ConsoleSettings:
    """Keywords only, each with its default. A plain class, not a dataclass: it is built before
    the console's first frame, and a dataclass's generated methods cost ≈ 0.7 ms there."""

    def __init__(
        self,
        *,
        approval_guard: float = OPEN_GUARD,
        typing_quiet: float | None = None,
        burst_gap: float | None = None,
        bell: bool = True,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utc_now,
        picker_refresh: float = 2.0,
        pending_refresh: float = 2.0,
        status_refresh: float = 2.0,
        flush_interval: float = 1 / 20,
        max_log_lines: int = 2000,
        per_page: int = 50,
        open_picker: bool = True,
        close_backend: bool = True,
        cursor_blink: bool = True,
    ) -> None:
        #: seconds during which keys do not act on a dialog (or the picker) that just opened;
        #: 0 turns the whole guard off unless ``typing_quiet`` / ``burst_gap`` are given.
        self.approval_guard = approval_guard
        #: a dialog does not take the focus within this many seconds of a key (None: the default)
        self.typing_quiet = typing_quiet
        #: a key this soon after the previous one is typing, and does not act on a dialog (None: the default)
        self.burst_gap = burst_gap
        #: ring the terminal bell when a call waits (and when a deadline is near)
        self.bell = bell
        #: the guard's monotonic clock (tests move a fake one)
        self.clock = clock
        #: wall-clock "now" (UTC): ages and deadlines (stable in snapshots)
        self.now = now
        #: seconds between reads of the store: the picker, the pending panel, the status bar's count (0: never)
        self.picker_refresh = picker_refresh
        self.pending_refresh = pending_refresh
        self.status_refresh = status_refresh
        #: seconds between two writes of buffered chunks to the log
        self.flush_interval = flush_interval
        self.max_log_lines = max_log_lines
        #: rows of a page of pending runs (the panel, the picker)
        self.per_page = per_page
        #: open the picker at start when runs are pending
        self.open_picker = open_picker
        #: close the backend when the console quits
        self.close_backend = close_backend
        #: inputs and text areas blink (off for stable snapshots)
        self.cursor_blink = cursor_blink

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
