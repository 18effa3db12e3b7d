"""Four-eyes votes as the audit log records them (``vote`` entries), read back as ``{actor, at}``.

Here, below ``agent_core``, so the store-only listing (``warden runs list`` without the agents)
shows the same votes as the runtime's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from storage.records import AuditRow

__all__ = ["approvals_of"]


def approvals_of(entries: list[AuditRow], fingerprint: str) -> list[dict[str, Any]]:
    """The votes for ``fingerprint``, one per actor, oldest first: ``{actor, at}`` (``at`` ISO 8601)."""
    seen: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.decision == "vote" and e.actor and (e.detail or {}).get("fingerprint") == fingerprint:
            seen.setdefault(e.actor, {"actor": e.actor, "at": datetime.fromtimestamp(e.decided_at, UTC).isoformat()})
    return list(seen.values())
