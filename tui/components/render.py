"""How each chunk type looks in the log: distinct styles, untrusted text never as markup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:  # pydantic models: loaded with the runtime, not before the first frame
    from agent_core.chunks import Chunk
    from agent_core.decision_context import TranscriptEntry
from tui.untrusted import safe_text, to_json

STYLES = {
    "run": "bold blue",
    "tool-call": "cyan",
    "approval": "bold yellow",
    "suspended": "bold magenta",
    "result": "green",
    "result-error": "red",
    "tool-error": "bold red",
    "denied": "magenta",
    "progress": "dim cyan",
    "finish": "dim",
    "error": "bold red",
    "assistant": "",
}


def _compact(value: Any, limit: int = 400) -> str:
    text = to_json(value, indent=None)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(prefix: str, style: str, *parts: Text | str) -> Text:
    out = Text(prefix, style=style, end="")
    for part in parts:
        out.append_text(part) if isinstance(part, Text) else out.append(part, style=style)
    return out


def _agent(path: list[str] | tuple[str, ...]) -> str:
    return f" [{' > '.join(path)}]" if len(path) > 1 else ""


def render_chunk(chunk: Chunk) -> Text | None:
    """A log entry for a non-text chunk (``None`` for chunks not shown)."""
    p: Any = chunk.payload
    t = chunk.type
    if t == "start":
        return _line(f"▶ run {chunk.run_id} ", STYLES["run"], safe_text(p.agent_id, STYLES["run"], multiline=False))
    if t == "tool-call":
        return _line(
            "→ call ",
            STYLES["tool-call"],
            safe_text(p.tool_name, "bold cyan", multiline=False),
            " ",
            safe_text(_compact(p.args), STYLES["tool-call"], multiline=False),
        )
    if t == "tool-call-approval":
        return _line(
            "◆ approval needed: ",
            STYLES["approval"],
            safe_text(p.tool_name, STYLES["approval"], multiline=False),
            Text(_agent(p.agent_path) + f"  {p.fingerprint[:19]}…", style="yellow"),
        )
    if t == "tool-call-suspended":
        return _line(
            "◆ input needed: ",
            STYLES["suspended"],
            safe_text(p.tool_name, STYLES["suspended"], multiline=False),
            " ",
            safe_text(_compact(p.suspend_payload), "magenta", multiline=False),
        )
    if t == "tool-result":
        style = STYLES["result-error"] if p.is_error else STYLES["result"]
        line = _line(
            "✓ " if not p.is_error else "✗ ",
            style,
            safe_text(p.tool_name, "bold " + style, multiline=False),
            " → ",
            safe_text(_compact(p.result), style, multiline=False),
        )
        if p.grant_id:  # nobody was asked: say which standing rule let it run (f4 revokes it)
            line.append_text(safe_text(f"  (approved by grant {p.grant_id[:8]})", "dim green", multiline=False))
        return line
    if t == "tool-error":
        name = safe_text(p.tool_name, STYLES["tool-error"], multiline=False)
        return _line("✗ tool error ", STYLES["tool-error"], name, ": ", safe_text(p.error, "red"))
    if t == "tool-output":  # progress written by a running tool: indented under its call
        return _line(
            "    ⋯ ",
            STYLES["progress"],
            safe_text(p.tool_name, STYLES["progress"], multiline=False),
            Text(_agent(p.agent_path), style=STYLES["progress"]),
            " ",
            safe_text(_compact(p.data, 200), STYLES["progress"], multiline=False),
        )
    if t == "tool-output-denied":
        return _line(
            "⊘ declined ",
            STYLES["denied"],
            safe_text(p.tool_name, "bold magenta", multiline=False),
            ": ",
            safe_text(p.reason, STYLES["denied"]),
        )
    if t == "tool-call-expired":
        return _line(
            "⌛ expired (no decision before its deadline; not run): ",
            "bold red",
            safe_text(p.tool_name, "bold red", multiline=False),
        )
    if t == "finish":
        return Text(f"■ finished ({p.finish_reason})", style=STYLES["finish"])
    if t == "error":
        return _line("✗ error: ", STYLES["error"], safe_text(p.error, "red"))
    return None


def render_transcript_entry(entry: TranscriptEntry) -> list[Text]:
    """Log lines replaying one stored message of a reopened run (sub-agents under their path)."""
    where = _agent(entry.agent_path)
    out: list[Text] = []
    if entry.role == "user":
        if where:
            out.append(_line(f"↳{where} asked: ", "dim", safe_text(entry.text, "italic")))
        else:
            out.append(_line("you › ", "bold", safe_text(entry.text)))
    elif entry.role == "assistant":
        if entry.text.strip():
            prefix = f"↳{where} " if where else ""
            out.append(_line(prefix, "dim", safe_text(entry.text, STYLES["assistant"])))
        for call in entry.tool_calls:
            out.append(
                _line(
                    "→ call ",
                    STYLES["tool-call"],
                    safe_text(str(call.get("name")), "bold cyan", multiline=False),
                    " ",
                    safe_text(_compact(call.get("args")), STYLES["tool-call"], multiline=False),
                    Text(where, style="dim"),
                )
            )
    elif entry.role == "tool":
        name = safe_text(entry.tool_name or "tool", "bold", multiline=False)
        status = entry.tool_status or "ok"
        mark, style = {
            "denied": ("⊘ declined ", STYLES["denied"]),
            "error": ("✗ ", STYLES["result-error"]),
        }.get(status, ("✓ ", STYLES["result"]))
        out.append(_line(mark, style, name, Text(where, style="dim"), " → ", safe_text(_compact(entry.text), style)))
    return out


def render_decision(
    tool_name: str,
    agent_path: tuple[str, ...] | list[str],
    decision: str,
    actor: str | None,
    reason: str | None,
    *,
    elsewhere: bool = False,
) -> Text:
    """The decision trail: ``✔ approved by alice: delete_record`` / ``⊘ declined by bob: … — reason``."""
    who = actor or "someone"
    mark, style = ("✔ ", "bold green") if decision.startswith("approved") else ("⊘ ", "bold magenta")
    if decision == "expired":
        mark, style = ("⌛ ", "bold red")
    verb = {"approved": "approved", "declined": "declined", "resumed": "answered"}.get(decision, decision)
    head = f"{verb} by {who}" + (" elsewhere" if elsewhere else "") + ": "
    if decision == "expired":
        head = "expired (no decision before its deadline; not run): "
    elif decision == "granted":
        mark, style, head = "✔ ", "bold green", "approved by a grant: "
    out = _line(
        mark + head, style, safe_text(tool_name, "bold", multiline=False), Text(_agent(agent_path), style="dim")
    )
    if reason:
        out.append(" — ", style="dim")
        out.append_text(safe_text(reason, "magenta"))
    return out
