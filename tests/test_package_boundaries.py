"""The package boundaries as a user meets them: the installed ``warden`` script, run with
``-X importtime``, loads the console (``tui``) and textual only when it opens the console.

``warden serve`` (its help, and a real server of the demo agents) imports neither; the
headless ``warden runs list`` imports no textual; the demo's store reaches the server as an
argument, not through the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
WARDEN = Path(sys.executable).parent / "warden"  # the console script pip installed: "$(which warden)"
READY_PREFIX = "Warden server listening on "


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("WARDEN_API_TOKEN", "WARDEN_SERVER", "WARDEN_DB")}
    return {**out, "WARDEN_DEMO_DELAY": "0", **extra}


def warden(*args: str, importtime: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
    """The installed script, as a user runs it (``-X importtime``: the modules it loads, on stderr)."""
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), str(WARDEN), *args]
    return subprocess.run(cmd, cwd=ROOT, env=env(**extra), capture_output=True, text=True, timeout=120)


def imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports."""
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def console_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in ("tui", "textual")}


def test_serve_help_imports_neither_the_console_nor_textual():
    result = warden("serve", "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--cors-origin" in result.stdout and "--tokens-file" in result.stdout
    modules = imported(result.stderr)
    assert "warden_cli.serve" in modules and "typer" in modules  # the typer app really answered
    assert not console_modules(modules), sorted(console_modules(modules))


def test_serving_the_demo_imports_neither_the_console_nor_textual(tmp_path):
    db = tmp_path / "served" / "warden.db"
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", str(WARDEN), "serve", "--db", str(db), "--port", "0"],
        cwd=ROOT,
        env=env(XDG_DATA_HOME=str(tmp_path / "xdg")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith(READY_PREFIX), line + "".join(stderr)[-2000:]
        url = line[len(READY_PREFIX) :].strip()
        agents = httpx.get(f"{url}/api/agents", timeout=30).json()
        assert {"ops", "supervisor"} <= set(agents)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        reader.join(timeout=60)
    assert db.exists()  # the demo's store is the one --db named (passed as an argument, not $WARDEN_DB)
    modules = imported("".join(stderr))
    assert {"warden_demo.agents", "warden_server.app", "uvicorn"} <= modules
    assert not console_modules(modules), sorted(console_modules(modules))


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "list"),  # the fast path, before typer
        ("runs", "list", "--json", "--app", "tests.console.app_fixture:runtime"),  # the typer command
    ],
)
def test_runs_list_imports_no_textual(tmp_path, args):
    result = warden(*args, WARDEN_DB=str(tmp_path / "w.db"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "no pending runs" in result.stdout or '"total": 0' in result.stdout
    modules = imported(result.stderr)
    assert "warden_cli.fast_list" in modules
    assert not {m for m in modules if m.split(".")[0] == "textual"}


def test_serve_hands_the_demo_store_to_the_server_as_an_argument(tmp_path, monkeypatch):
    """No environment side channel: ``--db`` (or ``$WARDEN_DB``) becomes ``demo_db=``, and the
    process environment is left as it was."""
    import warden_server.cli
    from warden_cli.app import app

    calls: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(warden_server.cli, "serve", lambda *a, **kw: calls.append((a, kw)))
    monkeypatch.delenv("WARDEN_DB", raising=False)
    db = tmp_path / "named.db"
    result = CliRunner().invoke(app, ["serve", "--db", str(db), "--port", "0"])
    assert result.exit_code == 0, result.output
    assert "WARDEN_DB" not in os.environ
    [(args, kwargs)] = calls
    assert args[0] is None and kwargs["demo_db"] == str(db)

    monkeypatch.setenv("WARDEN_DB", str(tmp_path / "from-env.db"))
    assert CliRunner().invoke(app, ["serve", "--port", "0"]).exit_code == 0
    assert calls[-1][1]["demo_db"] == str(tmp_path / "from-env.db")
    assert CliRunner().invoke(app, ["serve", "--app", "tests.console.app_fixture:runtime"]).exit_code == 0
    assert calls[-1][0][0] == "tests.console.app_fixture:runtime" and calls[-1][1]["demo_db"] is None


def test_a_demo_store_the_server_cannot_open_is_one_line(tmp_path):
    bad = "/proc/no-such-dir/warden.db"
    result = warden("serve", "--db", bad, "--port", "0", importtime=False, XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"warden: the demo agents on {bad!r}: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_the_server_refuses_to_serve_nothing():
    from warden_server.cli import ServeError, serve

    with pytest.raises(ServeError, match="nothing to serve"):
        serve(None, port=0)
