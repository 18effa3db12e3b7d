"""SVG snapshots of the approval dialog of a call under a four-eyes policy rule ("1 of 2 approvals").

Sync tests by design (pytest-textual-snapshot); the scripted backend, the frozen clock and the
still cursor keep the SVGs identical run after run. Update them with ``--snapshot-update``.
"""

from __future__ import annotations

import pytest

from tests.console.conftest import showing, wait_for
from tests.console.fakes import NOW, FakeBackend, approval_call, sample_context
from tui.app import WardenApp
from tui.screens.approval import ApprovalModal

SIZES = {"80x24": (80, 24), "110x34": (110, 34)}


def quorum_backend() -> FakeBackend:
    backend = FakeBackend()
    context = sample_context("run-0001", of=1)
    ctx = context.calls["call_0_0"]
    ctx.policy_rule, ctx.policy_reason = "big-deletes", "deleting records needs two people"
    ctx.approvers_required = 2
    ctx.approvals = [{"actor": "alice", "at": NOW.isoformat()}]
    backend.contexts["run-0001"] = context
    return backend


async def _open(pilot) -> None:
    app = pilot.app
    app.open_dialog(approval_call())
    await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
    await wait_for(pilot, lambda: app.screen.context_loaded, "context")
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()


@pytest.mark.parametrize("size", SIZES)
def test_quorum_dialog(snap_compare, size):
    app = WardenApp(
        quorum_backend(), approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False
    )
    assert snap_compare(app, terminal_size=SIZES[size], run_before=_open)
