"""The typer CLI: headless commands on a real SQLite file, in subprocesses like a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.console.conftest import demo_runtime, suspend_runs
from warden_demo.records import list_records, records_path

ROOT = Path(__file__).resolve().parents[2]


def warden(*args: str, db: Path | None = None, importtime: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "WARDEN_DEMO_DELAY": "0"}
    if db is not None:
        env["WARDEN_DB"] = str(db)
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "warden_cli", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def imported_modules(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


async def test_headless_commands_never_import_textual(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "send an email to a@b.c saying hi")])
    for args in (
        ["runs", "list"],
        ["runs", "list", "--json", "--agent", "ops"],
        ["runs", "show", run_id],
        ["runs", "decline", run_id, "--reason", "no"],
        ["runs", "list", "--app", "tests.console.app_fixture:runtime"],
    ):
        result = warden(*args, db=db_path, importtime=True)
        assert result.returncode == 0, (args, result.stderr[-500:])
        modules = imported_modules(result.stderr)
        assert "warden_cli.fast_list" in modules  # the CLI really ran (its entry point tries the fast listing first)
        assert not {m for m in modules if m == "textual" or m.startswith("textual.")}, args


async def test_runs_list_on_sqlite_imports_neither_typer_nor_asyncio_nor_agent_core(db_path):
    await suspend_runs(db_path, [("ops", "delete record abc-123")])
    result = warden("runs", "list", "--json", "--page", "1", db=db_path, importtime=True)
    assert result.returncode == 0, result.stderr[-500:]
    modules = imported_modules(result.stderr)
    assert "warden_cli.fast_list" in modules and "storage.sqlite" in modules
    heavy = {"typer", "asyncio", "agent_core", "aiosqlite", "asyncpg", "httpx", "pydantic", "regex", "textual"}
    assert not heavy & modules, heavy & modules
    assert json.loads(result.stdout)["total"] == 1


async def test_runs_list_json_matches_the_runtime_listing(db_path):
    await suspend_runs(
        db_path, [("ops", "delete record abc-123"), ("ops", "what's the weather"), ("supervisor", "find user 12345")]
    )
    result = warden("runs", "list", "--json", db=db_path)
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    async with demo_runtime(db_path) as runtime:
        expected = await runtime.list_suspended_runs()
    assert listed["total"] == 3
    assert listed["runs"] == [r.model_dump(mode="json") for r in expected.runs]
    # the same through typer (root option first, so the argparse fast path is not taken)
    via_typer = warden("--db", str(db_path), "runs", "list", "--json")
    assert via_typer.returncode == 0 and json.loads(via_typer.stdout) == listed


async def test_runs_list_table_and_filters(db_path):
    await suspend_runs(db_path, [("ops", "delete record abc-123"), ("supervisor", "find user 12345")])
    result = warden("runs", "list", "--db", str(db_path))
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "RUN",
        "AGENT",
        "THREAD",
        "TOOL",
        "KIND",
        "AGE",
        "EXPIRES",
        "FINGERPRINT",
        "TOOL",
        "CALL",
    ]
    assert len(lines) == 3
    only = warden("runs", "list", "--agent", "supervisor", db=db_path).stdout.splitlines()
    assert len(only) == 2 and "find_user" in only[1] and "approval" in only[1]
    assert warden("runs", "list", "--thread", "nope", db=db_path).stdout.strip() == "no pending runs"


async def test_approve_with_fingerprint_then_already_decided(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "delete record abc-124")])
    shown = json.loads(warden("runs", "show", run_id, "--json", db=db_path).stdout)
    fp = shown["tool_calls"][0]["fingerprint"]
    bad = warden("runs", "approve", run_id, "--fingerprint", "sha256:" + "0" * 64, db=db_path)
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1 and "AGENT_APPROVAL_FINGERPRINT_MISMATCH" in bad.stderr
    assert "abc-124" in list_records(records_path(db_path))  # nothing ran
    ok = warden("runs", "approve", run_id, "--tool-call", "call_0_0", "--fingerprint", fp, db=db_path)
    assert ok.returncode == 0, ok.stderr
    assert "result delete_record:" in ok.stdout and ok.stdout.rstrip().endswith("status: finished")
    assert "abc-124" not in list_records(records_path(db_path))
    again = warden("runs", "approve", run_id, "--tool-call", "call_0_0", db=db_path)
    assert again.returncode == 1 and "AGENT_TOOL_CALL_ALREADY_DECIDED" in again.stderr
    assert again.stderr.count("\n") == 1


async def test_decline_reason_reaches_the_model(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "refund order ord-1042 for 250")])
    result = warden("runs", "decline", run_id, "--reason", "over budget", db=db_path)
    assert result.returncode == 0, result.stderr
    assert "declined issue_refund: over budget" in result.stdout
    assert "the operator declined. Reason: over budget" in result.stdout


async def test_resume_validates_then_resumes(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "what's the weather")])
    bad = warden("runs", "resume", run_id, "--data", '{"units": "kelvin"}', db=db_path)
    assert bad.returncode == 1 and "AGENT_RESUME_DATA_INVALID" in bad.stderr
    not_json = warden("runs", "resume", run_id, "--data", "{city", db=db_path)
    assert not_json.returncode == 2 and "--data is not valid JSON" in not_json.stderr
    ok = warden("runs", "resume", run_id, "--data", '{"city": "Oslo", "units": "imperial"}', db=db_path)
    assert ok.returncode == 0, ok.stderr
    assert "get_weather returned city=Oslo" in ok.stdout and "units=imperial" in ok.stdout


def test_unknown_run_and_bad_app_are_one_line_errors(db_path):
    missing = warden("runs", "show", "no-such-run", db=db_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("warden: AGENT_RESUME_NO_SNAPSHOT_FOUND") and missing.stderr.count("\n") == 1
    bad_app = warden("runs", "list", "--app", "no_such_module:runtime", db=db_path)
    assert bad_app.returncode == 2 and "cannot import 'no_such_module'" in bad_app.stderr


def test_version():
    result = warden("--version")
    assert result.returncode == 0 and result.stdout.startswith("warden ")


async def test_untrusted_text_is_escaped_in_headless_output(db_path):
    await suspend_runs(db_path, [("ops", "send an email to \u202eevil@x.y saying \x1b]0;PWNED\x07")])
    out = warden("runs", "list", db=db_path).stdout + warden("runs", "list", "--json", db=db_path).stdout
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out


def test_app_option_loads_a_user_runtime(db_path):
    result = warden("runs", "list", "--app", "tests.console.app_fixture:runtime", db=db_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no pending runs"


def test_unknown_model_provider_is_a_one_line_error(db_path):
    result = warden("--model", "nope/x", "runs", "show", "r1", db=db_path)
    assert result.returncode == 1
    assert result.stderr.startswith("warden: PROVIDER_CONFIG_ERROR") and result.stderr.count("\n") == 1


def test_model_option_puts_a_real_model_behind_the_demo_agents(db_path):
    from tui.backend import LocalBackend
    from warden_demo.runtime_choice import Settings, runtime_and_store_label

    runtime, label = runtime_and_store_label(Settings(db=db_path, model="ollama/llama3.2"))
    agents = LocalBackend(runtime).list_agents()
    assert label == str(db_path)
    assert [a.id for a in agents] == ["ops", "supervisor"]
    assert all(not a.is_demo and "llama3.2" in a.model_id for a in agents)
    demo, _ = runtime_and_store_label(Settings(db=db_path))
    assert all(a.is_demo and a.model_id == "demo" for a in LocalBackend(demo).list_agents())


def test_headless_modules_import_without_textual():
    code = (
        "import sys, tui, tui.backend, tui.untrusted, tui.formatting, warden_cli.app, warden_cli.main, "
        "warden_cli.headless, warden_cli.console, warden_demo.agents, warden_demo.model, warden_demo.runtime_choice; "
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_console_start_errors_are_one_line_before_any_ui(db_path):
    bad_app = warden("--app", "no_such_module:runtime", db=db_path)
    assert bad_app.returncode == 2 and bad_app.stderr.count("\n") == 1 and "cannot import" in bad_app.stderr
    bad_model = warden("--db", str(db_path), "--model", "nope/x")
    assert bad_model.returncode == 1 and bad_model.stderr.startswith("warden: PROVIDER_CONFIG_ERROR")
    needs_args = warden("--app", "tests.console.app_fixture:build_demo_runtime", db=db_path)
    assert needs_args.returncode == 2 and "calling build_demo_runtime() failed" in needs_args.stderr
    not_runtime = warden("--app", "tests.console.app_fixture:DemoModel", db=db_path)
    assert not_runtime.returncode == 2 and "is a DemoModel, not an agent_core.Runtime" in not_runtime.stderr
    assert not_runtime.stderr.count("\n") == 1
