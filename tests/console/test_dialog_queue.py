"""The decision dialogs' line (``tui.dialog_queue``): plain data over the typing guard."""

from __future__ import annotations

from tests.console.conftest import FakeClock
from tests.console.fakes import approval_call
from tui.dialog_queue import DialogQueue
from tui.typing_guard import TypingGuard


def test_a_call_waits_once_and_leaves_the_line_when_its_dialog_opens():
    queue = DialogQueue(TypingGuard(FakeClock()))
    a, b = approval_call("run-a"), approval_call("run-b")
    assert queue.wait(a) and queue.wait(b) and not queue.wait(a)
    assert queue.waiting == [a, b]
    queue.opening(b)
    assert queue.open == b and queue.waiting == [a]
    assert not queue.wait(b)  # open: not queued behind itself
    queue.closed()
    assert queue.open is None


def test_a_bounced_dialog_is_next_and_holds_the_others_until_the_prompt_is_empty():
    clock = FakeClock()
    queue = DialogQueue(TypingGuard(clock, quiet=1.0))
    a, b = approval_call("run-a"), approval_call("run-b")
    queue.wait(a)
    queue.bounced(b)
    assert queue.waiting == [b, a]
    assert queue.must_wait(prompt_has_text=True)  # held while the prompt has text
    assert not queue.must_wait(prompt_has_text=False)  # sent or cleared: released
    assert not queue.held_by_typing
    queue.guard.key_pressed()
    assert queue.must_wait(prompt_has_text=False)  # typing
    clock.advance(1.5)
    assert not queue.must_wait(prompt_has_text=False)


def test_next_skips_calls_no_longer_pending_and_drop_forgets_them():
    queue = DialogQueue(TypingGuard(FakeClock()))
    a, b, c = approval_call("run-a"), approval_call("run-b"), approval_call("run-c")
    for call in (a, b, c):
        queue.wait(call)
    assert queue.next({b.key, c.key}) == b  # a was decided elsewhere: dropped on the way
    queue.drop([c.key])
    assert queue.waiting == [] and queue.next({c.key}) is None
