"""A tool input model from a plain JSON Schema (an MCP tool's ``inputSchema``, or one stored with a run).

Sits low in ``agent_core`` so both the MCP adapter and the decisions layer can use it: a process
that does not host an MCP proxy's agent still validates edited arguments against the schema the
proxy stored with the run (``agent_core.handover.HANDOVER_TOOLS_KEY``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["input_model"]


def input_model(name: str, schema: Mapping[str, Any], *, label: str = "MCP tool") -> type[BaseModel]:
    """A permissive pydantic model validated by ``jsonschema`` against the MCP tool's input schema.

    Its ``model_json_schema()`` is the MCP schema itself, so the model sees the upstream's schema unchanged.
    """
    import jsonschema

    json_schema = dict(schema) if schema else {"type": "object"}
    json_schema.setdefault("type", "object")
    validator_cls = jsonschema.validators.validator_for(json_schema)
    validator = validator_cls(json_schema)

    class McpInput(BaseModel):
        model_config = ConfigDict(extra="allow")

        @model_validator(mode="before")
        @classmethod
        def _validate(cls, data: Any) -> Any:
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                detail = "; ".join(
                    f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:10]
                )
                raise ValueError(f"arguments do not match the input schema of {label} {name!r}: {detail}")
            return data

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return dict(json_schema)

    McpInput.__name__ = McpInput.__qualname__ = f"Mcp_{name}_Input"
    return McpInput
