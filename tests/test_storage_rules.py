"""The stores' decision rules (storage.rules) as plain functions: no store, no I/O.

The last tests check that each rule's SQL spelling (run inside one statement by the SQL
stores) selects exactly the rows the Python rule accepts, in SQLite and PostgreSQL.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import replace

import asyncpg
import pytest

from storage import rules
from storage import sql_common as q
from storage.records import ClaimResult, Decision, PendingCallRow, RunRow
from storage.rows import call_params
from storage.rules import ClaimRequest
from tests.pg import fresh_database

NOW = 10_000.0


def run(lease_owner: str | None = None, lease_until: float | None = None, status: str = "suspended") -> RunRow:
    return RunRow("r", "agent", None, None, status, "{}", lease_owner=lease_owner, lease_until=lease_until)


def call(cid: str = "c", **kw) -> PendingCallRow:
    base = PendingCallRow("r", cid, "delete", "approval", {"id": 1}, "fp-" + cid, created_at=1.0)
    return replace(base, **kw)


def req(tool_call_id: str | None = "c", kinds=("approval",), decide=None) -> ClaimRequest:
    return ClaimRequest("r", tool_call_id, kinds, decide or (lambda c, r: Decision("approved")), "me", 30.0)


# -- which call a claim takes -----------------------------------------------------------------
def test_a_named_call_is_taken_when_it_reads_as_actionable_and_refused_otherwise():
    picked = rules.pick([call("a"), call("c")], run(), NOW, req("c"))
    assert isinstance(picked, rules.Pick) and picked.stored.tool_call_id == "c" and picked.current.status == "pending"
    missing = rules.pick([call("a")], run(), NOW, req("c"))
    assert isinstance(missing, ClaimResult) and missing.outcome == "no_call"
    decided = rules.pick([call("c", status="approved")], run("other", NOW + 5), NOW, req("c"))
    assert isinstance(decided, ClaimResult) and decided.outcome == "not_pending" and decided.audited


def test_without_a_name_the_latest_actionable_call_of_the_kinds_is_taken():
    calls = [
        call("old", created_at=1.0),
        call("new", created_at=2.0, seq=0),
        call("newer-seq", created_at=2.0, seq=1),
        call("input", kind="suspend", created_at=9.0),
        call("done", status="declined", created_at=8.0, started_at=3.0),
    ]
    picked = rules.pick(calls, run(), NOW, req(None))
    assert isinstance(picked, rules.Pick) and picked.current.tool_call_id == "newer-seq"
    other = rules.pick([call("input", kind="suspend")], run(), NOW, req(None))
    assert isinstance(other, ClaimResult) and (other.outcome, other.other_kinds) == ("no_call_of_kind", True)
    none = rules.pick([call("done", status="declined", started_at=3.0)], run(), NOW, req(None))
    assert isinstance(none, ClaimResult) and (none.outcome, none.other_kinds) == ("no_call", False)


def test_a_lapsed_decision_is_taken_again_and_an_interrupted_one_reads_as_interrupted():
    lapsed = rules.pick([call(status="approved")], run("dead", NOW - 1), NOW, req())
    assert isinstance(lapsed, rules.Pick) and lapsed.current.status == "pending" and lapsed.stored.status == "approved"
    started = rules.pick([call(status="approved", started_at=5.0)], run("dead", NOW - 1), NOW, req())
    assert isinstance(started, rules.Pick) and started.current.kind == "interrupted"
    held = rules.pick([call(status="approved", decided_until=NOW + 1)], run(), NOW, req())
    assert isinstance(held, ClaimResult) and held.outcome == "not_pending", "a waiting decider still holds it"


def test_only_a_refusal_about_a_named_call_that_is_gone_asks_the_audit_log():
    assert rules.asks_audit(ClaimResult("no_run"), req("c")) and rules.asks_audit(ClaimResult("no_call"), req("c"))
    assert not rules.asks_audit(ClaimResult("no_call"), req(None))
    assert not rules.asks_audit(ClaimResult("not_pending"), req("c"))


# -- what a claim writes -------------------------------------------------------------------
def test_a_claim_on_a_free_run_takes_the_lease_and_audits_the_decision():
    r, c = run(), call()
    plan = rules.plan_claim(r, rules.Pick(c, c), Decision("approved", actor="ann"), NOW, req())
    row = rules.decided(c, plan)
    assert (
        plan.lease_until == NOW + 30
        and row.decided_until == 0.0
        and (row.status, row.decided_by) == ("approved", "ann")
    )
    assert plan.result.outcome == "ok" and plan.result.run is not None
    assert (plan.result.run.lease_owner, plan.result.run.status) == ("me", "running")
    assert [(e.decision, e.actor, e.decided_at) for e in plan.audit] == [("approved", "ann", NOW)]
    assert (r.status, r.lease_owner, c.status) == ("suspended", None, "pending"), "the inputs are left as they were"


def test_a_claim_while_another_holds_the_lease_holds_the_decision_for_it():
    c = call()
    plan = rules.plan_claim(run("other", NOW + 5), rules.Pick(c, c), Decision("declined", reason="no"), NOW, req())
    assert plan.lease_until is None and plan.result.run is None
    assert rules.decided(c, plan).decided_until == NOW + 30, "held while this decider waits for the lease"
    assert [(e.decision, e.reason) for e in plan.audit] == [("declined", "no")]


def test_a_lapsed_decision_decided_again_is_audited_as_returned_first():
    stored = call(status="approved", edited_args={"id": 2})
    current = rules.back_to_pending(stored)
    plan = rules.plan_claim(run(), rules.Pick(stored, current), Decision("approved", edited_args={"id": 3}), NOW, req())
    assert [(e.decision, e.reason) for e in plan.audit] == [
        (rules.RETURNED, rules.LEASE_EXPIRED),
        ("edited", None),
    ]
    assert rules.decided(stored, plan).edited_args == {"id": 3}


@pytest.mark.parametrize(
    ("status", "label"), [("approved", rules.RE_EXECUTED), ("resuming", rules.RE_EXECUTED), ("declined", "declined")]
)
def test_an_interrupted_call_approved_or_resumed_is_re_executed_and_a_decline_is_a_decline(status, label):
    stored = call(status="approved", started_at=5.0)
    current = replace(stored, status="pending", kind="interrupted")
    plan = rules.plan_claim(run(), rules.Pick(stored, current), Decision(status), NOW, req())
    assert [e.decision for e in plan.audit] == [label], "no returned-to-pending: the tool had started"
    assert rules.decided(stored, plan).started_at is None


# -- giving a run back -------------------------------------------------------------------------
def test_settle_returns_only_lapsed_decisions_and_says_how_the_run_is_left():
    calls = [
        call("lapsed", status="approved", resume_data={"x": 1}),
        call("started", status="approved", started_at=5.0),
        call("held", status="approved", decided_until=NOW + 1),
        call("pending"),
        call("expired", status="expired"),
    ]
    assert rules.settle(run("live", NOW + 1), calls, NOW) is None
    assert rules.settle(run(status="failed"), calls, NOW) is None
    settled = rules.settle(run("dead", NOW - 1), calls, NOW)
    assert settled is not None and [c.tool_call_id for c in settled.returned] == ["lapsed"]
    assert (settled.returned[0].status, settled.returned[0].resume_data) == ("pending", None)
    assert [(e.tool_call_id, e.decision, e.reason) for e in settled.audit] == [
        ("lapsed", rules.RETURNED, rules.LEASE_EXPIRED)
    ]
    assert settled.run_status == "suspended"
    only_expired = rules.settle(run(), [call(status="expired")], NOW)
    assert only_expired is not None and only_expired.run_status == "running", "free to continue"


def test_leases_are_held_by_their_owner_until_they_end():
    assert rules.holds(run("me", NOW), "me", NOW) and not rules.holds(run("me", NOW - 1), "me", NOW)
    assert not rules.holds(run("me", NOW + 1), "you", NOW) and not rules.holds(run(), None, NOW)
    assert rules.lease_free(run(), NOW) and rules.lease_free(run("dead", NOW - 1), NOW)
    assert not rules.lease_free(run("me", NOW), NOW) and not rules.lease_free(run(status="failed"), NOW)


def test_a_withdrawn_decision_is_audited_with_its_one_reason():
    e = rules.withdrawn_entry("r", "agent", call(), NOW)
    assert (e.decision, e.reason, e.fingerprint, e.agent_id) == (rules.WITHDRAWN, rules.INTERRUPTED, "fp-c", "agent")


# -- the SQL spelling of each rule agrees with the rule ------------------------------------------
def _grid() -> list[PendingCallRow]:
    statuses = ("pending", "approved", "declined", "resuming", "expired")
    out = []
    for i, (status, started, until) in enumerate(itertools.product(statuses, (None, 5.0), (0.0, NOW - 1, NOW + 1))):
        out.append(call(f"c{i:02d}", status=status, started_at=started, decided_until=until))
    return out


def _runs() -> list[RunRow]:
    """Runs as stores leave them: no lease (NULL, or 0 once given back), or an owner and its end."""
    leases = [(None, None), (None, 0.0)] + [(o, t) for o in ("me", "you") for t in (NOW - 1, NOW, NOW + 1)]
    statuses = ("suspended", "running", "failed")
    return [
        replace(run(owner, until, status), run_id=f"r{i:02d}")
        for i, ((owner, until), status) in enumerate(itertools.product(leases, statuses))
    ]


def _call_checks() -> list[tuple[str, object]]:
    return [
        (rules.UNDONE_SQL, rules.undone),
        (rules.lapsed_sql("$1"), lambda c: rules.lapsed(c, NOW)),
        (rules.HELD_SQL, rules.held_by_waiter),
        (rules.MAY_START_SQL, rules.may_start),
    ]


def _run_checks() -> list[tuple[str, object]]:
    return [
        (rules.lease_free_sql("$1"), lambda r: rules.lease_free(r, NOW)),
        (rules.holds_sql("$2", "$1"), lambda r: rules.holds(r, "me", NOW)),
    ]


def _run_params(r: RunRow) -> tuple:
    return (r.run_id, r.agent_id, r.status, r.snapshot, r.lease_owner, r.lease_until)


_INSERT_RUN = (
    "INSERT INTO runs (run_id, agent_id, status, snapshot, lease_owner, lease_until, created_at, suspended_at, "
    "updated_at) VALUES ($1, $2, $3, $4, $5, $6, 0, 0, 0)"
)


def test_the_sql_of_each_rule_selects_what_the_rule_accepts_in_sqlite():
    from storage.sqlite import _MIGRATIONS, _statements

    db = sqlite3.connect(":memory:")
    for version in sorted(_MIGRATIONS):
        for statement in _statements(_MIGRATIONS[version]):
            db.execute(statement)
    calls, runs = _grid(), _runs()
    db.executemany(q.sqlite_text(q.INSERT_CALL), [call_params(c) for c in calls])
    db.executemany(q.sqlite_text(_INSERT_RUN), [_run_params(r) for r in runs])
    for sql, rule in _call_checks():
        got = {
            r[0]
            for r in db.execute(
                q.sqlite_text(f"SELECT tool_call_id FROM pending_calls WHERE {sql}"), (NOW,) if "$1" in sql else ()
            )
        }
        assert got == {c.tool_call_id for c in calls if rule(c)}, sql
    for sql, rule in _run_checks():
        params = (NOW, "me") if "$2" in sql else (NOW,)
        got = {r[0] for r in db.execute(q.sqlite_text(f"SELECT run_id FROM runs WHERE {sql}"), params)}
        assert got == {r.run_id for r in runs if rule(r)}, sql


async def test_the_sql_of_each_rule_selects_what_the_rule_accepts_in_postgresql():
    from storage.postgres import _MIGRATIONS

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        try:
            for version in sorted(_MIGRATIONS):
                if _MIGRATIONS[version]:  # a version may be SQLite's alone
                    await conn.execute(_MIGRATIONS[version])
            calls, runs = _grid(), _runs()
            await conn.executemany(q.INSERT_CALL, [call_params(c) for c in calls])
            await conn.executemany(_INSERT_RUN, [_run_params(r) for r in runs])
            for sql, rule in _call_checks():
                params = (NOW,) if "$1" in sql else ()
                got = {r[0] for r in await conn.fetch(f"SELECT tool_call_id FROM pending_calls WHERE {sql}", *params)}
                assert got == {c.tool_call_id for c in calls if rule(c)}, sql
            for sql, rule in _run_checks():
                params = (NOW, "me") if "$2" in sql else (NOW,)
                got = {r[0] for r in await conn.fetch(f"SELECT run_id FROM runs WHERE {sql}", *params)}
                assert got == {r.run_id for r in runs if rule(r)}, sql
        finally:
            await conn.close()


def test_a_run_given_back_is_listed_again_exactly_when_the_rule_says_in_sqlite():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE pending_calls (run_id TEXT, status TEXT)")
    cases = {"r1": ["expired"], "r2": ["expired", "approved"], "r3": [], "r4": ["pending"]}
    db.executemany("INSERT INTO pending_calls VALUES (?, ?)", [(r, s) for r, ss in cases.items() for s in ss])
    for run_id, statuses in cases.items():
        got = db.execute(q.sqlite_text("SELECT " + rules.given_back_sql("$1")), (run_id,)).fetchone()[0]
        assert got == rules.status_when_given_back([call(status=s) for s in statuses]), run_id


def test_each_audit_label_and_reason_is_written_once_in_the_stores():
    """The stores say these through ``storage.rules``; a copy in a store would drift from it."""
    from pathlib import Path

    texts = {p.name: p.read_text() for p in (Path(rules.__file__).parent).glob("*.py")}
    for sentence in (rules.LEASE_EXPIRED, rules.INTERRUPTED, f'"{rules.RETURNED}"', f'"{rules.RE_EXECUTED}"'):
        assert [name for name, text in texts.items() if sentence in text] == ["rules.py"], sentence
        assert texts["rules.py"].count(sentence) == 1, sentence
