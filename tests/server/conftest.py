"""Fixtures: real server processes on loopback (see ``procs.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.procs import ServerFactory, ServerProc


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[ServerFactory]:
    f = ServerFactory(tmp_path)
    yield f
    f.stop_all()


@pytest.fixture
def server(servers: ServerFactory) -> ServerProc:
    return servers.start("a")
