"""Every surface that takes run options or list filters takes the one declared set (``agent_core.options``).

A surface that drops or renames an option (a keyword of its own instead of ``Unpack[...]``, a server
body that forgets a field, a wire encoding that loses one) fails here, not in a user's hands.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from agent_core import wire
from agent_core.agent import Agent
from agent_core.autoresume import Desk
from agent_core.definition import HostedAgent
from agent_core.errors import InvalidRequest
from agent_core.options import ListFilters, RunOptions, SentRunOptions, option_names
from agent_core.pending import list_suspended
from agent_core.runtime import Runtime
from storage.base import Store
from warden_client import RemoteAgent, SyncRemoteAgent, SyncWardenClient, WardenClient
from warden_server.schemas import AllSuspendedRunsQuery, StreamBody, SuspendedRunsQuery

#: parameters of a surface that are not options (the call's subject, not how it runs).
_SUBJECT = {"self", "messages", "agent", "store"}


def accepted(fn: Callable[..., Any]) -> frozenset[str]:
    """The keyword options ``fn`` accepts: its own keyword parameters plus the keys of an ``Unpack``'d TypedDict."""
    hints = typing.get_type_hints(fn)
    names: set[str] = set()
    for p in inspect.signature(fn).parameters.values():
        if p.name in _SUBJECT:
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            hint = hints.get(p.name)
            assert typing.get_origin(hint) is typing.Unpack, f"{fn.__qualname__}: **{p.name} is not Unpack[...]"
            names |= option_names(typing.get_args(hint)[0])
        elif p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.add(p.name)
    return frozenset(names)


RUN_SURFACES: list[tuple[Callable[..., Any], type[Any]]] = [
    (Agent.stream, RunOptions),
    (Agent.generate, RunOptions),
    (Runtime.start, RunOptions),
    (HostedAgent.stream, RunOptions),
    (wire.stream_request, SentRunOptions),
    (RemoteAgent.stream, SentRunOptions),
    (RemoteAgent.generate, SentRunOptions),
    (SyncRemoteAgent.stream, SentRunOptions),
    (SyncRemoteAgent.generate, SentRunOptions),
]
LIST_SURFACES: list[tuple[Callable[..., Any], set[str]]] = [
    (Agent.list_suspended_runs, set()),
    (Runtime.list_suspended_runs, {"agent_id"}),
    (list_suspended, {"agent_id"}),
    (wire.suspended_runs_query, {"agent_id"}),
    (RemoteAgent.list_suspended_runs, set()),
    (SyncRemoteAgent.list_suspended_runs, set()),
    (WardenClient.list_suspended_runs, {"agent_id"}),
    (SyncWardenClient.list_suspended_runs, {"agent_id"}),
]


@pytest.mark.parametrize(("fn", "declared"), RUN_SURFACES, ids=lambda v: getattr(v, "__qualname__", ""))
def test_every_run_surface_takes_the_declared_options(fn: Callable[..., Any], declared: type[Any]) -> None:
    assert accepted(fn) == option_names(declared)


@pytest.mark.parametrize(("fn", "extra"), LIST_SURFACES, ids=lambda v: getattr(v, "__qualname__", str(v)))
def test_every_listing_takes_the_declared_filters(fn: Callable[..., Any], extra: set[str]) -> None:
    assert accepted(fn) == option_names(ListFilters) | extra


def test_the_sent_options_are_the_run_options_that_travel() -> None:
    assert option_names(SentRunOptions) < option_names(RunOptions)


def test_narrower_surfaces_use_only_declared_names() -> None:
    """Auto-resume's view of the runtime and the store's query take a subset, under the same names."""
    assert accepted(Desk.list_suspended_runs) <= option_names(ListFilters) | {"agent_id"}
    assert accepted(Store.list_suspended) <= option_names(ListFilters) | {"agent_id"}


SENT = SentRunOptions(
    thread_id="t-1",
    resource_id="r-1",
    require_tool_approval=True,
    max_steps=7,
    request_context={"tenant": "acme"},
    approval_timeout=30.0,
    actor="alice",
)


def test_every_sent_option_survives_the_wire_into_the_server_body() -> None:
    assert set(SENT) == option_names(SentRunOptions), "the sample must set every option"
    body = StreamBody.model_validate(wire.stream_request("hi", **SENT))
    assert body.options() == SENT


FILTERS = ListFilters(
    thread_id="t-1",
    resource_id="r-1",
    page=2,
    per_page=10,
    query="refund ana",
    tool_name="issue_refund",
    kind="input",
    sort="tool",
    with_counts=True,
)


def test_every_filter_survives_the_wire_into_the_server_query() -> None:
    assert set(FILTERS) == option_names(ListFilters), "the sample must set every filter"
    query = SuspendedRunsQuery.model_validate(wire.suspended_runs_query(**FILTERS))
    assert query.filters() == FILTERS
    every = AllSuspendedRunsQuery.model_validate(wire.suspended_runs_query(agent_id="ops", **FILTERS))
    assert every.agent_id == "ops" and every.filters() == FILTERS


def test_the_check_notices_a_renamed_or_dropped_option() -> None:
    """The comparison above can fail: a surface with its own spelling is told apart."""

    async def renamed(messages: str, *, thread_id: str | None = None, max_step: int | None = None) -> None: ...

    assert accepted(renamed) != option_names(RunOptions)
    assert accepted(renamed) - option_names(RunOptions) == {"max_step"}


async def test_an_unknown_option_is_a_typed_error_and_starts_nothing() -> None:
    from agent_core.models import FunctionModel

    agent = Agent(id="a", model=FunctionModel(lambda messages, info: "hi"))
    with pytest.raises(InvalidRequest, match="max_step"):
        await agent.stream("hi", max_step=3)  # type: ignore[call-arg]
    with pytest.raises(InvalidRequest, match="sortt"):
        await agent.list_suspended_runs(sortt="age")  # type: ignore[call-arg]
    with pytest.raises(InvalidRequest, match="output_schema"):
        wire.stream_request("hi", output_schema=None)  # type: ignore[call-arg]
    assert (await agent.runtime.store.list_suspended())[1] == 0
