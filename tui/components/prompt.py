"""The run screen's prompt: every key it receives acts when it arrives, in the order typed.

A Textual ``Input`` resolves its bound keys (enter, backspace, the arrows...) only once the key
has bubbled back up to the app, behind every key already waiting there: ``enter`` then
``hello`` typed at once reached the prompt as ``hello`` first and the enter after it, so
``abc-771hello`` was sent. Here the prompt runs its own bindings the moment each key reaches
it, and ``enter`` reads and clears the text in the same step (``Sent`` carries it): the
message is exactly what was typed before its enter, and what follows starts the next one.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class Prompt(Input):
    """An ``Input`` that handles its keys in order and sends its text on ``enter``."""

    class Sent(Message):
        """``text``: the prompt's whole text at its enter (the prompt is empty from then on)."""

        def __init__(self, prompt: Prompt, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    def send(self) -> None:
        """Take the text and clear the prompt, in one step; empty or blank text stays as it is."""
        text = self.value
        if not text.strip():
            return
        self.value = ""
        self.post_message(self.Sent(self, text))

    def takes(self, event: events.Key) -> bool:
        """The prompt has a use for this key (it types, edits or sends)."""
        return event.is_printable or event.key == "enter" or bool(self._own_bindings(event.key))

    def _own_bindings(self, key: str) -> list[Binding]:
        return [b for b in self._bindings.key_to_bindings.get(key, ()) if not b.priority]

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.send()
            return
        for binding in self._own_bindings(event.key):
            # Acted on now, not when the key has bubbled to the app behind the keys typed after it.
            event.stop()
            event.prevent_default()
            await self.run_action(binding.action)
            return
        # a printable key: ``Input`` inserts it
