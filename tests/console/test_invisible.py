"""Default-ignorable code points (invisible, zero-width) are escaped and flagged like controls.

The oracle below is the Unicode Character Database's own definition
(DerivedCoreProperties.txt: Default_Ignorable_Code_Point = Cf + Variation_Selector
+ Other_Default_Ignorable_Code_Point, less white space and prepended marks);
the implementation decides by property, so a range missing here would still be caught there.
"""

from __future__ import annotations

import unicodedata

import pytest
from rich.text import Text

from tui.console_settings import ConsoleSettings
from tui.untrusted import escape_unsafe, find_unsafe, json_text, safe_text, scan, summarize

# Variation selectors and Other_Default_Ignorable_Code_Point (PropList.txt), as ranges.
_DI_RANGES = [
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x115F, 0x1160),  # HANGUL CHOSEONG/JUNGSEONG FILLER
    (0x17B4, 0x17B5),
    (0x180B, 0x180D),  # MONGOLIAN FREE VARIATION SELECTORS
    (0x180F, 0x180F),
    (0x2065, 0x2065),
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTORS
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement, reserved
]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("x\ufe0fy\u034fz", "x\\ufe0fy\\u034fz"),
        ("\u115f\u3164\uffa0", "\\u115f\\u3164\\uffa0"),
        ("a\U000e0100b", "a\\U000e0100b"),
        ("\u180bmongol", "\\u180bmongol"),
    ],
)
def test_the_reported_invisible_characters_are_shown_as_escapes(raw: str, shown: str) -> None:
    assert escape_unsafe(raw) == shown
    assert safe_text(raw).plain == shown
    assert find_unsafe(raw)


def test_every_default_ignorable_code_point_is_escaped() -> None:
    missing = [
        hex(code)
        for lo, hi in _DI_RANGES
        for code in range(lo, hi + 1)
        if escape_unsafe(chr(code)) == chr(code) and not unicodedata.category(chr(code)).startswith("Z")
    ]
    assert missing == []


def test_ordinary_text_with_combining_marks_and_emoji_is_untouched() -> None:
    for s in ["e\u0301", "日本語", "🎉", "👍🏽", "한국어", "naïve café"]:
        assert escape_unsafe(s) == s


def test_the_warning_names_them() -> None:
    summary = summarize(scan({"to": "x\ufe0fy\u034fz", "note": "\u3164"}))
    assert summary.startswith("3 hidden/control character(s)")
    for escape in ("\\ufe0f", "\\u034f", "\\u3164"):
        assert escape in summary
    assert summary.isascii()


@pytest.mark.parametrize("raw", ["x\ufe0fy\u034fz", "\u115f\u3164\uffa0pad", "tag\U000e0041\U000e007f", "\u200b\u2060"])
def test_nothing_zero_width_is_left_so_borders_stay_aligned(raw: str) -> None:
    # A border is drawn from the cell width rich computes; a zero-width character that
    # reaches the terminal makes the terminal's width differ. After escaping, every
    # character is printable ASCII or ordinary text: cell width == visible width.
    for text in (safe_text(raw), safe_text(raw, multiline=False), json_text({"v": raw})):
        assert isinstance(text, Text)
        assert all(unicodedata.category(ch)[0] not in "CZ" or ch in " \n" for ch in text.plain)
        assert text.cell_len == sum(1 for ch in text.plain if ch != "\n")


async def test_the_approval_dialog_flags_invisible_characters_and_keeps_its_border_aligned() -> None:
    from tests.console.conftest import showing, wait_for
    from tests.console.fakes import NOW, FakeBackend, approval_call
    from tui.app import WardenApp
    from tui.screens.approval import ApprovalModal

    app = WardenApp(
        FakeBackend(),
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_dialog(approval_call(args={"to": "x\ufe0fy\u034fz"}))
        await wait_for(pilot, lambda: showing(app, ApprovalModal) and app.screen.context_loaded, "dialog")
        await pilot.pause()
        screen = app.screen
        args = str(screen.query_one("#args").render())
        assert '"to": "x\\ufe0fy\\u034fz"' in args
        warning = str(screen.query_one("#hidden-warning").render())
        assert "\\ufe0f" in warning and "\\u034f" in warning
        # Rendered rows: the dialog's right border is in the same cell column on every row
        # (a zero-width character printed raw would shift it on its row).
        dialog = screen.query_one("#dialog")
        strips = screen._compositor.render_strips()
        right = dialog.region.right - 1
        border = {strips[y].crop(right, right + 1).text for y in range(dialog.region.y, dialog.region.bottom)}
        assert len(border) == 1, border
        assert any("x\\ufe0fy\\u034fz" in strips[y].text for y in range(dialog.region.y, dialog.region.bottom))
        for y in range(dialog.region.y, dialog.region.bottom):
            assert strips[y].cell_length == 100
            assert "\ufe0f" not in strips[y].text and "\u034f" not in strips[y].text
