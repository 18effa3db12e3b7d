"""``agent_core.json_text.dumps`` writes exactly what ``json.dumps(value, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json

import pytest

from agent_core.json_text import dumps

VALUES = [
    {"id": "abc-123"},
    {"deleted": True, "n": None, "x": -0.0, "big": 10**30, "f": 1e-7},
    "plain",
    'é ü \u2028 \x00 " \\ \n',
    1.5,
    float("nan"),
    float("-inf"),
    [1, [2, [3, {"a": []}]], {}],
    {1: "int key", None: "none key", False: "bool key", 2.5: "float key"},
    ("tuple", "as", "list"),
    {"\ud800": "lone surrogate"},
]


@pytest.mark.parametrize("value", VALUES)
def test_same_text_as_json_dumps(value):
    assert dumps(value) == json.dumps(value, ensure_ascii=False)


def test_same_errors_as_json_dumps_and_nothing_left_behind():
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        dumps({"a": object()})
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular reference detected"):
        dumps(loop)
    shared = ["x"]
    assert dumps([shared, shared]) == '[["x"], ["x"]]', "a failed call leaves no marker behind"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"id": "1", "tags": ["a", ("b", {"c": None})]}, None),
        ({"\ud800key": 1}, "lone surrogate"),
        ({"a": [{"b": ("x", "\udfff")}]}, "lone surrogate"),
        ({"a": {"b": object()}}, "not JSON"),
        ({"x": "y" * 1_000_001}, "too large"),
    ],
)
def test_args_problem_names_what_cannot_be_stored(args, problem):
    from agent_core.limits import MAX_ARGS_DEPTH, args_problem

    found = args_problem(args)
    assert found is None if problem is None else problem in (found or "")
    deep: list = []
    for _ in range(MAX_ARGS_DEPTH - 2):
        deep = [deep]
    assert args_problem({"d": deep}) is None, "the object and its lists: MAX_ARGS_DEPTH levels"
    assert args_problem({"d": [deep]}) == f"arguments are nested deeper than {MAX_ARGS_DEPTH} levels"
