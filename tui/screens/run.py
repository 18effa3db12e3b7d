"""The run screen: agent picker, prompt, live chunk log, pending calls, status bar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Static

from storage.errors import WardenError

if TYPE_CHECKING:  # a pydantic model: loaded with the runtime, not before the first frame
    from agent_core.chunks import Chunk
    from agent_core.decision_context import RunContextView
    from tui.backend import AgentInfo, PendingCall, PendingPage, PendingRun  # loaded with the runtime
    from tui.reconcile import Shown, StoreView  # the store poll's: imported by its first run
from tui import keymap
from tui.components.chunk_log import ChunkLog
from tui.components.footer import RunFooter
from tui.components.pending_panel import PendingPanel
from tui.components.prompt import Prompt
from tui.components.render import render_chunk, render_decision, render_transcript_entry
from tui.components.status_bar import StatusBar
from tui.deadlines import format_left, seconds_left, urgent
from tui.messages import CallsGone, DeadlinePassed, DecisionNeeded, OpenCall, ReviewWaiting, RunRequested
from tui.screens.base import WardenScreen
from tui.untrusted import safe_text

HINT = "enter: open · f2: decide"


class RunScreen(WardenScreen[None]):
    """The run screen.

    The pending panel mirrors the store, not just this session: every
    ``pending_refresh`` seconds (0 disables it) a worker reads the newest page
    of pending runs (``per_page`` runs, the relaunch picker's indexed query) and
    the panel follows it. It lists *all* pending runs, not only the ones this
    console started or opened, because an operator at an approval console
    expects to see every call waiting for a person, whoever started it (another
    console, an HTTP client, a headless script), and the status bar already
    counts every pending run in the store: panel and count come from the same
    read, so they agree. Beyond the newest page the picker (``ctrl+o``) pages.

    Calls of this session are kept while the store is behind: a run whose stream
    is being consumed here (``live_runs``) is never touched by a poll, and a poll
    that read the store while this session changed the panel is dropped (read
    again) rather than applied. A call of this session that left the newest page
    is checked individually (``get_run``) and stays while it is pending.
    """

    BINDINGS = keymap.RUN_SCREEN
    AUTO_FOCUS = "#prompt"

    def __init__(
        self,
        agents: list[AgentInfo],
        store_label: str,
        *,
        flush_interval: float = 1 / 20,
        max_log_lines: int = 2000,
        pending_refresh: float = 2.0,
        per_page: int = 50,
    ) -> None:
        super().__init__()
        self.agents = agents
        self.store_label = store_label
        self.flush_interval = flush_interval
        self.max_log_lines = max_log_lines
        self.pending_refresh = pending_refresh
        self.per_page = per_page
        self.chunks_seen = 0
        self.polls = 0
        #: Runs whose stream this console is consuming: their calls come from chunks, not polls.
        self.live_runs: set[str] = set()
        self._polling = False
        self._hint = HINT
        self._calls_shown: set[tuple[str, str]] = set()
        #: Calls announced in the banner, waiting for the operator to stop typing or press f2.
        self.waiting: list[PendingCall] = []
        #: Runs in which a sub-agent's call was declined here: their delegation result is no success.
        self._declined_nested: set[str] = set()
        #: Calls whose deadline warning (under a minute) or overdue sweep request was given, by key.
        self.warned: set[str] = set()
        self._overdue: set[str] = set()
        #: Requests sent before the agents were loaded: sent, in order, once they are.
        self.queued: list[str] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="top-bar"):
            if self.agents:
                yield self._agent_select()
            else:  # a runtime still loading (``DeferredBackend``): its selector comes with its agents
                yield Static(Text("loading agents…", style="dim"), id="agent-loading")
            yield Prompt(placeholder="Ask the agent… (enter to send)", id="prompt")
        yield Static("", id="waiting-banner", classes="hidden")
        with Horizontal(id="main"):
            yield ChunkLog(id="log", flush_interval=self.flush_interval, max_lines=self.max_log_lines)
            with Vertical(id="side"):
                yield Static(Text("Pending decisions", style="bold"), id="pending-title")
                yield PendingPanel(id="pending")
                yield Static(Text(HINT, style="dim"), id="pending-hint")
        yield StatusBar(id="status")
        yield RunFooter()

    def on_mount(self) -> None:
        self.apply_cursor_blink()
        status = self.status
        status.store = self.store_label
        self._update_model_label()
        if self.agents:  # else when they are loaded (``set_agents``)
            self.welcome()
        if self.pending_refresh > 0:  # the first read is the app's start-up check (``show_first_page``)
            self.set_interval(self.pending_refresh, self.poll_pending, name="pending-poll")
        self.set_interval(1.0, self.tick_deadlines, name="deadlines")
        self.call_after_refresh(self.tick_deadlines)

    # -- deadlines -----------------------------------------------------------------------------
    def tick_deadlines(self) -> None:
        """Every second: the time left in the list; under a minute, a log line and the bell (once
        per call); past the deadline, ask the app to sweep (the call becomes expired, not declined)."""
        if not (self.is_attached and self.app.is_running):  # closing: widgets go before timers
            return
        now = self.warden_app.now()
        self.pending.refresh_deadlines(now)
        for call in list(self.pending.calls.values()):
            left = seconds_left(call.expires_at, now)
            if left is None:
                continue
            if left <= 0:
                if call.key not in self._overdue:
                    self._overdue.add(call.key)
                    self.post_message(DeadlinePassed())
            elif urgent(left) and call.key not in self.warned:
                self.warned.add(call.key)
                line = Text("⏳ ", style="bold red")
                line.append_text(safe_text(call.tool_name, "bold red", multiline=False))
                line.append(f" expires in {format_left(left)}: decide now (f2) or it is not run", style="bold red")
                self.log_view.write_entry(line)
                if getattr(self.app, "ring_bell", True):
                    self.app.bell()

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
        selects = self.query("#agent-picker").results(Select)
        select = next(selects, None)
        if select is None or not self.agents:
            return None
        return None if select.value is Select.NULL else str(select.value)

    async def set_agents(self, agents: list[AgentInfo], store_label: str) -> None:
        """The agents of a runtime loaded after the first frame (``DeferredBackend``)."""
        first = not self.agents
        self.agents = list(agents)
        self.store_label = store_label
        self.status.store = store_label
        select = next(self.query("#agent-picker").results(Select), None)
        if select is not None:
            select.set_options(self._agent_options())
            if self.agents:
                select.value = self.agents[0].id
        elif not (self.is_attached and self.app.is_running):
            return  # the console is quitting: nothing to mount
        elif self.agents:
            # The selector is composed with its agents: a ``Select`` costs ≈ 7 ms of the first
            # frame (its overlay and option list), and a loading one offers nothing to choose.
            placeholder = self.query_one("#agent-loading", Static)
            await self.query_one("#top-bar").mount(self._agent_select(), before=placeholder)
            await placeholder.remove()
        else:
            self.query_one("#agent-loading", Static).update(Text("no agents", style="dim"))
        self._update_model_label()
        if first:
            self.welcome()
        self._send_queued()

    def _agent_select(self) -> Select[str]:
        return Select(self._agent_options(), value=self.agents[0].id, allow_blank=False, id="agent-picker")

    def _agent_options(self) -> list[tuple[Text, str]]:
        if not self.agents:  # a runtime that has none
            return [(Text("no agents", style="dim"), "")]
        return [(safe_text(f"{a.id} · {a.name}", multiline=False), a.id) for a in self.agents]

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

    def welcome(self) -> None:
        """What the console is, what to type, how to switch agents, where pending runs are."""
        log = self.log_view
        agent = self._agent()
        log.write_entry(Text("Warden approval console", style="bold"))
        log.write_entry(
            Text(
                "Type a request in the prompt (enter sends it to the selected agent). Sensitive tool "
                "calls stop before they run and wait for your decision.",
                style="dim",
            )
        )
        if agent is not None:
            line = Text("Agent ", style="dim")
            line.append_text(safe_text(f"{agent.id} · {agent.name}", "bold", multiline=False))
            if agent.description:
                line.append(" — ", style="dim")
                line.append_text(safe_text(agent.description, "dim", multiline=False))
            log.write_entry(line)
            for example in agent.examples:
                log.write_entry(Text.assemble(Text("  try › ", style="dim"), safe_text(example, "cyan")))
        log.write_entry(
            Text(
                "ctrl+t switches agents (or the selector, top left) · pending decisions are listed on the "
                "right, f2 opens one · ctrl+o lists every pending run in the store · f1 or ? for help",
                style="dim",
            )
        )
        log.write_entry(
            Text(
                "A call that arrives while you type waits in a banner above the log: its dialog opens when "
                "you stop typing, or with f2; typing never approves or declines anything.",
                style="dim",
            )
        )

    # -- input ---------------------------------------------------------------------------------
    def on_prompt_sent(self, event: Prompt.Sent) -> None:
        """The prompt's text at its enter (already cleared: keys typed after it are the next one)."""
        event.stop()
        prompt = event.text.strip()
        self.log_view.write_entry(Text.assemble(Text("you › ", style="bold"), safe_text(prompt)))
        agent_id = self.agent_id
        if agent_id is None:  # the runtime is still loading (``DeferredBackend``): said, then sent
            self.queued.append(prompt)
            self.status.run_state = f"queued ({len(self.queued)})"
            self.log_view.write_entry(
                Text("⧗ the agents are still loading: this request is sent once the agents are loaded", style="dim")
            )
            return
        self.post_message(RunRequested(agent_id, prompt))

    def _send_queued(self) -> None:
        """The agents are loaded: the requests typed meanwhile go to the selected agent, in order;
        with no agent to take them, the log says they were not sent."""
        queued, self.queued = self.queued, []
        if not queued:
            return
        agent_id = self.agent_id
        if agent_id is None:
            self.drop_queued("this runtime has no agent")
            return
        for prompt in queued:
            self.post_message(RunRequested(agent_id, prompt))

    def drop_queued(self, why: str) -> None:
        """Requests waiting for the agents that never come: not sent, and the log says why."""
        queued, self.queued = self.queued, []
        for prompt in queued:
            line = Text("⊘ not sent (", style="bold red")
            line.append(why, style="bold red")
            line.append("): ", style="bold red")
            line.append_text(safe_text(prompt, multiline=False))
            self.log_view.write_entry(line)
        if queued:
            self.status.run_state = "idle"

    @property
    def prompt(self) -> Prompt:
        return self.query_one("#prompt", Prompt)

    @property
    def prompt_text(self) -> str:
        return self.prompt.value

    def type_into_prompt(self, event: events.Key) -> None:
        """A key bounced off a dialog (``tui.typing_guard``): it goes where the operator was typing,
        behind the keys the prompt has not handled yet (its own queue keeps them in order)."""
        prompt = self.prompt
        if self.focused is not prompt:
            self.set_focus(prompt)
        if prompt.takes(event):
            prompt._forward_event(event)

    def show_waiting(self, calls: list[PendingCall]) -> None:
        """The banner: calls waiting for a decision whose dialog has not opened (the operator types)."""
        self.waiting = list(calls)
        banner = self.query_one("#waiting-banner", Static)
        if not calls:
            banner.add_class("hidden")
            banner.update("")
            return
        first = calls[0]
        what = "approval" if first.kind == "approval" else "input"
        text = Text("◆ ", style="bold black on yellow")
        text.append_text(safe_text(first.tool_name, "bold", multiline=False))
        text.append(f" waits for your {what}")
        if len(calls) > 1:
            text.append(f" (+{len(calls) - 1} more)")
        text.append(" — f2 to review; it opens when you stop typing", style="italic")
        banner.update(text)
        banner.remove_class("hidden")

    # -- chunks --------------------------------------------------------------------------------
    def handle_chunk(self, chunk: Chunk) -> None:
        """Called by the stream worker for every chunk (cheap: buffered writes)."""
        self.chunks_seen += 1
        log = self.log_view
        if chunk.type == "text-delta":
            log.append_text(chunk.payload.text)  # type: ignore[union-attr]
            return
        if chunk.type in ("tool-call-approval", "tool-call-suspended"):
            from tui.backend import PendingCall  # loaded by now: the chunk came from the backend

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
        if chunk.type == "tool-result" and chunk.run_id in self._declined_nested:
            p = chunk.payload
            if p.tool_name.startswith("agent-"):  # type: ignore[union-attr]
                self.pending.remove_call(chunk.run_id, p.tool_call_id)  # type: ignore[union-attr]
                line = Text("⊘ ", style="bold magenta")
                line.append_text(safe_text(p.tool_name, "bold magenta", multiline=False))  # type: ignore[union-attr]
                line.append(" (a call inside it was declined) → ", style="magenta")
                line.append_text(safe_text(str(p.result), "magenta"))  # type: ignore[union-attr]
                log.write_entry(line)
                return
        if chunk.type == "tool-call-expired":
            expired_key = f"{chunk.run_id}:{chunk.payload.tool_call_id}"  # type: ignore[union-attr]
            expired = self.pending.calls.get(expired_key)
            self.pending.remove_call(chunk.run_id, chunk.payload.tool_call_id)  # type: ignore[union-attr]
            if expired is not None:  # its dialog closes as expired (not declined)
                from tui.reconcile import Removal

                self.post_message(CallsGone([Removal(expired, "decided")]))
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

    def log_decision(
        self, call: PendingCall, decision: str, actor: str | None, reason: str | None, *, elsewhere: bool = False
    ) -> None:
        """The decision trail: who approved or declined what (here, or elsewhere)."""
        self.log_view.write_entry(
            render_decision(call.tool_name, call.agent_path, decision, actor, reason, elsewhere=elsewhere)
        )
        if decision == "declined" and len(call.agent_path) > 1:
            self._declined_nested.add(call.run_id)

    def replay(self, context: RunContextView) -> None:
        """A run reopened from the store: its stored conversation, before its dialog opens."""
        if not context.transcript:
            return
        log = self.log_view
        log.write_entry(Text(f"── stored conversation of run {context.run_id} ──", style="dim"))
        for entry in context.transcript:
            for line in render_transcript_entry(entry):
                log.write_entry(line)
            if not entry.agent_path or len(entry.agent_path) == 1:
                # the resumed stream repeats the calls of its step: they are shown already
                self._calls_shown.update((context.run_id, str(c.get("id"))) for c in entry.tool_calls)

    def run_ended(self, run_id: str, status: str | None) -> None:
        self.status.run_state = f"{status or 'ended'} {run_id[:8]}"
        if status in ("finished", "failed"):
            self.pending.remove_run(run_id)
        self.log_view.end_paragraph()

    # -- streams of this console ---------------------------------------------------------------
    def stream_started(self, run_id: str) -> None:
        """A stream of ``run_id`` is consumed here: polls leave its calls alone until it ends."""
        self.live_runs.add(run_id)
        self.pending.changes += 1

    def stream_stopped(self, run_id: str) -> None:
        self.live_runs.discard(run_id)
        self.pending.changes += 1

    # -- polling the store ---------------------------------------------------------------------
    def poll_pending(self) -> None:
        """Refresh the panel from the store in a worker; a tick is skipped while a read is in
        flight (a slow store is never hammered, and a read is never cancelled half-way)."""
        if self._polling or not self.is_attached:
            return
        self._polling = True
        self._poll()

    @work(group="pending-poll", exit_on_error=False)
    async def _poll(self) -> None:
        try:
            for _ in range(3):
                mark = self.pending.changes
                view = await self._read_store()
                if not self.is_attached:  # the screen closed while the store answered
                    return
                if mark == self.pending.changes:
                    self._apply(view)
                    return
                # This session changed the panel meanwhile: the read may predate it. Read again.
        except Exception as error:  # an unreachable store: keep what is shown, try at the next tick
            self.log.warning(f"pending poll failed: {type(error).__name__}: {error}")
        finally:
            self._polling = False

    def show_first_page(self, page: PendingPage) -> None:
        """The newest page, read by the app's start-up check (the same query as a poll): the
        panel's first poll without reading the store a second time."""
        if self.pending_refresh <= 0 or self._polling or not self.is_attached:
            return
        from tui.reconcile import StoreView, runs_to_check

        if runs_to_check(self._shown(), page):  # this session already shows calls: a full poll
            self.poll_pending()
        else:
            self._apply(StoreView(page, {}))

    def _shown(self) -> Shown:
        from tui.reconcile import Shown

        panel = self.pending
        return Shown(calls=dict(panel.calls), polled=frozenset(panel.polled), live_runs=frozenset(self.live_runs))

    async def _read_store(self) -> StoreView:
        from tui.reconcile import StoreView, runs_to_check

        backend = self.backend
        page = await backend.list_pending(page=0, per_page=self.per_page)
        others: dict[str, PendingRun | None] = {}
        for run_id in runs_to_check(self._shown(), page):
            try:
                others[run_id] = await backend.get_run(run_id)
            except WardenError as error:
                from tui.backend import GONE

                if error.code not in GONE:
                    raise
                others[run_id] = None
        return StoreView(page, others)

    def _apply(self, view: StoreView) -> None:
        from tui.reconcile import reconcile

        result = reconcile(self._shown(), view)
        self.pending.sync(result.add, result.remove_keys, polled=result.polled)
        self.status.pending = result.total
        hint = f"{HINT} · ctrl+o: {result.more} more" if result.more > 0 else HINT
        if hint != self._hint:
            self._hint = hint
            self.query_one("#pending-hint", Static).update(Text(hint, style="dim"))
        self.polls += 1
        if result.gone:
            self.post_message(CallsGone(result.gone))

    # -- actions -------------------------------------------------------------------------------
    def action_decide_focused(self) -> None:
        if self.waiting:
            self.post_message(ReviewWaiting())
            return
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
        select = next(self.query("#agent-picker").results(Select), None)
        if select is not None:
            select.value = nxt

    def new_run(self) -> None:
        self.log_view.clear()
        self.status.run_state = "idle"
        self.prompt.focus()
