"""Hooks, ctx.writer, tool_call_concurrency and output_schema when a run is decided in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apps.parity import Answer, build_runtime
from tests.helpers import ExecLog, types

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def env(tmp_path):
    return dict(
        os.environ,
        WARDEN_TEST_DB=str(tmp_path / "w.db"),
        WARDEN_TEST_EXEC=str(tmp_path / "exec.db"),
        PYTHONPATH=str(ROOT),
    )


def start(env, prompt: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tests.apps.parity", "start", prompt],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


async def test_approved_in_another_process(env):
    started = start(env, "approve it")
    assert started["status"] == "suspended" and started["types"][-1] == "tool-call-approval"
    tracker = {"now": 0, "peak": 0}
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"], tracker) as runtime:
        agent = runtime.get_agent("par")
        stream = await agent.approve_tool_call(run_id=started["run_id"], tool_call_id="g1")
        chunks = await stream.chunks()
        result = await stream.result()
    # the resumed tool's progress goes to this process's stream
    out = [c for c in chunks if c.type == "tool-output"]
    assert [c.payload.data for c in out] == [{"deleting": "a"}]
    assert types(chunks).index("tool-output") < types(chunks).index("tool-result")
    # tool_call_concurrency=1 was stored with the run
    assert tracker["peak"] == 1
    # the stored JSON Schema validated the answer; no model passed here: a dict
    assert result.object == {"city": "Paris", "population": 3}
    rows = ExecLog(env["WARDEN_TEST_EXEC"]).rows()
    assert [r[1]["output_schema"] for r in rows if r[0] == "model"] == [True, True, True]
    # the hooks of the agent registered in this process ran here
    hooks = [r[1] for r in rows if r[0] == "before_tool_call"]
    assert [h["tool"] for h in hooks] == ["delete", "w", "w", "w"]
    assert {h["pid"] for h in hooks} == {os.getpid()}


async def test_resumed_in_another_process_with_the_model(env):
    started = start(env, "suspend please")
    assert started["status"] == "suspended" and started["types"][-1] == "tool-call-suspended"
    async with build_runtime(env["WARDEN_TEST_DB"], env["WARDEN_TEST_EXEC"]) as runtime:
        agent = runtime.get_agent("par")
        stream = await agent.resume_stream({"value": "v"}, run_id=started["run_id"], output_schema=Answer)
        chunks = await stream.chunks()
        assert await stream.object() == Answer(city="Paris", population=3)
    assert [c.payload.data for c in chunks if c.type == "tool-output"] == [{"resumed_with": "v"}]
