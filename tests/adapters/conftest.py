"""Shared set-up of the adapter tests: a store file, an execution log, and the environment of the apps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.adapters import lg_app, oai_app, pai_app
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


#: app module, its tool-call id prefix (the framework model's ids), whether it runs edited arguments
FRAMEWORKS: dict[str, tuple[ModuleType, str, bool]] = {
    "pydantic-ai": (pai_app, "pai-", True),
    "openai-agents": (oai_app, "oai-", False),
    "langgraph": (lg_app, "lg-", True),
}


@pytest.fixture(params=[*sorted(FRAMEWORKS), "langgraph-async", "langgraph-per-call"])
def fw(request, app_env, monkeypatch) -> tuple[ModuleType, str, bool, str]:
    """Each framework; LangGraph three times: a sync-only checkpointer (SqliteSaver), an async one, and
    ``interrupt_mode="per_call"`` (one interrupt per reviewed call instead of one per model turn)."""
    kind = request.param
    extra = {
        "langgraph-async": ("ADAPTER_CHECKPOINTER", "async"),
        "langgraph-per-call": ("ADAPTER_LG_MODE", "per_call"),
    }
    if kind in extra:
        kind = "langgraph"
        key, value = extra[request.param]
        app_env[key] = value
        monkeypatch.setenv(key, value)
    module, prefix, editable = FRAMEWORKS[kind]
    return module, prefix, editable, kind


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
