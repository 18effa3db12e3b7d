"""The audit log's hash chain and its filter, shared by every store.

Each entry carries ``seq`` (its position, 1-based, gapless), ``prev_hash``
(the ``hash`` of entry ``seq - 1``, or ``None`` for the first) and ``hash``:
the SHA-256 of the RFC 8785 canonical JSON of all its other fields. Editing,
deleting or reordering an entry breaks the chain at that entry; ``verify``
names the first one broken. Stores append under their write lock (SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's advisory transaction lock), so concurrent
appends from several processes keep one chain.

Entries written before the chain existed (schema upgrades) have no hash: they
are reported as unsealed, never as broken, as long as they all come first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from storage.canonical import canonical
from storage.records import AuditRow, copy_row
from storage.rows import dumps
from warden_types.audit import ChainReport

#: the fields the hash covers, in the order stores select them.
HASHED = (
    "seq",
    "run_id",
    "tool_call_id",
    "agent_id",
    "tool_name",
    "decision",
    "fingerprint",
    "reason",
    "decided_at",
    "actor",
    "detail",
    "prev_hash",
)


#: the hashed fields in RFC 8785's key order (UTF-16 code units: ASCII order here), and each one's
#: ``{"name":`` / ``,"name":`` prefix, written once.
_ORDER = (
    "actor",
    "agent_id",
    "decided_at",
    "decision",
    "detail",
    "fingerprint",
    "prev_hash",
    "reason",
    "run_id",
    "seq",
    "tool_call_id",
    "tool_name",
)
assert list(_ORDER) == sorted(HASHED)
_K_ACTOR, _K_AGENT, _K_AT, _K_DECISION, _K_DETAIL, _K_FP, _K_PREV, _K_REASON, _K_RUN, _K_SEQ, _K_CALL, _K_TOOL = (
    (b"," if i else b"{") + canonical(name) + b":" for i, name in enumerate(_ORDER)
)
_SAFE_INT = 2**53


def _seq(value: Any) -> bytes:
    """``canonical`` of a position: a safe integer's digits, without the serializer's dispatch."""
    return str(value).encode() if type(value) is int and -_SAFE_INT < value < _SAFE_INT else canonical(value)


def _before_prev(row: AuditRow) -> tuple[bytes, ...]:
    """The document's pieces up to ``"prev_hash":`` (the keys sort ``actor`` … ``fingerprint`` first)."""
    c = canonical
    return (
        _K_ACTOR,
        c(row.actor),
        _K_AGENT,
        c(row.agent_id),
        _K_AT,
        c(row.decided_at),
        _K_DECISION,
        c(row.decision),
        _K_DETAIL,
        c(row.detail),
        _K_FP,
        c(row.fingerprint),
        _K_PREV,
    )


def entry_hash(row: AuditRow) -> str:
    """``"sha256:" + hex(sha256(JCS(every field but hash)))``: the document written in one join
    (the same bytes as ``hash_template``'s three cuts with the chain's two values between them)."""
    from hashlib import sha256  # here, not at the top: reading the store (``warden runs list``) never hashes

    c = canonical
    doc = b"".join(
        (
            *_before_prev(row),
            c(row.prev_hash),
            _K_REASON,
            c(row.reason),
            _K_RUN,
            c(row.run_id),
            _K_SEQ,
            _seq(row.seq),
            _K_CALL,
            c(row.tool_call_id),
            _K_TOOL,
            c(row.tool_name),
            b"}",
        )
    )
    return "sha256:" + sha256(doc).hexdigest()


def hash_template(row: AuditRow) -> tuple[bytes, bytes, bytes]:
    """The canonical JSON ``entry_hash`` covers, cut around the two values only the chain knows.

    ``pre + json(prev_hash) + mid + str(seq) + post`` is byte for byte the RFC 8785
    document of ``entry_hash``: a store whose server appends entries (PostgreSQL's
    ``warden_claim``) splices the chain's head in and hashes there, while the
    canonical JSON of everything else is still written here, by the one serializer.
    """
    c = canonical
    return (
        b"".join(_before_prev(row)),
        _K_REASON + c(row.reason) + _K_RUN + c(row.run_id) + _K_SEQ,
        b"".join((_K_CALL, c(row.tool_call_id), _K_TOOL, c(row.tool_name), b"}")),
    )


def as_list(entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
    """``Store.append_audit``'s argument (one entry, or several in order) as a list."""
    return [entries] if isinstance(entries, AuditRow) else list(entries)


def seal(rows: list[AuditRow], last_seq: int, last_hash: str | None) -> list[AuditRow]:
    """The entries to append after (``last_seq``, ``last_hash``), each with its place in the chain
    (copies: the caller's rows are left as they were)."""
    return seal_in_place([copy_row(r) for r in rows], last_seq, last_hash)


def seal_in_place(rows: list[AuditRow], last_seq: int, last_hash: str | None) -> list[AuditRow]:
    """``seal`` on rows the caller owns (its own copies): each gets its place in the chain."""
    for row in rows:
        last_seq += 1
        row.seq, row.prev_hash, row.hash = last_seq, last_hash, None
        row.hash = last_hash = entry_hash(row)
    return rows


def verify(rows: list[AuditRow]) -> ChainReport:
    """Check a whole log (ordered by ``seq``): every hash, every link, no gaps."""
    unsealed = checked = 0
    prev: AuditRow | None = None
    for i, row in enumerate(rows):
        expected_seq = i + 1
        problem = None
        if row.seq != expected_seq:
            problem = f"entry {row.seq} is at position {expected_seq}: an entry was removed or inserted"
        elif row.hash is None and prev is not None and prev.hash is not None:
            problem = f"entry {row.seq} has no hash after sealed entries"
        elif row.hash is not None and row.prev_hash != (prev.hash if prev is not None else None):
            problem = f"entry {row.seq} does not link to entry {row.seq - 1} (it or an entry before was changed)"
        elif row.hash is not None and entry_hash(row) != row.hash:
            problem = f"entry {row.seq} was changed after it was written (its hash does not match)"
        if problem is not None:
            return ChainReport(False, checked, unsealed, row.seq, problem)
        if row.hash is None:
            unsealed += 1
            prev = row
            continue
        checked += 1
        prev = row
    return ChainReport(True, checked, unsealed)


@dataclass
class AuditFilter:
    """Which entries ``Store.audit_log`` returns; ``after`` (a ``seq``) and ``limit`` page through them."""

    run_id: str | None = None
    tool_call_id: str | None = None
    agent_id: str | None = None
    actor: str | None = None
    since: float | None = None
    decision: str | None = None
    after: int = 0
    limit: int | None = None

    def matches(self, row: AuditRow) -> bool:
        return (
            row.seq > self.after
            and (self.run_id is None or row.run_id == self.run_id)
            and (self.tool_call_id is None or row.tool_call_id == self.tool_call_id)
            and (self.agent_id is None or row.agent_id == self.agent_id)
            and (self.actor is None or row.actor == self.actor)
            and (self.since is None or row.decided_at >= self.since)
            and (self.decision is None or row.decision == self.decision)
        )

    def sql(self, mark: Any) -> tuple[str, list[Any]]:
        """A WHERE clause (``mark(n)`` writes the n-th placeholder, 1-based) and its parameters."""
        where: list[str] = ["seq > " + mark(1)]
        params: list[Any] = [self.after]
        for col in ("run_id", "tool_call_id", "agent_id", "actor", "decision"):
            value = getattr(self, col)
            if value is not None:
                params.append(value)
                where.append(f"{col} = {mark(len(params))}")
        if self.since is not None:
            params.append(self.since)
            where.append(f"decided_at >= {mark(len(params))}")
        return "WHERE " + " AND ".join(where), params


#: the audit_log columns, in ``AuditRow`` field order (``detail`` stored as JSON text).
COLUMNS = ", ".join(f.name for f in fields(AuditRow))


def from_db(values: Any) -> AuditRow:
    row = AuditRow(*values)
    if isinstance(row.detail, str):
        row.detail = json.loads(row.detail)
    return row


_NAMES = [f.name for f in fields(AuditRow)]
_DETAIL = _NAMES.index("detail")


def to_db(row: AuditRow) -> tuple[Any, ...]:
    """The row's column values in ``COLUMNS`` order (``detail`` as JSON text): one per decision."""
    data = row.__dict__
    values = [data[name] for name in _NAMES]
    if values[_DETAIL] is not None:
        values[_DETAIL] = dumps(values[_DETAIL])
    return tuple(values)
