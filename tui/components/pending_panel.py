"""The run screen's list of calls waiting for a decision in this console session."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.backend import PendingCall
from tui.messages import OpenCall
from tui.untrusted import safe_text


def call_label(call: PendingCall) -> Text:
    kind = Text("approve " if call.kind == "approval" else "input   ",
                style="bold yellow" if call.kind == "approval" else "bold cyan")
    label = Text.assemble(kind, safe_text(call.tool_name, "bold", multiline=False))
    label.append(f"\n  run {call.run_id[:8]} · ", style="dim")
    label.append_text(safe_text(call.tool_call_id[:16], "dim", multiline=False))
    return label


class PendingPanel(OptionList):
    """Pending calls, newest last; ``enter`` opens the call's dialog."""

    DEFAULT_CSS = """
    PendingPanel { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.calls: dict[str, PendingCall] = {}

    def add_call(self, call: PendingCall) -> bool:
        """Add ``call``; False when it is already listed (re-emitted chunks are deduped)."""
        if call.key in self.calls:
            return False
        self.calls[call.key] = call
        self.add_option(Option(call_label(call), id=call.key))
        if self.highlighted is None:
            self.highlighted = 0
        return True

    def remove_call(self, run_id: str, tool_call_id: str) -> None:
        key = f"{run_id}:{tool_call_id}"
        if self.calls.pop(key, None) is not None:
            self.remove_option(key)

    def remove_run(self, run_id: str) -> None:
        for call in [c for c in self.calls.values() if c.run_id == run_id]:
            self.remove_call(call.run_id, call.tool_call_id)

    @property
    def focused_call(self) -> PendingCall | None:
        if self.highlighted is None or not self.calls:
            return None
        option = self.get_option_at_index(self.highlighted)
        return self.calls.get(option.id or "")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        call = self.calls.get(event.option.id or "")
        if call is not None:
            self.post_message(OpenCall(call))
