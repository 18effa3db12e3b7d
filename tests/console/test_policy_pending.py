"""The console's pending calls show the policy rule and the votes, from a real runtime's listing
(SQLite file) and from the approval chunk; actor names are untrusted text."""

from __future__ import annotations

from pathlib import Path

from agent_core import Runtime
from storage import SqliteStore
from tests.test_quorum import FOUR_EYES, refund_agent
from tui.backend import PendingCall, pending_run_from_runtime
from tui.components.pending_panel import call_label


async def test_pending_calls_show_the_rule_and_the_votes(tmp_path: Path) -> None:
    agent = refund_agent([])
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db"), policy=FOUR_EYES) as runtime:
        stream = await agent.stream("refund", actor="bob")
        chunks = await stream.chunks()
        [approval] = [c for c in chunks if c.type == "tool-call-approval"]
        live = PendingCall.from_chunk(approval)
        assert (live.policy_rule, live.approvers_required, live.approvals) == ("big-refunds", 2, ())
        assert call_label(live).plain.splitlines()[-1] == "  rule big-refunds · 0 of 2 approvals"
        await (await agent.approve_tool_call(run_id=stream.run_id, actor="al\x1b[2Jice")).chunks()
        [run] = (await runtime.list_suspended_runs()).runs
        [call] = pending_run_from_runtime(run).calls
        line = call_label(call).plain.splitlines()[-1]
        assert line.startswith("  rule big-refunds · 1 of 2 approvals (al") and "\x1b" not in line


def test_a_call_without_a_rule_has_no_policy_line() -> None:
    call = PendingCall("run-1", "c1", "send_email", {}, "approval")
    assert len(call_label(call).plain.splitlines()) == 2
