"""``warden serve`` (the CLI entry point) starts the same server as ``python -m warden_server``."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from tests.server.procs import READY_PREFIX, REPO


def _env(tmp_path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["WARDEN_TEST_DB"] = str(tmp_path / "w.db")
    env["WARDEN_TEST_COUNTER_DB"] = str(tmp_path / "count.db")
    env.pop("WARDEN_API_TOKEN", None)
    return env


def test_warden_serve_starts_a_server_on_loopback(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "warden_cli", "serve", "--app", "tests.server.warden_test_app:runtime", "--port", "0"],
        cwd=REPO,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith(READY_PREFIX), line + proc.stderr.read() if proc.poll() is not None else line
        url = line[len(READY_PREFIX) :].strip()
        assert httpx.get(f"{url}/health", timeout=30).json() == {"status": "ok"}
        assert "ops" in httpx.get(f"{url}/api/agents", timeout=30).json()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_warden_serve_refuses_a_public_address_without_a_token(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "warden_cli",
            "serve",
            "--app",
            "tests.server.warden_test_app:runtime",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip().startswith("warden:") and "token" in out.stderr.lower()
    assert len(out.stderr.strip().splitlines()) == 1


def test_remote_console_reports_an_unreachable_server_in_one_line(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "warden_cli", "--server", "http://127.0.0.1:9"],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("warden: cannot reach Warden server at http://127.0.0.1:9")
    assert len(out.stderr.strip().splitlines()) == 1


def test_serve_freezes_the_startup_objects_before_it_listens(monkeypatch, tmp_path):
    """Modules, models and the app are moved out of the collector's sight before uvicorn runs
    (a full collection then walks only what the requests made)."""
    import gc

    from warden_server import cli

    seen: list[int] = []
    monkeypatch.setattr(cli._Server, "run", lambda self, sockets=None: seen.append(gc.get_freeze_count()))
    gc.unfreeze()
    try:
        cli.serve(None, demo_db=str(tmp_path / "demo.db"), log_level="error")
        assert seen and seen[0] > 1000, seen
    finally:
        gc.unfreeze()
