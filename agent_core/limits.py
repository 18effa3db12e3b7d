"""What model output may contain and still be stored: tool-call arguments are checked here.

Hostile or broken model output must never strand a run: arguments that could
not be stored (lone surrogates, nesting deeper than ``MAX_ARGS_DEPTH``, more
than ``MAX_ARGS_BYTES`` of JSON) become an invalid-arguments ``tool-error``
the model sees, before anything is gated or stored. ``scrub`` makes any text
storable (used for the error and snapshot of a failed run).
"""

from __future__ import annotations

import re
from typing import Any

from agent_core.json_text import dumps

MAX_ARGS_DEPTH = 100
MAX_ARGS_BYTES = 1_000_000
#: the longest approval deadline (ten years, in seconds): a larger one would put ``expires_at``
#: past what a datetime (and the platform's time_t) can hold, and strand the run in every listing.
MAX_APPROVAL_TIMEOUT = 10 * 365.25 * 24 * 3600

_SURROGATE = re.compile("[\ud800-\udfff]")
#: what ``args_problem`` walks into (a tuple of types: ``isinstance`` with a ``X | Y`` union is slower).
_CONTAINERS = (dict, list, tuple)


def scrub(text: str, *, json_text: bool = False) -> str:
    """``text`` with every lone surrogate written out as ``\\udXXX`` (storable UTF-8).

    ``json_text``: ``text`` is JSON, so the backslash itself is escaped there.
    """
    slash = "\\\\" if json_text else "\\"
    return _SURROGATE.sub(lambda m: f"{slash}u{ord(m.group()):04x}", text)


def args_problem(args: Any) -> str | None:
    """Why ``args`` cannot be stored with the run, or None. Iterative: no recursion on deep input."""
    stack: list[tuple[Any, int]] = [(args, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, _CONTAINERS):
            if depth > MAX_ARGS_DEPTH:
                return f"arguments are nested deeper than {MAX_ARGS_DEPTH} levels"
            depth += 1
            if isinstance(value, dict):
                for key, item in value.items():
                    if isinstance(key, str) and _SURROGATE.search(key):
                        return "arguments contain a lone surrogate (invalid Unicode)"
                    stack.append((item, depth))
            else:
                stack.extend([(item, depth) for item in value])
        elif isinstance(value, str) and _SURROGATE.search(value):
            return "arguments contain a lone surrogate (invalid Unicode)"
    try:
        size = len(dumps(args))
    except (TypeError, ValueError) as exc:
        return f"arguments are not JSON: {exc}"
    if size > MAX_ARGS_BYTES:
        return f"arguments are too large ({size} characters; at most {MAX_ARGS_BYTES})"
    return None


def valid_timeout(value: object) -> bool:
    """Whether ``value`` is an approval deadline in seconds: a number, positive, at most ten years."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 < value <= MAX_APPROVAL_TIMEOUT  # NaN fails both comparisons
    )
