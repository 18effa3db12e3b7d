"""The console's decision dialogs, one at a time: which is open, which wait, and when the next
may open by itself (no textual import: the rule is plain data over the typing guard).

A call that needs a decision opens its dialog unless the operator is typing (``TypingGuard``)
or a dialog is already open: then it waits here, announced in the banner, and opens when
typing pauses, on ``f2``, or when the open one closes. A dialog that typing sent back to the
banner (a bounce) goes first in the line, and holds every dialog back from opening by itself
until the prompt is empty again (sent or cleared); ``f2`` still opens it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from tui.typing_guard import TypingGuard

if TYPE_CHECKING:
    from tui.backend import PendingCall


class DialogQueue:
    def __init__(self, guard: TypingGuard) -> None:
        self.guard = guard
        #: the call whose dialog is open (None: none is)
        self.open: PendingCall | None = None
        self._waiting: deque[PendingCall] = deque()
        #: typing sent a dialog back: none opens by itself until the prompt is empty
        self.held_by_typing = False

    @property
    def waiting(self) -> list[PendingCall]:
        """The calls waiting for their dialog, first to open first."""
        return list(self._waiting)

    def wait(self, call: PendingCall) -> bool:
        """``call`` waits for its dialog (once: a call already open or waiting is not added again);
        True when it was added."""
        if call.key == getattr(self.open, "key", None) or any(c.key == call.key for c in self._waiting):
            return False
        self._waiting.append(call)
        return True

    def opening(self, call: PendingCall) -> None:
        """``call``'s dialog opens now (it waits no longer)."""
        self._waiting = deque(c for c in self._waiting if c.key != call.key)
        self.open = call

    def closed(self) -> None:
        self.open = None

    def bounced(self, call: PendingCall) -> None:
        """Typing sent ``call``'s dialog back to the banner: it is the next to open, on a pause
        with an empty prompt or on ``f2``."""
        self.held_by_typing = True
        self._waiting.appendleft(call)

    def must_wait(self, prompt_has_text: bool) -> bool:
        """A dialog may not open by itself now: the operator is typing, or a bounce holds dialogs
        back while the prompt has text."""
        if self.guard.typing():
            return True
        if self.held_by_typing:
            if prompt_has_text:
                return True
            self.held_by_typing = False
        return False

    def next(self, pending: Collection[str]) -> PendingCall | None:
        """The first waiting call still ``pending`` (keys), taken off the line; the others before
        it are dropped (decided elsewhere meanwhile)."""
        while self._waiting:
            call = self._waiting.popleft()
            if call.key in pending:
                return call
        return None

    def drop(self, keys: Iterable[str]) -> None:
        """These calls no longer wait (decided elsewhere, or their run ended)."""
        gone = set(keys)
        self._waiting = deque(c for c in self._waiting if c.key not in gone)
