"""Reconciling the pending panel with the store: a pure function, no Textual.

The run screen polls the store (the newest page of pending runs, plus the runs of
listed calls that are not on it) and hands what it read, with what it shows, to
``reconcile``. The answer says which calls to add and remove, and which calls
left the store (decided elsewhere, or their run ended); ``dialogs_to_close``
says which open or queued dialogs those calls close, and why.

No textual import here (the unit tests need none).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from tui.backend import PendingCall, PendingPage, PendingRun

#: Why a listed call left the panel.
#: ``decided``: its run is still pending but the call is not (someone else decided it).
#: ``run-ended``: its run is gone from the store (finished, failed, or decided to the end elsewhere).
#: ``older``: still pending, but older than the newest page and listed only by a poll (the picker has it).
Reason = Literal["decided", "run-ended", "older"]


@dataclass(frozen=True)
class StoreView:
    """What one poll read: the newest page of pending runs, and the runs of listed calls
    that are not on it (``None``: the run is gone from the store)."""

    page: PendingPage
    others: Mapping[str, PendingRun | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Shown:
    """What the panel shows when the poll is applied.

    ``calls``: listed calls by key; ``polled``: the keys listed only because a poll found
    them (not seen live or opened here); ``live_runs``: runs whose stream this console is
    consuming (their calls come from chunks, never from polls).
    """

    calls: Mapping[str, PendingCall]
    polled: Collection[str] = frozenset()
    live_runs: Collection[str] = frozenset()


@dataclass(frozen=True)
class Removal:
    call: PendingCall
    reason: Reason

    @property
    def no_longer_pending(self) -> bool:
        """The call cannot be decided any more (as opposed to merely leaving the newest page)."""
        return self.reason != "older"


@dataclass(frozen=True)
class Reconciliation:
    """What to do with the panel: add ``add`` (newest last; ones already listed are kept as they
    are), remove ``remove``; ``polled`` are the keys of ``add`` that only the poll knows about.
    ``total`` is the number of pending runs in the store, ``more`` how many are beyond the page."""

    add: list[PendingCall]
    remove: list[Removal]
    polled: set[str]
    total: int
    more: int

    @property
    def remove_keys(self) -> list[str]:
        return [r.call.key for r in self.gone] + [r.call.key for r in self.remove if not r.no_longer_pending]

    @property
    def gone(self) -> list[Removal]:
        """Calls no longer pending in the store: their dialogs close."""
        return [r for r in self.remove if r.no_longer_pending]


def reconcile(shown: Shown, view: StoreView) -> Reconciliation:
    """Compare what the panel shows with what the store holds.

    - A call of a live run, or of a run the poll did not read, is left alone.
    - A listed call whose run is gone (``None`` in ``others``) or whose run no longer
      has it is removed: ``run-ended`` / ``decided``.
    - When the newest page is not the whole store, a call listed only by a poll whose run
      fell off the page is removed (``older``): the picker pages beyond it.
    - Every call of the page's runs (but live ones) is added, newest run last, as polled.
    - The runs of this session (listed, not polled) beyond the page stay: their calls are added.
    """
    page = view.page
    runs: dict[str, PendingRun | None] = {run.run_id: run for run in page.runs}
    runs.update(view.others)
    windowed = page.total > len(page.runs)  # the newest page is not the whole store
    live = set(shown.live_runs)
    remove: list[Removal] = []
    for call in shown.calls.values():
        if call.run_id in live or call.run_id not in runs:
            continue
        run = runs[call.run_id]
        if run is None:
            remove.append(Removal(call, "run-ended"))
        elif all(c.tool_call_id != call.tool_call_id for c in run.calls):
            remove.append(Removal(call, "decided"))
        elif windowed and call.run_id in view.others and call.key in shown.polled:
            remove.append(Removal(call, "older"))
    add: list[PendingCall] = []
    polled: set[str] = set()
    for run in reversed(page.runs):  # newest last
        if run.run_id in live:
            continue
        for call in run.calls:
            add.append(call)
            polled.add(call.key)
    own = {c.run_id for c in shown.calls.values() if c.key not in shown.polled}
    for maybe_run in view.others.values():  # runs of this session beyond the newest page
        if maybe_run is not None and maybe_run.run_id in own and maybe_run.run_id not in live:
            add.extend(maybe_run.calls)
    return Reconciliation(add, remove, polled, page.total, max(0, page.total - len(page.runs)))


def runs_to_check(shown: Shown, page: PendingPage) -> set[str]:
    """The runs of listed calls that the page does not list (and are not live): read them one by one."""
    listed = {run.run_id for run in page.runs}
    return {c.run_id for c in shown.calls.values()} - listed - set(shown.live_runs)


def dialogs_to_close(gone: Iterable[Removal], dialogs: Iterable[PendingCall]) -> list[Removal]:
    """Of the open or queued ``dialogs``, those whose call is no longer pending, each with the
    reason (acting on them could only fail). A removal that is not ``no_longer_pending`` closes nothing."""
    by_key = {r.call.key: r for r in gone if r.no_longer_pending}
    return [Removal(d, by_key[d.key].reason) for d in dialogs if d.key in by_key]
