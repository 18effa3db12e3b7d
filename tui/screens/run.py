"""The run screen: agent picker, prompt, live chunk log, pending calls, status bar."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Select, Static

from agent_core.chunks import Chunk
from tui import keymap
from tui.backend import AgentInfo, PendingCall
from tui.components.chunk_log import ChunkLog
from tui.components.pending_panel import PendingPanel
from tui.components.render import render_chunk
from tui.components.status_bar import StatusBar
from tui.messages import DecisionNeeded, OpenCall
from tui.untrusted import safe_text


class RunScreen(Screen[None]):
    BINDINGS = keymap.RUN_SCREEN
    AUTO_FOCUS = "#prompt"

    def __init__(self, agents: list[AgentInfo], store_label: str, *, flush_interval: float = 1 / 20,
                 max_log_lines: int = 2000) -> None:
        super().__init__()
        self.agents = agents
        self.store_label = store_label
        self.flush_interval = flush_interval
        self.max_log_lines = max_log_lines
        self.chunks_seen = 0
        self._calls_shown: set[tuple[str, str]] = set()

    def compose(self) -> ComposeResult:
        with Horizontal(id="top-bar"):
            options = [(safe_text(f"{a.id} · {a.name}", multiline=False), a.id) for a in self.agents]
            yield Select(options, value=self.agents[0].id if self.agents else Select.NULL, allow_blank=False,
                         id="agent-picker")
            yield Input(placeholder="Ask the agent… (enter to send)", id="prompt")
        with Horizontal(id="main"):
            yield ChunkLog(id="log", flush_interval=self.flush_interval, max_lines=self.max_log_lines)
            with Vertical(id="side"):
                yield Static(Text("Pending decisions", style="bold"), id="pending-title")
                yield PendingPanel(id="pending")
                yield Static(Text("enter: open · f2: decide", style="dim"), id="pending-hint")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.app.apply_cursor_blink(self)  # type: ignore[attr-defined]
        status = self.status
        status.store = self.store_label
        self._update_model_label()

    # -- accessors -----------------------------------------------------------------------------
    @property
    def log_view(self) -> ChunkLog:
        return self.query_one("#log", ChunkLog)

    @property
    def pending(self) -> PendingPanel:
        return self.query_one("#pending", PendingPanel)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def agent_id(self) -> str | None:
        value = self.query_one("#agent-picker", Select).value
        return None if value is Select.NULL else str(value)

    def _agent(self) -> AgentInfo | None:
        return next((a for a in self.agents if a.id == self.agent_id), None)

    def _update_model_label(self) -> None:
        agent = self._agent()
        if agent is not None:
            self.status.model = agent.model_id
            self.status.is_demo = agent.is_demo

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "agent-picker":
            self._update_model_label()

    # -- input ---------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        event.stop()
        prompt = event.value.strip()
        agent_id = self.agent_id
        if not prompt or agent_id is None:
            return
        event.input.value = ""
        self.log_view.write_entry(Text.assemble(Text("you › ", style="bold"), safe_text(prompt)))
        self.app.start_run(agent_id, prompt)  # type: ignore[attr-defined]

    # -- chunks --------------------------------------------------------------------------------
    def handle_chunk(self, chunk: Chunk) -> None:
        """Called by the stream worker for every chunk (cheap: buffered writes)."""
        self.chunks_seen += 1
        log = self.log_view
        if chunk.type == "text-delta":
            log.append_text(chunk.payload.text)  # type: ignore[union-attr]
            return
        if chunk.type in ("tool-call-approval", "tool-call-suspended"):
            call = PendingCall.from_chunk(chunk)
            if self.pending.add_call(call):
                entry = render_chunk(chunk)
                if entry is not None:
                    log.write_entry(entry)
                self.post_message(DecisionNeeded(call))
            return
        if chunk.type == "tool-call":
            # A resumed stream repeats the calls of its step: show each call once.
            key = (chunk.run_id, chunk.payload.tool_call_id)  # type: ignore[union-attr]
            if key in self._calls_shown:
                return
            self._calls_shown.add(key)
        if chunk.type in ("tool-result", "tool-output-denied", "tool-error"):
            self.pending.remove_call(chunk.run_id, chunk.payload.tool_call_id)  # type: ignore[union-attr]
        if chunk.type == "start":
            self.status.run_state = f"running {chunk.run_id[:8]}"
        entry = render_chunk(chunk)
        if entry is not None:
            log.write_entry(entry)

    def show_call(self, call: PendingCall) -> None:
        """A call opened from storage (relaunch): list it and log it."""
        if self.pending.add_call(call):
            label = Text("◆ pending from store: ", style="bold yellow")
            label.append_text(safe_text(call.tool_name, "bold yellow", multiline=False))
            label.append(f"  run {call.run_id}", style="yellow")
            self.log_view.write_entry(label)

    def run_ended(self, run_id: str, status: str | None) -> None:
        self.status.run_state = f"{status or 'ended'} {run_id[:8]}"
        if status in ("finished", "failed"):
            self.pending.remove_run(run_id)
        self.log_view.end_paragraph()

    # -- actions -------------------------------------------------------------------------------
    def action_decide_focused(self) -> None:
        call = self.pending.focused_call
        if call is not None:
            self.post_message(OpenCall(call))

    def action_focus_log(self) -> None:
        self.log_view.focus()

    def action_cycle_agent(self) -> None:
        if not self.agents:
            return
        ids = [a.id for a in self.agents]
        current = self.agent_id
        nxt = ids[(ids.index(current) + 1) % len(ids)] if current in ids else ids[0]
        self.query_one("#agent-picker", Select).value = nxt

    def new_run(self) -> None:
        self.log_view.clear()
        self.status.run_state = "idle"
        self.query_one("#prompt", Input).focus()
