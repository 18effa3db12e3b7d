"""The console's key model: every key is handled once, in the order typed, where the focus was.

Textual forwards a key to the focused widget's own queue, and resolves its bindings only
when the key has bubbled back up to the app, behind every key read meanwhile. Typed fast,
``enter`` acted after the keys that followed it (they joined the message), and a dialog's
``esc`` closed it after the keys typed next had reached the dialog. Here the app handles a
key completely (the focused widget, its parents, then the bindings) before it reads the
next one: ``deliver``.

And keys are never handed to a screen that cannot take them yet. ``KeyQueue`` holds the keys
read before the console's first screen is ready, and those read after a key opened a screen
(``ctrl+o``, ``f2``, ``e``...) until that screen is shown and ready; they are then replayed in
order (``WardenApp.on_event``). A screen is ready once mounted with its focus in place, and
when it says so (``keys_ready``: the picker once its first page is listed).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from textual import events
from textual._callback import invoke
from textual._context import active_message_pump
from textual._dispatch_key import dispatch_key
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen


class KeyQueue:
    """Keys read while the screen they belong to is not ready: kept in order, then replayed."""

    def __init__(self) -> None:
        #: True from the start: the console's first screen is not ready yet.
        self.holding = True
        self._held: deque[events.Key] = deque()

    def __len__(self) -> int:
        return len(self._held)

    def keep(self, event: events.Key) -> None:
        self._held.append(event)

    def next(self) -> events.Key | None:
        return self._held.popleft() if self._held else None


def as_typed(event: events.Key) -> events.Key:
    """The key the operator pressed. A newline (``ctrl+j``) is an enter, as in readline: an enter
    typed while the terminal was not raw yet (``warden`` still starting: its line discipline
    turns ``\r`` into ``\n``) arrives so, and the console binds nothing else to it."""
    if event.key == "ctrl+j":
        return events.Key("enter", "\r")
    return event


def screen_ready(app: App[Any]) -> bool:
    """The top screen can take keys: mounted, its focus in place (or nothing to focus), and
    ready by its own account (``keys_ready``, e.g. the picker's first page is listed)."""
    try:
        screen: Screen[Any] = app.screen
    except Exception:  # no screen yet: the app is still starting
        return False
    if not screen.is_mounted or getattr(screen, "keys_ready", True) is False:
        return False
    return app.focused is not None or not screen.focus_chain


async def deliver(app: App[Any], event: events.Key) -> None:
    """Handle ``event`` now, as Textual would once it had bubbled up (the focused widget's key
    handlers, then its parents', then the bindings from the focus up), but before the next key."""
    target: DOMNode = app.focused or app.screen
    event._set_forwarded()
    node: DOMNode | None = target
    while node is not None and node is not app:
        await _handlers(node, event)
        if event._stop_propagation or not node.is_attached:
            return
        parent = node._parent
        node = parent if isinstance(parent, DOMNode) else None
    if not await app._check_bindings(event.key):
        await dispatch_key(app, event)


async def _handlers(node: DOMNode, event: events.Key) -> None:
    """``node``'s own key handlers (its class and bases), without posting the key to its queue."""
    token = active_message_pump.set(node)
    try:
        with node.prevent(*event._prevent):
            for _cls, method in node._get_dispatch_methods(event.handler_name, event):
                await invoke(method, event)
    finally:
        active_message_pump.reset(token)
