"""Untrusted text is shown literally, with hidden/control characters as visible escapes."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from rich.console import Console

from tui.untrusted import (
    escape_unsafe,
    find_unsafe,
    json_text,
    safe_text,
    scan,
    summarize,
)

HOSTILE = {
    "title": "\x1b]0;PWNED\x07",
    "click": "[@click=app.quit]x[/]",
    "var": "[$accent]x",
    "rlo": "\u202e",
}


def render(text) -> str:
    console = Console(width=200, force_terminal=True, color_system="truecolor", record=True)
    with console.capture() as cap:
        console.print(text)
    return cap.get()


def test_escape_sequences_become_visible_escapes():
    assert escape_unsafe("\x1b]0;PWNED\x07") == "\\x1b]0;PWNED\\x07"
    assert escape_unsafe("a\u202eb") == "a\\u202eb"
    assert escape_unsafe("x\u200by\u200dz\ufeff") == "x\\u200by\\u200dz\\ufeff"
    assert escape_unsafe("\x9b2J") == "\\x9b2J"  # 8-bit CSI
    assert escape_unsafe("del\x7f") == "del\\x7f"
    assert escape_unsafe("tag\U000e0041") == "tag\\U000e0041"  # ASCII smuggling tag char
    assert escape_unsafe("line\u2028sep") == "line\\u2028sep"


def test_newlines_and_tabs_kept_in_multiline_but_escaped_in_single_line():
    assert escape_unsafe("a\nb\tc") == "a\nb\tc"
    assert escape_unsafe("a\nb\tc\r", multiline=False) == "a\\x0ab\\x09c\\x0d"


def test_plain_text_and_ordinary_unicode_untouched():
    for s in ["hello", "héllo wörld", "日本語", "emoji 🎉", "[bold]not markup[/]", "a\\x1b literal"]:
        assert escape_unsafe(s) == s
        assert find_unsafe(s) == []


def test_find_unsafe_lists_escapes_in_order():
    assert find_unsafe("\x1b[2J\u202e\u200b") == ["\\x1b", "\\u202e", "\\u200b"]


def test_every_format_and_control_character_is_covered():
    missing = []
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp", "Cs") and ch not in "\n\t":
            if escape_unsafe(ch) == ch:
                missing.append(hex(code))
    assert missing == []


@pytest.mark.parametrize("value", list(HOSTILE.values()))
def test_safe_text_is_literal_and_emits_no_escape_to_terminal(value):
    text = safe_text(value)
    out = render(text)
    # The only ESC bytes in the output are the console's own SGR colour codes.
    stripped = out.replace("\x1b[", "")
    assert "\x1b" not in stripped
    assert "\u202e" not in out and "\x07" not in out
    assert text.plain == escape_unsafe(value)


def test_markup_is_not_interpreted():
    text = safe_text("[@click=app.quit]x[/] [$accent]x [red]r")
    assert text.plain == "[@click=app.quit]x[/] [$accent]x [red]r"
    assert all(not span.style or "link" not in str(span.style) for span in text.spans)
    assert not any(getattr(span.style, "meta", None) for span in text.spans)


def test_escapes_are_styled_distinctly():
    text = safe_text("a\x1bb", style="green")
    assert text.plain == "a\\x1bb"
    styled = [(text.plain[s.start : s.end], str(s.style)) for s in text.spans]
    assert ("\\x1b", "bold reverse red") in styled


def test_non_string_values_are_stringified():
    assert safe_text(42).plain == "42"


def test_json_text_shows_pretty_json_with_escapes():
    text = json_text(HOSTILE)
    plain = text.plain
    assert '"title": "\\u001b]0;PWNED\\u0007"' in plain  # JSON escapes C0 itself
    assert '"rlo": "\\u202e"' in plain  # we escape what JSON leaves raw
    assert "[@click=app.quit]x[/]" in plain
    assert "\u202e" not in plain and "\x1b" not in plain


def test_scan_reports_paths_and_escapes_including_keys():
    findings = scan({"a": "ok", "b": ["x", "\x1b[2J"], "k\u200b": {"deep": "\u202eabc"}})
    described = [f.describe() for f in findings]
    assert "$.b[1]: \\x1b" in described
    assert "$ (key k\\u200b): \\u200b" in described
    assert "$.k\\u200b.deep: \\u202e" in described
    summary = summarize(findings)
    assert summary.startswith("3 hidden/control character(s)")
    assert summary.isascii()


def test_scan_of_clean_value_is_empty():
    assert scan({"record_id": "abc-123", "n": 3, "nested": [{"x": "y"}]}) == []


def test_json_escapes_of_controls_are_styled_but_literal_backslashes_are_not():
    text = json_text({"a": "\x1b x \\u001b", "b": "\\\x07"})
    styled = [text.plain[s.start : s.end] for s in text.spans]
    assert styled == ["\\u001b", "\\u0007"]
