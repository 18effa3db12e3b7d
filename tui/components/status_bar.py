"""One line: store path, model label (demo vs real), pending count, current run."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from tui.untrusted import safe_text


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    store: reactive[str] = reactive("", layout=False)
    model: reactive[str] = reactive("")
    is_demo: reactive[bool] = reactive(False)
    pending: reactive[int] = reactive(0)
    run_state: reactive[str] = reactive("idle")

    def render(self) -> Text:
        out = Text(end="")
        out.append("store ", style="dim")
        out.append_text(safe_text(self.store, multiline=False))
        out.append("  │  ", style="dim")
        if self.is_demo:
            out.append("DEMO MODEL (offline)", style="bold black on yellow")
        else:
            out.append("model ", style="dim")
            out.append_text(safe_text(self.model, "bold", multiline=False))
        out.append("  │  ", style="dim")
        out.append(f"{self.pending} pending", style="bold yellow" if self.pending else "dim")
        out.append("  │  ", style="dim")
        out.append(self.run_state, style="dim")
        return out
