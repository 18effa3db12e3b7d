"""Rendering of attacker-controlled text (tool names, args, payloads, model text).

Everything here builds ``rich.text.Text`` objects, never markup strings, so
``[@click=app.quit]`` or ``[$accent]`` stay literal. Which characters are
shown as visible escapes (``\\x1b``, ``\\u202e``) is decided by
``agent_core.untrusted_text`` (by Unicode property), shared with the browser UI;
this module adds the console's styling of those escapes.

This module never imports textual: the headless CLI uses it too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agent_core.untrusted_text import (
    Finding,
    escape_unsafe,
    find_unsafe,
    scan,
    split_unsafe,
    summarize,
    to_json,
)

if TYPE_CHECKING:  # rich is imported lazily: the headless CLI only needs the escaping
    from rich.text import Text

#: Style of an escape sequence shown in place of a hidden character.
ESCAPE_STYLE = "bold reverse red"


def safe_text(text: Any, style: str = "", *, multiline: bool = True, escape_style: str = ESCAPE_STYLE) -> Text:
    """A ``Text`` showing ``text`` literally (no markup), hidden characters as styled escapes."""
    from rich.text import Text

    if not isinstance(text, str):
        text = str(text)
    out = Text(style=style, end="")
    for piece, is_escape in split_unsafe(text, multiline=multiline):
        out.append(piece, style=escape_style if is_escape else "")
    out.expand_tabs(4)
    return out


_JSON_ESCAPE = re.compile(r"\\\\|\\u00[0-9a-f]{2}")


def json_text(value: Any, *, style: str = "") -> Text:
    """Pretty JSON of ``value`` as a ``Text``.

    JSON itself writes C0 controls as ``\\u001b``; those escapes get the escape style too.
    Everything JSON leaves raw (bidi, zero-width, C1, DEL) is escaped by ``safe_text``.
    """
    text = safe_text(to_json(value), style)
    for m in _JSON_ESCAPE.finditer(text.plain):
        if m.group() != "\\\\":  # an escaped backslash is text, not an escape
            text.stylize(ESCAPE_STYLE, m.start(), m.end())
    return text


__all__ = [
    "ESCAPE_STYLE",
    "Finding",
    "escape_unsafe",
    "find_unsafe",
    "json_text",
    "safe_text",
    "scan",
    "summarize",
    "to_json",
]
