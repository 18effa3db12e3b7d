"""LangGraph graphs in Warden: LangChain's ``HumanInTheLoopMiddleware`` interrupts, ``Command`` resumes.

A compiled graph with a checkpointer (a durable one, shared by every process that hosts the agent,
for decisions taken elsewhere). Each Warden run is a LangGraph thread (``warden-<run id>``); the
snapshot keeps the thread and the checkpoint id of the interrupt. An interrupt's action requests
become Warden's waiting calls (their ids are the tool calls' LangChain ``id``); a decision
resumes from (a fork of) that checkpoint with ``Command(resume={"decisions": [...]})`` (``approve``,
``edit``, ``reject`` with the message); ``per_call`` interrupts are answered by interrupt id.
Warden's policy and the request's ``require_tool_approval`` reach the middleware as ``when``
predicates on the tools it does not always review.
Sync-only checkpointers (``SqliteSaver``) run the graph in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, cast

from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import Command

from agent_core.adapters.hosted import FrameworkAgent
from agent_core.adapters.protocol import FrameworkTool, Gate, Outcome, Pending, Seen, Verdict
from agent_core.errors import InvalidRequest, WardenError
from agent_core.models import Message

__all__ = ["LangGraphFramework", "from_langgraph"]


def from_langgraph(graph: Any, *, id: str, name: str | None = None, **options: Any) -> FrameworkAgent:
    """Host a compiled graph (``create_agent(..., middleware=[HumanInTheLoopMiddleware(...)],
    checkpointer=...)``); ``options``: as ``FrameworkAgent`` takes (``description``, ``memory``, ...)."""
    if getattr(graph, "checkpointer", None) is None or not hasattr(graph, "get_state"):
        raise InvalidRequest(
            "from_langgraph needs a compiled graph with a checkpointer (interrupts need one; a durable one, "
            "shared by every process that hosts the agent, for decisions taken elsewhere)"
        )
    return FrameworkAgent(LangGraphFramework(graph), id=id, name=name or getattr(graph, "name", None) or id, **options)


class LangGraphFramework:
    """Starts and resumes one compiled graph's threads (the ``Framework`` protocol)."""

    kind = "langgraph"

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self._async: bool | None = None  # does the checkpointer speak asyncio? (probed on first use)
        middleware = _review_middleware(graph)
        gated = dict(middleware.interrupt_on) if middleware is not None else {}
        self._tools: dict[str, FrameworkTool] = {}
        for node in graph.nodes.values():
            for tool_name, tool in (getattr(node.bound, "tools_by_name", None) or {}).items():
                config = gated.get(tool_name)
                self._tools[tool_name] = FrameworkTool(
                    tool_name,
                    tool.description or "",
                    _schema(tool),
                    require_approval=True if config is not None and config.get("when") is None else None,
                    editable=config is None or "edit" in config.get("allowed_decisions", []),
                )
                if middleware is not None:
                    # Warden's policy reaches the middleware through ``when``: a tool it does not review
                    # (or reviews only sometimes) is also reviewed when Warden's policy asks, in Warden runs.
                    middleware.interrupt_on[tool_name] = cast(Any, _asking_warden(config))

    @property
    def tools(self) -> Mapping[str, FrameworkTool]:
        return self._tools

    async def start(self, messages: list[Message], gate: Gate, *, run_id: str, thread_id: str | None) -> Outcome:
        config = {"configurable": {"thread_id": f"warden-{run_id}"}}
        inputs = [{"role": m.role, "content": m.content} for m in messages if m.role in ("user", "assistant")]
        await self._invoke({"messages": inputs}, config, gate)
        return await self._outcome(config, seen=0)

    async def resume(self, state: Any, verdicts: dict[str, Verdict], gate: Gate, *, run_id: str) -> Outcome:
        try:
            thread, checkpoint, interrupts = state["thread_id"], state["checkpoint_id"], state["interrupts"]
            seen = int(state["messages"])
        except (KeyError, TypeError, ValueError) as exc:
            raise WardenError(
                f"run {run_id!r}: the stored LangGraph thread reference is unreadable: {exc!r}", code="AGENT_RUN_FAILED"
            ) from exc
        answers: dict[str, Any] = {}
        for interrupt in interrupts:
            decisions = [_decision(c["name"], verdicts.get(c["id"])) for c in interrupt["calls"]]
            answers[interrupt["id"]] = decisions[0] if interrupt["mode"] == "per_call" else {"decisions": decisions}
        # One batched interrupt (the usual case) is answered as LangChain documents it.
        resume = next(iter(answers.values())) if len(answers) == 1 and interrupts[0]["mode"] == "batched" else answers
        at = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint}}
        fork = at
        if any(interrupt["mode"] == "batched" for interrupt in interrupts):
            # A batched review resumes on a fork of the interrupt's checkpoint: that checkpoint may hold an
            # earlier attempt's answer (a process that died applying a decision), which LangGraph would replay
            # instead of this one. Per-call interrupts are answered by interrupt id, on the checkpoint itself:
            # LangGraph takes the new answer there, and a fork would run the turn's tool calls again.
            fork = await self._call(self.graph.aupdate_state, self.graph.update_state, at, None)
        # The resumed node asks its ``when`` again about the calls of the stopped turn: it must answer as
        # at the stop (LangChain matches the decisions to the calls it holds), whatever the gate says now
        # (a request function is gone in another process and would ask about every call).
        reviewed = {c["id"] for interrupt in interrupts for c in interrupt["calls"]}
        replay = {str(i): i in reviewed for i in state.get("turn", [])} | dict.fromkeys(reviewed, True)
        await self._invoke(Command(resume=resume), fork, gate, replay)
        return await self._outcome({"configurable": {"thread_id": thread}}, seen=seen)

    async def _uses_asyncio(self) -> bool:
        if self._async is None:
            try:
                await self.graph.checkpointer.aget_tuple({"configurable": {"thread_id": "warden-probe"}})
                self._async = True
            except NotImplementedError:  # a sync-only checkpointer (SqliteSaver)
                self._async = False
        return self._async

    async def _call(self, async_fn: Any, sync_fn: Any, *args: Any) -> Any:
        """The graph's async method with an async checkpointer, else its sync one in a worker thread."""
        if await self._uses_asyncio():
            return await async_fn(*args)
        return await asyncio.to_thread(sync_fn, *args)

    async def _invoke(
        self, inputs: Any, config: dict[str, Any], gate: Gate, replay: Mapping[str, bool] | None = None
    ) -> None:
        token = _GATE.set(_Asking(gate, replay or {}))  # copied into the worker thread and the graph's tasks
        try:
            await self._call(self.graph.ainvoke, self.graph.invoke, inputs, config)
        finally:
            _GATE.reset(token)

    async def _outcome(self, config: dict[str, Any], *, seen: int) -> Outcome:
        snap = await self._call(self.graph.aget_state, self.graph.get_state, config)
        messages: list[BaseMessage] = list(snap.values.get("messages", []))
        events = _events(messages[seen:])
        state: dict[str, Any] = {
            "thread_id": snap.config["configurable"]["thread_id"],
            "checkpoint_id": snap.config["configurable"].get("checkpoint_id"),
            "messages": len(messages),
            "interrupts": [],
            "turn": [],
        }
        if not snap.interrupts:
            last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
            return Outcome(state=state, events=events, text=_text(last) if last is not None else "")
        last_calls = next((m.tool_calls for m in reversed(messages) if isinstance(m, AIMessage)), [])
        state["turn"] = [str(c.get("id")) for c in last_calls if c.get("id")]
        pending: list[Pending] = []
        for interrupt in snap.interrupts:
            value = interrupt.value if isinstance(interrupt.value, Mapping) else {}
            if value.get("type") == "tool_approval":
                calls = [Pending(str(value["tool_call_id"]), str(value["name"]), dict(value.get("args") or {}))]
                mode = "per_call"
            elif "action_requests" in value:
                calls = _match(value["action_requests"], last_calls)
                mode = "batched"
            else:
                raise WardenError(
                    f"the graph interrupted with a value Warden cannot review ({type(interrupt.value).__name__}); "
                    "only HumanInTheLoopMiddleware's interrupts are hosted",
                    code="AGENT_RUN_FAILED",
                )
            pending.extend(calls)
            state["interrupts"].append(
                {"id": interrupt.id, "mode": mode, "calls": [{"id": c.id, "name": c.name} for c in calls]}
            )
        return Outcome(state=state, events=events, pending=pending)


class _Asking:
    """What the middleware's ``when`` asks in one invocation: the run's gate, except for the calls of a
    resumed turn (``replay``: tool-call id -> the answer given at the stop)."""

    def __init__(self, gate: Gate, replay: Mapping[str, bool]) -> None:
        self.gate, self.replay = gate, replay


#: the Warden run a graph invocation belongs to (its gate), for the middleware's ``when`` predicates.
_GATE: ContextVar[_Asking | None] = ContextVar("warden_langgraph_gate", default=None)


def _asking_warden(own: Mapping[str, Any] | None) -> dict[str, Any]:
    """An ``interrupt_on`` entry: the tool's own review (always, or its ``when``), else Warden's policy."""
    if own is not None and own.get("when") is None:
        return dict(own)  # always reviewed
    when = own.get("when") if own is not None else None

    def asks(request: Any) -> bool:
        asking = _GATE.get()
        call = request.tool_call
        call_id = str(call.get("id") or "")
        if asking is not None and call_id in asking.replay:
            return asking.replay[call_id]
        if when is not None and when(request):
            return True
        if asking is None:
            return False  # not a Warden run
        return asking.gate.requires_approval_now(call["name"], dict(call["args"]), call_id)

    base = dict(own) if own is not None else {"allowed_decisions": ["approve", "edit", "reject"]}
    return {**base, "when": asks}


def _review_middleware(graph: Any) -> HumanInTheLoopMiddleware | None:
    for node in graph.nodes.values():
        owner = getattr(getattr(node.bound, "func", None), "__self__", None)
        if isinstance(owner, HumanInTheLoopMiddleware):
            return owner
    return None


def _schema(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "args_schema", None)
    if isinstance(schema, dict):
        return schema
    if schema is not None and hasattr(schema, "model_json_schema"):
        return dict(schema.model_json_schema())
    return {"type": "object"}


def _match(requests: list[Any], tool_calls: list[Any]) -> list[Pending]:
    """A batched interrupt's action requests, in order, as the model's tool calls they review."""
    free = list(tool_calls)
    out: list[Pending] = []
    for request in requests:
        found = next((c for c in free if c["name"] == request["name"] and c["args"] == request["args"]), None)
        if found is None or not found.get("id"):
            raise WardenError(
                f"the interrupt reviews a call of {request['name']!r} that has no tool-call id in the model's message",
                code="AGENT_RUN_FAILED",
            )
        free.remove(found)
        out.append(Pending(str(found["id"]), str(found["name"]), dict(found["args"])))
    return out


def _decision(name: str, verdict: Verdict | None) -> dict[str, Any]:
    if verdict is None or not verdict.approved:
        message = verdict.message if verdict is not None else None
        return {"type": "reject", **({"message": message} if message else {})}
    if verdict.args is not None:
        return {"type": "edit", "edited_action": {"name": name, "args": verdict.args}}
    return {"type": "approve"}


def _events(messages: list[BaseMessage]) -> list[Seen]:
    out: list[Seen] = []
    for m in messages:
        if isinstance(m, AIMessage):
            if m.tool_calls and _text(m):
                out.append(Seen("text", text=_text(m)))
            for c in m.tool_calls:
                out.append(Seen("tool-call", id=str(c.get("id") or ""), name=c["name"], args=dict(c["args"])))
        elif isinstance(m, ToolMessage):
            out.append(
                Seen(
                    "tool-result",
                    id=m.tool_call_id,
                    name=m.name or "",
                    result=m.content,
                    is_error=m.status == "error",
                )
            )
    return out


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
