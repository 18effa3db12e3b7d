"""The input form generated from a resume schema: field kinds, defaults, required marks, typed values."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field
from textual.widgets import Input, Select, Switch

from agent_core.errors import ResumeDataInvalid
from tests.console.conftest import showing, wait_for
from tests.console.fakes import NOW, FakeBackend, input_call
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.resume_form import ResumeFormModal, errors_by_field, fields_from_schema


class Color(StrEnum):
    red = "red"
    blue = "blue"


class Everything(BaseModel):
    name: str = Field(description="Your name")
    age: int = 30
    ratio: float | None = None
    ok: bool = False
    units: Literal["metric", "imperial"] = "metric"
    color: Color = Color.blue
    nickname: str | None = None


def test_fields_from_a_pydantic_schema():
    fields = {f.name: f for f in fields_from_schema(Everything.model_json_schema())}
    assert [(n, f.kind, f.required) for n, f in fields.items()] == [
        ("name", "string", True),
        ("age", "integer", False),
        ("ratio", "number", False),
        ("ok", "boolean", False),
        ("units", "enum", False),
        ("color", "enum", False),
        ("nickname", "string", False),
    ]
    assert fields["name"].description == "Your name"
    assert fields["age"].default == 30 and fields["ok"].default is False
    assert fields["units"].choices == ["metric", "imperial"] and fields["color"].choices == ["red", "blue"]
    assert fields["color"].default == "blue"


def test_no_schema_means_no_fields():
    assert fields_from_schema(None) == [] and fields_from_schema({"type": "object"}) == []


def test_errors_map_to_fields_and_a_general_line():
    error = ResumeDataInvalid(
        "bad",
        errors=[
            {"loc": ["city"], "msg": "Field required"},
            {"loc": ["days"], "msg": "not an int"},
            {"loc": [], "msg": "whole thing wrong"},
        ],
    )
    per_field, general = errors_by_field(error)
    assert per_field == {"city": "Field required", "days": "not an int"} and general == "whole thing wrong"
    assert errors_by_field(ResumeDataInvalid("only a message")) == ({}, "only a message")


async def test_form_sends_typed_values():
    backend = FakeBackend()
    app = WardenApp(
        backend,
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=(110, 50)) as pilot:
        app.open_dialog(input_call())
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "form")
        form = app.screen
        assert form.query_one("#field-units", Select).value == "metric"  # default
        assert form.query_one("#field-days", Input).value == "1"
        form.query_one("#field-city", Input).value = "Oslo"
        form.query_one("#field-days", Input).value = "3"
        form.query_one("#field-alerts", Switch).value = True
        form.query_one("#field-units", Select).value = "imperial"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, ResumeFormModal), "form closed")
        assert (
            "resume",
            ("run-0002", "call_0_0", {"city": "Oslo", "units": "imperial", "days": 3, "alerts": True}),
        ) in backend.calls
