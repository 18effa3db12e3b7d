"""The pending panel's reconciliation with the store, as a pure function (no Textual, no app)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

from tui.backend import Kind, PendingCall, PendingPage, PendingRun
from tui.reconcile import Removal, Shown, StoreView, dialogs_to_close, reconcile, runs_to_check

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def call(run_id: str, n: int = 0, kind: Kind = "approval") -> PendingCall:
    return PendingCall(run_id, f"call_{n}", "delete_record", {"id": n}, kind, fingerprint=f"sha256:{run_id}{n}")


def run(run_id: str, *calls: PendingCall) -> PendingRun:
    return PendingRun(run_id, "ops", None, None, T0, calls or (call(run_id),))


def page(*runs: PendingRun, total: int | None = None) -> PendingPage:
    """``runs`` newest first, as the store lists them."""
    return PendingPage(list(runs), len(runs) if total is None else total, 0, 50)


def shown(*calls: PendingCall, polled=(), live=()) -> Shown:
    return Shown({c.key: c for c in calls}, frozenset(polled), frozenset(live))


def keys(calls) -> list[str]:
    return [c.key for c in calls]


def test_an_empty_panel_lists_the_page_newest_last_as_polled():
    result = reconcile(shown(), StoreView(page(run("b"), run("a"))))
    assert keys(result.add) == ["a:call_0", "b:call_0"]
    assert result.polled == {"a:call_0", "b:call_0"}
    assert result.remove == [] and result.gone == []
    assert (result.total, result.more) == (2, 0)


def test_a_call_decided_elsewhere_is_removed_and_closes_its_dialog():
    a0, a1 = call("a", 0), call("a", 1)
    result = reconcile(shown(a0, a1), StoreView(page(run("a", a1))))
    assert result.remove == [Removal(a0, "decided")]
    assert result.remove_keys == [a0.key]
    assert [r.call for r in result.gone] == [a0]
    assert keys(result.add) == [a1.key]  # already listed: the panel keeps it as it is


def test_a_run_gone_from_the_store_removes_its_calls_as_run_ended():
    a, b = call("a"), call("b")
    result = reconcile(shown(a, b, polled=[a.key]), StoreView(page(run("b")), {"a": None}))
    assert result.remove == [Removal(a, "run-ended")]
    assert result.gone[0].no_longer_pending


def test_live_runs_are_never_touched_by_a_poll():
    a = call("a")
    # the store no longer has run a (its stream is being consumed here), and it lists run l
    result = reconcile(shown(a, live=["a", "l"]), StoreView(page(run("l")), {"a": None}))
    assert result.remove == [] and result.add == []
    assert runs_to_check(shown(a, live=["a"]), page()) == set()


def test_a_run_the_poll_did_not_read_is_left_alone():
    a = call("a")
    result = reconcile(shown(a), StoreView(page(run("b"))))
    assert result.remove == [] and keys(result.add) == ["b:call_0"]


def test_runs_to_check_are_the_listed_runs_beyond_the_page():
    a, b, c = call("a"), call("b"), call("c")
    assert runs_to_check(shown(a, b, c, live=["c"]), page(run("b"))) == {"a"}


def test_a_polled_call_older_than_the_newest_page_leaves_without_closing_dialogs():
    old = call("old")
    view = StoreView(page(run("new"), total=2), {"old": run("old")})
    result = reconcile(shown(old, polled=[old.key]), view)
    assert result.remove == [Removal(old, "older")]
    assert result.gone == [] and not result.remove[0].no_longer_pending
    assert (result.total, result.more) == (2, 1)
    assert dialogs_to_close(result.remove, [old]) == []


def test_a_call_of_this_session_beyond_the_newest_page_stays():
    own = call("own")
    view = StoreView(page(run("new"), total=2), {"own": run("own", own)})
    result = reconcile(shown(own), view)
    assert result.remove == []
    assert keys(result.add) == ["new:call_0", own.key]
    assert result.polled == {"new:call_0"}  # the session's call is not claimed by the poll


def test_an_unwindowed_page_keeps_polled_calls_of_runs_read_one_by_one():
    p = call("p")
    result = reconcile(shown(p, polled=[p.key]), StoreView(page(run("n")), {"p": run("p", p)}))
    assert result.remove == []


def test_removals_are_ordered_gone_first_then_older():
    old, gone = call("old"), call("gone")
    view = StoreView(page(run("new"), total=3), {"old": run("old"), "gone": None})
    result = reconcile(shown(old, gone, polled=[old.key, gone.key]), view)
    assert result.remove_keys == [gone.key, old.key]


def test_dialogs_to_close_says_which_and_why():
    a, b, c = call("a"), call("b"), call("c")
    removals = [Removal(a, "decided"), Removal(b, "run-ended"), Removal(c, "older")]
    assert dialogs_to_close(removals, [c, b, call("x"), a]) == [Removal(b, "run-ended"), Removal(a, "decided")]
    assert dialogs_to_close([], [a]) == []


def test_reconcile_needs_no_textual():
    code = "import sys, tui.reconcile; print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
