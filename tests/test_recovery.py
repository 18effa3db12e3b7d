"""Crash recovery: returned-to-pending, interrupted calls, the step checkpoint, recover(), lease CAS,
hostile arguments, cancellation. Several tests kill -9 a process deciding on a shared SQLite file."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.decisions import INTERRUPTED_DECLINED
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import InMemoryStore, PostgresStore, SqliteStore
from storage.records import Decision
from tests.helpers import ExecLog, calls_then, echo_results, recording_tool
from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
LEASE = 0.2


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request, tmp_path):
    if request.param == "postgres":  # a fresh database of its own (tests/pg.py)
        async with fresh_database() as dsn:
            store = PostgresStore(dsn)
            yield store
            await store.aclose()
        return
    yield InMemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "w.db")


def _agent(log: list, *, idempotent: bool = False, record: list | None = None) -> Agent:
    class IdIn(BaseModel):
        id: str

    async def execute(inp: IdIn, ctx) -> dict:
        log.append(inp.id)
        return {"deleted": True}

    tool = create_tool(id="d", input_schema=IdIn, execute=execute, require_approval=True, idempotent=idempotent)
    return Agent(id="a", model=calls_then([("d", {"id": "1"}, "x")], echo_results(), record), tools={"d": tool})


async def _dead_decision(rt: Runtime, run_id: str, *, started: bool, status: str = "approved") -> None:
    """What a process leaves behind when it dies after deciding (and maybe after starting the tool)."""
    claim = await rt.store.claim(
        run_id,
        "x",
        kinds=("approval",),
        decide=lambda c, r: Decision(status, actor="alice"),  # type: ignore[arg-type]
        owner="dead",
        lease_seconds=LEASE,
    )
    assert claim.run is not None
    if started:
        assert await rt.store.mark_started(run_id, "x", "dead")
    await asyncio.sleep(LEASE + 0.1)


@pytest.mark.parametrize("status", ["approved", "declined"])
async def test_a_decision_whose_tool_never_started_returns_to_pending(store, status):
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        fp = (await rt.get_suspended_run(out.run_id)).tool_calls[0].fingerprint
        await _dead_decision(rt, out.run_id, started=False, status=status)
        listed = await rt.list_suspended_runs()
        assert listed.total == 1
        call = listed.runs[0].tool_calls[0]
        assert (call.kind, call.fingerprint, call.started_at) == ("approval", fp, None)
        assert await rt.recover() == 0  # made durable, nothing to advance
        assert [c.status for c in await rt.store.get_calls(out.run_id)] == ["pending"]
        done = await (await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x", fingerprint=fp)).result()
        assert done.status == "finished" and log == ["1"]
        decisions = [a.decision for a in await rt.store.audit_log(out.run_id)]
        assert decisions == [status, "returned-to-pending", "approved"]


async def test_returned_to_pending_is_read_time_until_recovered(store):
    agent = _agent([])
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        await _dead_decision(rt, out.run_id, started=False)
        assert (await rt.get_suspended_run(out.run_id)).tool_calls[0].kind == "approval"
        assert [c.status for c in await rt.store.get_calls(out.run_id)] == ["approved"], "listing never writes"


async def test_an_interrupted_call_is_listed_and_approve_re_executes_it(store):
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE, actor="bob") as rt:
        out = await agent.generate("go")
        await _dead_decision(rt, out.run_id, started=True)
        run = await rt.get_suspended_run(out.run_id)
        call = run.tool_calls[0]
        assert call.kind == "interrupted" and call.requires_approval
        assert call.started_at is not None and call.approved_by == "alice"
        assert [c.kind for r in (await rt.list_suspended_runs()).runs for c in r.tool_calls] == ["interrupted"]
        assert await rt.recover() == 0, "not idempotent: never re-run automatically"
        done = await (await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")).result()
        assert done.status == "finished" and log == ["1"]
        audit = [(a.decision, a.actor) for a in await rt.store.audit_log(out.run_id)]
        assert audit == [("approved", "alice"), ("re-executed", "bob")]


async def test_declining_an_interrupted_call_tells_the_model_the_outcome_is_unknown(store):
    log: list = []
    seen: list = []
    agent = _agent(log, record=seen)
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        await _dead_decision(rt, out.run_id, started=True)
        stream = await agent.decline_tool_call(run_id=out.run_id, tool_call_id="x", reason="checked by hand")
        done = await stream.result()
        assert done.status == "finished" and log == []
        told = next(m.content for m in seen[-1] if m.role == "tool")
        assert INTERRUPTED_DECLINED in told and "checked by hand" in told
        assert (await rt.list_suspended_runs()).total == 0


async def test_an_idempotent_tool_is_re_executed_by_recover(store):
    log: list = []
    agent = _agent(log, idempotent=True)
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        await _dead_decision(rt, out.run_id, started=True)
        assert await rt.recover() == 1
        assert log == ["1"] and await rt.store.get_run(out.run_id) is None
        assert [a.decision for a in await rt.store.audit_log(out.run_id)][-1] == "re-executed"


async def test_results_are_stored_before_the_model_is_called_again(store):
    log: list = []
    gate = asyncio.Event()
    calls = {"n": 0}

    async def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="d", args={"id": "1"}, id="x")])
        calls["n"] += 1
        if calls["n"] == 1:
            await gate.wait()  # the deciding stream is cancelled here (as if its process died)
        return ModelResponse(text="done")

    agent = Agent(id="a", model=FunctionModel(model), tools={"d": recording_tool(log, id="d")})
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        stream = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        while calls["n"] == 0:
            await asyncio.sleep(0.01)
        await stream.cancel()
        assert stream.status == "failed" and log == ["1"]
        assert (await rt.list_suspended_runs()).total == 0, "no actionable call: not listed"
        assert await rt.store.get_calls(out.run_id) == []
        assert await rt.recover() == 1
        assert await rt.store.get_run(out.run_id) is None and calls["n"] == 2 and log == ["1"]


async def test_a_process_that_lost_its_lease_cannot_write(store):
    async with Runtime(agents={"a": _agent([])}, storage=store, lease_seconds=LEASE) as rt:
        out = await rt.get_agent("a").generate("go")
        claim = await store.claim(
            out.run_id,
            "x",
            kinds=("approval",),
            decide=lambda c, r: Decision("approved"),
            owner="slow",
            lease_seconds=0.05,
        )
        assert claim.run is not None
        await asyncio.sleep(0.1)
        assert await store.acquire_lease(out.run_id, "other", 60) is not None
        assert not await store.mark_started(out.run_id, "x", "slow")
        assert not await store.checkpoint(out.run_id, "slow", claim.run.snapshot, ["x"])
        assert not await store.finish_run(out.run_id, "slow")
        assert not await store.fail_run(out.run_id, "slow", claim.run.snapshot, "boom")
        run = await store.get_run(out.run_id)
        assert run is not None and run.status == "running" and run.lease_owner == "other"
        assert [c.tool_call_id for c in await store.get_calls(out.run_id)] == ["x"]


async def test_a_stalled_holder_never_reruns_or_overwrites(store):
    """The tool stalls past the lease; another process takes the run over: the stalled stream stores
    nothing, and ends with what the run is now (issue 43), not "failed": its call reads as interrupted
    and waits for an operator, so the stream ends ``suspended`` on it."""
    log: list = []

    class IdIn(BaseModel):
        id: str

    async def execute(inp: IdIn, ctx) -> dict:
        log.append(inp.id)
        time.sleep(LEASE + 0.1)  # blocks the loop: the heartbeat cannot renew
        assert await store.acquire_lease(ctx.run_id, "other", 0.05) is not None  # another process takes over
        return {"ok": True}

    tool = create_tool(id="d", input_schema=IdIn, execute=execute, require_approval=True)
    agent = Agent(id="a", model=calls_then([("d", {"id": "1"}, "x")], echo_results()), tools={"d": tool})
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        stream = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        await stream.wait()
        assert stream.status == "suspended" and stream.error is None, stream.error
        assert stream.suspend_payload is not None and stream.suspend_payload.tool_call_id == "x"
        call = (await rt.get_suspended_run(out.run_id)).tool_calls[0]
        assert call.kind == "interrupted" and log == ["1"]


async def test_cancel_before_the_first_step_ends_every_reader(store):
    agent = _agent([])
    async with Runtime(agents={"a": agent}, storage=store):
        stream = await agent.stream("go")
        reader = asyncio.ensure_future(stream.text())
        await stream.cancel()
        assert await asyncio.wait_for(reader, 2) == ""
        assert stream.status == "failed" and stream.error == "cancelled"
        assert await asyncio.wait_for(stream.chunks(), 2) == []


async def test_a_cancelled_decision_goes_back_to_pending(store):
    log: list = []
    agent = _agent(log)
    async with Runtime(agents={"a": agent}, storage=store, lease_seconds=30) as rt:
        out = await agent.generate("go")
        stream = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        await stream.cancel()  # before it began
        assert stream.status == "failed" and log == []
        listed = await rt.list_suspended_runs()
        assert [c.kind for c in listed.runs[0].tool_calls] == ["approval"]
        done = await (await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")).result()
        assert done.status == "finished" and log == ["1"]
        assert [a.decision for a in await rt.store.audit_log(out.run_id)] == ["approved", "withdrawn", "approved"]


def _deep(n: int) -> dict:
    d: dict = {"leaf": 1}
    for _ in range(n):
        d = {"a": d}
    return d


@pytest.mark.parametrize("args", [{"id": "\ud800"}, {"id": "1", "x": _deep(600)}, {"id": "x" * 1_100_000}])
async def test_hostile_arguments_become_a_tool_error(store, args):
    log: list = []

    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="d", args=args, id="x")], text="a\ud800b")
        return ModelResponse(text="ok")

    agent = Agent(id="a", model=FunctionModel(model), tools={"d": recording_tool(log, id="d")})
    async with Runtime(agents={"a": agent}, storage=store) as rt:
        out = await agent.generate("go")
        assert out.status == "finished", out.error
        errors = [c for c in await (await agent.stream("go")).chunks() if c.type == "tool-error"]
        assert errors and "Invalid arguments" in errors[0].payload.error
        assert log == [] and (await rt.list_suspended_runs()).total == 0


async def test_a_read_only_store_lists_a_run_whose_lease_expired(tmp_path):
    path = tmp_path / "w.db"
    agent = _agent([])
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path), lease_seconds=LEASE) as rt:
        out = await agent.generate("go")
        await _dead_decision(rt, out.run_id, started=True)
    os.chmod(path, 0o444)
    ro = SqliteStore(path, read_only=True)
    try:
        rows, total = await ro.list_suspended()
        assert total == 1 and [(c.tool_call_id, c.kind) for c in rows[0].calls] == [("x", "interrupted")]
    finally:
        await ro.aclose()
        os.chmod(path, 0o644)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT status, lease_owner FROM runs").fetchall() == [("running", "dead")]


# -- two processes on one SQLite file, kill -9 --------------------------------------------------
def _env(tmp_path, hang: str) -> dict[str, str]:
    return dict(
        os.environ,
        CRASHY_DB=str(tmp_path / "w.db"),
        CRASHY_EXEC=str(tmp_path / "exec.db"),
        CRASHY_LEASE="1",
        CRASHY_HANG=hang,
        CRASHY_ACTOR="carol",
        PYTHONPATH=str(ROOT),
    )


def _approve_and_kill(env: dict[str, str], run_id: str, until: tuple[str, int]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.apps.crashy", "approve", run_id], env=env, cwd=ROOT, stderr=subprocess.PIPE
    )
    log = ExecLog(env["CRASHY_EXEC"])
    deadline = time.time() + 60
    while sum(1 for t, _ in log.rows() if t == until[0]) < until[1]:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


async def _suspended_run(env: dict[str, str]) -> str:
    os.environ.update({k: env[k] for k in ("CRASHY_DB", "CRASHY_EXEC", "CRASHY_LEASE")})
    from tests.apps.crashy import build

    async with build() as rt:
        out = await rt.get_agent("crashy").generate("go")
        assert out.status == "suspended"
        return out.run_id


async def test_killed_mid_tool_the_call_is_interrupted_in_another_process(tmp_path, monkeypatch):
    env = _env(tmp_path, "tool")
    for k in ("CRASHY_DB", "CRASHY_EXEC", "CRASHY_LEASE"):
        monkeypatch.setenv(k, env[k])
    run_id = await _suspended_run(env)
    _approve_and_kill(env, run_id, ("act", 1))
    await asyncio.sleep(1.1)
    from tests.apps.crashy import build

    async with build() as rt:
        assert await rt.recover() == 0
        call = (await rt.get_suspended_run(run_id)).tool_calls[0]
        assert call.kind == "interrupted" and call.approved_by == "carol"
        done = await (await rt.decline_tool_call(run_id=run_id)).result()
        assert done.status == "finished"
    assert [t for t, _ in ExecLog(env["CRASHY_EXEC"]).rows()] == ["act", "model"]


async def test_killed_during_the_model_call_the_run_is_continued_by_recover(tmp_path, monkeypatch):
    env = _env(tmp_path, "model")
    for k in ("CRASHY_DB", "CRASHY_EXEC", "CRASHY_LEASE"):
        monkeypatch.setenv(k, env[k])
    run_id = await _suspended_run(env)
    _approve_and_kill(env, run_id, ("model", 1))
    await asyncio.sleep(1.1)
    from tests.apps.crashy import build

    async with build() as rt:
        assert (await rt.list_suspended_runs()).total == 0
        assert await rt.recover() == 1
        assert await rt.store.get_run(run_id) is None
    rows = ExecLog(env["CRASHY_EXEC"]).rows()
    assert [t for t, _ in rows] == ["act", "model", "model"], "the tool ran once; the model was called again"
    assert rows[-1][1]["seen"] == ['{"acted": "a1"}']


async def test_warden_runs_recover_cli(tmp_path, monkeypatch):
    env = _env(tmp_path, "model")
    for k in ("CRASHY_DB", "CRASHY_EXEC", "CRASHY_LEASE"):
        monkeypatch.setenv(k, env[k])
    run_id = await _suspended_run(env)
    _approve_and_kill(env, run_id, ("model", 1))
    time.sleep(1.1)
    env["CRASHY_HANG"] = ""
    warden = str(Path(sys.executable).parent / "warden")
    out = subprocess.run(
        [warden, "runs", "recover", "--app", "tests.apps.crashy:build"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "recovered 1 run" in out.stdout, out.stderr
