"""The Warden approval console (Textual)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import events
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import Input, Select
from textual.worker import Worker

from storage.errors import WardenError  # not ``agent_core``'s: the first frame needs no runtime module
from tui import keymap
from tui.console_settings import ConsoleSettings
from tui.deferred_backend import DeferredBackend
from tui.dialog_queue import DialogQueue
from tui.key_order import KeyQueue, as_typed, deliver, screen_ready
from tui.messages import (
    CallResolved,
    CallsGone,
    DeadlinePassed,
    DecideCall,
    DecisionNeeded,
    KeysReady,
    OpenCall,
    ReviewWaiting,
    RunRequested,
)
from tui.screens.lazy import (
    is_approval,
    is_call_dialog,
    is_edit_args,
    is_error,
    is_grant_choice,
    is_picker,
    is_resume_form,
)
from tui.screens.run import RunScreen
from tui.typing_guard import TypingGuard
from tui.untrusted import escape_unsafe, safe_text, to_json

if TYPE_CHECKING:  # dialogs and the picker: imported when first opened (``tui.screens.lazy``)
    from agent_core.decision_context import RunContextView
    from tui.backend import ConsoleBackend, PendingCall, PendingPage, RunStream  # with the runtime
    from tui.components.schedules import Schedules
    from tui.reconcile import Removal
    from tui.screens.approval import ApprovalDecision
    from tui.screens.picker import PendingPicker
    from tui.screens.resume_form import FormDecline

#: Chunks handled between two explicit yields to the event loop (keys stay responsive).
YIELD_EVERY = 64


#: Keys that type text: outside a field, a dialog has no use for them unless they are its bindings.
_TYPING_KEYS = frozenset({"space", "enter", "backspace", "tab"})


def _typed_elsewhere(screen: Screen, event: events.Key) -> bool:
    """A typing key the dialog or picker on top does not bind: it was meant for the prompt."""
    if not (event.is_printable or event.key in _TYPING_KEYS):
        return False
    bound = {k.strip() for b in [*keymap.APP, *screen.BINDINGS] for k in _binding_keys(b)}
    return event.key not in bound


def _binding_keys(binding: Any) -> list[str]:
    key = binding.key if hasattr(binding, "key") else binding[0]
    return str(key).split(",")


#: Every screen but the run screen (``WardenApp.load_screens_css``).
SCREENS_CSS = Path(__file__).with_name("screens.tcss")


class WardenApp(App[None]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # the run screen's: what the first frame needs
    BINDINGS = keymap.APP
    TITLE = "Warden"
    SUB_TITLE = "approval console"

    def __init__(
        self,
        backend: ConsoleBackend,
        settings: ConsoleSettings | None = None,
        *,
        first_page: PendingPage | None = None,
        on_first_frame: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        #: how this console behaves (guard, refreshes, sizes, clocks): ``tui.console_settings``
        self.settings = settings = settings or ConsoleSettings()
        #: called once the first frame is painted (``tui.console_start`` turns the collector back on)
        self._on_first_frame = on_first_frame
        #: the newest page, read before the app started (``tui.console_start``): the picker opens
        #: on it at once, and the start-up check does not read it again.
        self._first_page = first_page
        self.backend = backend
        # what screens read of the settings (``tui.screens.base.ConsoleApp``)
        self.approval_guard = settings.approval_guard
        self.clock = settings.clock
        self.now = settings.now
        self.ring_bell = settings.bell
        #: The rule against decisions by accident (``tui.typing_guard``).
        self.guard = TypingGuard(
            settings.clock, quiet=settings.quiet, open_guard=settings.approval_guard, burst_gap=settings.burst
        )
        self.bounced_keys = 0
        #: Keys handled so far (held keys count once replayed).
        self.keys_handled = 0
        #: The open decision dialog and the calls waiting for theirs (``tui.dialog_queue``).
        self.dialogs = DialogQueue(self.guard)
        self.streams_done = 0
        self.decisions = 0
        self._screens_css = False
        #: Recovery and sweep of a local store, once its runtime is there (``_start_recovery``).
        self.schedules: Schedules | None = None
        #: Keys read before the screen they are meant for is ready (``tui.key_order``).
        self.keys = KeyQueue()
        self._key_in_hand = False
        self._keys_watch: Any = None

    # -- screens -------------------------------------------------------------------------------
    def load_screens_css(self) -> None:
        """Add the other screens' stylesheet (``screens.tcss``) to the app's: once the first frame
        is up, or before the first of those screens is pushed if that comes first. Parsing it
        (≈ 3 ms) is not part of the first frame, and the run screen's nodes are matched against
        fewer rules. Its rules stay app rules, in the order they had in one file."""
        if self._screens_css:
            return
        self._screens_css = True
        self.stylesheet.read(SCREENS_CSS)
        self.stylesheet.parse()  # only the new file: the others' rules are cached
        if self.css_monitor is not None:  # ``textual run --dev``: edits reload it too
            self.css_monitor.add_paths([SCREENS_CSS])

    def _load_screen_css(self, screen: Screen[Any]) -> None:
        """Every screen pushed or switched to passes here (Textual's own hook) before it is styled:
        one place for what a screen needs as it arrives. The other screens' stylesheet, if the
        first frame has not loaded it yet; and a screen opened by a key takes the keys typed
        after that key, held until it is ready (``tui.key_order``)."""
        if not isinstance(screen, RunScreen):
            self.load_screens_css()
            if self._key_in_hand:
                self.keys.holding = True
                screen.opened_by_key = True  # type: ignore[attr-defined]
        super()._load_screen_css(screen)

    def get_default_screen(self) -> Screen:
        return RunScreen(
            self.backend.list_agents(),
            self.backend.store_label,
            flush_interval=self.settings.flush_interval,
            max_log_lines=self.settings.max_log_lines,
            pending_refresh=self.settings.pending_refresh,
            per_page=self.settings.per_page,
        )

    def apply_cursor_blink(self, screen: Screen) -> None:
        """Inputs and text areas blink unless the app was made with ``cursor_blink=False``: a
        snapshot then shows the cursor whatever the time its screen took to come (a blinking one
        is hidden half of each second)."""
        if not self.settings.cursor_blink:
            for widget in screen.query("Input, TextArea"):
                widget.cursor_blink = False  # type: ignore[attr-defined]

    @property
    def run_screen(self) -> RunScreen:
        return cast(RunScreen, self.screen_stack[0])

    def on_mount(self) -> None:
        if self._on_first_frame is not None:
            self.call_after_refresh(self._on_first_frame)
        self.call_after_refresh(self.load_screens_css)
        self.set_interval(0.1, self.open_waiting_dialog, name="waiting-dialogs")
        if self.settings.status_refresh > 0:
            self.set_interval(self.settings.status_refresh, self.refresh_pending_count, name="pending-count")
        self._start_recovery()  # a runtime loaded after the first frame: once it has (``_initial_check``)
        page = self._first_page
        if page is not None and page.total and self.settings.open_picker:
            self.open_pending(page, first_screen=True)  # before the first frame: the run screen is not drawn first
        self.call_after_refresh(self._startup)

    def _start_recovery(self) -> None:
        """Crash recovery and the deadline sweep of a local store (``tui.components.schedules``)."""
        maintenance = self.backend.maintenance
        if maintenance is not None and self.schedules is None:
            from tui.components.schedules import Schedules

            self.schedules = Schedules(self, maintenance, on_expired=self._swept)
            self.schedules.start()

    def _swept(self) -> None:
        self.run_screen.poll_pending()  # expired calls leave the list, their dialogs close

    def _startup(self) -> None:
        self.run_backend(self._initial_check, "Could not read pending runs")

    async def _initial_check(self) -> None:
        backend = self.backend
        if not isinstance(backend, DeferredBackend) or backend.loaded is not None:
            await self._open_pending_at_start()
            return
        # The first frame is up. A store that lists without the runtime shows its pending runs
        # first; then the runtime loads, off the event loop (a load started earlier competes
        # with the picker for the interpreter).
        early = backend.lists_early
        try:
            if early:
                await self._open_pending_at_start()
        finally:
            self.call_after_refresh(backend.release)
        try:
            await backend.ready()
        except Exception:
            self.run_screen.drop_queued("the runtime did not load")
            raise
        await self.run_screen.set_agents(backend.list_agents(), backend.store_label)
        self._start_recovery()
        if not early:
            await self._open_pending_at_start()

    async def _open_pending_at_start(self) -> None:
        """The newest page with its counts, one query: the status bar's total, the panel's first
        poll, and the picker opened on that page when something is pending."""
        page, self._first_page = self._first_page, None
        opened = page is not None and page.total > 0 and self.settings.open_picker  # by ``on_mount``
        if page is None:
            from tui.backend import PendingQuery  # the backend's types load with it, after the first frame

            page = await self.backend.list_pending(
                page=0, per_page=self.settings.per_page, query=PendingQuery(), with_counts=True
            )
        self.run_screen.status.pending = page.total
        self.run_screen.show_first_page(page)
        if page.total and self.settings.open_picker and not opened:
            mounted = self.open_pending(page)
            if mounted is not None:
                await mounted

    async def on_unmount(self) -> None:
        if self.settings.close_backend:
            await self.backend.aclose()

    # -- one worker pattern: backend calls with errors to a modal -------------------------------
    def run_backend(self, work: Callable[[], Awaitable[Any]], title: str) -> Worker[None]:
        """Run ``work()`` in a worker; a failure opens an error modal (``WardenError``: code + message)."""

        async def guarded() -> None:
            try:
                await work()
            except WardenError as error:
                self._show_error(title, error.message or str(error), error.code)
            except Exception as error:  # a worker must never take the console down
                self._show_error(title, f"{type(error).__name__}: {error}")

        return self.run_worker(guarded, group="backend", exit_on_error=False)

    def _show_error(self, title: str, message: str, code: str | None = None) -> None:
        """An error modal, unless the same one is already showing (a repeated key stacks nothing)."""
        from tui.screens.error import ErrorModal

        for screen in self.screen_stack:
            if is_error(screen) and (screen.title_text, screen.message, screen.code) == (
                title,
                message,
                code,
            ):
                return
        self.push_screen(ErrorModal(title, message, code))

    async def consume(self, stream: RunStream) -> None:
        screen = self.run_screen
        screen.stream_started(stream.run_id)
        n = 0
        try:
            async for chunk in stream.full_stream:
                screen.handle_chunk(chunk)
                n += 1
                if n % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        finally:
            screen.stream_stopped(stream.run_id)
        screen.run_ended(stream.run_id, getattr(stream, "status", None))
        self.streams_done += 1
        await self.refresh_pending_count_now()

    async def _start_and_consume(self, start: Awaitable[RunStream]) -> None:
        stream = await start
        await self.consume(stream)

    def on_run_requested(self, message: RunRequested) -> None:
        self.start_run(message.agent_id, message.prompt)

    def start_run(self, agent_id: str, prompt: str) -> None:
        self.run_screen.status.run_state = "starting"
        self.run_backend(
            lambda: self._start_and_consume(self.backend.start_run(agent_id, prompt)), "Could not start the run"
        )

    # -- pending count -------------------------------------------------------------------------
    async def _pending_total(self) -> int:
        page = await self.backend.list_pending(page=0, per_page=1)
        self.run_screen.status.pending = page.total
        return page.total

    async def refresh_pending_count_now(self) -> None:
        try:
            await self._pending_total()
        except WardenError:
            pass

    def refresh_pending_count(self) -> Worker[None]:
        return self.run_worker(
            self.refresh_pending_count_now, group="pending-count", exclusive=True, exit_on_error=False
        )

    # -- dialogs -------------------------------------------------------------------------------
    def on_decision_needed(self, message: DecisionNeeded) -> None:
        if message.open_dialog:
            self.open_dialog(message.call)

    def on_open_call(self, message: OpenCall) -> None:
        self.open_dialog(message.call, deliberate=True)

    def on_review_waiting(self, message: ReviewWaiting) -> None:
        self.open_waiting_dialog(deliberate=True)

    @property
    def actor_label(self) -> str:
        """Who decides from this console: the runtime's actor, else the OS user."""
        actor = getattr(self.backend, "actor", None)
        if actor:
            return str(actor)
        import getpass  # a fallback, rarely reached: not loaded before the first frame

        try:
            return getpass.getuser()
        except Exception:  # no user name in this environment
            return "operator"

    def open_dialog(self, call: PendingCall, *, deliberate: bool = False, declining: bool = False) -> None:
        """Open the decision dialog of ``call``, or announce it and let it wait.

        ``deliberate``: the operator asked for this dialog (``f2``, enter on a listed call, the
        picker). Otherwise the dialog never takes the focus while the operator is typing
        (``tui.typing_guard``): the call waits in the banner and opens once typing has paused.
        """
        if not self.is_running:  # closing: no dialog is pushed onto screens being taken down
            return
        dialogs = self.dialogs
        if dialogs.open is not None or (not deliberate and self._must_wait()):
            if dialogs.wait(call) and dialogs.open is None and self.ring_bell:
                self.bell()
            self._show_waiting()
            return
        dialogs.opening(call)
        self._show_waiting()
        if call.kind == "approval":
            from tui.screens.approval import ApprovalModal

            self.push_screen(
                ApprovalModal(
                    call,
                    guard_seconds=self.approval_guard,
                    clock=self.clock,
                    declining=declining,
                    actor=self.actor_label,
                ),
                self._on_approval_closed,
            )
        else:

            async def submit(data: dict[str, Any]) -> RunStream:
                stream = await self.backend.resume(call.run_id, call.tool_call_id, data)
                # Ours from now on: polls leave the run alone until ``consume`` has read it.
                self.run_screen.stream_started(stream.run_id)
                return stream

            from tui.screens.resume_form import ResumeFormModal

            form = ResumeFormModal(call, submit, clock=self.clock)
            self.push_screen(form, self._on_form_closed)
            if declining:  # ``n`` in the picker: straight to the reason, as for an approval
                self.call_after_refresh(form.action_decline)

    def _must_wait(self) -> bool:
        """A dialog may not open by itself now: typing, or held back until the prompt is empty."""
        screen = self.run_screen
        return self.dialogs.must_wait(bool(screen.query("#prompt") and screen.prompt_text))

    def _show_waiting(self) -> None:
        screen = self.run_screen
        if screen.is_mounted and screen.query("#waiting-banner"):
            screen.show_waiting([] if self.dialogs.open is not None else self.dialogs.waiting)

    def open_waiting_dialog(self, *, deliberate: bool = False) -> bool:
        """Open the first waiting call's dialog if nothing is on top of the run screen (timer, ``f2``)."""
        dialogs = self.dialogs
        if dialogs.open is not None or len(self.screen_stack) > 1 or not dialogs.waiting:
            return False
        if not self.is_running or not self.screen_stack or not self.run_screen.query("#pending"):
            return False  # the app is closing: its screens are being taken down, timers still tick
        screen = self.run_screen
        if not deliberate and self._must_wait():
            return False
        nxt = dialogs.next(screen.pending.calls)
        if nxt is not None:
            self.open_dialog(nxt, deliberate=True)
            return True
        self._show_waiting()
        return False

    def _dialog_closed(self) -> None:
        self.dialogs.closed()
        if not self.open_waiting_dialog():
            self._show_waiting()

    # -- keys: nothing typed decides, nothing typed is lost, every key where it was meant -------
    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key):
            await super().on_event(event)
            return
        event = as_typed(event)
        if event.is_forwarded:  # a key given to a widget's queue (a bounce) and bubbled back
            await self._in_hand(super().on_event(event))
            return
        if self.keys.holding and not await self._release_keys():
            self.keys.keep(event)  # replayed, in order, once its screen is ready
            self._watch_keys()
            return
        await self._in_hand(self._handle_key(event))

    async def _in_hand(self, handling: Awaitable[None]) -> None:
        """Handle a key, knowing that a screen pushed meanwhile was opened by it."""
        self._key_in_hand = True
        try:
            await handling
        finally:
            self._key_in_hand = False

    async def _release_keys(self) -> bool:
        """Replay the held keys if their screen is ready; True when none is held any longer."""
        if not screen_ready(self):
            return False
        self.keys.holding = False
        while not self.keys.holding:
            held = self.keys.next()
            if held is None:
                return True
            await self._in_hand(self._handle_key(held))
        return False  # a replayed key opened a screen: the rest wait for it

    def _watch_keys(self) -> None:
        """Held keys wait for their screen: check until it is ready, then replay them in the queue's
        order (``KeysReady`` comes after every key read so far)."""
        if self._keys_watch is None:
            self._keys_watch = self.set_interval(0.01, self._check_keys, name="keys-ready")

    def _check_keys(self) -> None:
        if screen_ready(self):
            self._keys_watch.stop()
            self._keys_watch = None
            self.post_message(KeysReady())

    async def on_keys_ready(self, message: KeysReady) -> None:
        if self.keys.holding and not await self._release_keys():
            self._watch_keys()

    async def _handle_key(self, event: events.Key) -> None:
        """One key, completely: the typing guard, then where Textual would send it, now."""
        if not self.screen_stack:  # read as the console quits: nothing left to take it
            return
        self.keys_handled += 1
        self.guard.key_pressed()
        if self._bounce(event):
            return
        screen = self.screen
        if is_call_dialog(screen) and not screen_ready(self):
            # A dialog that opened by itself and is not shown yet: the key was typed for the prompt.
            self.run_screen.type_into_prompt(event)
            return
        if screen is self.run_screen and self.focused is None and screen.query("#prompt"):
            screen.set_focus(self.run_screen.prompt)  # back from a dialog: the prompt, at once
        if not self.app_focus:
            self.app_focus = True
        if screen.maximized is not None and event.key == "escape" and self.escape_to_minimize:
            screen.minimize()
            return
        if self.focused:
            screen._clear_tooltip()
        if not await self._check_bindings(event.key, priority=True):
            await deliver(self, event)

    def _bounce(self, event: events.Key) -> bool:
        """A key that may not act on the dialog (or picker) on top: close it back to the banner
        and give the key to the prompt. True when the key was handled so."""
        top = self.screen
        if not (is_call_dialog(top) or is_picker(top)) or event.key == "escape":
            return False
        if not getattr(top, "bounced", False):
            # ``Switch`` here, not at the top: its module is ≈ 1 ms of the first frame, and only
            # the resume form (imported later) makes switches
            from textual.widgets import Switch

            focused = self.focused
            field = isinstance(focused, Input | Select | Switch) and focused.screen is top
            if field and self.clock() - top.opened_at >= self.guard.open_guard:
                return False  # typing a reason or a form field, deliberately opened
            if is_picker(top) and self._picker_may_act(top, event):
                return False
            if self.guard.may_act(top.opened_at) and (field or not _typed_elsewhere(top, event)):
                return False
            top.bounced = True
            if is_picker(top):
                top.dismiss(None)
            elif is_approval(top):
                from tui.screens.approval import ApprovalDecision

                self.dialogs.bounced(top.call)
                top.dismiss(ApprovalDecision("leave", top.call))
            elif is_resume_form(top):
                self.dialogs.bounced(top.call)
                top.dismiss(None)
        self.bounced_keys += 1
        self.run_screen.type_into_prompt(event)
        return True

    def _picker_may_act(self, picker: PendingPicker, event: events.Key) -> bool:
        """A picker the operator asked for (by a key) or that is the console's first screen: its
        own keys that decide nothing (enter opens a run, whose dialog has its own guard; arrows,
        ``j``/``k``, ``/``, sorts) act as soon as it is ready. ``y``/``n`` keep the whole guard, and
        so does every key on a picker that opened by itself over the prompt (typing may be under way)."""
        if not (picker.opened_by_key or picker.first_screen):
            return False
        return event.key not in ("y", "n") and not _typed_elsewhere(picker, event)

    # -- deadlines: the sweep of a local runtime ------------------------------------------------
    def run_sweep(self) -> Worker[None] | None:
        """Expire overdue approvals of a local runtime now (``Runtime.sweep``); the server sweeps its own."""
        return self.schedules.sweep_now() if self.schedules is not None else None

    def on_deadline_passed(self, message: DeadlinePassed) -> None:
        self.run_sweep()

    def _on_approval_closed(self, decision: ApprovalDecision | None) -> None:
        if decision is not None and decision.stream is not None:  # approved from the edit or grant screen
            self._approved_here(decision)
        elif decision is not None and decision.action != "leave":
            self.decide(
                decision.call,
                approve=decision.action == "approve",
                reason=decision.reason,
                fingerprint=decision.fingerprint,
            )
        self._dialog_closed()

    def _approved_here(self, decision: ApprovalDecision) -> None:
        call, stream = decision.call, decision.stream
        self.decisions += 1
        if decision.args is not None:
            self.run_screen.log_decision(
                call, "approved with edited args", self.actor_label, to_json(decision.args, indent=None)
            )
        else:
            self.run_screen.log_decision(call, "approved and granted", self.actor_label, decision.grant_rule)
        self.post_message(CallResolved(call.run_id, call.tool_call_id))
        self.run_backend(lambda: self.consume(stream), f"The approved run of {call.tool_name} failed")

    def _on_form_closed(self, stream: RunStream | FormDecline | None) -> None:
        from tui.screens.resume_form import FormDecline  # the form was open: loaded

        call = self.dialogs.open
        if isinstance(stream, FormDecline):
            if call is not None:
                self.decide(call, approve=False, reason=stream.reason)
        elif stream is not None and call is not None:
            self.decisions += 1
            self.run_screen.log_decision(call, "resumed", self.actor_label, None)
            self.post_message(CallResolved(call.run_id, call.tool_call_id))
            self.run_backend(lambda: self.consume(stream), "The resumed run failed")
        self._dialog_closed()

    def on_calls_gone(self, message: CallsGone) -> None:
        self.calls_decided_elsewhere(message.removals)

    def calls_decided_elsewhere(self, removals: list[Removal]) -> None:
        """A poll found calls no longer pending: close an open dialog on one of them (acting
        on it could only fail), with a notification saying why; drop queued ones. The log says
        what was decided and by whom (the store's audit log)."""
        from tui.reconcile import dialogs_to_close  # the store poll's: loaded after the first frame

        self.run_backend(lambda: self._log_decided_elsewhere([r.call for r in removals]), "Could not read decisions")
        self.dialogs.drop(r.call.key for r in dialogs_to_close(removals, self.dialogs.waiting))
        dialogs = [
            s
            for s in reversed(self.screen_stack)  # an editor or grant choice on top closes first
            if is_call_dialog(s) or is_edit_args(s) or is_grant_choice(s)
        ]
        closing = {r.call.key for r in dialogs_to_close(removals, [d.call for d in dialogs])}
        for screen in dialogs:
            if screen.call.key in closing:
                if screen.close_as_decided_elsewhere() and not (is_edit_args(screen) or is_grant_choice(screen)):
                    self._notify_closed(screen.call)

    def _notify_closed(self, call: PendingCall, *, expired: bool = False) -> None:
        """Why a dialog closed: expired (its deadline passed: not declined, the tool never ran) or decided elsewhere."""
        tool = escape_unsafe(call.tool_name, multiline=False)  # untrusted, and not markup
        call_id = escape_unsafe(call.tool_call_id, multiline=False)
        if expired or (call.expires_at is not None and call.expires_at <= self.now()):
            self.notify(
                f"{tool} (run {call.run_id[:8]}, call {call_id}) expired: no decision before its deadline, "
                "so it was not run (expired, not declined); its dialog was closed.",
                title="Expired",
                severity="error",
                markup=False,
            )
            return
        self.notify(
            f"{tool} (run {call.run_id[:8]}, call {call_id}) was decided elsewhere "
            "or its run ended; its dialog was closed (the log says who decided).",
            title="No longer pending",
            severity="warning",
            markup=False,
        )

    async def _log_decided_elsewhere(self, calls: list[PendingCall]) -> None:
        contexts: dict[str, RunContextView] = {}
        for call in calls:
            if call.run_id not in contexts:
                contexts[call.run_id] = await self.backend.run_context(call.run_id)
            decision = contexts[call.run_id].decision_of(call.tool_call_id)
            if decision is not None:
                self.run_screen.log_decision(call, decision.decision, decision.actor, decision.reason, elsewhere=True)
            else:
                line = Text("◇ no longer pending (its run ended): ", style="dim")
                line.append_text(safe_text(call.tool_name, "bold", multiline=False))
                self.run_screen.log_view.write_entry(line)

    def on_call_resolved(self, message: CallResolved) -> None:
        self.run_screen.pending.remove_call(message.run_id, message.tool_call_id)

    def decide(
        self, call: PendingCall, *, approve: bool, reason: str | None = None, fingerprint: str | None = None
    ) -> None:
        async def go() -> None:
            try:
                if approve:
                    stream = await self.backend.approve(call.run_id, call.tool_call_id, fingerprint)
                else:
                    stream = await self.backend.decline(call.run_id, call.tool_call_id, reason)
            except WardenError as error:
                from agent_core.errors import ApprovalExpired
                from tui.backend import GONE

                if error.code == ApprovalExpired.code:  # its deadline passed: expired, never declined
                    self.post_message(CallResolved(call.run_id, call.tool_call_id))
                    self.run_sweep()
                    self._notify_closed(call, expired=True)
                    return
                if error.code in GONE:  # decided elsewhere, or the run ended: no longer ours to decide
                    self.post_message(CallResolved(call.run_id, call.tool_call_id))
                raise
            finally:
                picker = self._picker()
                if picker is not None:  # decided (or refused): the picker lists the store's truth
                    picker.decision_done(call)
            self.decisions += 1
            self.run_screen.log_decision(call, "approved" if approve else "declined", self.actor_label, reason)
            self.post_message(CallResolved(call.run_id, call.tool_call_id))
            await self.consume(stream)
            picker = self._picker()
            if picker is not None:
                picker.reload()

        verb = "approve" if approve else "decline"
        self._say_if_deferred(f"the decision ({verb}) is taken")
        self.run_backend(go, f"Could not {verb} {call.tool_name}")

    def on_decide_call(self, message: DecideCall) -> None:
        self.decide_from_list(message.call, approve=message.approve)

    def decide_from_list(self, call: PendingCall, *, approve: bool) -> None:
        """``y`` in the picker approves with the listed call's fingerprint; ``n`` opens the call's
        dialog ready to decline, so that a reason can be given (as in the dialog). An input call
        cannot be approved: ``y`` opens its resume form, ``n`` the form ready to decline."""
        self.run_screen.show_call(call)
        if approve and call.kind == "approval":
            self.decide(call, approve=True, fingerprint=call.fingerprint)
        else:
            self.open_dialog(call, deliberate=True, declining=not approve)

    def _picker(self) -> PendingPicker | None:
        return next((s for s in self.screen_stack if is_picker(s)), None)

    # -- relaunch ------------------------------------------------------------------------------
    def action_open_pending(self) -> None:
        self.open_pending()

    def open_pending(self, first_page: PendingPage | None = None, *, first_screen: bool = False) -> AwaitMount | None:
        """The picker (``first_page``: already read, shown without asking the store again;
        ``first_screen``: the console opens on it, nothing was typed for the prompt before)."""
        if is_picker(self.screen):
            return None
        from tui.screens.picker import PendingPicker

        picker = PendingPicker(
            per_page=self.settings.per_page,
            refresh_interval=self.settings.picker_refresh,
            now=self.now,
            first_page=first_page,
        )
        picker.first_screen = first_screen
        return self.push_screen(picker, self._on_picker_closed)

    def _on_picker_closed(self, call: PendingCall | None) -> None:
        if call is not None:
            self._say_if_deferred(f"run {call.run_id[:8]} opens")
            self.run_backend(lambda: self._open_run(call), "Could not open the run")

    def _say_if_deferred(self, what: str) -> None:
        """An action that must wait for the runtime still loading: the log says so (it is taken
        once the runtime has loaded; a failure to load is its own error dialog)."""
        backend = self.backend
        if isinstance(backend, DeferredBackend) and backend.loaded is None:
            self.run_screen.log_view.write_entry(
                Text(f"⧗ the runtime is still loading: {what} once the runtime has loaded", style="dim")
            )

    async def _open_run(self, call: PendingCall) -> None:
        run = await self.backend.get_run(call.run_id)
        screen = self.run_screen
        try:
            screen.replay(await self.backend.run_context(call.run_id))
        except WardenError:
            pass  # the context is a help: the call can be decided without it
        for c in run.calls:
            screen.show_call(c)
        target = next((c for c in run.calls if c.tool_call_id == call.tool_call_id), None)
        if target is None and run.calls:
            target = run.calls[0]
        if target is not None:
            self.open_dialog(target, deliberate=True)

    # -- other actions -------------------------------------------------------------------------
    def action_audit(self) -> None:
        from tui.screens.audit import AuditScreen

        if not isinstance(self.screen, AuditScreen):
            self.push_screen(AuditScreen())

    def action_grants(self) -> None:
        from tui.screens.grants import GrantsScreen

        if not isinstance(self.screen, GrantsScreen):
            self.push_screen(GrantsScreen())

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen  # rich.table only when asked

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_new_run(self) -> None:
        while len(self.screen_stack) > 1 and not is_call_dialog(self.screen):
            self.pop_screen()
        self.run_screen.new_run()

    def focused_call(self) -> PendingCall | None:
        if is_picker(self.screen):
            return self.screen.focused_call
        return self.run_screen.pending.focused_call

    def action_approve_focused(self) -> None:
        call = self.focused_call()
        if call is not None:
            self.open_dialog(call, deliberate=True)

    def action_decline_focused(self) -> None:
        """Open the call's dialog ready to decline: a reason can be given, enter confirms."""
        call = self.focused_call()
        if call is not None and call.kind == "approval":
            if is_picker(self.screen):
                self.screen.dismiss(None)
            self.run_screen.show_call(call)
            self.open_dialog(call, deliberate=True, declining=True)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("New run", "Clear the log and focus the prompt", self.action_new_run)
        yield SystemCommand("Open pending runs", "Runs waiting for a decision in the store", self.action_open_pending)
        yield SystemCommand(
            "Approve focused call", "Open the approval dialog of the highlighted call", self.action_approve_focused
        )
        yield SystemCommand(
            "Decline focused call", "Decline the highlighted call, with a reason", self.action_decline_focused
        )
        yield SystemCommand("Grants", "Live always-allow grants: list and revoke (f4)", self.action_grants)
        yield SystemCommand("Help", "Show all key bindings", self.action_help)
        yield from super().get_system_commands(screen)
