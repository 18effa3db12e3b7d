"""The test upstream MCP server over streamable HTTP, as a subprocess on a loopback port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.helpers import UPSTREAM, free_port, wait_for_port


@pytest.fixture
def http_upstream(tmp_path: Path) -> Any:
    port = free_port()
    log = tmp_path / "http.log"
    proc = subprocess.Popen(
        [sys.executable, UPSTREAM, str(log), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_port(port)
    yield f"http://127.0.0.1:{port}/mcp", log
    proc.terminate()
    proc.wait(10)
