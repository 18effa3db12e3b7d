"""Key bursts for the key-model tests: keys delivered the way a terminal delivers them.

``pilot.press`` waits for the app to go idle after every key; an operator typing fast (or
``tmux send-keys``) does not. ``burst`` hands all its keys to the driver at once, so the app
reads them back to back, whatever each of them starts (a send, a screen push, a load).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.app import App

from tui.backend import LocalBackend, RunStream

#: keys that are named, not typed as their character
NAMED = {" ": "space", "\n": "enter", "/": "slash", "?": "question_mark", "-": "minus", ":": "colon"}


def key_event(key: str) -> events.Key:
    """The event a terminal produces for ``key`` (a character, or a name such as ``enter``)."""
    if len(key) == 1:
        name = NAMED.get(key, key)
        return events.Key(name, key if key != "\n" else "\r")
    chars = {"enter": "\r", "escape": "\x1b", "backspace": "\x7f", "space": " ", "tab": "\t"}
    return events.Key(key, chars.get(key))


def keys_of(text: str) -> list[str]:
    """``text`` as keys: each character, a newline as ``enter``."""
    return ["enter" if ch == "\n" else ch for ch in text]


def burst(app: App, keys: Iterable[str]) -> None:
    """Deliver ``keys`` to the app at once, with no pause between them (no wait for idle)."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        event = key_event(key)
        event.set_sender(app)
        driver.send_message(event)


class RecordingBackend(LocalBackend):
    """The real local backend, recording every prompt it is asked to start a run with."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.sent: list[tuple[str, str]] = []

    async def start_run(
        self, agent_id: str, prompt: str, *, thread_id: str | None = None, resource_id: str | None = None
    ) -> RunStream:
        self.sent.append((agent_id, prompt))
        return await super().start_run(agent_id, prompt, thread_id=thread_id, resource_id=resource_id)
