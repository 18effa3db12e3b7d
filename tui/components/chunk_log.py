"""A scrolling log of a run's chunks, built for high chunk rates.

Writers only append to a Python buffer (``append_text`` / ``write_entry``);
a timer flushes the buffer a few dozen times per second: the live assistant
paragraph is re-wrapped once per flush, not once per chunk. The log keeps at
most ``max_lines`` wrapped lines. All content is ``rich.text.Text`` built by
``tui.untrusted``: nothing is parsed as markup.
"""

from __future__ import annotations

from collections import deque

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.untrusted import safe_text

#: A live paragraph longer than this is committed at a word boundary (bounds re-wrap cost).
LIVE_LIMIT = 1024


class ChunkLog(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    ChunkLog { background: $surface; overflow-y: scroll; overflow-x: hidden; }
    """

    def __init__(
        self,
        *,
        max_lines: int = 2000,
        flush_interval: float = 1 / 20,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.max_lines = max_lines
        self.flush_interval = flush_interval
        self._entries: deque[tuple[Text, list[Strip]]] = deque()
        self._entry_lines = 0
        self._live: Text | None = None
        self._live_style = ""
        self._live_strips: list[Strip] = []
        self._buffer: list[tuple[str, object, str]] = []
        self._width = 0
        self._style = None
        #: Counters the benchmark and tests read.
        self.chunks_absorbed = 0
        self.flushes = 0

    def on_mount(self) -> None:
        self.set_interval(self.flush_interval, self.flush, name="chunk-log-flush")

    # -- writers (cheap) -----------------------------------------------------------------------
    def append_text(self, text: str, style: str = "") -> None:
        """Append streamed text to the live paragraph (a new paragraph when the style changes)."""
        self._buffer.append(("text", text, style))
        self.chunks_absorbed += 1

    def write_entry(self, text: Text | str, style: str = "") -> None:
        """Close the live paragraph and add a finished entry (``str`` is shown literally)."""
        if isinstance(text, str):
            text = safe_text(text, style)
        self._buffer.append(("entry", text, ""))
        self.chunks_absorbed += 1

    def end_paragraph(self) -> None:
        self._buffer.append(("end", "", ""))

    def clear(self) -> None:
        self._buffer.clear()
        self._entries.clear()
        self._entry_lines = 0
        self._live = None
        self._live_strips = []
        self._update_size()
        self.refresh()

    # -- flushing ------------------------------------------------------------------------------
    def _render_strips(self, text: Text) -> list[Strip]:
        """Wrapped lines of ``text``, padded to the width and already in the widget's base style."""
        width = max(self._width, 10)
        console = self.app.console
        options = console.options.update_width(width)
        style = self._base_style()
        lines = Segment.split_lines(console.render(text, options))
        return [Strip(line).adjust_cell_length(width, style).apply_style(style) for line in lines] or [
            Strip.blank(width, style)
        ]

    def _base_style(self):
        if self._style is None:
            self._style = self.rich_style
        return self._style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None
        if self._width:
            self._rerender_all()

    def _commit_live(self) -> None:
        if self._live is not None and self._live.plain:
            self._add_entry(self._live)
        self._live = None
        self._live_strips = []

    def _add_entry(self, text: Text) -> None:
        strips = self._render_strips(text)
        self._entries.append((text, strips))
        self._entry_lines += len(strips)

    def _trim(self) -> None:
        budget = self.max_lines - len(self._live_strips)
        while self._entries and self._entry_lines > budget:
            _, strips = self._entries.popleft()
            self._entry_lines -= len(strips)

    def flush(self) -> None:
        if not self._buffer or not self._width:
            return
        buffer, self._buffer = self._buffer, []
        live_changed = False
        # Coalesce runs of text deltas of one style: one escape pass, one append.
        ops: list[tuple[str, object, str]] = []
        for op in buffer:
            if op[0] == "text" and ops and ops[-1][0] == "text" and ops[-1][2] == op[2]:
                ops[-1] = ("text", ops[-1][1] + op[1], op[2])  # type: ignore[operator]
            else:
                ops.append(op)
        for kind, value, style in ops:
            if kind == "text":
                if self._live is not None and style != self._live_style:
                    self._commit_live()
                if self._live is None:
                    self._live = Text(end="")
                    self._live_style = style
                self._live.append_text(safe_text(value, style))
                live_changed = True
                self._commit_finished_lines()
            elif kind == "entry":
                self._commit_live()
                self._add_entry(value)  # type: ignore[arg-type]
            else:
                self._commit_live()
        if live_changed:
            self._live_strips = self._render_strips(self._live) if self._live is not None and self._live.plain else []
        self._trim()
        self.flushes += 1
        self._update_size()
        self.refresh()
        self.scroll_end(animate=False, immediate=False, x_axis=False)

    def _commit_finished_lines(self) -> None:
        """Move completed lines (and over-long paragraphs) out of the live paragraph.

        Only the last, still-growing line is re-wrapped at each flush.
        """
        while self._live is not None:
            live = self._live
            plain = live.plain
            cut = plain.rfind("\n") + 1
            if not cut and len(plain) > LIVE_LIMIT:
                cut = plain.rfind(" ", 0, LIVE_LIMIT) + 1 or LIVE_LIMIT
            if not cut:
                return
            head, *rest = live.divide([cut])
            if head.plain.endswith("\n"):
                head.right_crop(1)
            self._add_entry(head)
            self._live = rest[0] if rest else Text(end="")

    def _update_size(self) -> None:
        self.virtual_size = Size(self._width, self._entry_lines + len(self._live_strips))

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width and width != self._width:
            self._width = width
            self._rerender_all()
            self.flush()

    def _rerender_all(self) -> None:
        texts = [t for t, _ in self._entries]
        self._entries.clear()
        self._entry_lines = 0
        for text in texts:
            self._add_entry(text)
        if self._live is not None:
            self._live_strips = self._render_strips(self._live)
        self._trim()
        self._update_size()
        self.refresh()

    # -- reading -------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return self._entry_lines + len(self._live_strips)

    def plain_lines(self) -> list[str]:
        """The visible text, one string per wrapped line (for tests)."""
        return [s.text.rstrip() for s in self._all_strips()]

    @property
    def plain(self) -> str:
        parts = [t.plain for t, _ in self._entries]
        if self._live is not None:
            parts.append(self._live.plain)
        return "\n".join(parts)

    def _all_strips(self) -> list[Strip]:
        out: list[Strip] = []
        for _, strips in self._entries:
            out.extend(strips)
        out.extend(self._live_strips)
        return out

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if index >= self.line_count:
            return Strip.blank(width, self._base_style())
        if index >= self._entry_lines:
            strip = self._live_strips[index - self._entry_lines]
        else:
            strip = self._line_at(index)
        if strip.cell_length != width:  # mid-resize: the next flush re-wraps
            strip = strip.crop_extend(0, width, self._base_style())
        return strip

    def _line_at(self, index: int) -> Strip:
        # Entries are few compared with lines; walk from the end (the view is usually at the bottom).
        if index >= self._entry_lines // 2:
            position = self._entry_lines
            for _, strips in reversed(self._entries):
                position -= len(strips)
                if index >= position:
                    return strips[index - position]
        else:
            position = 0
            for _, strips in self._entries:
                if index < position + len(strips):
                    return strips[index - position]
                position += len(strips)
        return Strip.blank(self._width)
