"""``json.dumps(value, ensure_ascii=False)``, the same text, without building an encoder per call.

``json.dumps`` with any non-default argument makes a ``JSONEncoder`` and, through its
``iterencode``, a C encoder for every call: most of the cost of encoding a tool's small
arguments or result, which happens on every cycle (``limits.args_problem``, ``engine.tool_message``).
Here the C encoder is made directly (its markers dict fresh per call, so a failed call leaves
nothing behind); where the interpreter has no C encoder, ``json.dumps`` itself is used.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["dumps"]

#: ``TypeError: Object of type X is not JSON serializable``, as ``json.dumps`` raises it.
_default = json.JSONEncoder(ensure_ascii=False).default


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: the same text, the same ``TypeError``/``ValueError``."""
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        return json.dumps(value, ensure_ascii=False)
    return "".join(c_make_encoder({}, _default, encode_basestring, None, ": ", ", ", False, False, True)(value, 0))
