"""The result of checking the audit trail's hash chain (``storage.audit.verify``, ``GET /api/audit/verify``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ChainReport:
    ok: bool
    #: entries checked (sealed ones).
    checked: int
    #: entries from before the chain existed (no hash), all at the start.
    unsealed: int = 0
    #: the first broken entry's ``seq`` and why, when not ``ok``.
    broken_seq: int | None = None
    problem: str | None = None
