"""``warden runs|grants|audit ... --server URL``: the headless commands against a real ``warden serve``
process (the demo agents on a SQLite file), compared with the same commands on that file.

Also: shortened ids (a unique prefix of 6+ characters) locally and remotely, a closed pipe,
``warden serve`` without ``--app`` (the demo agents), and ``--app`` mistakes as one line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from storage import SqliteStore
from tests.console.conftest import suspend_runs
from tests.server.helpers import TOKEN
from tests.server.procs import READY_PREFIX, REPO

#: two copies of a real pending run under ids sharing the prefix "feed01"
TWINS = ("feed01aa-0000-4000-8000-000000000001", "feed01bb-0000-4000-8000-000000000002")


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("WARDEN_API_TOKEN", "WARDEN_SERVER", "WARDEN_DB")}
    out["PYTHONPATH"] = str(REPO)
    out["WARDEN_DEMO_DELAY"] = "0"
    out.update(extra)
    return out


def warden(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "warden_cli", *args]
    return subprocess.run(cmd, cwd=REPO, env=env(**extra), capture_output=True, text=True, timeout=120)


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith("warden: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


class Served:
    """A ``warden serve`` child process on ``db``; ``url`` once it listens."""

    def __init__(self, *args: str, db: Path | None = None, token: str | None = TOKEN, **extra: str) -> None:
        cmd = [sys.executable, "-m", "warden_cli", "serve", "--port", "0", *args]
        if db is not None:
            cmd += ["--db", str(db)]
        if token:
            cmd += ["--token", token]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise RuntimeError(
                f"warden serve did not start: {line}{self.proc.stderr.read() if self.proc.stderr else ''}"
            )
        self.url = line[len(READY_PREFIX) :].strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)


async def _copy_run(db: Path, source: str, new_ids: tuple[str, ...]) -> None:
    store = SqliteStore(db)
    run = await store.get_run(source)
    calls = await store.get_calls(source)
    assert run is not None
    for i, rid in enumerate(new_ids):
        copy = dataclasses.replace(run, run_id=rid, suspended_at=run.suspended_at - 100 - i)
        await store.save_suspended(copy, [dataclasses.replace(c, run_id=rid) for c in calls])
    await store.aclose()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Served, Path, dict[str, str]]]:
    """One server for the module, on a store with pending runs: ``ids`` names them by what they wait for."""
    db = tmp_path_factory.mktemp("remote") / "warden.db"
    prompts = [
        ("ops", "delete record abc-123"),
        ("ops", "what's the weather"),
        ("ops", "refund order ord-1042 for 250"),
        ("ops", "delete record abc-124"),
    ]
    delete, weather, refund, delete2 = asyncio.run(suspend_runs(db, prompts))
    asyncio.run(_copy_run(db, delete2, TWINS))
    server = Served(db=db)
    try:
        yield server, db, {"delete": delete, "weather": weather, "refund": refund}
    finally:
        server.stop()


def remote(server: Served) -> tuple[str, ...]:
    return ("--server", server.url, "--token", TOKEN)


def test_runs_list_and_show_print_the_same_locally_and_through_the_server(served):
    server, db, ids = served
    local = warden("runs", "list", "--json", "--db", str(db))
    over_http = warden("runs", "list", "--json", *remote(server))
    assert local.returncode == 0 and over_http.returncode == 0, over_http.stderr
    assert json.loads(over_http.stdout) == json.loads(local.stdout)
    listed = json.loads(local.stdout)
    assert listed["page"] == 1 and listed["pages"] == 1 and listed["total"] >= 5
    # the global --server applies to the subcommand; $WARDEN_SERVER / $WARDEN_API_TOKEN too
    via_root = warden("--server", server.url, "--token", TOKEN, "runs", "list", "--json")
    via_env = warden("runs", "list", "--json", WARDEN_SERVER=server.url, WARDEN_API_TOKEN=TOKEN)
    assert json.loads(via_root.stdout) == listed and json.loads(via_env.stdout) == listed
    table = warden("runs", "list", *remote(server)).stdout.splitlines()
    assert table[0].split()[:3] == ["RUN", "AGENT", "THREAD"] and any(ids["weather"] in line for line in table)
    # show, by the 8 characters the console shows
    short = ids["delete"][:8]
    shown_local = warden("runs", "show", short, "--json", "--db", str(db))
    shown_remote = warden("runs", "show", short, "--json", *remote(server))
    assert shown_local.returncode == 0 and shown_remote.returncode == 0, shown_remote.stderr
    assert json.loads(shown_remote.stdout) == json.loads(shown_local.stdout)
    assert json.loads(shown_remote.stdout)["run_id"] == ids["delete"]
    text = warden("runs", "show", short, *remote(server)).stdout
    assert (
        f"run       {ids['delete']}" in text and "delete_record" in text and "request   delete record abc-123" in text
    )


def test_a_prefix_that_is_ambiguous_short_or_unknown_is_a_one_line_error(served):
    server, db, _ = served
    for where in (("--db", str(db)), remote(server)):
        ambiguous = one_line_error(warden("runs", "show", "feed01", *where))
        assert "AGENT_AMBIGUOUS_ID_PREFIX" in ambiguous and TWINS[0] in ambiguous and TWINS[1] in ambiguous
        short = one_line_error(warden("runs", "show", "feed0", *where))
        assert "INVALID_REQUEST" in short and "at least 6 characters" in short
        unknown = one_line_error(warden("runs", "show", "0123456789", *where))
        assert "AGENT_RESUME_NO_SNAPSHOT_FOUND" in unknown
        unique = warden("runs", "show", "feed01a", "--json", *where)
        assert unique.returncode == 0 and json.loads(unique.stdout)["run_id"] == TWINS[0]
        bad_call = one_line_error(warden("runs", "approve", "feed01a", "--tool-call", "ca", *where))
        assert "INVALID_REQUEST" in bad_call and "tool call id 'ca'" in bad_call


def test_decisions_through_the_server_by_prefix(served):
    server, db, ids = served
    declined = warden(
        "runs", "decline", ids["refund"][:8], "--tool-call", "call_0", "--reason", "over budget", "--json",
        *remote(server),
    )  # fmt: skip
    assert declined.returncode == 0, declined.stderr
    outcome = json.loads(declined.stdout)
    assert outcome["run_id"] == ids["refund"] and outcome["status"] == "finished"
    denied = [c for c in outcome["chunks"] if c["type"] == "tool-output-denied"]
    assert denied and denied[0]["payload"]["reason"] == "over budget"
    approved = warden("runs", "approve", ids["delete"][:6], *remote(server))
    assert approved.returncode == 0, approved.stderr
    assert "result delete_record:" in approved.stdout and approved.stdout.rstrip().endswith("status: finished")
    resumed = warden(
        "runs", "resume", ids["weather"][:10], "--data", '{"city": "Oslo", "units": "metric"}', *remote(server)
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "get_weather returned city=Oslo" in resumed.stdout
    again = one_line_error(warden("runs", "approve", ids["delete"], *remote(server)))
    assert "AGENT_TOOL_CALL_ALREADY_DECIDED" in again or "AGENT_RESUME_NO_SNAPSHOT_FOUND" in again
    left = json.loads(warden("runs", "list", "--json", "--db", str(db)).stdout)
    assert not {ids["delete"], ids["weather"], ids["refund"]} & {r["run_id"] for r in left["runs"]}
    # the audit trail, read through the server, has the decisions and their order
    audit = json.loads(warden("audit", "--json", "--run", ids["refund"][:8], *remote(server)).stdout)
    assert [e["decision"] for e in audit] == ["declined"] and audit[0]["reason"] == "over budget"
    verified = warden("audit", "verify", "--json", *remote(server))
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True
    assert warden("audit", "verify", *remote(server)).stdout.startswith("audit trail intact")


def test_sweep_recover_and_grants_through_the_server(served):
    server, _, _ = served
    assert warden("runs", "sweep", *remote(server)).stdout.strip() == "expired 0 approvals"
    assert json.loads(warden("runs", "recover", "--json", *remote(server)).stdout) == {"recovered": 0}
    created = warden("grants", "create", "get_weather", "--scope", "agent", "--agent", "ops", "--json", *remote(server))
    assert created.returncode == 0, created.stderr
    grant = json.loads(created.stdout)
    listed = json.loads(warden("grants", "list", "--json", *remote(server)).stdout)
    assert [g["id"] for g in listed] == [grant["id"]]
    revoked = warden("grants", "revoke", grant["id"], "--json", *remote(server))
    assert json.loads(revoked.stdout) == {"revoked": grant["id"]}
    assert warden("grants", "list", *remote(server)).stdout.strip() == "no grants"


def test_server_and_store_together_and_unreachable_servers_are_one_line_errors(served, tmp_path):
    server, db, _ = served
    both = one_line_error(warden("--db", str(db), "--server", server.url, "runs", "list"), 2)
    assert "--db and --server" in both
    one_line_error(warden("runs", "list", "--db", str(db), "--server", server.url), 2)
    one_line_error(warden("runs", "show", "abcdef", "--app", "tests.apps.cli_apps:demo", "--server", server.url), 2)
    actor = one_line_error(warden("runs", "decline", "abcdef", "--actor", "ana", *remote(server)), 2)
    assert "token" in actor
    # an explicit --db wins over $WARDEN_SERVER, also given to the group of a subcommand
    local = warden("audit", "--db", str(db), "verify", WARDEN_SERVER="http://127.0.0.1:9")
    assert local.returncode == 0 and local.stdout.startswith("audit trail intact"), local.stderr
    down = one_line_error(warden("runs", "list", "--server", "http://127.0.0.1:9"))
    assert down.startswith("warden: cannot reach Warden server at http://127.0.0.1:9")
    no_token = one_line_error(warden("runs", "list", "--server", server.url))
    assert "UNAUTHORIZED" in no_token
    page0 = one_line_error(warden("runs", "list", "--page", "0", *remote(server)), 2)
    assert "pages are numbered from 1" in page0
    assert "pages are numbered from 1" in one_line_error(warden("runs", "list", "--page", "0", "--db", str(db)), 2)


def _read_then_close(args: list[str], **extra: str) -> tuple[bytes, str, int]:
    """Like ``warden ... | head -c 20``: read a little, then the reader goes away."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "warden_cli", *args],
        cwd=REPO,
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.read(20)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return first, err, proc.wait(timeout=120)


def test_a_closed_pipe_ends_quietly_locally_remotely_and_through_typer(served, tmp_path):
    _, db, _ = served
    big = tmp_path / "big.db"

    async def fill() -> None:
        store = SqliteStore(db)
        run = await store.get_run(TWINS[0])
        calls = await store.get_calls(TWINS[0])
        await store.aclose()
        target = SqliteStore(big)
        for i in range(600):
            rid = f"pipe-{i:05d}"
            await target.save_suspended(
                dataclasses.replace(run, run_id=rid), [dataclasses.replace(c, run_id=rid) for c in calls]
            )
        await target.aclose()

    asyncio.run(fill())
    pipe_server = Served(db=big)
    try:
        for args in (
            ["runs", "list", "--per-page", "1000", "--db", str(big)],  # the fast path
            ["--db", str(big), "runs", "list", "--json", "--per-page", "1000"],  # typer
            ["runs", "list", "--per-page", "1000", "--server", pipe_server.url, "--token", TOKEN],  # the SDK
        ):
            first, err, code = _read_then_close(args)
            assert first.startswith((b"RUN", b"{")), (args, first, err)
            assert "Traceback" not in err and "BrokenPipe" not in err and "Exception" not in err, (args, err)
            assert code in (0, 1, 141), (args, code)
    finally:
        pipe_server.stop()


def test_warden_serve_without_app_serves_the_demo_agents(tmp_path):
    server = Served(db=tmp_path / "demo.db", token=None)
    try:
        agents = httpx.get(f"{server.url}/api/agents", timeout=30).json()
        assert {"ops", "supervisor"} <= set(agents)
        started = httpx.post(
            f"{server.url}/api/agents/ops/generate", json={"messages": "delete record abc-9"}, timeout=60
        ).json()
        assert started["finishReason"] == "suspended"
        listed = warden("runs", "list", "--json", "--server", server.url)
        assert json.loads(listed.stdout)["total"] == 1
    finally:
        server.stop()


def test_app_accepts_a_factory_and_reports_every_mistake_in_one_line(tmp_path):
    db = tmp_path / "w.db"
    server = Served("--app", "tests.apps.cli_apps:demo", token=None, WARDEN_DB=str(db))
    try:
        assert "ops" in httpx.get(f"{server.url}/api/agents", timeout=30).json()
    finally:
        server.stop()
    mistakes = {
        "tests.apps.cli_apps:broken": "calling broken() failed: RuntimeError: no API key configured",
        "tests.apps.cli_apps:needs_config": "calling needs_config() failed",
        "tests.apps.cli_apps:async_factory": "is an async factory",
        "tests.apps.cli_apps:not_a_runtime": "is a int, not an agent_core.Runtime",
        "tests.apps.cli_import_fails": "importing 'tests.apps.cli_import_fails' failed: ValueError: settings.toml",
        "tests.apps.no_such_module:x": "cannot import 'tests.apps.no_such_module'",
    }
    for spec, message in mistakes.items():
        for args in (
            ["serve", "--app", spec, "--port", "0"],
            ["runs", "list", "--app", spec],
            ["runs", "show", "abcdef", "--app", spec],
            ["--app", spec],  # the console: the error comes before any UI
        ):
            error = one_line_error(warden(*args, WARDEN_DB=str(db)), 2)
            assert message in error, (args, error)
