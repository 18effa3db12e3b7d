"""The run screen's list of calls waiting for a decision.

Two sources feed it: this session (live chunks of the runs started or resumed
here, calls opened from the relaunch picker) and the store, polled by the run
screen (calls decided elsewhere leave, calls that became pending elsewhere
arrive; see ``RunScreen.poll_pending``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.deadlines import time_left_text
from tui.messages import OpenCall
from tui.untrusted import safe_text

if TYPE_CHECKING:
    from tui.backend import PendingCall  # loaded with the runtime, after the first frame


def call_label(call: PendingCall, now: datetime | None = None) -> Text:
    """Kind, tool, run and call; the time left when the call has a deadline (``now`` given)."""
    kind = Text(
        "approve " if call.kind == "approval" else "input   ",
        style="bold yellow" if call.kind == "approval" else "bold cyan",
    )
    label = Text.assemble(kind, safe_text(call.tool_name, "bold", multiline=False))
    label.append(f"\n  run {call.run_id[:8]} · ", style="dim")
    label.append_text(safe_text(call.tool_call_id[:16], "dim", multiline=False))
    left = time_left_text(call.expires_at, now) if now is not None else None
    if left is not None:
        label.append("\n  ")
        label.append_text(left)
    policy = policy_text(call)
    if policy is not None:
        label.append("\n  ")
        label.append_text(policy)
    return label


def policy_text(call: PendingCall) -> Text | None:
    """``rule big-refunds · 1 of 2 approvals (alice)``; None when no rule gated the call."""
    if call.policy_rule is None and call.approvers_required < 2:
        return None
    out = Text(style="yellow")
    if call.policy_rule is not None:
        out.append("rule ")
        out.append_text(safe_text(call.policy_rule, multiline=False))
    if call.approvers_required > 1:
        out.append(" · " if call.policy_rule is not None else "")
        out.append(f"{len(call.approvals)} of {call.approvers_required} approvals")
        if call.approvals:
            out.append(" (")
            out.append_text(safe_text(", ".join(call.approvals), multiline=False))
            out.append(")")
    return out


class PendingPanel(OptionList):
    """Pending calls, newest first (as in the picker); ``enter`` opens the call's dialog."""

    DEFAULT_CSS = """
    PendingPanel { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.calls: dict[str, PendingCall] = {}
        #: Keys listed only because the store poll found them (not seen live or opened here).
        self.polled: set[str] = set()
        #: Bumped by every change made by this session (not by ``sync``): a poll that read the
        #: store while this moved is stale and is not applied.
        self.changes = 0
        #: "now" for time-left labels (set by the run screen's tick; None: no time shown yet).
        self.now: datetime | None = None

    def label(self, call: PendingCall) -> Text:
        return call_label(call, self.now)

    def refresh_deadlines(self, now: datetime) -> None:
        """Redraw the time left of calls with a deadline (the run screen calls it every second)."""
        self.now = now
        for call in self.calls.values():
            if call.expires_at is not None:
                self.replace_option_prompt(call.key, self.label(call))

    def add_call(self, call: PendingCall) -> bool:
        """Add ``call``; False when it is already listed (re-emitted chunks are deduped).

        A call listed only by the store poll is claimed (True): the live chunk or the
        relaunch that shows it now still gets its log line and its dialog.
        """
        if call.key in self.calls:
            if call.key not in self.polled:
                return False
            self.changes += 1
            self.polled.discard(call.key)
            self.calls[call.key] = call
            return True
        self.changes += 1
        self.calls[call.key] = call
        self._prepend([call])
        return True

    def remove_call(self, run_id: str, tool_call_id: str) -> None:
        key = f"{run_id}:{tool_call_id}"
        if key in self.calls:
            self.changes += 1
            self._remove([key])

    def remove_run(self, run_id: str) -> None:
        for call in [c for c in self.calls.values() if c.run_id == run_id]:
            self.remove_call(call.run_id, call.tool_call_id)

    def sync(self, add: Iterable[PendingCall], remove: Iterable[str], *, polled: set[str]) -> None:
        """Apply a store poll: one batch of removals and additions (no clear, no flicker).

        ``polled``: the keys of ``add`` that only the poll knows about (see ``add_call``).
        The highlighted call stays highlighted while it is listed.
        """
        self._remove(remove)
        new = [c for c in add if c.key not in self.calls]
        if not new:
            return
        for call in new:
            self.calls[call.key] = call
            if call.key in polled:
                self.polled.add(call.key)
        self._prepend(new)

    def _prepend(self, calls: list[PendingCall]) -> None:
        """Put ``calls`` (in their order: the store lists newest first) above the listed ones;
        the highlighted call stays highlighted (a new arrival never moves the highlight)."""
        focused = self.focused_call
        self.set_options([*(Option(self.label(c), id=c.key) for c in calls), *self.options])
        if focused is not None and focused.key in self.calls:
            self.highlighted = self.get_option_index(focused.key)
        elif self.option_count:
            self.highlighted = 0

    def _remove(self, keys: Iterable[str]) -> None:
        keys = [k for k in keys if k in self.calls]
        if not keys:
            return
        focused = self.focused_call
        for key in keys:
            del self.calls[key]
            self.polled.discard(key)
            self.remove_option(key)
        if focused is not None and focused.key in self.calls:
            # Removing a row above the highlighted one must not move the highlight to another call.
            self.highlighted = self.get_option_index(focused.key)

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
