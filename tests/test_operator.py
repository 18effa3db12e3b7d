"""Operator power (issue #12): edited arguments, approval deadlines, grants — on every store, across processes.

The cross-process tests start or decide in a child process (``tests.apps.operator``) and check from
this one, on SQLite and on PostgreSQL; the in-process ones run on the three stores of the store suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_core import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    GrantNotAllowed,
    GrantNotFound,
    InvalidRequest,
    ToolArgsInvalid,
    fingerprint,
)
from agent_core.call_state import TRANSITIONS
from agent_core.chunks import Chunk
from agent_core.engine import EDITED_NOTE, EXPIRED_MESSAGE
from agent_core.verdicts import Expire
from agent_core.views import describe_grant
from tests.apps.operator import build_runtime
from tests.helpers import ExecLog
from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
EDITED = {"to": "bob@example.org", "subject": "hello", "priority": 3}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def db(request, tmp_path) -> AsyncIterator[str]:
    if request.param == "postgres":
        async with fresh_database() as dsn:
            yield dsn
    elif request.param == "sqlite":
        yield str(tmp_path / "w.db")
    else:
        yield "memory:"


@pytest.fixture(params=["sqlite", "postgres"])
async def shared_db(request, tmp_path) -> AsyncIterator[str]:
    """A store two processes share."""
    if request.param == "postgres":
        async with fresh_database() as dsn:
            yield dsn
    else:
        yield str(tmp_path / "w.db")


@pytest.fixture
def exec_log(tmp_path) -> ExecLog:
    return ExecLog(tmp_path / "exec.db")


def other_process(db: str, log: ExecLog, *args: str) -> dict:
    env = dict(os.environ, WARDEN_TEST_DB=db, WARDEN_TEST_EXEC=log.path, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "tests.apps.operator", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


async def pending_call(runtime, run_id: str):
    listed = await runtime.list_suspended_runs()
    run = next(r for r in listed.runs if r.run_id == run_id)
    return run, run.tool_calls[0]


# -- edited arguments ---------------------------------------------------------------------------
async def test_edited_args_are_validated_and_executed_in_another_process(shared_db, exec_log):
    started = other_process(shared_db, exec_log, "start", "send ana@example.com", "t-1")
    assert started["status"] == "suspended"
    run_id = started["run_id"]
    original_fp = fingerprint("send_email", {"to": "ana@example.com"})
    async with build_runtime(shared_db, exec_log.path) as rt:
        agent = rt.get_agent("mail")
        _, call = await pending_call(rt, run_id)
        # invalid edits change nothing
        with pytest.raises(ToolArgsInvalid) as err:
            await agent.approve_tool_call(run_id=run_id, tool_call_id=call.tool_call_id, args={"priority": "x"})
        assert err.value.code == "AGENT_TOOL_ARGS_INVALID" and {tuple(e["loc"]) for e in err.value.errors} >= {("to",)}
        # the fingerprint is the one presented (original arguments), not the edit's
        with pytest.raises(FingerprintMismatch):
            await agent.approve_tool_call(
                run_id=run_id,
                tool_call_id=call.tool_call_id,
                args=EDITED,
                fingerprint=fingerprint("send_email", EDITED),
            )
        _, still = await pending_call(rt, run_id)
        assert still == call and exec_log.rows() == []
        assert await rt.store.audit_log(run_id) == []
    # approved with an edit (coerced, defaults filled) by the other process
    out = other_process(
        shared_db,
        exec_log,
        "approve",
        run_id,
        call.tool_call_id,
        json.dumps({"to": "bob@example.org", "priority": "3"}),
        original_fp,
    )
    assert out["finish_reason"] == "stop"
    assert exec_log.rows() == [("send_email", EDITED)]
    told = json.loads(out["text"])
    assert told == {"note": EDITED_NOTE, "args": EDITED, "result": {"sent_to": "bob@example.org"}}
    async with build_runtime(shared_db, exec_log.path) as rt:
        [entry] = await rt.store.audit_log(run_id)
        assert entry.decision == "edited" and entry.fingerprint == original_fp
        assert entry.detail == {
            "args": {"to": "ana@example.com"},
            "edited_args": EDITED,
            "fingerprint": original_fp,
            "edited_fingerprint": fingerprint("send_email", EDITED),
        }
        with pytest.raises(AlreadyDecided):
            await rt.approve_tool_call(run_id=run_id, tool_call_id=call.tool_call_id, args=EDITED)


async def test_edit_stream_shows_args_and_history_keeps_the_models_call(db, exec_log):
    async with build_runtime(db, exec_log.path) as rt:
        agent = rt.get_agent("mail")
        s = await agent.stream("send ana@example.com")
        await s.wait()
        stream = await agent.approve_tool_call(run_id=s.run_id, args={"to": "bob@example.org", "priority": 3})
        chunks = await stream.chunks()
        [result] = [c for c in chunks if c.type == "tool-result"]
        assert result.payload.args == EDITED
        assert result.model_dump(mode="json", by_alias=True)["payload"]["args"] == EDITED
        # the same arguments are not an edit: the model is not told of one
        s2 = await agent.stream("send ana@example.com")
        await s2.wait()
        res = await agent.approve_tool_call_generate(run_id=s2.run_id, args={"to": "ana@example.com"})
        assert json.loads(res.text) == {"sent_to": "ana@example.com"}
        [entry] = await rt.store.audit_log(s2.run_id)
        assert entry.detail is None


async def test_a_crash_after_an_edited_approval_reruns_with_the_edit(tmp_path, exec_log):
    db = str(tmp_path / "w.db")
    async with build_runtime(db, exec_log.path) as rt:
        rt._decisions.lease_seconds = 0.2
        agent = rt.get_agent("mail")
        s = await agent.stream("send ana@example.com")
        await s.wait()
        stream = await agent.approve_tool_call(run_id=s.run_id, args=EDITED)
        # the decision is stored; pretend the process died while the tool ran (started mark set)
        assert await rt.store.mark_started(s.run_id, "c0", (await rt.store.get_run(s.run_id)).lease_owner)
        await stream.cancel()
    await asyncio.sleep(0.3)
    async with build_runtime(db, exec_log.path) as rt:
        _, call = await pending_call(rt, s.run_id)
        assert call.kind == "interrupted"
        await (await rt.approve_tool_call(run_id=s.run_id, tool_call_id="c0")).wait()
        assert exec_log.rows()[-1] == ("send_email", EDITED)


# -- deadlines ----------------------------------------------------------------------------------
async def test_an_overdue_call_is_listed_refused_and_expired_by_a_sweep_in_another_process(shared_db, exec_log):
    started = other_process(shared_db, exec_log, "start", "send ana@example.com", "t-1", "0.3")
    run_id = started["run_id"]
    async with build_runtime(shared_db, exec_log.path) as rt:
        run, call = await pending_call(rt, run_id)
        assert call.expires_at is not None and run.expires_at == call.expires_at
        assert json.loads(run.model_dump_json(by_alias=True))["toolCalls"][0]["expiresAt"].endswith("Z")
        await asyncio.sleep(0.4)
        _, overdue = await pending_call(rt, run_id)  # not yet swept: listed with its past deadline
        assert overdue.expires_at < datetime.now(UTC)
        with pytest.raises(ApprovalExpired) as err:
            await rt.approve_tool_call(run_id=run_id, tool_call_id=call.tool_call_id)
        assert err.value.code == "AGENT_APPROVAL_EXPIRED"
        with pytest.raises(ApprovalExpired):
            await rt.decline_tool_call(run_id=run_id, tool_call_id=call.tool_call_id)
        assert (await rt.store.audit_log(run_id)) == []
    assert other_process(shared_db, exec_log, "sweep") == {"expired": 1}
    async with build_runtime(shared_db, exec_log.path) as rt:
        assert (await rt.list_suspended_runs()).total == 0
        assert await rt.store.get_run(run_id) is None  # the run continued and finished
        with pytest.raises(ApprovalExpired):  # wins over AlreadyDecided after the run moved on
            await rt.approve_tool_call(run_id=run_id, tool_call_id=call.tool_call_id)
        assert [a.decision for a in await rt.store.audit_log(run_id)] == ["expired"]
        assert await rt.sweep() == 0
    assert exec_log.rows() == []  # fail-closed: the tool never ran


async def test_the_sweep_streams_tool_call_expired_and_tells_the_model(db, exec_log):
    async with build_runtime(db, exec_log.path, timeout=600) as rt:
        agent = rt.get_agent("mail")
        s = await agent.stream("send ana@example.com", approval_timeout=0.05)  # request wins over agent
        await s.wait()
        await asyncio.sleep(0.1)
        [overdue] = await rt.store.list_overdue(datetime.now(UTC).timestamp())
        stream = await rt._decisions.decide(agent, Expire(), run_id=s.run_id, tool_call_id=overdue.tool_call_id)
        chunks = await stream.chunks()
        [expired] = [c for c in chunks if c.type == "tool-call-expired"]
        assert expired.payload.tool_call_id == "c0" and expired.payload.args == {"to": "ana@example.com"}
        assert expired.model_dump(mode="json", by_alias=True)["payload"]["expiredAt"].endswith("Z")
        assert chunks[-1].type == "finish" and stream.status == "finished"
        assert EXPIRED_MESSAGE in (await stream.text())
        assert exec_log.rows() == []


async def test_deadline_precedence_and_input_requests(db, exec_log):
    from agent_core import Agent, Runtime, create_tool
    from agent_core.models import FunctionModel, ModelResponse, ToolCall
    from storage import open_store
    from tests.apps.operator import EmailIn

    async def send(inp, ctx):
        return {}

    def model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="t", args={"to": "x"}, id="c0")])
        return ModelResponse(text="ok")

    tool = create_tool(id="t", input_schema=EmailIn, execute=send, require_approval=True, approval_timeout=1000)
    agent = Agent(id="a", model=FunctionModel(model), tools={"t": tool}, default_options={"approval_timeout": 5})
    async with Runtime(agents={"a": agent}, storage=open_store(db)) as rt:
        s = await agent.stream("go", approval_timeout=10)
        await s.wait()
        _, call = await pending_call(rt, s.run_id)
        left = (call.expires_at - datetime.now(UTC)).total_seconds()
        assert 990 < left <= 1000  # the tool's own setting wins
        # the tool-call-approval chunk carries the same deadline (expiresAt in JSON, ISO UTC)
        [approval] = [c for c in await s.chunks() if c.type == "tool-call-approval"]
        assert approval.payload.expires_at == call.expires_at
        wire_payload = approval.to_json()["payload"]
        assert wire_payload["expiresAt"].endswith("Z") and "expires_at" not in wire_payload
        assert Chunk.from_json(approval.to_json()).payload.expires_at == call.expires_at
    with pytest.raises(InvalidRequest):
        async with Runtime(agents={"a": agent}, storage=open_store(db)) as rt:
            await agent.stream("go", approval_timeout=-1)


@pytest.mark.parametrize("timeout", [1e300, float("inf"), float("nan"), 11 * 365.25 * 24 * 3600])
async def test_a_deadline_past_ten_years_is_refused_before_anything_is_stored(db, timeout):
    """A huge deadline once put ``expires_at`` past what a datetime holds: every listing then failed."""
    from agent_core import Agent, Runtime, create_tool
    from agent_core.errors import InvalidToolDefinition
    from agent_core.models import FunctionModel, ModelResponse, ToolCall
    from storage import open_store
    from tests.apps.operator import EmailIn

    def model(messages, info):
        return ModelResponse(tool_calls=[ToolCall(name="t", args={"to": "x"}, id="c0")])

    with pytest.raises(InvalidToolDefinition, match="at most ten years"):
        create_tool(id="t", input_schema=EmailIn, execute=lambda i, c: {}, approval_timeout=timeout)
    tool = create_tool(id="t", input_schema=EmailIn, execute=lambda i, c: {}, require_approval=True)
    agent = Agent(id="a", model=FunctionModel(model), tools={"t": tool})
    async with Runtime(agents={"a": agent}, storage=open_store(db)) as rt:
        with pytest.raises(InvalidRequest, match="at most ten years"):
            await agent.stream("go", approval_timeout=timeout)
        assert (await rt.list_suspended_runs()).total == 0


def test_expired_is_a_state_of_the_call_machine():
    assert TRANSITIONS["expire"] == (frozenset({"awaiting_approval"}), "expired")
    assert TRANSITIONS["lapse"] == (frozenset({"expired"}), "done")


# -- grants -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("left", "words"),
    [
        (3600, "1 hour"),
        (3599.2, "1 hour"),  # read a moment after creation: still the hour the operator chose
        (3570, "1 hour"),
        (5400, "90 minutes"),
        (8 * 3600 - 2, "8 hours"),
        (86400 * 3 + 40, "3 days"),
        (61, "1 minute"),
        (45, "45 seconds"),
        (-5, "0 seconds"),
    ],
)
def test_a_grant_reads_in_whole_units_however_late_it_is_shown(left: float, words: str) -> None:
    assert (
        describe_grant("send_email", "run", "r-1", None, None, left)
        == f"allow send_email with any arguments in run r-1 for {words}"
    )


async def test_a_grant_made_in_another_process_approves_matching_calls(shared_db, exec_log):
    made = other_process(shared_db, exec_log, "grant", "send_email", "thread", "t-42", '{"to": "ana@example.com"}')
    grant_id = made["grant"]["id"]
    async with build_runtime(shared_db, exec_log.path) as rt:
        agent = rt.get_agent("mail")
        [listed] = await rt.list_grants()
        assert listed.id == grant_id and listed.scope == "thread" and listed.scope_id == "t-42"
        assert listed.args_match == {"to": "ana@example.com"} and listed.created_by == "ops"
        assert 3500 < (listed.expires_at - datetime.now(UTC)).total_seconds() <= 3600
        assert listed.describe() == "allow send_email with to=ana@example.com in thread t-42 for 1 hour"
        s = await agent.stream("send ana@example.com", thread_id="t-42")
        chunks = await s.chunks()
        assert s.status == "finished" and "tool-call-approval" not in [c.type for c in chunks]
        [result] = [c for c in chunks if c.type == "tool-result"]
        assert result.payload.grant_id == grant_id
        [entry] = await rt.store.audit_log(s.run_id)
        assert entry.decision == "granted" and entry.detail == {"grant_id": grant_id} and entry.actor == "ops"
        # other arguments, another thread: asked as usual
        for prompt, thread in (("send bob@example.org", "t-42"), ("send ana@example.com", "t-43")):
            s = await agent.stream(prompt, thread_id=thread)
            await s.wait()
            assert s.status == "suspended"
    assert exec_log.rows() == [("send_email", {"to": "ana@example.com", "subject": "hello", "priority": 1})]


async def test_grant_scopes_expiry_and_revocation(db, exec_log):
    async with build_runtime(db, exec_log.path) as rt:
        agent = rt.get_agent("mail")

        async def asked(**kw) -> bool:
            s = await agent.stream("send ana@example.com", **kw)
            await s.wait()
            return s.status == "suspended"

        pending = await agent.stream("send ana@example.com", resource_id="u-1")
        await pending.wait()
        g = await rt.grant("send_email", scope="resource", scope_id="u-1", actor="ana")
        assert not await asked(resource_id="u-1") and await asked(resource_id="u-2")
        # calls already pending are not decided by a new grant
        assert (await rt.get_suspended_run(pending.run_id)).tool_calls[0].kind == "approval"
        await rt.revoke_grant(g.id)
        assert await asked(resource_id="u-1")
        with pytest.raises(GrantNotFound) as err:
            await rt.revoke_grant(g.id)
        assert err.value.code == "AGENT_GRANT_NOT_FOUND"
        await rt.grant("send_email", scope="agent", agent_id="mail", expires_in=None)
        assert not await asked(thread_id="anything")
        assert [x.expires_at for x in await rt.list_grants()] == [None]
        await rt.revoke_grant((await rt.list_grants())[0].id)
        short = await rt.grant("send_email", scope="thread", scope_id="t", expires_in=0.2)
        assert not await asked(thread_id="t")
        await asyncio.sleep(0.3)
        assert await asked(thread_id="t") and await rt.list_grants() == []
        assert short.expires_at is not None
        # a run grant: one run's later calls only
        s = await agent.stream("send ana@example.com")
        await s.wait()
        await rt.grant("send_email", scope="run", scope_id=s.run_id)
        assert await asked()
        with pytest.raises(InvalidRequest):
            await rt.grant("send_email", scope="thread")
        with pytest.raises(InvalidRequest):
            await rt.grant("nope", scope="agent", agent_id="mail")


async def test_a_tool_with_allow_grants_false_is_never_granted(db, exec_log):
    async with build_runtime(db, exec_log.path) as rt:
        agent = rt.get_agent("mail")
        with pytest.raises(GrantNotAllowed) as err:
            await rt.grant("wipe", scope="agent", agent_id="mail")
        assert err.value.code == "AGENT_GRANT_NOT_ALLOWED"
        # even a stored grant (made by hand) never approves it
        from storage.records import GrantRow

        await rt.store.add_grant(GrantRow(id="g-x", tool_name="wipe", scope="agent", agent_id="mail"))
        s = await agent.stream("send wipe")
        await s.wait()
        assert s.status == "suspended" and exec_log.rows() == []


async def test_a_grant_covers_a_call_however_it_is_gated(db, exec_log):
    async with build_runtime(db, exec_log.path) as rt:
        agent = rt.get_agent("mail")
        await rt.grant("send_email", scope="thread", scope_id="t")
        s = await agent.stream("send ana@example.com", thread_id="t", require_tool_approval=lambda call: True)
        await s.wait()
        assert s.status == "finished"
