"""Turn runtime objects (chunks, generate results, suspended runs) into camelCase JSON.

Field *names* of Warden's models become camelCase (``run_id`` -> ``runId``);
keys of plain dicts (tool args, results, payloads: user data) are kept as they are.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic_core import to_jsonable_python

from agent_core.chunks import Chunk
from agent_core.models import Usage


def camel(obj: Any) -> Any:
    """JSON-ready form of ``obj`` with camelCase field names for models and dataclasses."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Chunk):
        return obj.to_json()
    if isinstance(obj, Usage):
        return {
            "inputTokens": obj.input_tokens,
            "outputTokens": obj.output_tokens,
            "totalTokens": obj.total_tokens,
        }
    if isinstance(obj, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(obj).model_fields.items():
            key = field.serialization_alias or (field.alias if field.alias and field.alias != name else None)
            out[key or to_camel(name)] = camel(getattr(obj, name))
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {to_camel(f.name): camel(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): camel(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [camel(v) for v in obj]
    if isinstance(obj, _dt.datetime):
        if obj.tzinfo is None:
            obj = obj.replace(tzinfo=_dt.UTC)
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return camel(obj.value)
    return to_jsonable_python(obj, fallback=str)


_GENERATE_FIELDS = (
    "text",
    "finish_reason",
    "suspend_payload",
    "run_id",
    "steps",
    "tool_calls",
    "tool_results",
    "usage",
)


def _usage_json(u: Any) -> Any:
    if isinstance(u, dict) and "input_tokens" in u:
        i, o = u.get("input_tokens") or 0, u.get("output_tokens") or 0
        return {"inputTokens": i, "outputTokens": o, "totalTokens": i + o}
    return u


def generate_result_json(result: Any) -> dict[str, Any]:
    """``GenerateResult`` -> ``{text, finishReason, suspendPayload, runId, steps, toolCalls, ...}``.

    Serialised by pydantic (its Rust core); only field names of the result, of its steps and of
    ``usage`` are renamed here (the payload models already have camelCase aliases).
    """
    if isinstance(result, BaseModel):
        dumped = result.model_dump(mode="json", by_alias=True)
        out = {to_camel(k): v for k, v in dumped.items()}
        out["steps"] = [
            {to_camel(k): v for k, v in step.items()} if isinstance(step, dict) else step
            for step in out.get("steps") or []
        ]
        out["usage"] = _usage_json(out.get("usage"))
    else:
        out = {to_camel(name): camel(getattr(result, name)) for name in _GENERATE_FIELDS if hasattr(result, name)}
    payload = getattr(result, "suspend_payload", None)
    if payload is not None:
        # Tell clients which payload model it is (approval or suspension) without guessing.
        out["suspendType"] = "tool-call-approval" if hasattr(payload, "fingerprint") else "tool-call-suspended"
    return out


def suspended_run_json(run: Any) -> dict[str, Any]:
    out = run.model_dump(mode="json", by_alias=True) if isinstance(run, BaseModel) else camel(run)
    out.setdefault("status", "suspended")
    return out


def suspended_run_list_json(result: Any) -> dict[str, Any]:
    runs = getattr(result, "runs", None)
    if runs is None and isinstance(result, dict):
        runs = result.get("runs", [])
    total = getattr(result, "total", None)
    if total is None and isinstance(result, dict):
        total = result.get("total", len(runs or []))
    out: dict[str, Any] = {"runs": [suspended_run_json(r) for r in runs or []], "total": int(total or 0)}
    for name in ("page", "per_page"):
        if getattr(result, name, None) is not None:
            out[to_camel(name)] = getattr(result, name)
    return out
