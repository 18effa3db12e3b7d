"""HTML rendering for the browser UI: Jinja2 templates (package data), autoescaped.

Untrusted text goes through the ``u`` filter (and JSON through ``json``): HTML
escaped, and every control, bidi or invisible character (the console's rule,
``agent_core.untrusted_text``) replaced by a visible escape in a
``<span class="esc">``. No template marks untrusted text ``safe``.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.responses import HTMLResponse

from agent_core.resume_fields import MISSING, FormField, placeholder_of
from agent_core.untrusted_text import hidden_pattern, split_unsafe, to_json

TEMPLATES = Path(__file__).resolve().parent / "templates"
_JSON_ESCAPE = re.compile(r"\\\\|\\u00[0-9a-f]{2}")
_ESC = '<span class="esc">{}</span>'


def untrusted(value: Any, multiline: bool = True) -> Markup:
    """``value`` as HTML: escaped, hidden characters shown as marked escapes (``\\x1b``)."""
    text = value if isinstance(value, str) else str(value)
    parts = [
        Markup(_ESC).format(piece) if is_escape else escape(piece)
        for piece, is_escape in split_unsafe(text, multiline=multiline)
    ]
    return Markup("").join(parts)


def _mark_json_escapes(html: Markup) -> Markup:
    """The ``\\u001b`` escapes JSON writes for C0 controls, marked as the other escapes are."""
    return Markup(_JSON_ESCAPE.sub(lambda m: m.group() if m.group() == "\\\\" else _ESC.format(m.group()), html))


def json_html(value: Any, indent: int | None = 2) -> Markup:
    """Pretty JSON of ``value``, hidden characters and JSON's control escapes marked."""
    return _mark_json_escapes(untrusted(to_json(value, indent=indent)))


def summary(value: Any, limit: int = 120) -> Markup:
    """One line of compact JSON, cut at ``limit`` characters."""
    text = to_json(value, indent=None)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _mark_json_escapes(untrusted(text, multiline=False))


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # a surrogate pair, as JSON writes astral characters
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_for_editing(value: Any) -> str:
    """Pretty JSON to edit in a text area: hidden characters written as JSON escapes, so what the
    operator edits is visible and parses back to exactly the same value."""
    text = to_json(value)
    return hidden_pattern(True).sub(lambda m: _json_escape(m.group()), text)


def initial(f: FormField, values: dict[str, str]) -> str:
    """A text field's value: what was submitted (shown again with its errors), else the default."""
    if f.name in values:
        return values[f.name]
    return "" if f.default is MISSING or f.default is None else str(f.default)


def age(when: datetime | float | None) -> str:
    """How long ago: ``42s``, ``5m``, ``3h``, ``2d``."""
    if when is None:
        return ""
    ts = when.timestamp() if isinstance(when, datetime) else float(when)
    secs = max(0, int(time.time() - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return f"{secs}s"


def left(when: datetime | None) -> str:
    """Time left before a deadline: ``4m left``, or ``passed`` (the sweep expires it soon)."""
    if when is None:
        return ""
    secs = int(when.timestamp() - time.time())
    if secs <= 0:
        return "passed"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit} left"
    return f"{secs}s left"


def stamp(when: datetime | float | None) -> str:
    """A UTC time, to the second."""
    if when is None:
        return ""
    dt = when.astimezone(UTC) if isinstance(when, datetime) else datetime.fromtimestamp(float(when), UTC)
    return dt.strftime("%Y-%m-%d %H:%M:%S UTC")


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True), auto_reload=False)
    env.filters.update(
        u=untrusted, json=json_html, summary=summary, age=age, left=left, stamp=stamp, placeholder=placeholder_of
    )
    env.globals.update(initial=initial)
    return env


ENV = _env()


def page(template: str, status: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    return HTMLResponse(ENV.get_template(template).render(**context), status_code=status, headers=headers)


__all__ = ["ENV", "age", "initial", "json_for_editing", "json_html", "left", "page", "stamp", "summary", "untrusted"]
