"""Messages the console's screens, widgets and workers post upward (posting-style).

Down the tree (app -> screen -> widget) the console calls methods and sets
attributes; up the tree it posts one of these, handled by the ``WardenApp``.

Plain classes, not dataclasses: the run screen imports
them before the first frame, and generating nine dataclasses' methods (``exec`` of their
source) was ≈ 1.8 ms of the console's start-up (bench/console_stream.py). Nothing compares
or prints messages by their fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tui.backend import PendingCall
    from tui.reconcile import Removal


class RunRequested(Message):
    """The operator sent a prompt to an agent (run screen -> app, which starts the run)."""

    def __init__(self, agent_id: str, prompt: str) -> None:
        self.agent_id = agent_id
        self.prompt = prompt
        super().__init__()


class DecisionNeeded(Message):
    """A live stream (or a stored run) has a call waiting for the operator."""

    def __init__(self, call: PendingCall, open_dialog: bool = True) -> None:
        self.call = call
        self.open_dialog = open_dialog
        super().__init__()


class CallResolved(Message):
    """A pending call was decided (here or elsewhere): drop it from lists."""

    def __init__(self, run_id: str, tool_call_id: str) -> None:
        self.run_id = run_id
        self.tool_call_id = tool_call_id
        super().__init__()


class CallsGone(Message):
    """A store poll found listed calls no longer pending (decided elsewhere, or their run ended):
    the app closes their dialogs (run screen -> app)."""

    def __init__(self, removals: list[Removal]) -> None:
        self.removals = removals
        super().__init__()


class OpenCall(Message):
    """Open the decision dialog of a call (from the pending panel or the picker)."""

    def __init__(self, call: PendingCall) -> None:
        self.call = call
        super().__init__()


class DecideCall(Message):
    """Decide a call without its dialog: ``y``/``n`` in the pending picker (picker -> app).
    An approval carries the listed call's fingerprint."""

    def __init__(self, call: PendingCall, approve: bool) -> None:
        self.call = call
        self.approve = approve
        super().__init__()


class ReviewWaiting(Message):
    """The operator asked for the dialog of the first call waiting in the banner (``f2``)."""


class DeadlinePassed(Message):
    """A listed approval is past its deadline: the app sweeps (a local runtime) so it becomes expired."""


class KeysReady(Message):
    """The screen that held keys is ready: the app replays them (app -> itself, behind the keys
    already read, so the order is kept)."""
