"""JSON answers for pending runs, written by the views' own pydantic serializers.

``wire.encode_suspended_run`` builds a dict (``model_dump(mode="json")``) that ``json`` then
encodes: two passes over every call of every run, on the ``GET`` of each approval and on every
listing page. Here the view's serializer writes the JSON bytes in one pass, the envelope of a
listing is written around them, and ``"status":"suspended"`` is appended as ``encode_suspended_run``
adds it: the same JSON values and key order, the same bytes but for the spelling of exponents
(``1.5e-7`` where ``json`` wrote ``1.5e-07``, as the SSE events already do) and a non-finite
float, which pydantic writes ``null`` where ``json`` refused it (a 500) (docs/performance.md,
"Server"). Anything but the
runtime's own view types (an external decider's answer, a future view with a ``status`` field)
returns None: the caller then answers through ``wire`` as before.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaSerializer

from agent_core.views import SuspendedRun, SuspendedRunList, UnreadableRun

_STATUS_TAIL = b',"status":"suspended"}'
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_LIST_FIELDS = ("runs", "total", "page", "per_page", "unreadable", "counts")


def _serializer(cls: type[BaseModel]) -> SchemaSerializer:
    if not cls.__pydantic_complete__:  # views defer building theirs
        cls.model_rebuild()
    return cls.__pydantic_serializer__


def suspended_run(run: Any) -> bytes | None:
    """``wire.encode_suspended_run(run)`` as JSON bytes, or None when ``run`` is not a ``SuspendedRun``."""
    if type(run) is not SuspendedRun or "status" in SuspendedRun.model_fields:
        return None
    return _serializer(SuspendedRun).to_json(run, by_alias=True)[:-1] + _STATUS_TAIL


def suspended_run_list(result: Any) -> bytes | None:
    """``wire.encode_suspended_run_list(result)`` as JSON bytes, or None for anything but a ``SuspendedRunList``."""
    if type(result) is not SuspendedRunList or tuple(SuspendedRunList.model_fields) != _LIST_FIELDS:
        return None
    runs: list[bytes] = []
    for run in result.runs:
        data = suspended_run(run)
        if data is None:
            return None
        runs.append(data)
    out = [b'{"runs":[', b",".join(runs), b'],"total":', str(int(result.total or 0)).encode("ascii")]
    if result.page is not None:
        out += [b',"page":', _COMPACT.encode(result.page).encode()]
    if result.per_page is not None:
        out += [b',"perPage":', _COMPACT.encode(result.per_page).encode()]
    if result.counts is not None:
        out += [b',"counts":', _COMPACT.encode(dict(result.counts)).encode()]
    if result.unreadable:
        ser = _serializer(UnreadableRun)
        out += [b',"unreadable":[', b",".join(ser.to_json(u, by_alias=True) for u in result.unreadable), b"]"]
    out.append(b"}")
    return b"".join(out)
