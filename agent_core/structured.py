"""Structured output of a run (``output_schema=``): the final answer must be JSON that validates.

The schema travels with the run as JSON Schema (``RunState.output_schema``), so
a process that finishes a run started elsewhere validates against it with
``jsonschema``; where the caller passed the pydantic model, it validates with it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_core.errors import StructuredOutputInvalid

__all__ = ["parse_output", "schema_of"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.DOTALL)


def schema_of(model: type[BaseModel] | None) -> dict[str, Any] | None:
    """The JSON Schema stored with a run for ``output_schema=model``."""
    if model is None:
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError("output_schema must be a pydantic BaseModel subclass")
    return model.model_json_schema()


def parse_output(text: str, schema: dict[str, Any] | None, model: type[BaseModel] | None = None) -> Any:
    """The final answer's JSON, validated against ``model`` (if given) or ``schema``: the model
    instance, or the plain JSON value. Raises ``StructuredOutputInvalid`` carrying ``text``."""
    match = _FENCE.match(text)
    raw = match.group(1) if match else text
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise StructuredOutputInvalid(f"the final answer is not JSON: {exc}", text=text) from exc
    if model is not None:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise StructuredOutputInvalid(
                f"the final answer does not match {model.__name__}: {exc.errors()[0]['msg']} "
                f"at {'.'.join(map(str, exc.errors()[0]['loc'])) or '(root)'}",
                text=text,
            ) from exc
    if schema is not None:
        import jsonschema  # ~0.1 s of imports: only for a run that checks a stored schema

        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as exc:
            where = ".".join(map(str, exc.absolute_path)) or "(root)"
            raise StructuredOutputInvalid(
                f"the final answer does not match the run's output schema: {exc.message} at {where}", text=text
            ) from exc
        except jsonschema.SchemaError as exc:
            raise StructuredOutputInvalid(f"the run's output schema is invalid: {exc.message}", text=text) from exc
    return data
