"""Tools: typed inputs, optional approval, and suspension from inside ``execute``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agent_core.errors import InvalidToolDefinition, SuspendPayloadInvalid, ToolOutputNotSerializable
from agent_core.limits import valid_timeout

ExecuteFn = Callable[[Any, "ToolContext"], Any]
#: Tool-level hooks (``create_tool(hooks=...)``): ``on_input_available`` and ``on_output``.
TOOL_HOOKS = frozenset({"on_input_available", "on_output"})


class Suspension:
    """What ``ctx.suspend()`` returns: a marker the run loop recognises.

    It is also awaitable (resolving to itself), so ``return await ctx.suspend(...)``
    in an async tool and ``return ctx.suspend(...)`` in a sync one both work.
    """

    __slots__ = ("payload",)

    def __init__(self, payload: Any) -> None:
        self.payload = payload

    def __await__(self) -> Generator[Any, None, Suspension]:
        return self
        yield  # pragma: no cover - makes this a generator


class ToolWriter:
    """``ctx.writer``: ``await ctx.writer.write(data)`` streams a ``tool-output`` chunk while the tool runs."""

    __slots__ = ("_emit", "tool_name")

    def __init__(self, emit: Callable[[Any], Awaitable[None]] | None, tool_name: str = "") -> None:
        self._emit = emit
        self.tool_name = tool_name

    async def write(self, data: Any) -> None:
        """Emit ``data`` (JSON-serialisable: dicts, lists, strings, numbers, pydantic models) now."""
        value = self._jsonable(data)
        if self._emit is not None:
            await self._emit(value)

    def _jsonable(self, data: Any) -> Any:
        try:
            return to_jsonable_python(data)
        except (PydanticSerializationError, TypeError, ValueError) as exc:
            raise ToolOutputNotSerializable(
                f"tool {self.tool_name!r} wrote progress that is not JSON-serialisable ({type(data).__name__}): {exc}"
            ) from exc


_NO_WRITER = ToolWriter(None)


@dataclass
class ToolContext:
    """What a tool knows about the call it serves."""

    run_id: str
    tool_call_id: str
    thread_id: str | None = None
    resource_id: str | None = None
    request_context: dict[str, Any] = field(default_factory=dict)
    resume_data: Any = None
    agent_id: str | None = None
    tool_name: str = ""
    #: progress chunks (``tool-output``) for the live stream: ``await ctx.writer.write(data)``.
    writer: ToolWriter = field(default=_NO_WRITER)
    _suspend_schema: type[BaseModel] | None = None
    _suspension: Suspension | None = None

    def suspend(self, payload: Any = None) -> Suspension:
        """Ask for resume data. Does not raise: write ``return await ctx.suspend({...})``."""
        if self._suspend_schema is not None:
            try:
                model = self._suspend_schema.model_validate(payload)
            except ValidationError as exc:
                raise SuspendPayloadInvalid(
                    f"tool {self.tool_name!r} suspended with a payload that fails its suspend_schema: {exc}"
                ) from exc
            payload = model.model_dump(mode="json")
        self._suspension = Suspension(payload)
        return self._suspension

    @property
    def suspended(self) -> bool:
        return self._suspension is not None


class Tool:
    """A callable capability the model may invoke. Build one with ``create_tool`` or ``@tool``."""

    def __init__(
        self,
        *,
        id: str,
        description: str,
        input_schema: type[BaseModel],
        execute: ExecuteFn,
        output_schema: type[BaseModel] | None = None,
        suspend_schema: type[BaseModel] | None = None,
        resume_schema: type[BaseModel] | None = None,
        require_approval: bool | None = None,
        idempotent: bool = False,
        hooks: Mapping[str, Callable[..., Any]] | None = None,
        sequential: bool = False,
        approval_timeout: float | None = None,
        allow_grants: bool = True,
    ) -> None:
        if approval_timeout is not None and not valid_timeout(approval_timeout):
            raise InvalidToolDefinition(
                f"tool {id!r}: approval_timeout must be a positive number of seconds (at most ten years)"
            )
        #: seconds an approval may wait before the sweep expires it (wins over request and agent settings).
        self.approval_timeout = None if approval_timeout is None else float(approval_timeout)
        #: False: never covered by a grant, and ``runtime.grant`` refuses it.
        self.allow_grants = bool(allow_grants)
        #: running it twice is harmless: an interrupted call is re-executed by ``recover()``.
        self.idempotent = bool(idempotent)
        for name, schema in (
            ("input_schema", input_schema),
            ("output_schema", output_schema),
            ("suspend_schema", suspend_schema),
            ("resume_schema", resume_schema),
        ):
            if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
                raise InvalidToolDefinition(f"tool {id!r}: {name} must be a pydantic BaseModel subclass")
        if not callable(execute):
            raise InvalidToolDefinition(f"tool {id!r}: execute must be callable")
        if require_approval not in (None, True, False):
            raise InvalidToolDefinition(f"tool {id!r}: require_approval must be None, True or False")
        self.id = id
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.suspend_schema = suspend_schema
        self.resume_schema = resume_schema
        self.require_approval = require_approval
        unknown = set(hooks or {}) - TOOL_HOOKS
        if unknown:
            raise InvalidToolDefinition(
                f"tool {id!r}: unknown hooks {sorted(unknown)} (known: {', '.join(sorted(TOOL_HOOKS))})"
            )
        #: ``on_input_available(call)`` / ``on_output(call, output)``; empty when unset.
        self.hooks: dict[str, Callable[..., Any]] = {k: v for k, v in (hooks or {}).items() if v is not None}
        #: never run concurrently with another call of the same step.
        self.sequential = bool(sequential)
        self.execute = execute
        self.is_async = inspect.iscoroutinefunction(execute)
        self._json_schema: dict[str, Any] | None = None
        self._resume_json_schema: dict[str, Any] | None = None

    def json_schema(self) -> dict[str, Any]:
        if self._json_schema is None:
            self._json_schema = self.input_schema.model_json_schema()
        return self._json_schema

    def resume_json_schema(self) -> dict[str, Any] | None:
        if self.resume_schema is None:
            return None
        if self._resume_json_schema is None:
            self._resume_json_schema = self.resume_schema.model_json_schema()
        return self._resume_json_schema

    def __repr__(self) -> str:
        return f"Tool(id={self.id!r}, require_approval={self.require_approval!r})"


def create_tool(
    *,
    id: str,
    description: str = "",
    input_schema: type[BaseModel] | None = None,
    execute: ExecuteFn,
    output_schema: type[BaseModel] | None = None,
    suspend_schema: type[BaseModel] | None = None,
    resume_schema: type[BaseModel] | None = None,
    require_approval: bool | None = None,
    idempotent: bool = False,
    hooks: Mapping[str, Callable[..., Any]] | None = None,
    sequential: bool = False,
    approval_timeout: float | None = None,
    allow_grants: bool = True,
) -> Tool:
    """Mastra's ``createTool``: ``execute(input, ctx)`` may be sync or async.

    ``idempotent=True``: the tool may safely run twice, so a call interrupted by
    a crash (started, no result stored) is re-executed by ``recover()``.
    ``hooks``: ``{"on_input_available": fn, "on_output": fn}`` (sync or async), see docs/hooks.md;
    ``sequential=True``: the tool never runs concurrently with another call of the same step.
    ``approval_timeout``: seconds an approval may wait (then the sweep expires it, fail-closed);
    ``allow_grants=False``: the tool is never approved by a grant (``runtime.grant`` refuses it).
    """
    if input_schema is None:
        input_schema = create_model(f"{_camel(id)}Input", __config__=ConfigDict(extra="forbid"))
    return Tool(
        id=id,
        description=description,
        input_schema=input_schema,
        execute=execute,
        output_schema=output_schema,
        suspend_schema=suspend_schema,
        resume_schema=resume_schema,
        require_approval=require_approval,
        idempotent=idempotent,
        hooks=hooks,
        sequential=sequential,
        approval_timeout=approval_timeout,
        allow_grants=allow_grants,
    )


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    id: str | None = None,
    description: str | None = None,
    require_approval: bool | None = None,
    suspend_schema: type[BaseModel] | None = None,
    resume_schema: type[BaseModel] | None = None,
    output_schema: type[BaseModel] | None = None,
    hooks: Mapping[str, Callable[..., Any]] | None = None,
    idempotent: bool = False,
    sequential: bool = False,
    approval_timeout: float | None = None,
    allow_grants: bool = True,
) -> Any:
    """Build a tool from a typed function: its parameters become the input schema.

    A parameter annotated ``ToolContext`` receives the context; the docstring is
    the description.
    """

    def build(f: Callable[..., Any]) -> Tool:
        hints = get_type_hints(f)
        sig = inspect.signature(f)
        fields: dict[str, Any] = {}
        ctx_param: str | None = None
        for pname, param in sig.parameters.items():
            ann = hints.get(pname, Any)
            if ann is ToolContext:
                ctx_param = pname
                continue
            default = param.default if param.default is not inspect.Parameter.empty else ...
            fields[pname] = (ann, default)
        tool_id = id or f.__name__
        schema = create_model(f"{_camel(tool_id)}Input", **fields)
        is_async = inspect.iscoroutinefunction(f)

        def call_kwargs(inp: BaseModel, ctx: ToolContext) -> dict[str, Any]:
            kwargs = {name: getattr(inp, name) for name in fields}
            if ctx_param:
                kwargs[ctx_param] = ctx
            return kwargs

        async def execute_async(inp: BaseModel, ctx: ToolContext) -> Any:
            return await f(**call_kwargs(inp, ctx))

        def execute_sync(inp: BaseModel, ctx: ToolContext) -> Any:
            return f(**call_kwargs(inp, ctx))

        execute: ExecuteFn = execute_async if is_async else execute_sync

        return Tool(
            id=tool_id,
            description=description or inspect.getdoc(f) or "",
            input_schema=schema,
            execute=execute,
            output_schema=output_schema,
            suspend_schema=suspend_schema,
            resume_schema=resume_schema,
            require_approval=require_approval,
            idempotent=idempotent,
            hooks=hooks,
            sequential=sequential,
            approval_timeout=approval_timeout,
            allow_grants=allow_grants,
        )

    return build(fn) if fn is not None else build


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.replace("-", "_").split("_") if p) or "Tool"
