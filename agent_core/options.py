"""The options of a run and the filters of a listing, declared once.

Every surface that accepts them or passes them on (``Agent.stream`` / ``generate``,
``Runtime.start``, the ``HostedAgent`` protocol, ``agent_core.wire``, the client, the
server) types its keywords with these (``**options: Unpack[RunOptions]``), so a surface
cannot drop or rename one unnoticed (``tests/test_options_surfaces.py`` checks each).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from pydantic import BaseModel

from agent_core.errors import InvalidRequest
from storage.listing import ListKind, Sort

__all__ = ["ListFilters", "ListKind", "RunOptions", "SentRunOptions", "Sort", "check_options", "option_names"]


_NAMES: dict[type[Any], frozenset[str]] = {}


class SentRunOptions(TypedDict, total=False):
    """The options of a run that travel over HTTP (``wire.stream_request``, the server's ``StreamBody``).

    ``require_tool_approval``: over HTTP True, False or None; in process also a policy function."""

    thread_id: str | None
    resource_id: str | None
    require_tool_approval: Any
    max_steps: int | None
    request_context: dict[str, Any] | None
    approval_timeout: float | None
    #: who starts the run (its ``requested_by``, never counted toward its four-eyes quorums); over
    #: HTTP with tokens the token's name, which a different ``actor`` may not contradict.
    actor: str | None


class RunOptions(SentRunOptions, total=False):
    """The options of ``Agent.stream`` / ``generate``: the sent ones, and those only a process that
    hosts the agent can take (a pydantic model, per-run concurrency, auto-resume)."""

    auto_resume_suspended_tools: bool | None
    tool_call_concurrency: int | None
    output_schema: type[BaseModel] | None


class ListFilters(TypedDict, total=False):
    """The filters, order and page of ``list_suspended_runs`` (an agent's; the runtime's adds ``agent_id``).

    Defaults: ``page=0``, ``per_page=50``, ``sort="age"``, ``with_counts=False``."""

    thread_id: str | None
    resource_id: str | None
    page: int
    per_page: int
    query: str | None
    tool_name: str | None
    kind: ListKind | None
    sort: Sort
    with_counts: bool


def option_names(declared: type[Any]) -> frozenset[str]:
    """The keys of one of the TypedDicts above (computed once each: ``check_options`` runs on every run)."""
    names = _NAMES.get(declared)
    if names is None:
        names = _NAMES[declared] = frozenset(declared.__required_keys__ | declared.__optional_keys__)
    return names


def check_options(given: Mapping[str, Any], declared: type[Any], where: str) -> None:
    """``InvalidRequest`` naming the keywords of ``given`` that ``declared`` does not have (a typo is an
    error, as an unknown keyword argument would be)."""
    names = option_names(declared)
    if given.keys() <= names:
        return
    unknown = ", ".join(sorted(set(given) - names))
    raise InvalidRequest(f"{where} got unknown option(s) {unknown} (known: {', '.join(sorted(names))})")
