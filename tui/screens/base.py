"""The one typed door from a screen to the console app.

Textual types ``Screen.app`` as ``App[object]``; the console's screens need the
app's backend, clock and settings. They get them here, typed by the ``ConsoleApp``
Protocol (what ``WardenApp`` offers screens), so screens never import the app
module that imports them. Screens *read* the app (backend, settings);
they *tell* it things with messages (``tui.messages``), never by calling its methods.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from textual.screen import ModalScreen, Screen

if TYPE_CHECKING:
    from tui.backend import ConsoleBackend


class ConsoleApp(Protocol):
    """What the console app offers its screens (``tui.app.WardenApp`` implements it)."""

    backend: ConsoleBackend
    clock: Callable[[], float]
    #: wall-clock "now" (UTC), injectable so ages in snapshots are stable.
    now: Callable[[], datetime]
    #: seconds during which decision keys are ignored after a dialog or the picker opens.
    approval_guard: float

    def apply_cursor_blink(self, screen: Screen) -> None: ...


ResultType = TypeVar("ResultType")


class WardenScreenMixin:
    """Typed access to what screens use of the app."""

    @property
    def warden_app(self) -> ConsoleApp:
        return cast(ConsoleApp, cast(Screen, self).app)

    @property
    def backend(self) -> ConsoleBackend:
        return self.warden_app.backend

    def apply_cursor_blink(self) -> None:
        """Inputs blink unless the app was made with ``cursor_blink=False`` (stable snapshots)."""
        self.warden_app.apply_cursor_blink(cast(Screen, self))


class WardenScreen(WardenScreenMixin, Screen[ResultType]):
    """A full screen of the console."""


class WardenModal(WardenScreenMixin, ModalScreen[ResultType]):
    """A modal dialog of the console."""

    def fit_scroll(self, dialog_id: str, scroll_id: str, natural: int) -> None:
        """Size the dialog's one scrolling part (``natural`` rows would show it all) to what the
        terminal leaves after everything else, which stays visible (80x24 and up)."""
        from textual.widgets import Footer

        if not self.is_attached or not self.query(dialog_id) or not self.query(scroll_id):
            return  # closed meanwhile
        dialog = self.query_one(dialog_id)
        scroll = self.query_one(scroll_id)
        fixed = (
            dialog.styles.gutter.height
            + sum(
                c.outer_size.height + c.styles.margin.height for c in dialog.children if c is not scroll and c.display
            )
            + scroll.styles.margin.height
        )
        footers = self.query(Footer)
        room = self.size.height - (footers.first().outer_size.height if footers else 0) - fixed
        height = max(3, min(natural + scroll.styles.gutter.height, room))
        current = scroll.styles.height
        if current is None or current.value != height:
            scroll.styles.height = height
