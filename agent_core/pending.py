"""The listing of pending runs: one page of the store's query, as views (``SuspendedRunList``).

Every listing goes through ``list_suspended`` (the runtime's, an agent's, ``send_tool_approval``'s
search of a thread), so its checks and defaults are written once.
"""

from __future__ import annotations

from typing import Unpack

from agent_core.errors import InvalidRequest
from agent_core.options import ListFilters
from agent_core.views import SuspendedRunList
from storage.base import Store
from storage.listing import KINDS, SORTS
from storage.votes import approvals_of


async def list_suspended(
    store: Store, *, agent_id: str | None = None, **filters: Unpack[ListFilters]
) -> SuspendedRunList:
    """One page of the store's pending runs, as views, filtered and ordered by the store's query
    (``query`` terms over agent, thread, tool and arguments; exact ``tool_name`` and ``kind``);
    ``with_counts`` adds the pending calls per kind under the same filters."""
    page = filters.get("page", 0)
    per_page = filters.get("per_page", 50)
    sort = filters.get("sort", "age")
    kind = filters.get("kind")
    if page < 0 or per_page < 1:
        raise InvalidRequest(f"page must be >= 0 and per_page >= 1, not page={page!r}, per_page={per_page!r}")
    if sort not in SORTS:
        raise InvalidRequest(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    if kind is not None and kind not in KINDS:
        raise InvalidRequest(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    where = {
        "agent_id": agent_id,
        "thread_id": filters.get("thread_id"),
        "resource_id": filters.get("resource_id"),
        "query": filters.get("query") or None,
        "tool_name": filters.get("tool_name"),
    }
    rows, total = await store.list_suspended(**where, kind=kind, sort=sort, page=page, per_page=per_page)
    counts = await store.count_suspended_by_kind(**where) if filters.get("with_counts") else None
    listed = SuspendedRunList.from_rows(rows, total=total, page=page, per_page=per_page, counts=counts)
    await _with_votes(store, listed)
    return listed


async def _with_votes(store: Store, listed: SuspendedRunList) -> None:
    """The votes so far of each listed four-eyes call (one indexed audit read per such call; the
    rule and the approvers needed are on the call's row, so other calls cost nothing)."""
    for run in listed.runs:
        for call in run.tool_calls:
            if call.approvers_required > 1 and call.kind == "approval":
                call.approvals = approvals_of(await store.audit_log(run.run_id, call.tool_call_id), call.fingerprint)
