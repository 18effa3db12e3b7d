"""A real agent's ``bash`` tool gated per command, end to end on a SqliteStore with the ready
coding-agent policy of docs/policy.md: a denied command anywhere in the line and the tool never
runs; a grant for a command prefix covers only lines made of that command; it survives processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core import InvalidRequest, Policy
from tests.apps.shell_app import build_runtime

ROOT = Path(__file__).resolve().parents[2]
CODING = ROOT / "docs" / "policies" / "coding-agent.toml"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim").mkdir()
    (work / "victim" / "keep.txt").write_text("precious")
    return work


async def test_a_denied_segment_blocks_the_whole_line_and_names_its_rule(tmp_path: Path, workdir: Path) -> None:
    ran: list[str] = []
    runtime = build_runtime(str(tmp_path / "w.db"), workdir, Policy.load(CODING), ran)
    async with runtime:
        agent = runtime.get_agent("coder")
        stream = await agent.stream("touch made.txt && echo ok; rm -rf victim")
        chunks = await stream.chunks()
        assert stream.status == "finished"
        assert ran == [] and (workdir / "victim" / "keep.txt").exists() and not (workdir / "made.txt").exists()
        [denied] = [c for c in chunks if c.type == "tool-output-denied"]
        assert denied.payload.policy_rule == "recursive-rm"
        assert denied.payload.reason.startswith(
            "Blocked by policy rule recursive-rm: recursive deletes are never run by the agent"
        )
        assert "rm -rf victim" in denied.payload.reason  # the model is told which command
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert (entry.decision, (entry.detail or {}).get("policy_rule")) == ("blocked", "recursive-rm")


async def test_reads_run_unasked_and_anything_else_asks(tmp_path: Path, workdir: Path) -> None:
    ran: list[str] = []
    runtime = build_runtime(str(tmp_path / "w.db"), workdir, Policy.load(CODING), ran)
    async with runtime:
        agent = runtime.get_agent("coder")
        stream = await agent.stream("echo hello && ls | grep vic")
        text = await stream.text()
        assert stream.status == "finished" and ran == ["echo hello && ls | grep vic"]
        assert "hello" in text and "victim" in text
        stream = await agent.stream("echo hi > note.txt")  # an output redirection: never allowed unseen
        await stream.chunks()
        assert stream.status == "suspended" and len(ran) == 1
        assert stream.suspend_payload.policy_rule is None
        assert "never allowed unseen" in (stream.suspend_payload.policy_reason or "")


async def test_a_command_grant_covers_only_lines_made_of_its_prefix(tmp_path: Path, workdir: Path) -> None:
    ran: list[str] = []
    db = str(tmp_path / "w.db")
    runtime = build_runtime(db, workdir, Policy.load(CODING), ran)
    async with runtime:
        agent = runtime.get_agent("coder")
        grant = await runtime.grant(
            "bash",
            scope="thread",
            scope_id="t-1",
            command_match={"argument": "command", "prefixes": [["touch"], ["git", "status"]]},
        )
        assert grant.describe().startswith(
            "allow bash whose command runs only `touch …` or `git status …` in thread t-1"
        )

        async def call(line: str) -> str:
            s = await agent.stream(line, thread_id="t-1")
            await s.chunks()
            return s.status

        assert await call("touch a.txt") == "finished"
        assert await call("touch b.txt; git status --short") == "finished"  # every command is granted
        # every command must be granted (echo is allowed by the policy, but not granted)
        assert await call("touch b.txt && echo done") == "suspended"
        assert await call("nice touch d.txt") == "suspended"  # the wrapper is a command too
        assert await call("touch c.txt > out.txt") == "suspended"  # unseen: never covered
        assert ran == ["touch a.txt", "touch b.txt; git status --short"] and (workdir / "a.txt").exists()
        audit = [e for e in await runtime.store.audit_log() if e.decision == "granted"]
        assert [e.grant_id for e in audit] == [grant.id, grant.id]


async def test_a_deny_rule_wins_over_a_command_grant(tmp_path: Path, workdir: Path) -> None:
    ran: list[str] = []
    runtime = build_runtime(str(tmp_path / "w.db"), workdir, Policy.load(CODING), ran)
    async with runtime:
        agent = runtime.get_agent("coder")
        await runtime.grant(
            "bash",
            scope="agent",
            agent_id="coder",
            command_match={"argument": "command", "prefixes": [["rm"], ["sudo"]]},
        )
        for line in ("rm -r victim", "sudo rm notes"):
            s = await agent.stream(line)
            chunks = await s.chunks()
            assert [c.type for c in chunks if c.type == "tool-output-denied"], line
        assert ran == [] and (workdir / "victim").exists()
        s = await agent.stream("rm victim/keep.txt")  # not recursive: asked by the policy, covered by the grant
        await s.chunks()
        assert s.status == "finished" and not (workdir / "victim" / "keep.txt").exists()


async def test_bad_command_matches_are_refused_and_store_nothing(tmp_path: Path, workdir: Path) -> None:
    runtime = build_runtime(str(tmp_path / "w.db"), workdir, Policy.load(CODING))
    async with runtime:
        for bad in (
            {"prefixes": [["ls"]]},
            {"argument": "command"},
            {"argument": "command", "prefixes": []},
            {"argument": "command", "prefixes": ["ls"]},
            {"argument": "command", "prefixes": [[""]]},
            {"argument": "command", "prefixes": [["ls"]], "statements": ["select"]},
            {"argument": "query", "statements": ["unknown"]},
            {"argument": "query", "statements": ["select"], "dialect": "klingon"},
            {"argument": "command", "prefixes": [["ls"]], "extra": 1},
            "ls",
        ):
            with pytest.raises(InvalidRequest):
                await runtime.grant("bash", scope="run", scope_id="r", command_match=bad)  # type: ignore[arg-type]
        assert await runtime.list_grants() == []


def test_a_command_grant_made_by_the_cli_holds_in_another_process(tmp_path: Path, workdir: Path) -> None:
    env = {
        **os.environ,
        "WARDEN_TEST_DB": str(tmp_path / "w.db"),
        "WARDEN_TEST_WORKDIR": str(workdir),
        "WARDEN_TEST_POLICY": str(CODING),
    }

    def warden(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "warden_cli", *args, "--app", "tests.apps.shell_app:runtime"]
        return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)

    made = warden("grants", "create", "bash", "--scope", "agent", "--agent", "coder", "--command-prefix", "touch")
    assert made.returncode == 0, made.stderr
    assert "allow bash whose command runs only `touch …` for every run of agent coder" in made.stdout
    listed = warden("grants", "list")
    assert "whose command runs only `touch …`" in listed.stdout, listed.stdout
    bad = warden("grants", "create", "bash", "--scope", "agent", "--agent", "coder", "--command-prefix", "'unclosed")
    assert bad.returncode == 2 and "not shell words" in bad.stderr
    listed_json = warden("grants", "list", "--json")
    [grant] = json.loads(listed_json.stdout)
    assert grant["command_match"] == {"argument": "command", "prefixes": [["touch"]]}
