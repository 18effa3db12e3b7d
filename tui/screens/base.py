"""The one typed door from a screen to the console app.

Textual types ``Screen.app`` as ``App[object]``; the console's screens need the
app's backend, clock and settings. They get them here, typed by the ``ConsoleApp``
Protocol (what ``WardenApp`` offers screens), so screens never import the app
module that imports them. Screens *read* the app (backend, settings);
they *tell* it things with messages (``tui.messages``), never by calling its methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from textual.screen import ModalScreen, Screen

if TYPE_CHECKING:
    from tui.backend import ConsoleBackend


class ConsoleApp(Protocol):
    """What the console app offers its screens (``tui.app.WardenApp`` implements it)."""

    backend: ConsoleBackend
    clock: Callable[[], float]
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
