"""Every key binding of the console, in one place. Each has an id (for user keymaps) and a description."""

from __future__ import annotations

from textual.binding import Binding, BindingType

APP: list[BindingType] = [
    Binding("f1", "help", "Help", id="app.help", tooltip="Show all key bindings"),
    Binding(
        "question_mark",
        "help",
        "Help",
        id="app.help_question",
        show=False,
        tooltip="Show all key bindings (when not typing in a field)",
    ),
    Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, tooltip="Quit the console"),
    Binding(
        "ctrl+o",
        "open_pending",
        "Pending runs",
        id="app.open_pending",
        tooltip="List runs waiting for a decision in the store",
    ),
    Binding("ctrl+n", "new_run", "New run", id="app.new_run", tooltip="Clear the log and focus the prompt"),
    Binding("f3", "audit", "Audit", id="app.audit", show=False, tooltip="Who decided what: the newest audit entries"),
    Binding(
        "f4", "grants", "Grants", id="app.grants", show=False, tooltip="Live grants (always-allow rules), to revoke"
    ),
    Binding(
        "ctrl+p",
        "command_palette",
        "Commands",
        id="app.command_palette",
        show=False,
        tooltip="Open the command palette",
    ),
]

RUN_SCREEN: list[BindingType] = [
    Binding(
        "f2", "decide_focused", "Decide", id="run.decide", tooltip="Open the dialog of the highlighted pending call"
    ),
    Binding("ctrl+l", "focus_log", "Log", id="run.focus_log", show=False, tooltip="Focus the chunk log"),
    Binding("ctrl+t", "cycle_agent", "Next agent", id="run.cycle_agent", tooltip="Select the next agent"),
]

APPROVAL: list[BindingType] = [
    Binding(
        "y",
        "approve",
        "Approve",
        id="approval.approve",
        tooltip="Approve with the fingerprint shown (ignored for a moment after opening)",
    ),
    Binding("n", "decline", "Decline", id="approval.decline", tooltip="Decline, then type an optional reason"),
    Binding(
        "e",
        "edit_args",
        "Edit args",
        id="approval.edit_args",
        tooltip="Edit the arguments, then approve with them (checked against the tool's schema first)",
    ),
    Binding(
        "g",
        "grant",
        "Always allow…",
        id="approval.grant",
        tooltip="Choose a grant (scope, pinned arguments, duration): it approves this call and later ones like it",
    ),
    Binding("escape", "leave", "Leave pending", id="approval.leave", tooltip="Close; the call stays pending"),
    Binding(
        "enter",
        "confirm_decline",
        "Decline with this reason",
        id="approval.confirm_decline",
        priority=True,
        tooltip="While declining: decline, the reason goes to the model",
    ),
    Binding("escape", "back", "Back to the choice", id="approval.back", tooltip="While declining: back to y / n"),
    Binding(
        "pagedown",
        "scroll_args(1)",
        "More args",
        id="approval.args_down",
        show=False,
        tooltip="Scroll the arguments down",
    ),
    Binding(
        "pageup", "scroll_args(-1)", "Args up", id="approval.args_up", show=False, tooltip="Scroll the arguments up"
    ),
]

RESUME_FORM: list[BindingType] = [
    Binding("ctrl+s", "submit", "Submit", id="form.submit", tooltip="Validate and resume the tool"),
    Binding("escape", "leave", "Leave pending", id="form.leave", tooltip="Close; the call stays pending"),
    Binding(
        "ctrl+d", "decline", "Decline call", id="form.decline", priority=True, tooltip="Decline the call, with a reason"
    ),
    Binding(
        "enter",
        "confirm_decline",
        "Decline with this reason",
        id="form.confirm_decline",
        priority=True,
        tooltip="While declining: decline, the reason goes to the model",
    ),
    Binding("escape", "back", "Back to the form", id="form.back", tooltip="While declining: back to the form"),
]

EDIT_ARGS: list[BindingType] = [
    Binding(
        "ctrl+s",
        "submit",
        "Approve with these args",
        id="edit.submit",
        priority=True,
        tooltip="Validate the edited arguments and approve the call with them",
    ),
    Binding(
        "escape",
        "back",
        "Back",
        id="edit.back",
        priority=True,
        tooltip="Back to the approval dialog; nothing changes",
    ),
]

GRANT_CHOICE: list[BindingType] = [
    Binding(
        "ctrl+s",
        "confirm",
        "Grant and approve",
        id="grant.confirm",
        priority=True,
        tooltip="Create the grant shown in words and approve this call",
    ),
    Binding("escape", "back", "Back", id="grant.back", tooltip="Back to the approval dialog; nothing changes"),
]

GRANTS: list[BindingType] = [
    Binding("d,delete", "revoke", "Revoke", id="grants.revoke", tooltip="Revoke the highlighted grant (asks first)"),
    Binding("y", "confirm_revoke", "Yes, revoke", id="grants.confirm", tooltip="While asked: revoke the grant"),
    Binding("n", "cancel_revoke", "No", id="grants.cancel", tooltip="While asked: keep the grant"),
    Binding("r", "refresh", "Refresh", id="grants.refresh", tooltip="Read the live grants again"),
    Binding("escape,f4,q", "close", "Close", id="grants.close", tooltip="Close the grants screen"),
]

PICKER: list[BindingType] = [
    Binding("enter", "open", "Open", id="picker.open", tooltip="Open the run and its decision dialog"),
    Binding(
        "y", "approve", "Approve", id="picker.approve", tooltip="Approve the highlighted call with its fingerprint"
    ),
    Binding("n", "decline", "Decline", id="picker.decline", tooltip="Decline the highlighted call, with a reason"),
    Binding("r", "refresh", "Refresh", id="picker.refresh", tooltip="Reload the list from the store"),
    Binding("j", "row_down", "Down", id="picker.down", show=False, tooltip="Next row (also down)"),
    Binding("k", "row_up", "Up", id="picker.up", show=False, tooltip="Previous row (also up)"),
    Binding("g", "first_row", "First", id="picker.first", show=False, tooltip="First row (also home)"),
    Binding("G", "last_row", "Last", id="picker.last", show=False, tooltip="Last row (also end)"),
    Binding(
        "slash",
        "filter",
        "Filter",
        id="picker.filter",
        tooltip="Filter as you type: words over tool, arguments, agent and thread; agent:, tool:, thread:, kind:",
    ),
    Binding("s", "cycle_sort", "Sort", id="picker.sort", tooltip="Sort by age (newest first), agent, or tool"),
    Binding(
        "i", "cycle_kind", "Kind", id="picker.kind", show=False, tooltip="Show all calls, approvals only, inputs only"
    ),
    Binding(
        "a",
        "filter_agent",
        "This agent",
        id="picker.agent",
        show=False,
        tooltip="Only the highlighted call's agent (again: every agent)",
    ),
    Binding(
        "t",
        "filter_tool",
        "This tool",
        id="picker.tool",
        show=False,
        tooltip="Only the highlighted call's tool (again: every tool)",
    ),
    Binding(
        "pagedown,right_square_bracket",
        "next_page",
        "Next page",
        id="picker.next_page",
        priority=True,
        tooltip="Next page of pending runs",
    ),
    Binding(
        "pageup,left_square_bracket",
        "previous_page",
        "Prev page",
        id="picker.previous_page",
        priority=True,
        tooltip="Previous page of pending runs",
    ),
    Binding("escape", "close", "Close", id="picker.close", tooltip="Back to the run screen"),
]

HELP: list[BindingType] = [
    Binding("escape,f1,q", "close", "Close", id="help.close", tooltip="Close the help screen"),
]

ERROR: list[BindingType] = [
    Binding("escape,enter", "close", "Close", id="error.close", tooltip="Dismiss the error"),
]

#: (section title, bindings) for the help screen.
AUDIT: list[BindingType] = [
    Binding("r", "refresh", "Refresh", id="audit.refresh", tooltip="Read the audit trail again"),
    Binding("escape,f3,q", "close", "Close", id="audit.close", tooltip="Close the audit trail"),
]

SECTIONS: list[tuple[str, list[BindingType]]] = [
    ("Everywhere", APP),
    ("Run screen", RUN_SCREEN),
    ("Approval dialog", APPROVAL),
    ("Input form", RESUME_FORM),
    ("Edit arguments", EDIT_ARGS),
    ("Grant choice", GRANT_CHOICE),
    ("Grants", GRANTS),
    ("Pending runs", PICKER),
    ("Audit trail", AUDIT),
    ("Help", HELP),
]
