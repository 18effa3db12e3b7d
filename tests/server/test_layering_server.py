"""The server never pays for the UI; the client SDK pays for neither the UI nor the server."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.server.procs import REPO


def _loaded(modules: str, roots: tuple[str, ...]) -> str:
    code = f"import sys, {modules}; print(sorted(m for m in sys.modules if m.split('.')[0] in {roots!r}))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("modules", ["warden_server", "warden_server.cli, warden_server.__main__", "warden_client"])
def test_no_textual(modules):
    assert _loaded(modules, ("textual", "tui")) == "[]"


def test_client_does_not_import_the_server_stack():
    assert _loaded("warden_client", ("warden_server", "starlette", "uvicorn", "sse_starlette")) == "[]"
