"""Shared set-up of the adapter tests: a store file, an execution log, and the environment of the apps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ExecLog

ROOT = Path(__file__).resolve().parents[2]
WARDEN = str(Path(sys.executable).parent / "warden")


@pytest.fixture
def app_env(tmp_path, monkeypatch) -> dict[str, str]:
    """ADAPTER_* for the apps (this process and the ones a test starts)."""
    env = {
        "ADAPTER_DB": str(tmp_path / "w.db"),
        "ADAPTER_EXEC": str(tmp_path / "exec.db"),
        "ADAPTER_LEASE": "30",
        "ADAPTER_HANG": "",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def exec_log(env: dict[str, str]) -> ExecLog:
    return ExecLog(env["ADAPTER_EXEC"])


def warden(env: dict[str, str], app: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``warden ARGS --app APP`` in another process, sharing the store file."""
    return subprocess.run(
        [WARDEN, *args, "--app", app],
        cwd=ROOT,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
