"""The picker's pieces that are not the screen: the row table, the filter syntax, the cells.

The table moves by rows as operators expect from k9s, htop and lazygit (``j``/``k``,
``g``/``G``, Home/End); the filter line turns ``agent:ops tool:send_email kind:input ana``
into the store's query (``PendingQuery``); cells are one line of sanitised, truncated text.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from tui.backend import PendingCall, PendingQuery
from tui.untrusted import safe_text

#: ``key:value`` words of the filter line and the ``PendingQuery`` field each sets.
QUALIFIERS = {"agent": "agent_id", "tool": "tool_name", "thread": "thread_id", "kind": "kind"}
SORTS = ("age", "agent", "tool")
KINDS = (None, "approval", "input")


class QueueTable(DataTable[Any]):
    """A row-cursor table: Home/End go to the first/last row, not column (``j``/``k``/``g``/``G``
    are the picker's bindings, in ``tui.keymap``, so that they are not bounced as typing)."""

    BINDINGS = [
        Binding("home", "first_row", "First", show=False),
        Binding("end", "last_row", "Last", show=False),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


def parse_filter(line: str, base: PendingQuery) -> PendingQuery:
    """The filter line -> the store's query: ``agent:``, ``tool:``, ``thread:`` and ``kind:`` words
    are exact filters, every other word must appear somewhere (tool, arguments, agent, thread).
    A bad ``kind:`` value is kept as text (it then matches nothing rather than failing)."""
    exact: dict[str, str | None] = dict.fromkeys(QUALIFIERS.values())
    words: list[str] = []
    for word in line.split():
        key, sep, value = word.partition(":")
        field = QUALIFIERS.get(key.lower()) if sep else None
        if field is None or not value or (field == "kind" and value not in ("approval", "input")):
            words.append(word)
        else:
            exact[field] = value
    return PendingQuery(
        text=" ".join(words) or None,
        agent_id=exact["agent_id"],
        thread_id=exact["thread_id"],
        tool_name=exact["tool_name"],
        kind=exact["kind"],  # type: ignore[arg-type]
        sort=base.sort,
    )


def with_qualifier(line: str, key: str, value: str | None) -> str:
    """The filter line with ``key:`` set to ``value`` (or removed when None)."""
    words = [w for w in line.split() if not w.lower().startswith(f"{key}:")]
    if value is not None:
        words.append(f"{key}:{value}")
    return " ".join(words)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def args_summary(args: dict[str, Any], width: int = 40) -> Text:
    """``key=value, …`` on one line, control characters neutralised, cut at ``width``."""
    flat = ", ".join(f"{k}={' '.join(_scalar(v).split())}" for k, v in args.items()) if args else "—"
    text = safe_text(flat[: width * 2], multiline=False)  # escapes first, then the cut (what is seen)
    text.truncate(width, overflow="ellipsis")
    return text


def agent_path(call: PendingCall, agent_id: str, width: int = 24) -> Text:
    """The agent that made the call: ``boss`` then ``ops`` for a sub-agent, else the run's agent;
    cut from the left (the agent that asks matters most)."""
    flat = " › ".join(call.agent_path or [agent_id])
    if len(flat) > width:
        flat = "…" + flat[-(width - 1) :]
    return safe_text(flat, multiline=False)
