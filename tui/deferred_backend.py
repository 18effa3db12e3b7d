"""``DeferredBackend``: the console's backend until its runtime has loaded.

Its own module, apart from ``tui.backend``, so that the console's first frame creates none of
the backend's value types (a frozen dataclass costs ≈ 0.4 ms to create; ``tui.backend`` has
six, with its protocols): they load with the runtime, after the first frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_core.decision_context import RunContextView
    from tui.backend import AgentInfo, ConsoleBackend, GrantSpec, PendingPage, PendingRun, RunStream
    from tui.components.schedules import Maintenance


class DeferredBackend:
    """A ``ConsoleBackend`` built after the console's first frame.

    ``load`` (a zero-argument callable returning the real backend, e.g. a ``LocalBackend`` over
    the demo runtime) runs in a thread on first use: importing the runtime and building its
    pydantic models costs more than Textual's own start, and the first frame does not need it.
    Every call waits for it; ``list_agents`` is empty until then (``WardenApp`` fills the agent
    selector when it is ready). A failure to load is raised by every call (the app shows it).

    ``peek``: pending pages read without the runtime (``tui.store_peek``), used until it is
    loaded: the picker lists its first page while the runtime waits (None: the runtime must answer).
    """

    def __init__(
        self,
        load: Callable[[], ConsoleBackend],
        *,
        store_label: str = "…",
        peek: Callable[..., PendingPage | None] | None = None,
    ) -> None:
        self._load = load
        self._peek = peek
        self._peeked = False
        self.store_label = store_label
        self.loaded: ConsoleBackend | None = None
        self._loading: asyncio.Future[ConsoleBackend] | None = None
        self._released: asyncio.Event | None = None

    def release(self) -> None:
        """Let the load start (the app calls it once its first frame is painted: a load that
        starts earlier competes with it for the interpreter)."""
        self._gate().set()

    def _gate(self) -> asyncio.Event:
        if self._released is None:
            self._released = asyncio.Event()
        return self._released

    async def ready(self) -> ConsoleBackend:
        """The real backend (loaded once, off the event loop, after ``release``)."""
        if self.loaded is None:
            await self._gate().wait()
            if self._loading is None:
                self._loading = asyncio.ensure_future(asyncio.to_thread(self._load))
            self.loaded = await asyncio.shield(self._loading)
            self.store_label = self.loaded.store_label
        return self.loaded

    @property
    def runtime(self) -> Any:
        return getattr(self.loaded, "runtime", None)

    @property
    def maintenance(self) -> Maintenance | None:
        """The loaded backend's (none before it has loaded: the app schedules it once it has)."""
        return self.loaded.maintenance if self.loaded is not None else None

    @property
    def actor(self) -> str | None:
        return getattr(self.loaded, "actor", None)

    def list_agents(self) -> list[AgentInfo]:
        return self.loaded.list_agents() if self.loaded is not None else []

    async def start_run(
        self, agent_id: str, prompt: str, *, thread_id: str | None = None, resource_id: str | None = None
    ) -> RunStream:
        return await (await self.ready()).start_run(agent_id, prompt, thread_id=thread_id, resource_id=resource_id)

    async def approve(
        self, run_id: str, tool_call_id: str, fingerprint: str | None, *, args: dict[str, Any] | None = None
    ) -> RunStream:
        return await (await self.ready()).approve(run_id, tool_call_id, fingerprint, args=args)

    async def decline(self, run_id: str, tool_call_id: str, reason: str | None) -> RunStream:
        return await (await self.ready()).decline(run_id, tool_call_id, reason)

    async def resume(self, run_id: str, tool_call_id: str, data: dict[str, Any]) -> RunStream:
        return await (await self.ready()).resume(run_id, tool_call_id, data)

    @property
    def lists_early(self) -> bool:
        """Pending pages can be read before the runtime is loaded."""
        return self._peek is not None and self.loaded is None

    async def list_pending(self, **kw: Any) -> PendingPage:
        if self._peek is not None and self.loaded is None:
            peek = self._peek
            if self._peeked:
                page = await asyncio.to_thread(lambda: peek(**kw))
            else:
                # The first read runs here, on the event loop (a few tens of ms, after the first
                # frame): it imports the store's modules, and an import in a worker thread waits
                # for the interpreter at every file it reads while the loop renders.
                self._peeked = True
                page = peek(**kw)
            if page is not None:
                return page
            self._peek = None  # the file cannot answer (a schema to migrate): the runtime does
            self.release()
        return await (await self.ready()).list_pending(**kw)

    async def get_run(self, run_id: str) -> PendingRun:
        return await (await self.ready()).get_run(run_id)

    async def audit(self, *, last: int = 200) -> list[Any]:
        return await (await self.ready()).audit(last=last)

    async def run_context(self, run_id: str) -> RunContextView:
        return await (await self.ready()).run_context(run_id)

    def grants_allowed(self, tool_name: str) -> bool:
        # no call can be on screen before the load (calls come from the backend): nothing to grant yet
        return self.loaded is not None and self.loaded.grants_allowed(tool_name)

    def command_argument(self, tool_name: str) -> str | None:
        return self.loaded.command_argument(tool_name) if self.loaded is not None else None

    async def grant(self, tool_name: str, spec: GrantSpec) -> Any:
        return await (await self.ready()).grant(tool_name, spec)

    async def list_grants(self) -> list[Any]:
        return await (await self.ready()).list_grants()

    async def revoke_grant(self, grant_id: str) -> None:
        await (await self.ready()).revoke_grant(grant_id)

    async def aclose(self) -> None:
        if self._loading is not None:
            try:
                backend = await self._loading
            except Exception:  # it never loaded: nothing to close
                return
            await backend.aclose()
