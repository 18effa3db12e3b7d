"""Several processes on one SQLite file: suspend here, decide there, execute exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_core import AlreadyDecided
from tests.apps.counting import build_runtime
from tests.helpers import ExecLog

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def env(tmp_path):
    e = dict(
        os.environ,
        WARDEN_TEST_DB=str(tmp_path / "w.db"),
        WARDEN_TEST_EXEC=str(tmp_path / "exec.db"),
        PYTHONPATH=str(ROOT),
    )
    return e


def run_cli(env, *args: str, background: bool = False):
    cmd = [sys.executable, "-m", "tests.apps.counting", *args]
    if background:
        return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def finish(proc) -> dict:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out)


async def test_suspended_in_one_process_approved_in_another(env):
    started = run_cli(env, "start", "do delete:abc read:r1", "thread-1")
    assert started["status"] == "suspended" and started["types"][-1] == "tool-call-approval"
    log = ExecLog(env["WARDEN_TEST_EXEC"])
    assert log.rows() == [("read", {"id": "r1"})]

    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        agent = runtime.get_agent("ops")
        listed = await agent.list_suspended_runs(thread_id="thread-1")
        assert listed.total == 1
        run = listed.runs[0]
        assert run.run_id == started["run_id"] and run.thread_id == "thread-1"
        assert [(c.tool_name, c.args, c.requires_approval) for c in run.tool_calls] == [("delete", {"id": "abc"}, True)]
        res = await agent.approve_tool_call_generate(run_id=run.run_id, tool_call_id=run.tool_calls[0].tool_call_id)
        assert res.finish_reason == "stop" and '"deleted": "abc"' in res.text and '"read": "r1"' in res.text
        assert (await agent.list_suspended_runs()).total == 0
        with pytest.raises(AlreadyDecided):
            await agent.approve_tool_call(run_id=run.run_id, tool_call_id=run.tool_calls[0].tool_call_id)
        audit = await runtime.store.audit_log(run.run_id)
        assert [(a.tool_name, a.decision) for a in audit] == [("delete", "approved")]
    assert log.rows() == [("read", {"id": "r1"}), ("delete", {"id": "abc"})]


async def test_two_processes_racing_to_approve_one_call(env):
    started = run_cli(env, "start", "do delete:once")
    at = f"{time.time() + 1.5:.4f}"
    procs = [run_cli(env, "approve", started["run_id"], "c0", at, background=True) for _ in range(2)]
    results = [finish(p) for p in procs]
    winners = [r for r in results if r["ok"]]
    losers = [r for r in results if not r["ok"]]
    assert len(winners) == 1 and len(losers) == 1, results
    assert winners[0]["status"] == "finished"
    assert losers[0]["code"] == "AGENT_TOOL_CALL_ALREADY_DECIDED"
    assert ExecLog(env["WARDEN_TEST_EXEC"]).rows() == [("delete", {"id": "once"})]


async def test_two_processes_deciding_different_calls_of_one_run_lose_nothing(env):
    started = run_cli(env, "start", "do delete:a delete:b")
    at = f"{time.time() + 1.5:.4f}"
    pa = run_cli(env, "approve", started["run_id"], "c0", at, background=True)
    pb = run_cli(env, "decline", started["run_id"], "c1", at, background=True)
    ra, rb = finish(pa), finish(pb)
    assert ra["ok"] and rb["ok"], (ra, rb)
    assert sorted([ra["status"], rb["status"]]) == ["finished", "suspended"]
    final = ra if ra["status"] == "finished" else rb
    assert '"deleted": "a"' in final["text"] and "not approved" in final["text"]
    assert ExecLog(env["WARDEN_TEST_EXEC"]).rows() == [("delete", {"id": "a"})]
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        assert (await runtime.list_suspended_runs()).total == 0
        assert sorted(a.decision for a in await runtime.store.audit_log(started["run_id"])) == ["approved", "declined"]


async def test_request_policy_function_counts_as_approval_required_in_another_process(env):
    # Process A: the policy says "read" is free, so read runs and delete waits.
    started = run_cli(env, "start", "two-steps delete:x read:y", "t", "--policy-read-free")
    log = ExecLog(env["WARDEN_TEST_EXEC"])
    assert log.rows() == [("read", {"id": "y"})]
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        agent = runtime.get_agent("ops")
        # Process B has no function: the decision already made stands, the next step's read is gated.
        res = await agent.approve_tool_call_generate(run_id=started["run_id"])
        assert res.finish_reason == "suspended" and res.suspend_payload.tool_name == "read"
        assert log.rows() == [("read", {"id": "y"}), ("delete", {"id": "x"})]
        done = await agent.approve_tool_call_generate(run_id=started["run_id"])
        assert done.finish_reason == "stop"
    assert log.rows()[-1] == ("read", {"id": "again"})


async def test_two_processes_storming_many_runs_decide_each_call_exactly_once(env, tmp_path):
    runs = [run_cli(env, "start", "do delete:a delete:b delete:c")["run_id"] for _ in range(2)]
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        agent = runtime.get_agent("ops")
        for _ in range(10):  # more runs, quickly, in this process
            runs.append((await agent.generate("do delete:a delete:b delete:c")).run_id)
    targets = [[r, f"c{i}"] for r in runs for i in range(3)]
    (tmp_path / "targets.json").write_text(json.dumps(targets))
    at = f"{time.time() + 2.0:.4f}"
    procs = [run_cli(env, "storm", str(tmp_path / "targets.json"), str(seed), at, background=True) for seed in (1, 2)]
    results = [finish(p) for p in procs]
    assert all(r["errors"] == [] for r in results), results
    won = [tuple(w) for r in results for w in r["won"]]
    lost = [tuple(x) for r in results for x in r["lost"]]
    assert sorted((w[0], w[1]) for w in won) == sorted(tuple(t) for t in targets), "each call won exactly once"
    assert len(lost) == len(targets) and {x[2] for x in lost} == {"AGENT_TOOL_CALL_ALREADY_DECIDED"}
    approved = sorted((w[0], w[1]) for w in won if w[2] == "approved")
    executions = ExecLog(env["WARDEN_TEST_EXEC"]).rows()
    assert len(executions) == len(approved), "every approved call ran once, no declined call ran"
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        assert (await runtime.list_suspended_runs()).total == 0, "every run finished"
        assert len(await runtime.store.audit_log()) == len(targets)
