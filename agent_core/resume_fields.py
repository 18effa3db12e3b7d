"""The fields of an input form, read from a suspended tool's ``resume_schema`` (JSON Schema).

One set of rules for every form an operator fills (the console's resume form,
the browser UI's): string, integer, number, boolean and enum fields, with
defaults, descriptions, examples and required marks; ``Optional[X]`` is ``X``,
a union of consts is an enum, anything else is a string. Pure data: no UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: A field without a default or an example.
MISSING: Any = object()


@dataclass
class FormField:
    name: str
    kind: str  # "string" | "integer" | "number" | "boolean" | "enum"
    required: bool
    title: str
    description: str = ""
    default: Any = MISSING
    choices: list[Any] = field(default_factory=list)
    example: Any = MISSING


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {})
        merged = dict(target)
        merged.update({k: v for k, v in schema.items() if k != "$ref"})
        return merged
    return schema


def fields_from_schema(schema: dict[str, Any] | None) -> list[FormField]:
    """The form's fields, in the schema's property order."""
    if not schema:
        return []
    required = set(schema.get("required", []))
    out: list[FormField] = []
    for name, raw in (schema.get("properties") or {}).items():
        prop = _resolve(raw, schema)
        options = prop.get("anyOf") or prop.get("oneOf")
        if options:  # Optional[X] -> X; a union of consts -> enum
            non_null = [_resolve(o, schema) for o in options if o.get("type") != "null"]
            if all("const" in o for o in non_null):
                prop = {**prop, "enum": [o["const"] for o in non_null]}
            elif non_null:
                prop = {**non_null[0], **{k: v for k, v in prop.items() if k not in ("anyOf", "oneOf")}}
        if "const" in prop:
            prop = {**prop, "enum": [prop["const"]]}
        kind = "enum" if "enum" in prop else prop.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind not in ("string", "integer", "number", "boolean", "enum"):
            kind = "string"
        out.append(
            FormField(
                name=name,
                kind=kind,
                required=name in required,
                title=prop.get("title") or name,
                description=prop.get("description", ""),
                default=prop.get("default", MISSING),
                choices=list(prop.get("enum", [])),
                example=(prop.get("examples") or [MISSING])[0]
                if isinstance(prop.get("examples"), list)
                else prop.get("example", MISSING),
            )
        )
    return out


def placeholder_of(f: FormField) -> str:
    """A field's placeholder: an example, else its description, else what to type."""
    if f.example is not MISSING:
        return f"e.g. {f.example}"
    if f.description:
        return " ".join(f.description.split())[:80]
    return {"integer": "a whole number", "number": "a number"}.get(f.kind, f"{f.title}")


def coerce(f: FormField, raw: str) -> Any:
    """A typed value from a text input: whole numbers and numbers parsed, anything else as typed
    (the runtime validates the data and reports a bad value inline)."""
    if f.kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    if f.kind == "number":
        try:
            return float(raw)
        except ValueError:
            return raw
    return raw


def errors_by_field(error: Exception) -> tuple[dict[str, str], str]:
    """Map a ``ResumeDataInvalid``'s errors to ``{field: message}`` plus a general message."""
    per_field: dict[str, str] = {}
    general: list[str] = []
    for item in getattr(error, "errors", None) or []:
        loc = item.get("loc") if isinstance(item, dict) else getattr(item, "loc", None)
        msg = item.get("msg") if isinstance(item, dict) else getattr(item, "msg", None)
        msg = str(msg or item)
        if loc:
            key = str(next(iter(loc)))
            per_field[key] = f"{per_field[key]}; {msg}" if key in per_field else msg
        else:
            general.append(msg)
    if not per_field and not general:
        general.append(getattr(error, "message", None) or str(error))
    return per_field, "; ".join(general)


__all__ = ["MISSING", "FormField", "coerce", "errors_by_field", "fields_from_schema", "placeholder_of"]
