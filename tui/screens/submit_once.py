"""A sub-screen of the approval dialog that decides once: the edit view and the grant choice.

Both decide only on ``ctrl+s`` (no typing produces it), ignore it for ``guard_seconds``
after opening, submit at most once, show a refused submission (a ``WardenError``) in
place with the call still pending, and close when the call is decided elsewhere.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from textual.widgets import Button

from agent_core.errors import WardenError
from tui.backend import PendingCall
from tui.screens.base import WardenModal


class SubmitOnceModal(WardenModal[Any]):
    """Dismisses with what ``submit`` returned (the approved stream) or ``None`` (back, nothing changed)."""

    #: the id of the button that submits (the other one goes back).
    SUBMIT_ID = "submit"

    def __init__(
        self,
        call: PendingCall,
        submit: Callable[[Any], Awaitable[Any]],
        *,
        clock: Callable[[], float] = time.monotonic,
        guard_seconds: float = 0.3,
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.call = call
        self.submit = submit
        self.clock = clock
        self.guard_seconds = guard_seconds
        self.opened_at = clock()
        self.submitting = False
        self.submitted = False
        #: The call was decided elsewhere: this screen closes.
        self.stale = False

    def show_error(self, message: str) -> None:
        raise NotImplementedError

    def action_submit(self) -> None:
        raise NotImplementedError

    def may_submit(self) -> bool:
        """Not twice, not after the call was decided elsewhere, not in the guard after opening."""
        return not (self.stale or self.submitting or self.submitted) and (
            self.clock() - self.opened_at >= self.guard_seconds
        )

    async def send(self, value: Any) -> None:
        """Submit ``value``; dismiss with the result, or show why it was refused (nothing changed)."""
        button = self.query_one(f"#{self.SUBMIT_ID}", Button)
        button.disabled = True
        try:
            result = await self.submit(value)
            self.submitted = True
        except WardenError as error:
            self.show_error(f"{error.code}: {error.message or error}")
            return
        finally:
            self.submitting = False
            button.disabled = False
        self.dismiss(result)

    def close_as_decided_elsewhere(self) -> bool:
        if self.stale or self.submitting or self.submitted:
            return False
        self.stale = True
        if self.is_active:
            self.dismiss(None)
        return True

    def action_back(self) -> None:
        if not self.submitting:
            self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == self.SUBMIT_ID:
            self.action_submit()
        else:
            self.action_back()
