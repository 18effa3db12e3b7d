"""``warden policy check`` / ``explain``: the real command line, in subprocesses like a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_policy import PAYMENTS

ROOT = Path(__file__).resolve().parent.parent


def warden(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "warden_cli", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_check_good_file(tmp_path: Path) -> None:
    path = tmp_path / "payments.toml"
    path.write_text(PAYMENTS, encoding="utf-8")
    done = warden("policy", "check", str(path))
    assert done.returncode == 0, done.stderr
    assert "ok, 3 rules, 4 self-tests pass; version sha256:" in done.stdout


def test_check_failing_self_tests_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        PAYMENTS.replace("amount = 10 }", "amount = 2000 }").replace(
            'tool = "delete_user" }', 'tool = "delete_user", context = { env = "prod" } }'
        ),
        encoding="utf-8",
    )
    done = warden("policy", "check", str(path))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, lines
    assert "rule 'big-refunds' not_match[0]: should not match but does" in lines[0]
    assert "rule 'prod-deletes' not_match[0]: should not match but does" in lines[1]


def test_check_invalid_file_names_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "invalid.toml"
    path.write_text('[[rules]]\nid = "oops"\ndecision = "maybe"\n', encoding="utf-8")
    done = warden("policy", "check", str(path))
    assert done.returncode == 1
    assert "rule 'oops': unknown decision 'maybe'" in done.stderr
    missing = warden("policy", "check", str(tmp_path / "nope.toml"))
    assert missing.returncode == 1 and "cannot read policy file" in missing.stderr


def test_explain(tmp_path: Path) -> None:
    path = tmp_path / "payments.toml"
    path.write_text(PAYMENTS, encoding="utf-8")
    done = warden("policy", "explain", str(path), "--tool", "issue_refund", "--args", '{"amount": 5000}')
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == "ask: rule big-refunds: refunds over 1000 need two people (2 approvers)"
    assert "matched any-refund -> ask" in done.stdout
    js = warden(
        "policy",
        "explain",
        str(path),
        "--tool",
        "delete_user",
        "--args",
        "{}",
        "--context",
        '{"env": "prod"}',
        "--json",
    )
    out = json.loads(js.stdout)
    assert (out["decision"], out["policy_rule"], out["reason"]) == ("deny", "prod-deletes", "never delete in prod")
    bad = warden("policy", "explain", str(path), "--tool", "x", "--args", "[1")
    assert bad.returncode == 2 and "--args is not valid JSON" in bad.stderr


def test_policy_option_refuses_a_failing_file_before_anything_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(PAYMENTS.replace("amount = 10 }", "amount = 2000 }"), encoding="utf-8")
    done = warden("--policy", str(bad), "runs", "list", "--db", str(tmp_path / "w.db"))
    assert done.returncode == 2
    assert "self-test failed: rule 'big-refunds' not_match[0]" in done.stderr
    serve = warden("serve", "--policy", str(tmp_path / "missing.toml"), "--port", "0")
    assert serve.returncode == 2 and "cannot read policy file" in serve.stderr


def test_policy_environment_applies_to_an_app(tmp_path: Path, monkeypatch) -> None:
    from agent_core.app_loader import AppLoadError, load_runtime
    from agent_core.policy import Policy

    good = tmp_path / "good.toml"
    good.write_text(PAYMENTS, encoding="utf-8")
    monkeypatch.setenv("WARDEN_TEST_DB", str(tmp_path / "w.db"))
    monkeypatch.setenv("WARDEN_TEST_EXEC", str(tmp_path / "exec.db"))
    monkeypatch.setenv("WARDEN_POLICY", str(good))
    monkeypatch.setenv("WARDEN_SHADOW_POLICY", str(good))
    runtime = load_runtime("tests.apps.policy_app:runtime")
    assert runtime.policy is not None and runtime.policy.version == Policy.load(good).version
    assert runtime.shadow_policy is not None
    monkeypatch.setenv("WARDEN_POLICY", str(tmp_path / "missing.toml"))
    with pytest.raises(AppLoadError, match="cannot read policy file"):
        load_runtime("tests.apps.policy_app:runtime")


async def test_runs_show_names_the_rule(tmp_path: Path, monkeypatch) -> None:
    import os

    from agent_core.policy import Policy
    from tests.apps.policy_app import DELETES_ASK, build_runtime

    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    policy_file = tmp_path / "deletes.toml"
    policy_file.write_text(DELETES_ASK, encoding="utf-8")
    async with build_runtime(db, exec_path, Policy.load(policy_file)) as runtime:
        stream = await runtime.get_agent("ops").stream("tidy up")
        await stream.chunks()
        assert stream.status == "suspended"
    env = {**os.environ, "WARDEN_TEST_DB": db, "WARDEN_TEST_EXEC": exec_path, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "warden_cli", "runs", "show", stream.run_id, "--app", "tests.apps.policy_app:runtime"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "  policy      rule deletes: deletes need a person" in done.stdout.splitlines()


async def test_runs_approve_says_how_many_approvals(tmp_path: Path) -> None:
    import os

    from agent_core.policy import Policy
    from tests.apps.policy_app import build_runtime

    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    four_eyes = Policy.from_dict(
        {"rules": [{"id": "deletes", "tools": ["delete_*"], "decision": "ask", "approvers": 2, "reason": "two"}]}
    )
    async with build_runtime(db, exec_path, four_eyes) as runtime:
        stream = await runtime.get_agent("ops").stream("tidy up", actor="bob")
        await stream.chunks()
    env = {**os.environ, "WARDEN_TEST_DB": db, "WARDEN_TEST_EXEC": exec_path, "PYTHONPATH": str(ROOT)}
    app = ["--app", "tests.apps.policy_app:runtime"]
    cmd = [sys.executable, "-m", "warden_cli", "runs", "approve", stream.run_id, "--tool-call", "d1", *app]
    done = subprocess.run([*cmd, "--actor", "alice"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"pending approval: delete_record run {stream.run_id} tool call d1, 1 of 2 approvals (alice)" in done.stdout
    again = subprocess.run([*cmd, "--actor", "alice"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "AGENT_ALREADY_VOTED" in again.stderr


async def test_runs_list_shows_the_rule_and_the_votes(tmp_path: Path) -> None:
    """``warden runs list``, store-only and with the agents, JSON and table: rule, votes, requester."""
    import os

    from agent_core.policy import Policy
    from tests.apps.policy_app import build_runtime

    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    four_eyes = Policy.from_dict(
        {"rules": [{"id": "deletes", "tools": ["delete_*"], "decision": "ask", "approvers": 2, "reason": "two"}]}
    )
    async with build_runtime(db, exec_path, four_eyes) as runtime:
        stream = await runtime.get_agent("ops").stream("tidy up", actor="bob")
        await stream.chunks()
        await (await runtime.approve_tool_call(run_id=stream.run_id, actor="alice")).chunks()
    env = {**os.environ, "WARDEN_TEST_DB": db, "WARDEN_TEST_EXEC": exec_path, "PYTHONPATH": str(ROOT)}

    def listed(*args: str) -> str:
        cmd = [sys.executable, "-m", "warden_cli", "runs", "list", *args]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    store_only = json.loads(listed("--json", "--db", db))
    with_agents = json.loads(listed("--json", "--app", "tests.apps.policy_app:runtime"))
    assert store_only == with_agents
    [run] = store_only["runs"]
    [call] = run["tool_calls"]
    assert run["requested_by"] == "bob"
    assert (call["policy_rule"], call["approvers_required"]) == ("deletes", 2)
    assert [a["actor"] for a in call["approvals"]] == ["alice"]
    table = listed("--db", db).splitlines()
    assert table[0].split()[-1] == "POLICY" and table[1].endswith("deletes 1/2")


async def test_policy_option_on_the_runs_commands(tmp_path: Path) -> None:
    """``--policy FILE`` on each ``warden runs`` subcommand: checked first (a bad file is a usage
    error naming it, before anything is read or changed), then passed to the runtime it loads."""
    import os

    from tests.apps.policy_app import DELETES_ASK, build_runtime

    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    async with build_runtime(db, exec_path) as runtime:  # no policy: the deletes run at once
        assert (await (await runtime.get_agent("ops").stream("tidy up")).result()).status == "finished"
    good, bad = tmp_path / "deletes.toml", tmp_path / "bad.toml"
    good.write_text(DELETES_ASK, encoding="utf-8")
    bad.write_text('[[rules]]\nid = "x"\nwhen = "args.("\ndecision = "ask"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDEN_")}
    env.update({"WARDEN_TEST_DB": db, "WARDEN_TEST_EXEC": exec_path, "PYTHONPATH": str(ROOT)})
    app = ("--app", "tests.apps.policy_app:runtime")

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "warden_cli", "runs", *args]
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    for args in (("list", "--db", db), ("show", "nope", *app), ("approve", "nope", *app), ("sweep", *app)):
        done = run(*args, "--policy", str(bad))
        assert (done.returncode, done.stdout) == (2, "") and "bad.toml" in done.stderr, (args, done.stderr)
    for args in (("list", "--db", db), ("sweep", *app)):
        done = run(*args, "--policy", str(good))
        assert done.returncode == 0, (args, done.stderr)


def test_policy_files_travel_in_the_settings_not_the_environment(tmp_path: Path, monkeypatch) -> None:
    """``--policy`` / ``--shadow-policy`` are checked and put in the command's ``Settings``, as
    ``--db`` is; whatever loads the runtime from those settings applies them. The process's
    environment is not written (a later runtime in the same process, or a child, sees none)."""
    import os

    from agent_core.policy import Policy
    from tests.apps.policy_app import DELETES_ASK
    from warden_cli.common import merge_settings
    from warden_cli.policy import use_policy_files
    from warden_demo.runtime_choice import Settings, runtime_and_store_label

    good, shadow = tmp_path / "deletes.toml", tmp_path / "shadow.toml"
    good.write_text(DELETES_ASK, encoding="utf-8")
    shadow.write_text(PAYMENTS, encoding="utf-8")
    for name in ("WARDEN_POLICY", "WARDEN_SHADOW_POLICY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WARDEN_TEST_DB", str(tmp_path / "w.db"))
    monkeypatch.setenv("WARDEN_TEST_EXEC", str(tmp_path / "exec.db"))

    assert use_policy_files(str(good), str(shadow)) == (str(good), str(shadow))
    assert use_policy_files(None, None) == (None, None)
    assert "WARDEN_POLICY" not in os.environ and "WARDEN_SHADOW_POLICY" not in os.environ

    class Ctx:  # what typer gives a subcommand: the root command's Settings in ``obj``
        obj = Settings(db=str(tmp_path / "w.db"), policy=str(shadow), shadow_policy=str(shadow))

    merged = merge_settings(Ctx(), None, None, policy=str(good))  # type: ignore[arg-type]
    assert (merged.policy, merged.shadow_policy) == (str(good), str(shadow))  # the subcommand's over the root's
    assert merge_settings(Ctx(), None, None).policy == str(shadow)

    app = Settings(app="tests.apps.policy_app:runtime", policy=str(good), shadow_policy=str(shadow))
    runtime, _ = runtime_and_store_label(app)
    assert runtime.policy.version == Policy.load(good).version
    assert runtime.shadow_policy.version == Policy.load(shadow).version
    demo, _ = runtime_and_store_label(Settings(db=str(tmp_path / "demo.db"), policy=str(good)))
    assert demo.policy.version == Policy.load(good).version and demo.shadow_policy is None
    assert runtime_and_store_label(Settings(app="tests.apps.policy_app:runtime"))[0].policy is None
    assert "WARDEN_POLICY" not in os.environ


def test_serve_enforces_its_policy_option_without_the_variable(tmp_path: Path) -> None:
    """``warden serve --policy FILE --app M:A``: the file reaches the server's runtime as an
    argument (no ``WARDEN_POLICY`` anywhere): a delete the app itself never gates waits for a person."""
    import os
    import threading

    import httpx

    from tests.apps.policy_app import DELETES_ASK
    from tests.server.helpers import first, parse_sse
    from warden_server.cli import READY_PREFIX

    good = tmp_path / "deletes.toml"
    good.write_text(DELETES_ASK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDEN_")}
    env.update(WARDEN_TEST_DB=str(tmp_path / "w.db"), WARDEN_TEST_EXEC=str(tmp_path / "exec.db"), PYTHONPATH=str(ROOT))
    args = ["serve", "--app", "tests.apps.policy_app:runtime", "--port", "0", "--policy", str(good)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "warden_cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    guard = threading.Timer(120, proc.kill)  # a safety net against a server that never starts
    guard.start()
    try:
        url = ""
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(READY_PREFIX):
                url = line[len(READY_PREFIX) :].strip()
                break
        guard.cancel()
        assert url, "warden serve did not start"
        threading.Thread(target=lambda: [None for _ in proc.stdout or ()], daemon=True).start()
        r = httpx.post(f"{url}/api/agents/ops/stream", json={"messages": "tidy up"}, timeout=60)
        assert r.status_code == 200, r.text
        approval = first(parse_sse(r.text), "tool-call-approval")
        assert approval["payload"]["policyRule"] == "deletes" and approval["payload"]["toolName"] == "delete_record"
    finally:
        guard.cancel()
        proc.terminate()
        proc.wait(timeout=60)
