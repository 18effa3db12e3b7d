"""JSON Schema conversion for providers, above all OpenAI's strict mode.

OpenAI's strict mode (``strict: true`` on a function or on ``response_format``)
makes the model's output match the schema exactly, but only accepts a subset of
JSON Schema: every object has ``additionalProperties: false`` and lists *all*
its properties in ``required``. An optional property therefore becomes a
required, nullable one, and the model answers ``null`` where it would have left
the key out. ``to_strict_schema`` does that conversion (or says why it cannot),
and ``strip_strict_nulls`` undoes its one visible effect on the model's answer:
it drops the ``null`` values that the conversion introduced, so pydantic sees
an omitted field again and applies its default.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "StrictSchema",
    "ensure_object_schema",
    "schema_name",
    "strip_strict_nulls",
    "to_strict_schema",
]

# Keywords OpenAI's strict mode rejects; a schema using one is sent non-strict.
_UNSUPPORTED = frozenset(
    {
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "minLength",
        "maxLength",
        "prefixItems",
    }
)
# Keywords that carry no constraint the model needs and strict mode does not accept.
_DROPPED = frozenset({"title", "default", "examples", "discriminator", "$schema", "readOnly", "writeOnly"})


class _NotStrict(Exception):
    pass


@dataclass(frozen=True)
class StrictSchema:
    """The result of a strict conversion: ``schema`` is strict-ready only when ``strict`` is True.

    When conversion is impossible, ``schema`` is the original (unchanged) and
    ``reason`` says what prevented it, so the provider sends it non-strict.
    """

    schema: dict[str, Any]
    strict: bool
    reason: str | None = None


def to_strict_schema(schema: dict[str, Any]) -> StrictSchema:
    """Convert a pydantic-style JSON Schema to OpenAI strict form, if possible.

    The root must be an object schema. Optional properties become required and
    nullable (``{"type": ["integer", "null"]}``, or ``anyOf`` with
    ``{"type": "null"}``); free-form objects (``dict[str, X]``), ``Any`` and
    unsupported keywords make the schema non-convertible.
    """
    try:
        if _type_names(schema) != {"object"} and "$ref" not in schema:
            raise _NotStrict("the root schema is not an object")
        converted = _convert(copy.deepcopy(schema), "#")
        for name, sub in list(converted.get("$defs", {}).items()):
            converted["$defs"][name] = _convert(sub, f"#/$defs/{name}")
        if "definitions" in converted:
            raise _NotStrict("'definitions' is not supported, use '$defs'")
    except _NotStrict as exc:
        return StrictSchema(schema=schema, strict=False, reason=str(exc))
    return StrictSchema(schema=converted, strict=True)


def _type_names(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    return set()


def _convert(node: Any, where: str) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise _NotStrict(f"{where}: a schema must be an object, not {node!r}")
    bad = _UNSUPPORTED.intersection(node)
    if bad:
        raise _NotStrict(f"{where}: keyword {sorted(bad)[0]!r} is not supported in strict mode")
    for key in _DROPPED.intersection(node):
        del node[key]
    if "oneOf" in node:  # pydantic's discriminated unions: the branches exclude each other anyway
        node["anyOf"] = node.pop("oneOf")
    if "anyOf" in node:
        node["anyOf"] = [_convert(b, f"{where}/anyOf/{i}") for i, b in enumerate(node["anyOf"])]
        return node
    if "$ref" in node:
        if not str(node["$ref"]).startswith("#"):
            raise _NotStrict(f"{where}: only local $ref is supported")
        return node
    if "const" in node or "enum" in node:
        return node
    types = _type_names(node)
    if not types:
        raise _NotStrict(f"{where}: a schema without 'type' (Any) is not supported in strict mode")
    if "object" in types:
        props = node.get("properties")
        extra = node.get("additionalProperties", False)
        if extra not in (False, None) and not (extra is True and props):
            raise _NotStrict(f"{where}: free-form objects (additionalProperties) are not supported")
        if not isinstance(props, dict):
            if extra is False and "additionalProperties" in node:
                props = {}
            else:
                raise _NotStrict(f"{where}: an object without 'properties' is not supported")
        required = set(node.get("required", []))
        new_props: dict[str, Any] = {}
        for name, sub in props.items():
            conv = _convert(sub, f"{where}/properties/{name}")
            new_props[name] = conv if name in required else _nullable(conv)
        node["properties"] = new_props
        node["required"] = list(new_props)
        node["additionalProperties"] = False
    if "array" in types and "items" in node:
        node["items"] = _convert(node["items"], f"{where}/items")
    elif "array" in types:
        raise _NotStrict(f"{where}: an array without 'items' is not supported")
    return node


def _allows_null(node: dict[str, Any]) -> bool:
    if "null" in _type_names(node):
        return True
    if "enum" in node and None in node["enum"]:
        return True
    if "const" in node and node["const"] is None:
        return True
    return any(isinstance(b, dict) and _allows_null(b) for b in node.get("anyOf", []))


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if _allows_null(node):
        return node
    if "anyOf" in node:
        node["anyOf"] = [*node["anyOf"], {"type": "null"}]
        return node
    if "$ref" in node or "const" in node or "type" not in node:
        description = node.pop("description", None)
        out: dict[str, Any] = {"anyOf": [node, {"type": "null"}]}
        if description is not None:
            out["description"] = description
        return out
    t = node["type"]
    node["type"] = [*t, "null"] if isinstance(t, list) else [t, "null"]
    if "enum" in node:
        node["enum"] = [*node["enum"], None]
    return node


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 32:
        ref = str(node["$ref"])
        if not ref.startswith("#/"):
            return node
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        node = target
        seen += 1
    return node


def strip_strict_nulls(
    value: Any, original: dict[str, Any], *, _root: dict[str, Any] | None = None, _node: Any = None
) -> Any:
    """Drop ``null`` values the strict conversion made the model send for optional properties.

    ``original`` is the schema *before* conversion. A key is dropped only when
    it was optional there and its schema did not accept ``null``; everything
    else (including genuine ``Optional[...]`` nulls) is kept as the model sent it.
    """
    root = original if _root is None else _root
    node = _resolve(original if _node is None else _node, root)
    if not isinstance(node, dict):
        return value
    if isinstance(value, dict) and isinstance(node.get("properties"), dict):
        required = set(node.get("required", []))
        out = {}
        for key, item in value.items():
            sub = _resolve(node["properties"].get(key), root)
            if item is None and key not in required and isinstance(sub, dict) and not _allows_null(sub):
                continue
            out[key] = strip_strict_nulls(item, original, _root=root, _node=sub) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [strip_strict_nulls(v, original, _root=root, _node=node["items"]) for v in value]
    alternatives = node.get("anyOf", node.get("oneOf")) or []
    branches = [_resolve(b, root) for b in alternatives]
    non_null = [b for b in branches if isinstance(b, dict) and _type_names(b) != {"null"}]
    if len(non_null) > 1 and isinstance(value, dict):
        non_null = [b for b in non_null if _tagged(b, value)]
    if len(non_null) == 1:
        return strip_strict_nulls(value, original, _root=root, _node=non_null[0])
    return value


def _tagged(branch: dict[str, Any], value: dict[str, Any]) -> bool:
    """Whether ``value`` carries the ``const`` tag(s) of a union branch (discriminated unions)."""
    props = branch.get("properties")
    if not isinstance(props, dict):
        return False
    tags = {k: p["const"] for k, p in props.items() if isinstance(p, dict) and "const" in p}
    return bool(tags) and all(value.get(k) == v for k, v in tags.items())


def ensure_object_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Return an object-rooted schema and whether the answer was wrapped as ``{"value": ...}``.

    Both providers need an object at the root of a structured-output schema.
    """
    if _type_names(schema) == {"object"} or "properties" in schema:
        return schema, False
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"value": inner}, "required": ["value"]}
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, True


def schema_name(schema: dict[str, Any], default: str = "output") -> str:
    """A name for the schema that the APIs accept (``^[a-zA-Z0-9_-]{1,64}$``)."""
    title = schema.get("title")
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", title)[:64] if isinstance(title, str) and title else ""
    return name or default
