"""Which characters of attacker-controlled text must be shown as visible escapes, and how.

Tool names, args, payloads and model text reach the console, the CLI and the
browser UI; none of them may let a character act on the screen or hide or
reorder what the operator reads. Every code point that is a control (Cc: C0,
C1, DEL; ESC starts terminal sequences, 0x9b is an 8-bit CSI), a format
character (Cf: bidi overrides and isolates, zero-width joiners, BOM, soft
hyphen, tags), a surrogate (Cs), a line/paragraph separator (Zl, Zp), or
Default_Ignorable_Code_Point (variation selectors, U+034F, the Hangul fillers
U+115F/U+3164/U+FFA0, ...) is replaced with ``\\x1b``, ``\\u202e``,
``\\U000e0041``. The decision is by Unicode property (the ``regex`` package's
tables), never a hand-written list; newline and tab stay in multi-line text.

Plain strings only (no UI library): ``tui.untrusted`` builds styled ``Text``
from these rules, ``warden_server.ui`` builds escaped HTML.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import regex

_HIDDEN = r"\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}"


def escape_char(ch: str) -> str:
    """The visible escape of one hidden character: ``\\x1b``, ``\\u202e``, ``\\U000e0041``."""
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@cache
def hidden_pattern(multiline: bool) -> regex.Pattern[str]:
    """The pattern of hidden characters (compiled on first use: plain ASCII never needs ``regex``)."""
    import regex

    return regex.compile((r"(?![\t\n])[" if multiline else "[") + _HIDDEN + "]")


def is_plain(text: str, multiline: bool) -> bool:
    """Printable ASCII (and tabs and newlines, in multiline text): nothing hidden, no ``regex`` needed.
    (No ASCII character is a format, separator or default-ignorable one: only controls are hidden.)"""
    if not text.isascii():
        return False
    if multiline:
        text = text.replace("\n", "").replace("\t", "")
    return text.isprintable()


def find_unsafe(text: str, *, multiline: bool = True) -> list[str]:
    """The escapes (``"\\x1b"``, ``"\\u202e"``) of the hidden characters in ``text``, in order."""
    if is_plain(text, multiline):
        return []
    return [escape_char(m.group()) for m in hidden_pattern(multiline).finditer(text)]


def escape_unsafe(text: str, *, multiline: bool = True) -> str:
    """``text`` with every hidden or control character replaced by its visible escape."""
    if is_plain(text, multiline):
        return text
    return hidden_pattern(multiline).sub(lambda m: escape_char(m.group()), text)


def split_unsafe(text: str, *, multiline: bool = True) -> list[tuple[str, bool]]:
    """``text`` as ``(piece, is_escape)`` pairs: plain runs, and each hidden character's escape."""
    if is_plain(text, multiline):
        return [(text, False)] if text else []
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in hidden_pattern(multiline).finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], False))
        out.append((escape_char(m.group()), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def to_json(value: Any, *, indent: int | None = 2) -> str:
    """JSON text of ``value`` as the model sent it (keys in their order, non-ASCII kept).
    (``json`` is imported here: the console's first frame shows no JSON, and needs no ``json``.)"""
    import json

    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)


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
    """One line for a warning, ASCII only."""
    escapes = sorted({e for f in findings for e in f.escapes})
    count = sum(len(f.escapes) for f in findings)
    where = ", ".join(f.path for f in findings[:4]) + (", ..." if len(findings) > 4 else "")
    return f"{count} hidden/control character(s) shown as escapes ({' '.join(escapes)}) in {where}"


__all__ = [
    "Finding",
    "escape_char",
    "escape_unsafe",
    "find_unsafe",
    "hidden_pattern",
    "is_plain",
    "scan",
    "split_unsafe",
    "summarize",
    "to_json",
]
