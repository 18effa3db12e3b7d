"""The in-memory ``RunState`` of runs this process suspended, reused by a decision taken here.

A decision reads the run's snapshot back in the store's claim and validates it into a
``RunState`` (``RunState.from_json``): the largest single cost of a warm approval cycle. When
the same process saved that snapshot a moment ago, it still has the state it serialised, so
validation would only rebuild an equal object. ``SavedStates`` keeps, per run, the snapshot text
this process stored and that state, and hands the state back (once: taken, not copied) only
when the claim's snapshot text is byte-identical to the stored text: a snapshot another process
changed, or a run stored elsewhere, is validated from its text as before.

Only a state that is *JSON-exact* is kept: validating its own JSON would give the same values
(``json_exact``). Values typed ``Any`` (tool arguments, results, payloads, resume data, context)
are checked to be plain JSON (dicts with string keys, lists, strings, finite floats, ints,
bools, None): a tuple, a float ``nan``, a non-string key or a model object would come back
different from the text, so such a state is never kept. Text that had to be escaped
(lone surrogates) is never kept either (``RunState.to_json_plain`` returns None).

Taking a state checks that it still serialises to the stored text (one dump, cheaper than the
validation it replaces): a value shared with a chunk the caller received and changed in place
would otherwise reach the decision without being in the snapshot.

The map is bounded (oldest first out): a run decided by another process leaves an entry that
is only evicted. Objects a caller could still mutate after the save are copied where they enter
the state (``Message`` objects passed to ``stream`` and auto-resume's followups).
"""

from __future__ import annotations

import math
from typing import Any

from agent_core.call_state import CallState, RunState
from agent_core.models import Message, ToolCall

#: runs whose state is kept at most (the oldest entry goes first).
DEFAULT_LIMIT = 256

#: the types JSON gives back as they are (``float`` is one when finite: ``_plain``).
_SCALARS = frozenset({str, int, bool, type(None)})


class SavedStates:
    """Bounded map run id -> (snapshot text as stored, the state it was serialised from)."""

    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._entries: dict[str, tuple[str, RunState]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, run_id: str, text: str, state: RunState) -> None:
        """Remember ``state`` as the one ``text`` was serialised from (if it is JSON-exact)."""
        entries = self._entries
        entries.pop(run_id, None)
        if self.limit <= 0 or not json_exact(state):
            return
        entries[run_id] = (text, state)
        if len(entries) > self.limit:
            del entries[next(iter(entries))]

    def give_back(self, run_id: str, text: str, state: RunState) -> None:
        """Put back a state taken for a decision that was refused (it was not changed)."""
        entries = self._entries
        if run_id not in entries and self.limit > 0:
            entries[run_id] = (text, state)
            if len(entries) > self.limit:
                del entries[next(iter(entries))]

    def take(self, run_id: str, text: str) -> RunState | None:
        """The kept state of ``run_id`` if ``text`` is exactly what was stored, removed from the map;
        else None (and any stale entry is dropped). The state must still serialise to that text: the
        values of a state are shared with the chunks that carried them (a tool call's ``args``), and
        a caller that changed one in place after the save must not change what a decision runs."""
        entry = self._entries.pop(run_id, None)
        if entry is None:
            return None
        stored, state = entry
        if (stored is text or stored == text) and state.to_json_plain() == stored:
            return state
        return None

    def forget(self, run_id: str) -> None:
        self._entries.pop(run_id, None)


def json_exact(state: RunState) -> bool:
    """True when validating ``state``'s JSON gives back the same values: every ``Any``-typed value
    is plain JSON and every nested model is of its field's exact class. (Written for speed: it runs
    on every suspension; scalar values are decided without a call.)"""
    for value in (state.request_context, state.policies, state.output_schema, state.framework_state):
        if type(value) not in _SCALARS and not _plain(value):
            return False
    if not (_messages_exact(state.messages) and (not state.followups or _messages_exact(state.followups))):
        return False
    for call in state.calls:
        if type(call) is not CallState:
            return False
        for value in (call.args, call.suspend_payload, call.resume_data, call.result, call.edited_args):
            if type(value) not in _SCALARS and not _plain(value):
                return False
        child = call.child
        if child is not None and (type(child) is not RunState or not json_exact(child)):
            return False
    return True


def _messages_exact(messages: list[Message]) -> bool:
    for m in messages:
        if type(m) is not Message:
            return False
        for tc in m.tool_calls:
            if type(tc) is not ToolCall or not _plain(tc.args):
                return False
    return True


def _plain(value: Any) -> bool:
    """Is ``value`` plain JSON that parses back to an equal value of the same types?"""
    t = type(value)
    if t is dict:
        for k, v in value.items():
            if type(k) is not str or (type(v) not in _SCALARS and not _plain(v)):
                return False
        return True
    if t is list:
        for v in value:
            if type(v) not in _SCALARS and not _plain(v):
                return False
        return True
    if t is float:
        return math.isfinite(value)
    return t in _SCALARS
