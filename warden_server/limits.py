"""Limits on what a request body may contain, checked before any model sees it.

``json.loads`` accepts things the rest of the server cannot handle: nesting
deep enough to exhaust the interpreter's recursion limit (a 2 KB body of
``[`` is enough), integer literals longer than Python converts (4,300 digits),
lone surrogates (``"\\ud800"``) that no UTF-8 store can hold, and ``NaN`` /
``Infinity`` / ``1e999`` (not JSON; a JSON response could not carry them
back). Each becomes a 422 ``INVALID_REQUEST`` whose message names the place
in the body.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a request body."""

MAX_INT_DIGITS = 1000
"""Longest integer literal accepted in a request body (digits, sign excluded)."""


class InvalidBody(Exception):
    """The body is not acceptable JSON; ``message`` says why and where (no server internals)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _BigInt:
    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(text: str) -> int | _BigInt:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _BigInt(digits)  # reported with its location by the walk below
    return int(text)


class _NonFinite:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _where(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    out = out or "(the body itself)"
    return out if len(out) <= 120 else out[:117] + "..."


def _bad_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_value(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Walk ``value`` (iteratively) and raise ``InvalidBody`` for the first thing over a limit."""
    stack: list[tuple[Any, list[str | int], int]] = [(value, [], 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth >= max_depth:
                raise InvalidBody(f"request body is nested too deeply at {_where(path)}: more than {max_depth} levels")
            if isinstance(node, dict):
                for key, item in node.items():
                    if _bad_text(key):
                        raise InvalidBody(
                            f"invalid text in a key at {_where(path)}: it contains a lone surrogate (such as \\ud800)"
                        )
                    stack.append((item, [*path, key], depth + 1))
            else:
                for i, item in enumerate(node):
                    stack.append((item, [*path, i], depth + 1))
        elif isinstance(node, str):
            if _bad_text(node):
                raise InvalidBody(f"invalid text at {_where(path)}: it contains a lone surrogate (such as \\ud800)")
        elif isinstance(node, _BigInt):
            raise InvalidBody(f"integer at {_where(path)} is too long: {node.digits} digits (at most {MAX_INT_DIGITS})")
        elif isinstance(node, _NonFinite):
            raise InvalidBody(f"number at {_where(path)} is not finite: {node.text[:20]} (JSON has no NaN or Infinity)")


def parse_json_body(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value of ``raw``, or ``InvalidBody`` naming the problem."""
    if not raw.strip():
        raise InvalidBody("request body is empty; a JSON object is required")
    try:
        data = json.loads(raw, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_NonFinite)
    except RecursionError:
        raise InvalidBody(f"request body is nested too deeply: more than {max_depth} levels") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidBody(f"request body is not valid JSON: {exc}") from None
    except ValueError as exc:  # anything else json refuses (e.g. a float it cannot convert)
        raise InvalidBody(f"request body is not acceptable JSON: {exc}") from None
    check_value(data, max_depth)
    return data
