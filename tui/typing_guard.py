"""When a key may decide: the console's rule against decisions by accident (no textual import).

An operator typing into the prompt must never approve or decline anything, and
must never lose a character, whatever arrives meanwhile. Three delays, on an
injectable clock so tests are deterministic:

- ``quiet``: a dialog does not take the focus while a key was pressed within
  this many seconds; the call is announced (banner, pending list, bell) and
  the dialog opens on a deliberate key (``f2``) or once typing has paused.
- ``open_guard``: a key arriving this soon after a dialog (or the picker)
  opened does not act on it.
- ``burst_gap``: a key arriving this soon after the previous key is part of a
  burst of typing, and does not act on a dialog either.

A key that may not act is *bounced*: the dialog closes back to the banner
(the call stays pending) and the key goes to the prompt, so nothing typed is lost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

#: Defaults, in seconds. Typing at 10 keys/s leaves 100 ms between keys; a person who sees a
#: dialog appear needs well over 300 ms to stop and decide.
QUIET = 1.0
OPEN_GUARD = 0.8
BURST_GAP = 0.5


class TypingGuard:
    """(A plain class: built before the first frame, where a dataclass's methods cost ≈ 0.4 ms.)"""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        quiet: float = QUIET,
        open_guard: float = OPEN_GUARD,
        burst_gap: float = BURST_GAP,
    ) -> None:
        self.clock = clock
        self.quiet = quiet
        self.open_guard = open_guard
        self.burst_gap = burst_gap
        self.last_key_at = -math.inf
        self.previous_key_at = -math.inf

    def key_pressed(self) -> None:
        """Record a key (call it for every key, before deciding what it does)."""
        self.previous_key_at, self.last_key_at = self.last_key_at, self.clock()

    def typing(self) -> bool:
        """A key was pressed within ``quiet`` seconds: no dialog may take the focus now."""
        return self.clock() - self.last_key_at < self.quiet

    def may_act(self, opened_at: float) -> bool:
        """May the key just recorded act on a dialog opened at ``opened_at``?

        Not within ``open_guard`` of the opening, and not as part of a burst
        (within ``burst_gap`` of the previous key)."""
        now = self.clock()
        if now - opened_at < self.open_guard:
            return False
        return now - self.previous_key_at >= self.burst_gap
