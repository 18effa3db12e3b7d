"""One change of the pending set, as a store's subscription reports it and ``GET /api/events`` sends it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

EventType = Literal["subscribed", "suspended", "decided", "ended", "changed"]


@dataclass(frozen=True)
class StoreEvent:
    """One change of the pending set.

    - ``subscribed``: the first event of every subscription, once it is in place
      (list now: later events are changes since then);
    - ``suspended``: a run is (again) waiting with pending calls;
    - ``decided``: a call was decided (``decision`` says how, when known);
    - ``ended``: a run finished or failed;
    - ``changed``: something else in the pending set moved (list again).
    """

    type: EventType
    run_id: str | None = None
    tool_call_id: str | None = None
    decision: str | None = None
    agent_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoreEvent:
        return cls(
            type=data["type"],
            run_id=data.get("run_id"),
            tool_call_id=data.get("tool_call_id"),
            decision=data.get("decision"),
            agent_id=data.get("agent_id"),
        )
