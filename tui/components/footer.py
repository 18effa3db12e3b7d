"""The run screen's footer: not recomposed while a full screen (the picker, the audit log) covers it.

Textual's ``Footer`` recomposes (a widget per key) at every change of its screen's bindings,
shown or not: opening the picker over the run screen recomposed the hidden footer three
times, as long as the picker's own first frame. A covered footer marks itself stale and
recomposes when its screen is back on top (the screen's bindings are refreshed then). Under a
dialog (a modal screen) the footer stays visible, and behaves as Textual's.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class RunFooter(Footer):
    def bindings_changed(self, screen: Screen[object]) -> None:
        top = self.app.screen
        if self.is_attached and top is not self.screen and not top.is_modal:
            return  # covered: its screen refreshes its bindings when it is back on top
        super().bindings_changed(screen)
