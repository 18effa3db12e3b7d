"""The demo's framework agents (``make demo``): each gates ``delete_record`` with its framework's own
mechanism, and a decision taken in another process (``--app warden_demo.frameworks_app:runtime``) really
deletes the sample record."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.adapters.conftest import ROOT, WARDEN
from tests.helpers import drain
from warden_demo.agents import build_demo_runtime
from warden_demo.records import list_records, records_path

KEYS = ["pydantic_ai_records", "openai_agents_records", "langgraph_records"]


@pytest.mark.parametrize("key", KEYS)
async def test_a_framework_demo_agent_waits_then_deletes_when_approved_elsewhere(tmp_path, key):
    db = tmp_path / "demo.db"
    async with build_demo_runtime(db, frameworks=True) as rt:
        assert {"ops", "supervisor", *KEYS} <= set(rt.agents)
        agent = rt.get_agent(key)
        assert agent.examples and agent.model.model_id in ("pydantic-ai", "openai-agents", "langgraph")
        stream = await agent.stream("show record abc-125 and delete record abc-124")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        assert [c.payload.tool_name for c in chunks if c.type == "tool-call-approval"] == ["delete_record"]
    assert "abc-124" in list_records(records_path(db)), "nothing is deleted before the decision"
    out = subprocess.run(
        [WARDEN, "runs", "approve", stream.run_id, "--app", "warden_demo.frameworks_app:runtime"],
        cwd=ROOT,
        env={**os.environ, "WARDEN_DB": str(db)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "abc-124" not in list_records(records_path(db))
    async with build_demo_runtime(db, frameworks=True) as rt:
        assert await rt.store.get_run(stream.run_id) is None


def test_the_default_demo_runtime_imports_no_framework(tmp_path):
    code = (
        "import sys; from warden_demo.agents import build_demo_runtime; "
        f"rt = build_demo_runtime({str(tmp_path / 'd.db')!r}); "
        "print(sorted(rt.agents), [m for m in ('pydantic_ai', 'agents', 'langgraph') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "['ops', 'supervisor'] []", out.stderr


DEMO_POLICY = """
[[rules]]
id = "reads-reviewed"
tools = ["show_record"]
decision = "ask"
reason = "records hold customer data"

[[rules]]
id = "records-kept"
tools = ["delete_record"]
decision = "deny"
reason = "sample records are kept this week"
"""


@pytest.mark.parametrize("key", KEYS)
async def test_a_policy_file_applies_to_the_framework_demo_agents(tmp_path, monkeypatch, key):
    """``WARDEN_POLICY=policy.toml make demo``: the file's rules gate and refuse the frameworks' calls."""
    from agent_core.policy_env import apply_policy_env

    policy = tmp_path / "policy.toml"
    policy.write_text(DEMO_POLICY)
    monkeypatch.setenv("WARDEN_POLICY", str(policy))
    db = tmp_path / "demo.db"
    async with apply_policy_env(build_demo_runtime(db, frameworks=True)) as rt:
        agent = rt.get_agent(key)
        stream = await agent.stream("show record abc-125 and delete record abc-124")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        asked = [(c.payload.tool_name, c.payload.policy_rule) for c in chunks if c.type == "tool-call-approval"]
        assert asked == [("show_record", "reads-reviewed")], "the framework does not mark show_record"
        denied = [(c.payload.tool_name, c.payload.policy_rule) for c in chunks if c.type == "tool-output-denied"]
        assert denied == [("delete_record", "records-kept")]
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
    assert result.status == "finished" and "abc-125" in result.text
    assert "abc-124" in list_records(records_path(db)), "the policy refused the delete"
