"""Rendering of attacker-controlled text (tool names, args, payloads, model text).

Everything here builds ``rich.text.Text`` objects, never markup strings, so
``[@click=app.quit]`` or ``[$accent]`` stay literal. Characters that can act on
the terminal or hide/reorder what the operator reads are replaced with a
visible escape (``\\x1b``, ``\\u202e``, ``\\U000e0041``):

every code point that is a control (Cc: C0, C1, DEL; ESC starts terminal
sequences, 0x9b is an 8-bit CSI), a format character (Cf: bidi overrides and
isolates, zero-width joiners, BOM, soft hyphen, tags), a surrogate (Cs), a
line/paragraph separator (Zl, Zp), or Default_Ignorable_Code_Point (variation
selectors, U+034F, the Hangul fillers U+115F/U+3164/U+FFA0, ...). The decision
is by Unicode property (the ``regex`` package's tables), never a hand-written
list, so it follows new Unicode versions; newline and tab stay in multi-line text.

This module never imports textual: the headless CLI uses it too.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # rich is imported lazily: the headless CLI only needs the escaping
    import regex
    from rich.text import Text

#: Style of an escape sequence shown in place of a hidden character.
ESCAPE_STYLE = "bold reverse red"

_HIDDEN = r"\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}"


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@cache
def _pattern(multiline: bool) -> regex.Pattern[str]:
    # compiled on first use: ``regex`` and its Unicode tables are not needed for plain ASCII
    import regex

    return regex.compile((r"(?![\t\n])[" if multiline else "[") + _HIDDEN + "]")


def _plain(text: str, multiline: bool) -> bool:
    """Printable ASCII (and tabs and newlines, in multiline text): nothing hidden, no ``regex`` needed.
    (No ASCII character is a format, separator or default-ignorable one: only controls are hidden.)"""
    if not text.isascii():
        return False
    if multiline:
        text = text.replace("\n", "").replace("\t", "")
    return text.isprintable()


def find_unsafe(text: str, *, multiline: bool = True) -> list[str]:
    """The escapes (``"\\x1b"``, ``"\\u202e"``) of the hidden characters in ``text``, in order."""
    if _plain(text, multiline):
        return []
    return [_escape_char(m.group()) for m in _pattern(multiline).finditer(text)]


def escape_unsafe(text: str, *, multiline: bool = True) -> str:
    """``text`` with every hidden or control character replaced by its visible escape."""
    if _plain(text, multiline):
        return text
    return _pattern(multiline).sub(lambda m: _escape_char(m.group()), text)


def safe_text(text: Any, style: str = "", *, multiline: bool = True, escape_style: str = ESCAPE_STYLE) -> Text:
    """A ``Text`` showing ``text`` literally (no markup), hidden characters as styled escapes."""
    from rich.text import Text

    if not isinstance(text, str):
        text = str(text)
    out = Text(style=style, end="")
    if _plain(text, multiline):
        out.append(text)
        out.expand_tabs(4)
        return out
    pos = 0
    for m in _pattern(multiline).finditer(text):
        if m.start() > pos:
            out.append(text[pos : m.start()])
        out.append(_escape_char(m.group()), style=escape_style)
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    out.expand_tabs(4)
    return out


def to_json(value: Any, *, indent: int | None = 2) -> str:
    """JSON text of ``value`` as the model sent it (keys in their order, non-ASCII kept)."""
    import json  # here: the first frame shows no JSON

    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)


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


class Finding(NamedTuple):
    """A hidden character found in a structured value: where (JSON-path-ish) and which escapes."""

    path: str
    escapes: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.path}: {', '.join(self.escapes)}"


def scan(value: Any, path: str = "$") -> list[Finding]:
    """Walk ``value`` (dicts, lists, strings; keys too) and report every string with hidden characters."""
    findings: list[Finding] = []
    if isinstance(value, str):
        found = find_unsafe(value, multiline=False)
        if found:
            findings.append(Finding(path, tuple(found)))
    elif isinstance(value, dict):
        for key, item in value.items():
            key_s = str(key)
            found = find_unsafe(key_s, multiline=False)
            if found:
                findings.append(Finding(f"{path} (key {escape_unsafe(key_s, multiline=False)})", tuple(found)))
            findings.extend(scan(item, f"{path}.{escape_unsafe(key_s, multiline=False)}"))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            findings.extend(scan(item, f"{path}[{index}]"))
    return findings


def summarize(findings: list[Finding]) -> str:
    """One line for the modal's warning, ASCII only."""
    escapes = sorted({e for f in findings for e in f.escapes})
    count = sum(len(f.escapes) for f in findings)
    where = ", ".join(f.path for f in findings[:4]) + (", ..." if len(findings) > 4 else "")
    return f"{count} hidden/control character(s) shown as escapes ({' '.join(escapes)}) in {where}"


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
