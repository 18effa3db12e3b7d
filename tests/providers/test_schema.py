"""Strict-mode schema conversion and its inverse on the model's answers."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from agent_core.providers.schema import (
    ensure_object_schema,
    schema_name,
    strip_strict_nulls,
    to_strict_schema,
)


class Color(StrEnum):
    red = "red"
    blue = "blue"


class Address(BaseModel):
    street: str
    zip: str | None = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class Order(BaseModel):
    """An order to place."""

    item: str = Field(description="What to buy")
    quantity: int = 1
    color: Color = Color.red
    note: str | None = None
    address: Address | None = None
    billing: Address = Field(default_factory=lambda: Address(street="same"))
    tags: list[str] = []
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


def test_pydantic_model_converts_to_strict_form() -> None:
    result = to_strict_schema(Order.model_json_schema())
    assert result.strict, result.reason
    s = result.schema
    assert s["additionalProperties"] is False
    assert s["required"] == list(s["properties"])
    props = s["properties"]
    assert props["item"] == {"type": "string", "description": "What to buy"}
    assert props["quantity"] == {"type": ["integer", "null"]}
    assert props["color"] == {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}]}
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}  # already nullable: unchanged
    assert props["address"] == {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}
    assert props["tags"] == {"type": ["array", "null"], "items": {"type": "string"}}
    assert props["pet"] == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}  # oneOf -> anyOf
    address = s["$defs"]["Address"]
    assert address["required"] == ["street", "zip"] and address["additionalProperties"] is False
    assert s["$defs"]["Cat"]["properties"]["lives"] == {"type": ["integer", "null"]}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            assert not {"title", "default", "discriminator", "oneOf"} & set(node), node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(s)


def test_original_schema_is_not_modified() -> None:
    original = Order.model_json_schema()
    before = repr(original)
    to_strict_schema(original)
    assert repr(original) == before


def test_nullable_enum_includes_null() -> None:
    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["c", "f"]}}}
    assert to_strict_schema(schema).schema["properties"]["unit"] == {
        "type": ["string", "null"],
        "enum": ["c", "f", None],
    }


def test_empty_object_is_strict() -> None:
    result = to_strict_schema({"type": "object", "properties": {}})
    assert result.strict
    assert result.schema == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


class Loose(BaseModel):
    meta: dict[str, Any]


class Anything(BaseModel):
    value: Any


class Bounded(BaseModel):
    name: str = Field(min_length=2)


def test_unconvertible_schemas_are_reported_and_left_unchanged() -> None:
    for model, reason in [(Loose, "free-form"), (Anything, "Any"), (Bounded, "minLength")]:
        schema = model.model_json_schema()
        result = to_strict_schema(schema)
        assert not result.strict
        assert result.schema is schema
        assert reason in (result.reason or "")
    assert not to_strict_schema({"type": "string"}).strict


def test_strip_strict_nulls_restores_omitted_fields() -> None:
    original = Order.model_json_schema()
    answer = {
        "item": "pen",
        "quantity": None,
        "color": None,
        "note": None,
        "address": {"street": "x", "zip": None},
        "billing": None,
        "tags": None,
        "pet": {"kind": "cat", "lives": None},
    }
    cleaned = strip_strict_nulls(answer, original)
    # note and address.zip are Optional[...]: their null is meaningful and kept.
    assert cleaned == {"item": "pen", "note": None, "address": {"street": "x", "zip": None}, "pet": {"kind": "cat"}}
    order = Order.model_validate(cleaned)
    assert order.quantity == 1 and order.color is Color.red and order.pet == Cat(kind="cat", lives=9)


def test_strip_strict_nulls_keeps_required_nulls_for_validation_to_report() -> None:
    schema = Address.model_json_schema()
    assert strip_strict_nulls({"street": None}, schema) == {"street": None}


def test_ensure_object_schema_wraps_scalars() -> None:
    assert ensure_object_schema({"type": "object", "properties": {}})[1] is False
    wrapped, was = ensure_object_schema({"type": "array", "items": {"$ref": "#/$defs/A"}, "$defs": {"A": {}}})
    assert was and wrapped == {
        "type": "object",
        "properties": {"value": {"type": "array", "items": {"$ref": "#/$defs/A"}}},
        "required": ["value"],
        "$defs": {"A": {}},
    }


def test_schema_name() -> None:
    assert schema_name({"title": "Resume data: delete"}) == "Resume_data__delete"
    assert schema_name({}) == "output"
