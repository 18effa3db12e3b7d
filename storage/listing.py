"""Which suspended runs ``Store.list_suspended`` returns, and in which order, for every store.

One filter for the three stores: SQL stores turn it into a WHERE clause and an
ORDER BY (run by the database, on indexed columns where the filter is exact), the
memory store calls ``matches``. The console's picker is a work queue over
100,000 pending runs, so nothing here loads every run to filter it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from storage.errors import StorageError
from storage.records import PendingCallRow, RunRow, SuspendedRunRow
from storage.rows import dumps

Sort = Literal["age", "agent", "tool"]
ListKind = Literal["approval", "input"]
SORTS: tuple[str, ...] = ("age", "agent", "tool")
KINDS: tuple[str, ...] = ("approval", "input")

#: the stored call kinds behind each listed kind (an interrupted call is decided like an approval).
_STORED: dict[str, tuple[str, ...]] = {"approval": ("approval", "interrupted"), "input": ("suspend",)}


def listed_kind(stored: str) -> ListKind:
    """The listed kind (``approval`` or ``input``) of a stored call kind (``approval`` / ``suspend`` /
    ``interrupted``): the one mapping between the two vocabularies."""
    return "input" if stored == "suspend" else "approval"


def _like(term: str) -> str:
    """A LIKE pattern matching ``term`` anywhere (``%``, ``_`` and ``\\`` taken literally)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass(frozen=True)
class SuspendedFilter:
    """Filters and order of a listing of suspended runs.

    ``query``: whitespace-separated terms, each of which must appear (case-insensitive,
    ASCII) in the agent id, the thread id, or a pending call's tool name or arguments (JSON
    text). ``tool_name`` and ``kind`` are exact and also narrow the calls listed with each run.
    """

    agent_id: str | None = None
    thread_id: str | None = None
    resource_id: str | None = None
    query: str | None = None
    tool_name: str | None = None
    kind: ListKind | None = None
    sort: Sort = "age"

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise StorageError(f"unknown sort {self.sort!r}: use one of {', '.join(SORTS)}")
        if self.kind is not None and self.kind not in KINDS:
            raise StorageError(f"unknown kind {self.kind!r}: use one of {', '.join(KINDS)}")

    @property
    def terms(self) -> list[str]:
        return [t.lower() for t in (self.query or "").split()]

    # -- SQL stores ---------------------------------------------------------------------
    def sql(self, mark: Callable[[int], str], params: list[Any], *, ilike: bool = False) -> str:
        """`` AND ...`` conditions on ``runs`` (appends its parameters to ``params``; ``mark(n)``
        writes the n-th placeholder, 1-based, and a placeholder may be used twice: ``?NNN`` in
        SQLite, ``$n`` in PostgreSQL). Only calls still ``pending`` are matched."""

        def p(value: Any) -> str:
            params.append(value)
            return mark(len(params))

        like = "ILIKE" if ilike else "LIKE"
        out = ""
        for col in ("agent_id", "thread_id", "resource_id"):
            value = getattr(self, col)
            if value is not None:
                out += f" AND runs.{col} = {p(value)}"
        call_conds: list[str] = []
        if self.tool_name is not None:
            call_conds.append(f"c.tool_name = {p(self.tool_name)}")
        if self.kind is not None:
            kinds = ", ".join(p(k) for k in _STORED[self.kind])
            call_conds.append(f"c.kind IN ({kinds})")
        if call_conds:
            out += (
                " AND EXISTS (SELECT 1 FROM pending_calls c WHERE c.run_id = runs.run_id AND c.status = 'pending'"
                + "".join(f" AND {c}" for c in call_conds)
                + ")"
            )
        for term in self.terms:
            pat = p(_like(term))
            esc = " ESCAPE '\\'"
            out += (
                f" AND (runs.agent_id {like} {pat}{esc} OR COALESCE(runs.thread_id, '') {like} {pat}{esc}"
                " OR EXISTS (SELECT 1 FROM pending_calls c WHERE c.run_id = runs.run_id AND c.status = 'pending'"
                f" AND (c.tool_name {like} {pat}{esc} OR c.args {like} {pat}{esc})))"
            )
        return out

    def order_sql(self) -> str:
        """The listing's ORDER BY: newest first, within the agent or tool groups when sorted by those."""
        newest = "runs.suspended_at DESC, runs.run_id DESC"
        if self.sort == "agent":
            return f"runs.agent_id, {newest}"
        if self.sort == "tool":
            return (
                "(SELECT MIN(c.tool_name) FROM pending_calls c WHERE c.run_id = runs.run_id"
                f" AND c.status = 'pending'), {newest}"
            )
        return newest

    # -- in memory (the memory store, and the merge of read-time recovered runs) ----------
    def call_matches(self, call: PendingCallRow) -> bool:
        """Whether a call is listed with its run (``tool_name`` and ``kind`` narrow the calls)."""
        return (self.tool_name is None or call.tool_name == self.tool_name) and (
            self.kind is None or call.kind in _STORED[self.kind]
        )

    def run_matches(self, run: RunRow, calls: list[PendingCallRow]) -> bool:
        """The SQL filter, applied to one run and its actionable calls (memory store)."""
        if any(getattr(self, c) is not None and getattr(run, c) != getattr(self, c) for c in _RUN_COLS):
            return False
        if (self.tool_name is not None or self.kind is not None) and not any(self.call_matches(c) for c in calls):
            return False
        texts = [run.agent_id.lower(), (run.thread_id or "").lower()]
        for c in calls:
            texts += [c.tool_name.lower(), dumps(c.args).lower()]
        return all(any(t in text for text in texts) for t in self.terms)

    def narrow(self, row: SuspendedRunRow) -> SuspendedRunRow | None:
        """The run with only the calls this filter lists (None when none is left)."""
        if self.tool_name is None and self.kind is None:
            return row
        calls = [c for c in row.calls if self.call_matches(c)]
        if not calls and row.error is None:
            return None
        return SuspendedRunRow(run=row.run, calls=calls, error=row.error)

    def ordered(self, rows: list[SuspendedRunRow]) -> list[SuspendedRunRow]:
        """``rows`` in the listing's order (same as ``order_sql``)."""
        out = sorted(rows, key=lambda x: (x.run.suspended_at, x.run.run_id), reverse=True)
        if self.sort == "agent":
            out.sort(key=lambda x: x.run.agent_id)
        elif self.sort == "tool":
            out.sort(key=lambda x: min((c.tool_name for c in x.calls), default=""))
        return out


_RUN_COLS = ("agent_id", "thread_id", "resource_id")


def count_kinds(calls: list[PendingCallRow]) -> dict[str, int]:
    """Pending calls per listed kind (``approval``, ``input``); both keys always present."""
    out = dict.fromkeys(KINDS, 0)
    for c in calls:
        out[listed_kind(c.kind)] += 1
    return out


def count_sql(f: SuspendedFilter, mark: Callable[[int], str], params: list[Any], *, ilike: bool = False) -> str:
    """Pending calls of suspended runs under ``f`` (its ``kind`` ignored: the header shows both
    counts), as one row: all of them, and those listed as ``input`` (``listed_kind``); the rest are
    ``approval``. One pass over the calls, without grouping (``count_from_row``). A ``tool_name``
    counts that tool's calls only."""
    base = SuspendedFilter(f.agent_id, f.thread_id, f.resource_id, f.query, f.tool_name)
    extra = base.sql(mark, params, ilike=ilike)
    tool = ""
    if f.tool_name is not None:
        params.append(f.tool_name)
        tool = f" AND pc.tool_name = {mark(len(params))}"
    inputs = " OR ".join(f"pc.kind = '{k}'" for k in _STORED["input"])
    return (
        f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {inputs} THEN 1 ELSE 0 END), 0) FROM pending_calls pc"
        " JOIN runs ON runs.run_id = pc.run_id"
        f" WHERE runs.status = 'suspended' AND pc.status = 'pending'{tool}{extra}"
    )


def count_from_row(row: Any) -> dict[str, int]:
    """``count_sql``'s row (all, inputs) as the counts per listed kind."""
    total, inputs = (int(row[0]), int(row[1])) if row else (0, 0)
    return {"approval": total - inputs, "input": inputs}
