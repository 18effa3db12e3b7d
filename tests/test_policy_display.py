"""Where a policy rule shows: the approval dialog's context lines (the rule as plain text, never markup)."""

from __future__ import annotations

from agent_core.decision_context import CallContext
from tui.backend import PendingCall
from tui.screens.approval import context_lines


def _call() -> PendingCall:
    return PendingCall(run_id="r", tool_call_id="c", tool_name="issue_refund", args={"amount": 5000}, kind="approval")


def test_dialog_shows_the_rule_and_its_reason() -> None:
    ctx = CallContext(
        run_id="r",
        tool_call_id="c",
        tool_name="issue_refund",
        agent_path=["ops"],
        policy_rule="big-refunds",
        policy_reason="refunds over 1000 need two people",
        approvers_required=2,
    )
    text = context_lines(_call(), ctx).plain
    assert "Policy      rule big-refunds: refunds over 1000 need two people" in text.splitlines()


def test_rule_text_is_never_markup_and_control_characters_are_escaped() -> None:
    ctx = CallContext(
        run_id="r",
        tool_call_id="c",
        tool_name="t",
        agent_path=["ops"],
        policy_rule="r1",
        policy_reason="[@click=app.approve('x')]ok[/] \x1b]0;PWNED\x1b\\",
    )
    line = next(x for x in context_lines(_call(), ctx).plain.splitlines() if x.startswith("Policy"))
    assert "[@click=app.approve('x')]ok[/]" in line  # shown as typed, not run as an action
    assert "\x1b" not in line and "\\x1b" in line


def test_no_policy_no_line() -> None:
    ctx = CallContext(run_id="r", tool_call_id="c", tool_name="t", agent_path=["ops"])
    assert "Policy" not in context_lines(_call(), ctx).plain
